"""Functions that reshape or resample tensors, in PyTorch's functional spelling:
``one_hot``, ``pad`` (constant, reflect, replicate, circular) and ``interpolate``
(nearest, linear, bilinear).

Padding and resampling gather input elements at indices that depend on the shapes alone,
so their gradients are the scatter-adds of those gathers (and, for linear modes, of the
interpolation weights).
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.tensor import Tensor, as_tensor
from ..ops.indexing import pad as _numpy_pad
from ..ops.selection import take_at
from ..recording import compute

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor of ``tensor``'s shape plus a last axis of ``num_classes``, 1 at each
    label and 0 elsewhere; ``num_classes=-1`` takes one more than the largest label.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.one_hot(jg.tensor([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    labels = as_tensor(tensor)
    if not labels.dtype.is_integer:
        raise TypeError(f"one_hot: tensor must hold integer class labels, got {labels.dtype.name}")
    num_classes = int(num_classes)
    if num_classes == -1:
        if labels.numel() == 0:
            raise ValueError("one_hot: cannot infer num_classes from an empty tensor")
        num_classes = int(labels.numpy().max()) + 1
    elif num_classes < 0:
        raise ValueError(f"one_hot: num_classes must be -1 or non-negative, got {num_classes}")
    # In compute(): a jitted step checks and encodes every call's labels.
    return as_tensor(compute(_one_hot, labels.numpy(), num_classes))


def _one_hot(labels: np.ndarray, num_classes: int) -> np.ndarray:
    bad = (labels < 0) | (labels >= num_classes)
    if bad.any():
        raise ValueError(
            f"one_hot: class value {int(labels[bad].flat[0])} is out of range for "
            f"num_classes={num_classes} (values lie in [0, {num_classes - 1}])"
        )
    return (labels[..., None] == np.arange(num_classes)).astype(np.int64)


def pad(input, pad, mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """Pad the last ``len(pad) // 2`` dimensions of ``input``: ``pad`` lists (before,
    after) widths from the last dimension backwards, ``(left, right, top, bottom, ...)``.

    ``"constant"`` fills with ``value`` (0 when None) and crops where a width is negative;
    ``"reflect"`` mirrors without repeating the edge, ``"replicate"`` repeats it and
    ``"circular"`` wraps around: these pad the last 1 to 3 dimensions of an input with one
    or two more (batch, channel).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.pad(jg.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect").tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    x = as_tensor(input)
    widths = tuple(_width(p, "pad") for p in pad)
    if len(widths) % 2 or len(widths) // 2 > x.ndim:
        raise ValueError(
            f"pad: pad must hold an even number of widths, two per padded dimension and at "
            f"most {2 * x.ndim} for input of shape {x.shape}, got {tuple(pad)}"
        )
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be one of {list(_PAD_MODES)}, got {mode!r}")
    k = len(widths) // 2
    pairs = [(0, 0)] * (x.ndim - k) + [(widths[2 * i], widths[2 * i + 1]) for i in range(k)][::-1]
    if mode == "constant":
        grown = [(max(a, 0), max(b, 0)) for a, b in pairs]
        if any(a or b for a, b in grown):
            x = _numpy_pad(x, grown, "constant", constant_values=0 if value is None else value)
        if any(a < 0 or b < 0 for a, b in pairs):
            x = x[tuple(slice(max(-a, 0), n - max(-b, 0)) for (a, b), n in zip(pairs, x.shape))]
        return x
    if value is not None and value != 0:
        raise ValueError(f"pad: value applies to mode 'constant' only, not {mode!r}")
    if not 1 <= k <= 3 or x.ndim not in (k + 1, k + 2):
        raise ValueError(
            f"pad: mode {mode!r} pads the last 1 to 3 dimensions of an input with one or two "
            f"more (batch, channel): got {k} padded dimension(s) for input of shape {x.shape}"
        )
    for (a, b), n, d in zip(pairs[x.ndim - k :], x.shape[x.ndim - k :], range(x.ndim - k, x.ndim)):
        if a < 0 or b < 0:
            raise ValueError(f"pad: negative widths crop in mode 'constant' only, not {mode!r}")
        if not (a or b):
            continue
        if n == 0:
            raise ValueError(f"pad: mode {mode!r} cannot pad dimension {d} of size 0")
        # (replicate repeats the edge as often as asked; the others copy input elements once)
        if mode != "replicate" and not max(a, b) < n + (mode == "circular"):
            bound = "less than" if mode == "reflect" else "at most"
            raise ValueError(
                f"pad: in mode {mode!r} the widths {(a, b)} of dimension {d} must be {bound} "
                f"its size {n}"
            )
    return _numpy_pad(x, pairs, _PAD_MODES[mode])


def _width(value, name: str) -> int:
    try:
        return int(value.__index__())
    except AttributeError:
        raise TypeError(f"{name}: widths must be integers, got {value!r}") from None


_INTERPOLATE_DIMS = {"nearest": (1, 2), "linear": (1,), "bilinear": (2,)}


def interpolate(
    input,  # noqa: A002
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
) -> Tensor:
    """Resample the spatial dimensions of an (N, C, L) or (N, C, H, W) input to ``size``
    or by ``scale_factor`` (one of the two), as PyTorch: ``"nearest"`` copies the input
    element at floor(out_index·scale); ``"linear"`` (3-d) and ``"bilinear"`` (4-d)
    interpolate between the two nearest inputs along each dimension, with the input's
    corner elements at the output's corners when ``align_corners``, otherwise aligning
    the pixels' areas. ``recompute_scale_factor`` maps positions by the sizes rather than
    by the given ``scale_factor``.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.interpolate(jg.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    >>> F.interpolate(jg.tensor([[[1.0, 2.0]]]), size=4, mode="linear").tolist()
    [[[1.0, 1.25, 1.75, 2.0]]]
    """
    x = as_tensor(input)
    if mode not in _INTERPOLATE_DIMS:
        raise ValueError(
            f"interpolate: mode must be one of {list(_INTERPOLATE_DIMS)}, got {mode!r}"
        )
    spatial = x.ndim - 2
    if spatial not in _INTERPOLATE_DIMS[mode]:
        wanted = " or ".join(f"{d + 2}-d" for d in _INTERPOLATE_DIMS[mode])
        raise ValueError(
            f"interpolate: mode {mode!r} needs {wanted} input (N, C, spatial...), got shape "
            f"{x.shape}"
        )
    if mode == "nearest" and align_corners is not None:
        raise ValueError("interpolate: align_corners applies to the linear modes only")
    sizes, scales = _output_sizes(x.shape[2:], size, scale_factor, recompute_scale_factor)
    if mode != "nearest" and not x.dtype.is_floating_point:
        raise TypeError(f"interpolate: mode {mode!r} needs floating input, got {x.dtype.name}")
    dtype = np.dtype(x.dtype.numpy).type
    for d, (n_in, n_out, scale) in enumerate(zip(x.shape[2:], sizes, scales)):
        axis = 2 + d
        if mode == "nearest":
            x = take_at(x, _nearest_indices(n_in, n_out, scale), axis)
            continue
        low, high, frac = _linear_sources(n_in, n_out, scale, bool(align_corners), dtype)
        shape = [1] * x.ndim
        shape[axis] = n_out
        w_high = as_tensor(frac.reshape(shape))
        x = take_at(x, low, axis) * (1 - w_high) + take_at(x, high, axis) * w_high
    return x


def _output_sizes(in_sizes, size, scale_factor, recompute) -> tuple[list[int], list]:
    """The output sizes, and the scale factor that maps positions along each dimension
    (None: by the sizes)."""
    k = len(in_sizes)
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size and scale_factor")
    if size is not None:
        sizes = [size] * k if hasattr(size, "__index__") else list(size)
        if len(sizes) != k or any(int(s) <= 0 for s in sizes):
            raise ValueError(
                f"interpolate: size must be one positive int or {k} of them, got {size!r}"
            )
        return [int(s) for s in sizes], [None] * k
    factors = [scale_factor] * k if np.ndim(scale_factor) == 0 else list(scale_factor)
    if len(factors) != k or not all(float(f) > 0 for f in factors):
        raise ValueError(
            f"interpolate: scale_factor must be one positive number or {k} of them, got "
            f"{scale_factor!r}"
        )
    sizes = [math.floor(n * float(f)) for n, f in zip(in_sizes, factors)]
    if any(s <= 0 for s in sizes):
        raise ValueError(
            f"interpolate: scale_factor {scale_factor!r} gives an empty output for spatial "
            f"size {tuple(in_sizes)}"
        )
    return sizes, ([None] * k if recompute else [float(f) for f in factors])


def _nearest_indices(n_in: int, n_out: int, scale) -> np.ndarray:
    # In float32, as PyTorch computes them: the same floor at every ratio.
    ratio = np.float32(1 / scale if scale is not None else n_in / n_out)
    return np.minimum(np.floor(np.arange(n_out, dtype=np.float32) * ratio), n_in - 1).astype(
        np.int64
    )


def _linear_sources(n_in: int, n_out: int, scale, align_corners: bool, dtype):
    """For each output position: the lower and upper input indices, and the upper one's
    weight."""
    out = np.arange(n_out, dtype=dtype)
    if align_corners:
        ratio = dtype((n_in - 1) / (n_out - 1)) if n_out > 1 else dtype(0)
        src = out * ratio
    else:
        ratio = dtype(1 / scale if scale is not None else n_in / n_out)
        src = np.maximum(ratio * (out + dtype(0.5)) - dtype(0.5), 0)
    low = np.minimum(src.astype(np.int64), n_in - 1)
    high = np.minimum(low + 1, n_in - 1)
    return low, high, (src - low).astype(dtype)


__all__ = ["one_hot", "pad", "interpolate"]
