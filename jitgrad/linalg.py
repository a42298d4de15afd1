"""``jitgrad.linalg``: numpy's ``np.linalg`` and the Array API's ``linalg`` extension.

Factorizations and solvers run numpy's LAPACK and carry PyTorch's gradient formulas
(``jitgrad.ops.factorizations``); norms, powers and the tensor forms are built from
differentiable jitgrad ops. Results follow numpy's dtypes: integer input computes in
float64, float32 stays float32.

>>> import jitgrad as jg
>>> a = jg.tensor([[3.0, 1.0], [1.0, 2.0]], requires_grad=True)
>>> jg.linalg.det(a).backward()
>>> a.grad.round(6).tolist()
[[2.0, -1.0], [-1.0, 3.0]]
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .autograd.grad_mode import is_grad_enabled
from .autograd.tensor import Tensor, as_tensor
from .ops import reduce
from .ops.elementwise import where
from .ops.factorizations import (
    EighResult,
    LinalgRoutine,
    QRResult,
    SlogdetResult,
    SVDResult,
    _float_input,
    _square,
    cholesky,
    det,
    eigh,
    inv,
    lstsq,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
)
from .ops.linalg import einsum, matmul, tensordot
from .ops.linalg import outer as _outer
from .ops.movement import diagonal as _diagonal
from .ops.movement import matrix_transpose, reshape
from .ops.numpy_tier import tensor_over
from .ops.products import cross as _cross
from .ops.products import vecdot
from .ops.unary import abs as _abs
from .ops.unary import sign
from .recording import compute_all

LinAlgError = np.linalg.LinAlgError

__all__ = [
    "EigResult",
    "EighResult",
    "LinAlgError",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


def _no_gradient(x: Tensor, who: str, instead: str) -> None:
    if x.requires_grad and is_grad_enabled():
        raise RuntimeError(
            f"{who} has no gradient in jitgrad (its results are complex in general); "
            f"{instead}, or detach() the input"
        )


def _numpy_parts(fn, x: Tensor) -> tuple[Tensor, ...]:
    return tuple(tensor_over(a) for a in compute_all(fn, x.numpy()))


def eig(a) -> EigResult:
    """Eigenvalues and right eigenvectors of each square matrix in ``a`` (``np.linalg.eig``:
    complex where any eigenvalue is). No gradient: use ``eigh`` for symmetric matrices.

    >>> import jitgrad as jg
    >>> eig(jg.tensor([[2.0, 0.0], [0.0, 3.0]])).eigenvalues.tolist()
    [2.0, 3.0]
    """
    a = _float_input(a)
    _square(a, "eig")
    _no_gradient(a, "eig", "use eigh for symmetric matrices")
    return EigResult(*_numpy_parts(lambda m: tuple(np.linalg.eig(m)), a))


def eigvals(a) -> Tensor:
    """The eigenvalues of each square matrix in ``a`` (``np.linalg.eigvals``); no gradient
    (``eigvalsh`` has one, for symmetric matrices).

    >>> import jitgrad as jg
    >>> eigvals(jg.tensor([[0.0, -1.0], [1.0, 0.0]])).tolist()
    [1j, -1j]
    """
    a = _float_input(a)
    _square(a, "eigvals")
    _no_gradient(a, "eigvals", "use eigvalsh for symmetric matrices")
    return _numpy_parts(lambda m: (np.linalg.eigvals(m),), a)[0]


def eigvalsh(a, /, UPLO: str = "L") -> Tensor:
    """The eigenvalues (ascending) of each symmetric matrix in ``a``
    (``np.linalg.eigvalsh``), differentiable where they are distinct.

    >>> import jitgrad as jg
    >>> eigvalsh(jg.tensor([[2.0, 1.0], [1.0, 2.0]])).tolist()
    [1.0, 3.0]
    """
    return eigh(a, UPLO).eigenvalues


# -- norms -----------------------------------------------------------------------------------


class VectorNorm(LinalgRoutine):
    """The ``ord``-norm over ``axis`` by numpy; PyTorch's gradient (0 where the norm is 0,
    shared evenly between the entries that reach an infinity norm)."""

    routine = staticmethod(np.linalg.vector_norm)
    saved = (0,)

    def backward(self, g):
        (x,) = self.inputs
        p, axes = self.options["ord"], self.options["axis"]
        n = self.part(0)
        if axes is not None and not self.options["keepdims"]:
            n, g = _restore(n, axes, x.ndim), _restore(g, axes, x.ndim)
        if p == 0:
            return x * 0
        if math.isinf(p):
            reached = _abs(x) == n
            count = reduce.sum(reached, axis=axes, keepdims=True)
            return where(reached, sign(x) * g / count, 0)
        if p == 1:
            return g * sign(x)  # the subgradient sign(x), 0 at 0
        if p < 1:
            # |x|^(p-1) is infinite at 0, where PyTorch's gradient is 0: the power reads 1
            # there and sign(0) zeroes it; a zero norm scales every entry to 0.
            magnitude = where(x == 0, 1, _abs(x))
            return g * sign(x) * magnitude ** (p - 1) * n ** (1 - p)
        ratio = where(n == 0, 0, x / where(n == 0, 1, n))
        if p == 2:
            return g * ratio
        return g * sign(x) * _abs(ratio) ** (p - 1)  # |ratio|^(p-1) is finite for p > 1


def _restore(g: Tensor, axes, ndim: int) -> Tensor:
    """``g`` with the reduced ``axes`` put back as size-1 dims."""
    for axis in sorted(a % ndim for a in axes):
        g = g.unsqueeze(axis)
    return g


def vector_norm(x, /, axis=None, keepdims: bool = False, ord=2) -> Tensor:
    """The vector ``ord``-norm of ``x`` over ``axis`` (all elements when None), as
    ``np.linalg.vector_norm``; differentiable.

    >>> import jitgrad as jg
    >>> v = jg.tensor([3.0, -4.0])
    >>> vector_norm(v).item(), vector_norm(v, ord=1).item()
    (5.0, 7.0)
    """
    x = _float_input(x)
    if isinstance(axis, int):
        axis = (axis,)
    elif axis is not None:
        axis = tuple(axis)
    if axis is None:
        axes = None
    else:
        axes = tuple(a % x.ndim if -x.ndim <= a < x.ndim else _axis_error(a, x.ndim) for a in axis)
    if x.dtype.is_complex:  # a vector norm reads the magnitudes alone: differentiable so
        x = _abs(x)
    if axes is None and keepdims:
        return reshape(VectorNorm(ord=ord, axis=None, keepdims=False)(x), (1,) * x.ndim)
    return VectorNorm(ord=ord, axis=axes, keepdims=keepdims)(x)


def _axis_error(axis: int, ndim: int):
    raise np.exceptions.AxisError(axis, ndim)


def matrix_norm(x, /, keepdims: bool = False, ord="fro") -> Tensor:
    """The matrix ``ord``-norm of each matrix in ``x`` (``np.linalg.matrix_norm``):
    ``"fro"``, ``"nuc"``, ``1``, ``-1``, ``2``, ``-2``, ``inf``, ``-inf``; differentiable.

    >>> import jitgrad as jg
    >>> m = jg.tensor([[1.0, -2.0], [3.0, 4.0]])
    >>> matrix_norm(m, ord=1).item(), matrix_norm(m, ord=np.inf).item()
    (6.0, 7.0)
    """
    x = _float_input(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_norm: expected a stack of matrices, got shape {x.shape}")
    return _matrix_norm(x, ord, (-2, -1), keepdims)


def _matrix_norm(x: Tensor, ord, axes: tuple[int, int], keepdims: bool) -> Tensor:
    row, col = (a % x.ndim for a in axes)
    if row == col:
        raise ValueError("matrix norm: the two axes must differ")
    if ord in ("fro", "f"):
        result = vector_norm(x, axis=(row, col), keepdims=True)
    elif ord in ("nuc", 2, -2):
        rest = [k for k in range(x.ndim) if k not in (row, col)]
        s = svdvals(x.permute(*rest, row, col))
        reduced = {"nuc": reduce.sum, 2: reduce.max, -2: reduce.min}[ord](s, axis=-1)
        result = _restore(reduced, (row, col), x.ndim) if keepdims else reduced
        return result
    elif ord in (1, -1, np.inf, -np.inf):
        summed, over = (row, col) if ord in (1, -1) else (col, row)
        sums = reduce.sum(_abs(x), axis=summed, keepdims=True)
        result = (reduce.max if ord > 0 else reduce.min)(sums, axis=over, keepdims=True)
    else:
        raise ValueError(f"invalid norm order {ord!r} for matrices")
    return result if keepdims else reduce.sum(result, axis=(row, col))


def norm(x, ord=None, axis=None, keepdims: bool = False) -> Tensor:
    """numpy's ``np.linalg.norm``: the 2-norm of all elements by default; a vector norm
    over an integer ``axis`` (or of a 1-d ``x``), a matrix norm over a pair of axes (or of
    a 2-d ``x`` given ``ord``). Differentiable.

    >>> import jitgrad as jg
    >>> norm(jg.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
    5.0
    """
    x = _float_input(x)
    if axis is None:
        if ord is None or (x.ndim == 1 and ord is not None):
            result = vector_norm(x, ord=2 if ord is None else ord)
            return reshape(result, (1,) * x.ndim) if keepdims else result
        if x.ndim != 2:
            raise ValueError("Improper number of dimensions to norm.")
        return _matrix_norm(x, ord, (0, 1), keepdims)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        return vector_norm(x, axis=axes, keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) == 2:
        return _matrix_norm(x, "fro" if ord is None else ord, axes, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def cond(x, p=None) -> Tensor:
    """The condition number of each matrix in ``x`` in the ``p``-norm (``np.linalg.cond``).

    >>> import jitgrad as jg
    >>> cond(jg.tensor([[1.0, 0.0], [0.0, 4.0]])).item()
    4.0
    """
    x = _float_input(x)
    if p in (None, 2, -2):
        s = svdvals(x)
        large, small = reduce.max(s, axis=-1), reduce.min(s, axis=-1)
        return small / large if p == -2 else large / small
    _square(x, "cond")
    return matrix_norm(x, ord=p) * matrix_norm(inv(x), ord=p)


# -- products and powers ---------------------------------------------------------------------


def matrix_power(a, /, n: int) -> Tensor:
    """``a`` multiplied by itself ``n`` times (``np.linalg.matrix_power``): ``n = 0`` gives
    identities, negative ``n`` powers of the inverse. Differentiable.

    >>> import jitgrad as jg
    >>> matrix_power(jg.tensor([[1, 1], [0, 1]]), 3).tolist()
    [[1, 3], [0, 1]]
    """
    a = as_tensor(a)
    _square(a, "matrix_power")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"matrix_power: exponent must be an integer, got {n!r}")
    if n == 0:
        eye = as_tensor(np.eye(a.shape[-1], dtype=a.dtype.numpy))
        return eye.expand(*a.shape).clone()
    if n < 0:
        a, n = inv(a), -n
    result, square = None, a
    while n:  # binary powering: log2(n) squarings
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if n:
            square = matmul(square, square)
    return result


def multi_dot(arrays) -> Tensor:
    """The product of a chain of matrices in the cheapest order (``np.linalg.multi_dot``):
    a 1-d first operand is a row vector, a 1-d last one a column vector. Differentiable.

    >>> import jitgrad as jg
    >>> multi_dot([jg.ones((2, 3)), jg.ones((3, 4)), jg.ones(4)]).tolist()
    [12.0, 12.0]
    """
    xs = [as_tensor(x) for x in arrays]
    if len(xs) < 2:
        raise ValueError("multi_dot: expecting at least two arrays")
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if len(xs) + 1 > len(letters):
        return _chain(xs)
    terms = []
    for i, x in enumerate(xs):
        first, last = i == 0, i == len(xs) - 1
        if x.ndim == 1 and (first or last):
            terms.append(letters[i + 1] if first else letters[i])
        elif x.ndim == 2:
            terms.append(letters[i] + letters[i + 1])
        else:
            raise ValueError(
                f"multi_dot: operand {i} has shape {x.shape}; the first and last may be 1-d, "
                "every operand must be 2-d otherwise"
            )
    out = (letters[0] if xs[0].ndim == 2 else "") + (letters[len(xs)] if xs[-1].ndim == 2 else "")
    return einsum(",".join(terms) + "->" + out, *xs)


def _chain(xs: list[Tensor]) -> Tensor:
    result = xs[0]
    for x in xs[1:]:
        result = matmul(result, x)
    return result


def outer(x1, x2, /) -> Tensor:
    """The outer product of two vectors (the Array API's ``linalg.outer``).

    >>> import jitgrad as jg
    >>> outer(jg.arange(2), jg.arange(3)).tolist()
    [[0, 0, 0], [0, 1, 2]]
    """
    x1, x2 = as_tensor(x1), as_tensor(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer: expected two vectors, got shapes {x1.shape} and {x2.shape}")
    return _outer(x1, x2)


def cross(x1, x2, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``axis`` (other dims broadcast), as
    ``np.linalg.cross``; differentiable.

    >>> import jitgrad as jg
    >>> cross(jg.tensor([0.0, 0.0, 1.0]), jg.tensor([1.0, 0.0, 0.0])).tolist()
    [0.0, 1.0, 0.0]
    """
    x1, x2 = as_tensor(x1), as_tensor(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
            f"{x1.shape[axis]} and {x2.shape[axis]} dimensional instead."
        )
    return _cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset: int = 0) -> Tensor:
    """The diagonals of the matrices in ``x`` (its last two dims), a view (the Array
    API's ``linalg.diagonal``; ``jg.diagonal`` takes numpy's first two dims).

    >>> import jitgrad as jg
    >>> diagonal(jg.arange(8).reshape(2, 2, 2)).tolist()
    [[0, 3], [4, 7]]
    """
    return _diagonal(as_tensor(x), offset, -2, -1)


def trace(x, /, *, offset: int = 0, dtype=None) -> Tensor:
    """The sums along the diagonals of the matrices in ``x`` (its last two dims), as the
    Array API's ``linalg.trace``.

    >>> import jitgrad as jg
    >>> trace(jg.arange(8.0).reshape(2, 2, 2)).tolist()
    [3.0, 11.0]
    """
    return reduce.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def matrix_rank(A, /, tol=None, hermitian: bool = False, *, rtol=None) -> Tensor:
    """The number of singular values of each matrix above the tolerance
    (``np.linalg.matrix_rank``), an int64 tensor.

    >>> import jitgrad as jg
    >>> matrix_rank(jg.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
    1
    """
    values = np.linalg.matrix_rank(as_tensor(A).numpy(), tol=tol, hermitian=hermitian, rtol=rtol)
    return as_tensor(np.asarray(values, dtype=np.int64))


def tensorinv(a, ind: int = 2) -> Tensor:
    """The inverse of ``a`` seen as a matrix of its first ``ind`` dims by the rest
    (``np.linalg.tensorinv``), with shape ``a.shape[ind:] + a.shape[:ind]``.

    >>> import jitgrad as jg
    >>> tensorinv(jg.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    a = _float_input(a)
    if ind <= 0:
        raise ValueError("tensorinv: ind must be a positive integer")
    rows, columns = a.shape[:ind], a.shape[ind:]
    n, m = math.prod(rows), math.prod(columns)
    if n != m:
        raise np.linalg.LinAlgError(
            f"tensorinv: the first {ind} dims of shape {a.shape} hold {n} elements and the "
            f"others {m}: they must be equal"
        )
    return reshape(inv(reshape(a, (n, m))), columns + rows)


def tensorsolve(a, b, axes=None) -> Tensor:
    """The ``x`` with ``tensordot(a, x, x.ndim) == b`` (``np.linalg.tensorsolve``);
    ``axes`` are moved to the end of ``a`` first.

    >>> import jitgrad as jg
    >>> tensorsolve(jg.eye(6).reshape(6, 2, 3), jg.arange(6.0)).shape
    (2, 3)
    """
    a, b = _float_input(a), _float_input(b)
    if axes is not None:
        axes = [axes] if isinstance(axes, int) else list(axes)
        rest = [k for k in range(a.ndim) if k not in [x % a.ndim for x in axes]]
        a = a.permute(*rest, *(x % a.ndim for x in axes))
    solution_shape = a.shape[b.ndim :]
    rows, columns = math.prod(a.shape[: b.ndim]), math.prod(solution_shape)
    if rows != columns:
        raise np.linalg.LinAlgError(
            f"tensorsolve: a's leading dims {a.shape[: b.ndim]} and trailing dims "
            f"{solution_shape} hold {rows} and {columns} elements: they must be equal"
        )
    x = solve(reshape(a, (rows, columns)), reshape(b, (rows,)))
    return reshape(x, solution_shape)
