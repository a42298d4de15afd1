"""``jitgrad.fft``: numpy's ``np.fft`` (pocketfft) on tensors, with numpy's signatures,
normalisations (``norm="backward" | "ortho" | "forward"``) and dtypes (float32 input gives
complex64). The shifts are views and copies of jitgrad ops, differentiable; a transform of
a tensor that requires grad refuses with the message every complex result gives, since
jitgrad does not differentiate complex tensors.

>>> import jitgrad as jg
>>> jg.fft.rfft(jg.tensor([1.0, 0.0, -1.0, 0.0])).tolist()
[0j, (2+0j), 0j]
"""

from __future__ import annotations

import numpy as np

from .autograd.function import Function
from .autograd.tensor import Tensor, as_tensor
from .creation import asarray
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


def _transform(name: str):
    routine = getattr(np.fft, name)

    def transform(x, *args, **kwargs):
        options = dict(zip(_PARAMETERS[name], args), **kwargs)
        out = options.pop("out", None)
        for key in ("n", "s"):  # sizes given as tensors
            if isinstance(options.get(key), Tensor):
                options[key] = options[key].tolist()
        return write_out(out, Transform(routine, options)(as_tensor(x)))

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = (
        f"numpy's ``np.fft.{name}`` on a tensor: same arguments, same result and dtype."
    )
    return transform


_ONE_AXIS = ("n", "axis", "norm", "out")
_AXES = ("s", "axes", "norm", "out")
_PARAMETERS = {
    **dict.fromkeys(("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"), _ONE_AXIS),
    **dict.fromkeys(("fft2", "ifft2", "fftn", "ifftn"), _AXES),
    **dict.fromkeys(("rfft2", "irfft2", "rfftn", "irfftn"), _AXES),
}

fft, ifft, fft2, ifft2 = (_transform(n) for n in ("fft", "ifft", "fft2", "ifft2"))
fftn, ifftn, rfft, irfft = (_transform(n) for n in ("fftn", "ifftn", "rfft", "irfft"))
rfft2, irfft2, rfftn, irfftn = (_transform(n) for n in ("rfft2", "irfft2", "rfftn", "irfftn"))
hfft, ihfft = _transform("hfft"), _transform("ihfft")


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None) -> Tensor:
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``
    (``np.fft.fftfreq``).

    >>> fftfreq(4).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    return asarray(np.fft.fftfreq(n, d), dtype=dtype)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None) -> Tensor:
    """The sample frequencies of an ``n``-point real transform (``np.fft.rfftfreq``).

    >>> rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
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


def fftshift(x, axes=None) -> Tensor:
    """The zero-frequency term moved to the centre along ``axes`` (all by default), as
    ``np.fft.fftshift``; differentiable.

    >>> import jitgrad as jg
    >>> fftshift(jg.arange(5)).tolist()
    [3, 4, 0, 1, 2]
    """
    return _shifted(x, axes, True)


def ifftshift(x, axes=None) -> Tensor:
    """The inverse of ``fftshift`` (``np.fft.ifftshift``); differentiable.

    >>> import jitgrad as jg
    >>> ifftshift(jg.arange(5)).tolist()
    [2, 3, 4, 0, 1]
    """
    return _shifted(x, axes, False)
