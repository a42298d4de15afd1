"""Solvers and matrix factorizations: values by numpy's LAPACK (``np.linalg``), gradients by
PyTorch's formulas, written in jitgrad ops.

Every function takes stacks of matrices (leading dims broadcast, as numpy's). Each saves
the results its backward reads; under ``create_graph`` the backward takes them again
through the op itself, so that higher-order gradients see how they depend on the input.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.tensor import Tensor, as_tensor
from ..recording import compute_all
from .complex_parts import conj
from .elementwise import where
from .linalg import matmul
from .movement import diagonal, expand_dims, swapaxes
from .numpy_tier import tensor_over

__all__ = [
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "det",
    "eigh",
    "inv",
    "lstsq",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
]


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


def _mT(x: Tensor) -> Tensor:
    return swapaxes(x, -1, -2)


def _diag_embed(v: Tensor) -> Tensor:
    """Stacks of diagonal matrices with ``v``'s last dim on their diagonals."""
    n = v.shape[-1]
    return expand_dims(v, -1) * as_tensor(np.eye(n, dtype=v.dtype.numpy))


def _off_diagonal_reciprocal(e: Tensor) -> Tensor:
    """``1 / e`` off the diagonal of each matrix and 0 on it (where ``e`` is 0 by
    construction: a difference of a value with itself)."""
    n = e.shape[-1]
    on = as_tensor(np.eye(n, dtype=bool))
    return where(on, 0, 1 / where(on, 1, e))


class LinalgRoutine(Function):
    """A Function whose parts are computed by an ``np.linalg`` ``routine`` (with
    ``options``) and whose backward reads some of them (``saved``: their indices)."""

    routine = None
    saved: tuple[int, ...] = ()

    def __init__(self, **options):
        self.options = options

    def forward(self, *xs):
        arrays = compute_all(self._parts, *(x.numpy() for x in xs))
        parts = tuple(tensor_over(a) for a in arrays)
        # Detached aliases: saving the outputs themselves would make a reference cycle.
        self._saved = {i: (parts[i].detach(), parts[i]._storage._version) for i in self.saved}
        return parts if len(parts) > 1 else parts[0]

    def _parts(self, *arrays) -> tuple:
        parts = type(self).routine(*arrays, **self.options)
        return tuple(parts) if isinstance(parts, tuple) else (parts,)

    def part(self, i: int) -> Tensor:
        """Result ``i`` as the backward reads it: recorded again from the inputs under
        ``create_graph``, else the values saved by forward (unchanged since)."""
        if is_grad_enabled():
            again = type(self)(**self.options)(*self.inputs)
            return again[i] if isinstance(again, tuple) else again
        saved, version = self._saved[i]
        if saved._storage._version != version:
            raise RuntimeError(
                f"a result of {type(self).__name__} was modified by an in-place operation "
                "after it was saved for backward; its gradient would be wrong. Clone it "
                "before modifying it"
            )
        return saved

    def _release(self) -> None:
        self._saved = {}


def _square(a: Tensor, who: str) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError(
            f"{who}: expected a stack of square matrices (last two dims equal), got shape {a.shape}"
        )


def _float_input(a) -> Tensor:
    """numpy's linalg computes integer and bool input in float64."""
    a = as_tensor(a)
    return a.astype(dtypes.float64) if a.dtype.kind in "biu" else a


# -- inverses and solvers --------------------------------------------------------------------


class Inv(LinalgRoutine):
    routine = staticmethod(np.linalg.inv)
    saved = (0,)

    def backward(self, gy):
        yT = _mT(self.part(0))
        return -matmul(yT, matmul(gy, yT))


