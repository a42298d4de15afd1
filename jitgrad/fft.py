"""``jitgrad.fft``: numpy's ``np.fft`` (pocketfft) on tensors, with numpy's signatures,
normalisations (``norm="backward" | "ortho" | "forward"``) and dtypes (float32 input gives
complex64). The shifts are views and copies of jitgrad ops, differentiable; a transform of
a tensor that requires grad refuses: the transforms define no gradient.

>>> import jitgrad as jg
>>> jg.fft.rfft(jg.tensor([1.0, 0.0, -1.0, 0.0])).tolist()
[0j, (2+0j), 0j]
"""

from __future__ import annotations

import numpy as np

from .autograd.function import Function
from .autograd.tensor import Tensor, as_tensor
from .creation import asarray
from .device import check_device
from .ops.movement import concatenate, write_out
from .recording import compute_all
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


class Transform(Function):
    """One of numpy's transforms over a tensor (its keyword arguments fixed)."""

    def __init__(self, routine, options: dict):
        self.routine, self.options = routine, options

    def forward(self, x):
        (y,) = compute_all(lambda a: (self.routine(a, **self.options),), x.numpy())
        return wrap_numpy(y, Tensor)


def _transformed(routine, x, out, **options) -> Tensor:
    for key in ("n", "s"):  # sizes given as tensors
        if isinstance(options.get(key), Tensor):
            options[key] = options[key].tolist()
    return write_out(out, Transform(routine, options)(as_tensor(x)))


def _one_axis(name: str, doc: str):
    """numpy's transform ``np.fft.<name>`` along one axis, on a tensor."""
    routine = getattr(np.fft, name)

    def transform(x, /, n=None, axis=-1, norm="backward", out=None) -> Tensor:
        return _transformed(routine, x, out, n=n, axis=axis, norm=norm)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


def _several_axes(name: str, doc: str, default_axes=None):
    """numpy's transform ``np.fft.<name>`` over ``axes`` (all by default, the last two
    for the 2-d transforms), on a tensor."""
    routine = getattr(np.fft, name)

    def transform(x, /, s=None, axes=default_axes, norm="backward", out=None) -> Tensor:
        return _transformed(routine, x, out, s=s, axes=axes, norm=norm)

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
