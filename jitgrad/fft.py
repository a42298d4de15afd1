"""``jitgrad.fft``: numpy's ``np.fft`` (pocketfft) on tensors, with numpy's signatures,
normalisations (``norm="backward" | "ortho" | "forward"``) and dtypes (float32 input gives
complex64). The shifts are views and copies of jitgrad ops; the transforms are
differentiable with PyTorch's convention for complex tensors (a real loss L gives a
complex input z the gradient dL/d(re z) + i dL/d(im z)).

>>> import jitgrad as jg
>>> jg.fft.rfft(jg.tensor([1.0, 0.0, -1.0, 0.0])).tolist()
[0j, (2+0j), 0j]
>>> x = jg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
>>> jg.fft.fft(x).real.sum().backward()
>>> x.grad.tolist()
[4.0, 0.0, 0.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from .autograd.function import Function
from .autograd.tensor import Tensor, as_tensor
from .creation import asarray
from .device import check_device
from .ops.complex_parts import conj, real
from .ops.movement import concatenate, write_out
from .ops.numpy_tier import tensor_over
from .recording import compute, compute_all
from .tensor import wrap_numpy

__all__ = [
    "fft",
    "ifft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfft2",
    "irfft2",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]


# The transform each one's gradient runs, by kind: a DFT's adjoint is its inverse without
# the inverse's scaling, which is the inverse with the opposite normalisation.
_COMPLEX = {"fft": "ifft", "fftn": "ifftn", "fft2": "ifft2"}
_COMPLEX |= {inverse: name for name, inverse in _COMPLEX.items()}
_REAL_INPUT = {"rfft": "ifft", "rfftn": "ifftn", "rfft2": "ifftn", "ihfft": "ifft"}
_REAL_OUTPUT = {"irfft": "rfft", "irfftn": "rfftn", "irfft2": "rfftn", "hfft": "rfft"}
_OPPOSITE_NORM = {"backward": "forward", None: "forward", "ortho": "ortho", "forward": "backward"}


class Transform(Function):
    """numpy's transform ``np.fft.<name>`` over a tensor (its keyword arguments fixed).

    Each transform is resizing (zero-padding or truncating ``x`` to ``n``/``s``), then a
    linear map; the gradient is the adjoint of both. For real output (``irfft``: the
    input is half of a Hermitian spectrum) the adjoint counts each half-spectrum entry
    that stands for two (all but the zero and Nyquist frequencies) twice, as PyTorch's
    ``fft_c2r`` gradient. ``hfft`` is ``irfft`` of the conjugate and ``ihfft`` the
    conjugate of ``rfft``, with the opposite normalisation (numpy's definitions).
    """

    differentiates_complex = True
    needs_input_values = False

    def __init__(self, name: str, options: dict):
        self.name, self.options = name, options

    def forward(self, x):
        routine = getattr(np.fft, self.name)
        (y,) = compute_all(lambda a: (routine(a, **self.options),), x.numpy())
        return wrap_numpy(y, Tensor)

    def backward(self, gy):
        x, name = self.inputs[0], self.name
        axes, norm = self._axes(x.ndim), self.options["norm"]
        if name in ("hfft", "ihfft"):  # irfft of conj(x), conj of rfft: the opposite norm
            norm, gy = _OPPOSITE_NORM[norm], conj(gy) if name == "ihfft" else gy
        adjoint_norm = _OPPOSITE_NORM[norm]
        if name in _COMPLEX:
            g = _transform(_COMPLEX[name], gy, axes, adjoint_norm)
        elif name in _REAL_INPUT:  # the half spectrum kept, zero-padded back to the full one
            sizes = [gy.shape[a] for a in axes[:-1]] + [self._last_length(x)]
            g = real(_transform(_REAL_INPUT[name], gy, axes, adjoint_norm, sizes))
        else:
            half = _transform(_REAL_OUTPUT[name], gy, axes, adjoint_norm)
            g = _twice_the_mirrored(half, gy.shape[axes[-1]], axes[-1])
            if name == "hfft":
                g = conj(g)
        return g if g.shape == x.shape else Resize(x.shape)(g)

    def _axes(self, ndim: int) -> list:
        """The axes transformed, last the one a real transform halves (numpy's defaults)."""
        if "axis" in self.options:
            return [self.options["axis"] % ndim]
        axes, sizes = self.options["axes"], self.options["s"]
        if axes is None:
            axes = range(-len(sizes), 0) if sizes is not None else range(ndim)
        return [a % ndim for a in axes]

    def _last_length(self, x) -> int:
        """The length a real-input transform's input has along its halved axis once
        resized: ``n`` or ``s``'s last, else the input's."""
        length = self.options.get("n")
        if "s" in self.options and self.options["s"] is not None:
            length = self.options["s"][-1]
        return x.shape[self._axes(x.ndim)[-1]] if length in (None, -1) else length


def _transform(name: str, x, axes: list, norm: str, sizes=None) -> Tensor:
    """``np.fft.<name>`` over ``axes`` (one axis for the 1-d transforms), as a recorded op."""
    if name in ("fft", "ifft", "rfft"):
        options = {"n": None if sizes is None else sizes[0], "axis": axes[0], "norm": norm}
    else:
        options = {"s": sizes, "axes": axes, "norm": norm}
    return Transform(name, options)(x)


def _twice_the_mirrored(g, length: int, axis: int) -> Tensor:
    """``g``, the half spectrum of a real signal of ``length`` points along ``axis``, with
    each entry that the full spectrum holds twice (itself and its mirror: all but the zero
    and, for an even length, Nyquist frequencies) doubled."""
    half = g.shape[axis]
    weights = np.ones(half, np.finfo(g.dtype.numpy).dtype)
    weights[1 : 1 + length - half] = 2
    shape = [1] * g.ndim
    shape[axis] = half
    return g * asarray(weights.reshape(shape))


class Resize(Function):
    """``x`` zero-padded or truncated at the end of each axis to ``shape``: how numpy's
    transforms fit their input to ``n``/``s``. Its adjoint is the resize back."""

    differentiates_complex = True
    needs_input_values = False

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, x):
        return tensor_over(compute(_resized, x.numpy(), self.shape))

    def backward(self, gy):
        return Resize(self.inputs[0].shape)(gy)


def _resized(a: np.ndarray, shape: tuple) -> np.ndarray:
    out = np.zeros(shape, a.dtype)
    kept = tuple(slice(0, min(n, m)) for n, m in zip(a.shape, shape))
    out[kept] = a[kept]
    return out


def _transformed(name, x, out, **options) -> Tensor:
    for key in ("n", "s"):  # sizes given as tensors
        if isinstance(options.get(key), Tensor):
            options[key] = options[key].tolist()
    return write_out(out, Transform(name, options)(as_tensor(x)))


def _one_axis(name: str, doc: str):
    """numpy's transform ``np.fft.<name>`` along one axis, on a tensor."""

    def transform(x, /, n=None, axis=-1, norm="backward", out=None) -> Tensor:
        return _transformed(name, x, out, n=n, axis=axis, norm=norm)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


def _several_axes(name: str, doc: str, default_axes=None):
    """numpy's transform ``np.fft.<name>`` over ``axes`` (all by default, the last two
    for the 2-d transforms), on a tensor."""

    def transform(x, /, s=None, axes=default_axes, norm="backward", out=None) -> Tensor:
        return _transformed(name, x, out, s=s, axes=axes, norm=norm)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


fft = _one_axis(
    "fft",
    """The discrete Fourier transform along ``axis`` (``np.fft.fft``).

    >>> import jitgrad as jg
    >>> jg.fft.fft(jg.tensor([1.0, 2.0, 3.0, 4.0])).tolist()
    [(10+0j), (-2+2j), (-2+0j), (-2-2j)]
    """,
)
ifft = _one_axis(
    "ifft",
    """The inverse of ``fft`` (``np.fft.ifft``).

    >>> import jitgrad as jg
    >>> jg.fft.ifft(jg.tensor([4.0, 0.0, 0.0, 0.0])).tolist()
    [(1+0j), (1+0j), (1+0j), (1+0j)]
    """,
)
rfft = _one_axis(
    "rfft",
    """The transform of real input, its ``n // 2 + 1`` non-negative frequencies
    (``np.fft.rfft``).

    >>> import jitgrad as jg
    >>> jg.fft.rfft(jg.tensor([1.0, 2.0, 3.0, 4.0])).tolist()
    [(10+0j), (-2+2j), (-2+0j)]
    """,
)
irfft = _one_axis(
    "irfft",
    """The inverse of ``rfft``: real output of ``2 * (m - 1)`` points by default
    (``np.fft.irfft``).

    >>> import jitgrad as jg
    >>> jg.fft.irfft(jg.tensor([4.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """,
)
hfft = _one_axis(
    "hfft",
    """The transform of a Hermitian-symmetric signal given by its first half: real output
    (``np.fft.hfft``).

    >>> import jitgrad as jg
    >>> jg.fft.hfft(jg.tensor([1.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """,
)
ihfft = _one_axis(
    "ihfft",
    """The inverse of ``hfft``: the first half of a real signal's inverse transform
    (``np.fft.ihfft``).

    >>> import jitgrad as jg
    >>> jg.fft.ihfft(jg.tensor([4.0, 0.0, 0.0, 0.0])).real.tolist()
    [1.0, 1.0, 1.0]
    """,
)
fftn = _several_axes(
    "fftn",
    """The n-dimensional transform over ``axes`` (``np.fft.fftn``).

    >>> import jitgrad as jg
    >>> jg.fft.fftn(jg.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[(10+0j), (-2+0j)], [(-4+0j), 0j]]
    """,
)
ifftn = _several_axes(
    "ifftn",
    """The inverse of ``fftn`` (``np.fft.ifftn``).

    >>> import jitgrad as jg
    >>> jg.fft.ifftn(jg.tensor([[4.0, 0.0], [0.0, 0.0]])).tolist()
    [[(1+0j), (1+0j)], [(1+0j), (1+0j)]]
    """,
)
rfftn = _several_axes(
    "rfftn",
    """The n-dimensional transform of real input, the last axis halved
    (``np.fft.rfftn``).

    >>> import jitgrad as jg
    >>> jg.fft.rfftn(jg.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[(10+0j), (-2+0j)], [(-4+0j), 0j]]
    """,
)
irfftn = _several_axes(
    "irfftn",
    """The inverse of ``rfftn``: real output (``np.fft.irfftn``).

    >>> import jitgrad as jg
    >>> jg.fft.irfftn(jg.tensor([[4.0, 0.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """,
)
fft2 = _several_axes(
    "fft2", "``fftn`` over the last two axes (``np.fft.fft2``).", default_axes=(-2, -1)
)
ifft2 = _several_axes(
    "ifft2", "``ifftn`` over the last two axes (``np.fft.ifft2``).", default_axes=(-2, -1)
)
rfft2 = _several_axes(
    "rfft2", "``rfftn`` over the last two axes (``np.fft.rfft2``).", default_axes=(-2, -1)
)
irfft2 = _several_axes(
    "irfft2", "``irfftn`` over the last two axes (``np.fft.irfft2``).", default_axes=(-2, -1)
)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None) -> Tensor:
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``
    (``np.fft.fftfreq``).

    >>> fftfreq(4).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    check_device(device)
    return asarray(np.fft.fftfreq(n, d), dtype=dtype)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None) -> Tensor:
    """The sample frequencies of an ``n``-point real transform (``np.fft.rfftfreq``).

    >>> rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    check_device(device)
    return asarray(np.fft.rfftfreq(n, d), dtype=dtype)


def _shifted(x, axes, forward: bool) -> Tensor:
    x = as_tensor(x)
    if axes is None:
        axes = range(x.ndim)
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    for axis in axes:
        n = x.shape[axis]
        cut = (n + 1) // 2 if forward else n // 2  # the index that moves to the front
        head = x.narrow(axis, 0, cut)
        tail = x.narrow(axis, cut, n - cut)
        x = concatenate([tail, head], axis=axis)
    return x


def fftshift(x, /, axes=None) -> Tensor:
    """The zero-frequency term moved to the centre along ``axes`` (all by default), as
    ``np.fft.fftshift``; differentiable.

    >>> import jitgrad as jg
    >>> fftshift(jg.arange(5)).tolist()
    [3, 4, 0, 1, 2]
    """
    return _shifted(x, axes, True)


def ifftshift(x, /, axes=None) -> Tensor:
    """The inverse of ``fftshift`` (``np.fft.ifftshift``); differentiable.

    >>> import jitgrad as jg
    >>> ifftshift(jg.arange(5)).tolist()
    [2, 3, 4, 0, 1]
    """
    return _shifted(x, axes, False)