def inv(a, /) -> Tensor:
    """The inverse of each square matrix in ``a`` (``np.linalg.inv``).

    >>> import jitgrad as jg
    >>> inv(jg.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    a = _float_input(a)
    _square(a, "inv")
    return Inv()(a)


class Solve(LinalgRoutine):
    routine = staticmethod(np.linalg.solve)
    saved = (0,)

    def backward(self, gx):
        a, b = self.inputs
        x = self.part(0)
        vector = b.ndim == 1
        gb = solve(_mT(a), gx)
        ga = None
        if a.requires_grad:
            ga = -(expand_dims(gb, -1) * expand_dims(x, -2) if vector else matmul(gb, _mT(x)))
        return ga, gb if b.requires_grad else None


def solve(a, /, b) -> Tensor:
    """The solution ``x`` of ``a @ x = b`` for square ``a`` (``np.linalg.solve``); ``b`` is
    a vector when it is 1-d, else a stack of matrices.

    >>> import jitgrad as jg
    >>> solve(jg.tensor([[3.0, 1.0], [1.0, 2.0]]), jg.tensor([9.0, 8.0])).tolist()
    [2.0, 3.0]
    """
    a, b = _float_input(a), _float_input(b)
    _square(a, "solve")
    return Solve()(a, b)


def _cofactor(a: Tensor) -> Tensor:
    """``det(a) * inv(a).mT``, the gradient of ``det``, also for singular matrices: through
    the SVD ``a = U S Vh``, it is ``det(U) det(Vh) U diag(prod of the other s) Vh``."""
    u, s, vh = np.linalg.svd(a.numpy())
    n = s.shape[-1]
    ones = np.ones(s.shape[:-1] + (1,), s.dtype)
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], -1), -1)
    after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], -1), -1)[..., ::-1]
    sign = np.linalg.det(u) * np.linalg.det(vh)
    others = (before * after)[..., :n]
    return as_tensor(sign[..., None, None] * ((u * others[..., None, :]) @ vh))


class Det(LinalgRoutine):
    routine = staticmethod(np.linalg.det)
    saved = (0,)

    def backward(self, gy):
        (a,) = self.inputs
        scale = expand_dims(expand_dims(gy, -1), -1)
        try:
            return scale * expand_dims(expand_dims(self.part(0), -1), -1) * _mT(inv(a))
        except np.linalg.LinAlgError:
            if is_grad_enabled():
                raise RuntimeError(
                    "det: the second derivative at a singular matrix is not supported"
                ) from None
            return scale * _cofactor(a)


def det(a, /) -> Tensor:
    """The determinant of each square matrix in ``a`` (``np.linalg.det``); differentiable
    also at singular matrices.

    >>> import jitgrad as jg
    >>> round(det(jg.tensor([[1.0, 2.0], [3.0, 4.0]])).item(), 10)
    -2.0
    """
    a = _float_input(a)
    _square(a, "det")
    return Det()(a)


class Slogdet(LinalgRoutine):
    routine = staticmethod(np.linalg.slogdet)

    def backward(self, gsign, glogabsdet):
        (a,) = self.inputs
        return expand_dims(expand_dims(glogabsdet, -1), -1) * _mT(inv(a))


def slogdet(a, /) -> SlogdetResult:
    """The sign and the log of the absolute value of each determinant
    (``np.linalg.slogdet``); ``logabsdet`` is differentiable.

    >>> import jitgrad as jg
    >>> sign, logabsdet = slogdet(jg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> sign.item(), round(logabsdet.item(), 6)
    (-1.0, 0.693147)
    """
    a = _float_input(a)
    _square(a, "slogdet")
    return SlogdetResult(*Slogdet()(a))


# -- factorizations --------------------------------------------------------------------------


class Eigh(LinalgRoutine):
    routine = staticmethod(np.linalg.eigh)
    saved = (0, 1)

    def backward(self, gw, gv):
        w, v = self.part(0), self.part(1)
        # gA = V (diag(gw) + skew(V^T gV) / (w_j - w_i)) V^T, skew(X) = (X - X^T) / 2: the
        # symmetric gradient, as PyTorch's.
        vgv = matmul(_mT(v), gv)
        inner = _off_diagonal_reciprocal(expand_dims(w, -2) - expand_dims(w, -1))
        inner = inner * (0.5 * (vgv - _mT(vgv))) + _diag_embed(gw)
        return matmul(v, matmul(inner, _mT(v)))


def eigh(a, /, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of each symmetric matrix in ``a``, read
    from its lower (``UPLO="L"``) or upper triangle (``np.linalg.eigh``). Differentiable
    where the eigenvalues are distinct.

    >>> import jitgrad as jg
    >>> eigh(jg.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues.tolist()
    [1.0, 3.0]
    """
    a = _float_input(a)
    _square(a, "eigh")
    if UPLO not in ("L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    return EighResult(*Eigh(UPLO=UPLO)(a))


class Cholesky(LinalgRoutine):
    routine = staticmethod(np.linalg.cholesky)
    saved = (0,)

    def backward(self, gl):
        # gA = sym(L^-T Phi(L^T gL) L^-1), Phi: the lower triangle with its diagonal halved.
        low = self.part(0)
        n = low.shape[-1]
        phi = as_tensor(np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)).astype(low.dtype)
        p = phi * matmul(_mT(low), _tril(gl))
        inverse = inv(low)
        ga = matmul(_mT(inverse), matmul(p, inverse))
        return 0.5 * (ga + _mT(ga))


def _tril(x: Tensor) -> Tensor:
    n, m = x.shape[-2:]
    return x * as_tensor(np.tri(n, m, dtype=bool))


def cholesky(a, /, upper: bool = False) -> Tensor:
    """The lower-triangular ``L`` with ``L @ conj(L.mT) == a`` for each Hermitian
    positive-definite matrix in ``a`` (``np.linalg.cholesky``); ``upper=True`` gives the
    upper-triangular ``conj(L.mT)``.

    >>> import jitgrad as jg
    >>> cholesky(jg.tensor([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    a = _float_input(a)
    _square(a, "cholesky")
    low = Cholesky()(a)
    return conj(_mT(low)) if upper else low


class QR(LinalgRoutine):
    routine = staticmethod(np.linalg.qr)
    saved = (0, 1)

    def backward(self, gq, gr):
        # PyTorch's formula for m >= n (reduced): with M = R gR^T - gQ^T Q,
        # gA = (gQ + Q copyltu(M)) R^-T, copyltu(M) = tril(M, -1) + tril(M, -1)^T + diag(M).
        q, r = self.part(0), self.part(1)
        m = matmul(r, _mT(gr)) - matmul(_mT(gq), q)
        low = m * as_tensor(np.tri(*m.shape[-2:], k=-1, dtype=bool))
        copyltu = low + _mT(low) + _diag_embed(diagonal(m, 0, -2, -1))
        b = gq + matmul(q, copyltu)
        return _mT(solve(r, _mT(b)))


def qr(a, /, mode: str = "reduced") -> QRResult | Tensor:
    """The QR factorization of each matrix in ``a`` (``np.linalg.qr``): ``mode`` is
    ``"reduced"``, ``"complete"``, ``"r"`` (R alone) or ``"raw"``. Differentiable in
    ``"reduced"`` mode for matrices with at least as many rows as columns.

    >>> import jitgrad as jg
    >>> q, r = qr(jg.tensor([[3.0, 0.0], [4.0, 5.0]]))
    >>> (q @ r).round(6).tolist()
    [[3.0, 0.0], [4.0, 5.0]]
    """
    a = _float_input(a)
    if a.ndim < 2:
        raise np.linalg.LinAlgError(f"qr: expected a stack of matrices, got shape {a.shape}")
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"qr: unrecognized mode {mode!r}")
    if mode != "reduced" or a.shape[-2] < a.shape[-1]:
        if a.requires_grad and is_grad_enabled():
            raise RuntimeError(
                "qr: the gradient is defined in mode='reduced' for matrices with at least "
                f"as many rows as columns (got mode={mode!r}, shape {a.shape})"
            )
        parts = compute_all(_qr_parts(mode), a.numpy())
        parts = tuple(tensor_over(p) for p in parts)
        return parts[0] if mode == "r" else QRResult(*parts)
    return QRResult(*QR(mode="reduced")(a))


def _qr_parts(mode: str):
    def parts(a):
        result = np.linalg.qr(a, mode=mode)
        return (result,) if mode == "r" else tuple(result)

    return parts


class SVD(LinalgRoutine):
    routine = staticmethod(np.linalg.svd)
    saved = (0, 1, 2)

    def backward(self, gu, gs, gvh):
        # PyTorch's formula (svd_backward), on the first k = min(m, n) singular vectors.
        u, s, vh = self.part(0), self.part(1), self.part(2)
        m, n = u.shape[-2], vh.shape[-1]
        k = s.shape[-1]
        u, vh = u[..., :, :k], vh[..., :k, :]
        gu, gvh = gu[..., :, :k], gvh[..., :k, :]
        s_row, s_col = expand_dims(s, -2), expand_dims(s, -1)
        reciprocal = _off_diagonal_reciprocal(s_row * s_row - s_col * s_col)
        uhgu = matmul(_mT(u), gu)
        vhgv = matmul(vh, _mT(gvh))
        inner = ((uhgu - _mT(uhgu)) * s_row + s_col * (vhgv - _mT(vhgv))) * reciprocal
        inner = inner + _diag_embed(gs)
        if m > k:  # the part of gU outside U's span
            gus = gu / s_row
            inner_u = matmul(u, inner) + gus - matmul(u, matmul(_mT(u), gus))
            return matmul(inner_u, vh)
        if n > k:  # the part of gVh outside Vh's span
            gvs = gvh / s_col
            inner_v = matmul(inner, vh) + gvs - matmul(matmul(gvs, _mT(vh)), vh)
            return matmul(u, inner_v)
        return matmul(u, matmul(inner, vh))


def svd(a, /, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """The singular value decomposition ``a = U @ diag(S) @ Vh`` of each matrix in ``a``
    (``np.linalg.svd``: ``S`` descending; ``compute_uv=False`` gives ``S`` alone).
    Differentiable where the singular values are distinct and nonzero; with
    ``full_matrices=True`` gradients reach ``U`` and ``Vh`` through their first
    ``min(m, n)`` vectors (the others are any basis of the complement).

    >>> import jitgrad as jg
    >>> svd(jg.tensor([[3.0, 0.0], [0.0, -4.0]])).S.tolist()
    [4.0, 3.0]
    """
    a = _float_input(a)
    if a.ndim < 2:
        raise np.linalg.LinAlgError(f"svd: expected a stack of matrices, got shape {a.shape}")
    if not compute_uv:
        return svdvals(a) if not hermitian else _svd(a, False, hermitian).S
    return _svd(a, full_matrices, hermitian)


def _svd(a: Tensor, full_matrices: bool, hermitian: bool) -> SVDResult:
    return SVDResult(*SVD(full_matrices=full_matrices, hermitian=hermitian)(a))


def svdvals(x, /) -> Tensor:
    """The singular values of each matrix in ``x``, descending (the Array API's
    ``svdvals``); differentiable where they are distinct.

    >>> import jitgrad as jg
    >>> svdvals(jg.tensor([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    x = _float_input(x)
    if x.ndim < 2:
        raise np.linalg.LinAlgError(f"svdvals: expected a stack of matrices, got {x.shape}")
    if not (x.requires_grad and is_grad_enabled()):
        (s,) = compute_all(lambda a: (np.linalg.svd(a, compute_uv=False),), x.numpy())
        return tensor_over(s)
    return _svd(x, False, False).S


# -- least squares and the pseudo-inverse ----------------------------------------------------


class Pinv(LinalgRoutine):
    routine = staticmethod(np.linalg.pinv)
    saved = (0,)

    def backward(self, g):
        # PyTorch's pinv_backward.
        (a,) = self.inputs
        p = self.part(0)
        ph, gh = _mT(p), _mT(g)
        m, n = a.shape[-2:]
        if m <= n:
            k = matmul(gh, p)
            kph = matmul(k, ph)
            return (
                -_mT(matmul(p, k))
                + kph
                - matmul(matmul(a, p), kph)
                + matmul(matmul(ph, p), gh - matmul(k, a))
            )
        k = matmul(p, gh)
        phk = matmul(ph, k)
        return (
            -_mT(matmul(k, p))
            + phk
            - matmul(phk, matmul(p, a))
            + matmul(gh - matmul(a, k), matmul(p, ph))
        )


def pinv(a, /, rcond=None, hermitian: bool = False, *, rtol=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix in ``a`` (``np.linalg.pinv``),
    differentiable where its rank does not change nearby.

    >>> import jitgrad as jg
    >>> pinv(jg.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    a = _float_input(a)
    if a.ndim < 2:
        raise np.linalg.LinAlgError(f"pinv: expected a stack of matrices, got shape {a.shape}")
    options = {"hermitian": hermitian}
    if rcond is not None:
        options["rcond"] = rcond
    if rtol is not None:
        options["rtol"] = rtol
    return Pinv(**options)(a)


def lstsq(a, b, rcond=None):
    """The least-squares solution ``x`` of ``a @ x = b`` (``np.linalg.lstsq``): returns
    ``(x, residuals, rank, s)`` as numpy does. ``x`` is differentiable in ``a`` and ``b``
    (as ``pinv(a) @ b``) where ``a``'s rank does not change nearby.

    >>> import jitgrad as jg
    >>> a = jg.tensor([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> x, residuals, rank, s = lstsq(a, jg.tensor([1.0, 2.0, 3.0]))
    >>> [round(v, 6) for v in x.tolist()], int(rank)
    ([1.0, 1.0], 2)
    """
    a, b = _float_input(a), _float_input(b)
    if a.ndim != 2 or b.ndim not in (1, 2):
        raise np.linalg.LinAlgError(
            f"lstsq: expected a 2-d matrix and a 1-d or 2-d right side, got shapes {a.shape} "
            f"and {b.shape}"
        )
    x, residuals, rank, s = np.linalg.lstsq(a.numpy(), b.numpy(), rcond=rcond)
    if (a.requires_grad or b.requires_grad) and is_grad_enabled():
        # The same solution, recorded: through the pseudo-inverse with lstsq's cutoff.
        cutoff = np.finfo(x.dtype).eps * max(a.shape) if rcond is None else rcond
        x = matmul(pinv(a, rtol=cutoff), b)
    return as_tensor(x), as_tensor(residuals), rank, as_tensor(s)
