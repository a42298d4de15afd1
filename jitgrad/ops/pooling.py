"""Pooling in PyTorch's spelling: ``max_pool1d``, ``max_pool2d``, ``avg_pool1d``,
``avg_pool2d`` and the adaptive average and max pools over (N, C, H, W) tensors (1-d ones
as images one row high).

Each pool walks the kernel's taps, one strided view of the padded input per tap (the
windows of ``convolution.py``), so the work is a handful of whole-array numpy passes.
Max pooling keeps which tap won each window and its gradient goes back to that tap
alone; average pooling's gradient is the output's gradient spread evenly over the
window, and the two linear maps are each other's gradient.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.tensor import Tensor, as_tensor, uninitialised
from ..recording import compute, run
from .convolution import Geometry, check_floating, image_input, interior, loop_kernels, pair, window
from .elementwise import where
from .indexing import take_along_axis
from .linalg import matmul
from .movement import reshape
from .reduce import argmax
from .selection import take_at


def cut_interior(padded: np.ndarray, geom: Geometry, image: np.ndarray) -> None:
    """``image`` = the image inside ``padded``."""
    kernels = loop_kernels(padded, image)
    if kernels is not None:  # (numpy's pass over short rows costs several times more)
        kernels.crop(padded, image, geom.pad_before)
    else:
        image[...] = interior(padded, geom)


def fill_padded(image: np.ndarray, padded: np.ndarray, geom: Geometry, fill) -> None:
    """Write ``image`` into ``padded`` with ``fill`` around it (only the border is filled)."""
    kernels = loop_kernels(image, padded)
    if kernels is not None:  # one pass in order, rather than numpy's five strided ones
        kernels.pad(image, padded, geom.pad_before, fill)
        return
    (bh, bw), (h, w) = geom.pad_before, geom.image
    padded[..., :bh, :] = fill
    padded[..., bh + h :, :] = fill
    padded[..., bh : bh + h, :bw] = fill
    padded[..., bh : bh + h, bw + w :] = fill
    interior(padded, geom)[...] = image


def padded_array(image: np.ndarray, geom: Geometry, fill=0) -> np.ndarray:
    """``image`` padded as ``geom`` says (the image itself when there is no padding); the
    copy is recorded, so that a jitted replay pads the replay's image."""
    if not geom.is_padded:
        return image
    padded = np.empty(image.shape[:-2] + geom.padded, image.dtype)
    run(fill_padded, image, padded, geom, fill)
    return padded


def scratch(image: np.ndarray, geom: Geometry) -> np.ndarray:
    """The padded array that values bound for ``image`` land in before it is cut out
    (``image`` itself when unpadded)."""
    if not geom.is_padded:
        return image
    return np.empty((*image.shape[:2], *geom.padded), image.dtype)


def _max_windows(padded, geom: Geometry, out, winner) -> None:
    """``out`` = each window's maximum (NaN if any value is, as PyTorch); ``winner``, unless
    None, = the tap that holds it: the first of equal maxima, the last NaN (PyTorch's
    picks, whose scan keeps a value greater than the maximum so far, or a NaN)."""
    kernels = loop_kernels(padded, out)
    if kernels is not None:
        won = np.empty(out.shape, np.int8) if winner is None else winner
        kernels.max_windows(padded, out, won, geom.kernel, geom.stride, geom.dilation)
        return
    taps = [window(padded, geom, i, j) for i, j in geom.offsets()]
    out[...] = taps[0]
    for values in taps[1:]:
        np.maximum(out, values, out=out)
    if winner is None:
        return
    mask, step = np.empty(out.shape, bool), np.empty_like(winner)
    winner[...] = 0
    for k in range(len(taps) - 1, -1, -1):  # the first equal tap writes last
        _set_where(winner, k, np.equal(taps[k], out, out=mask), step)
    not_a_number = np.isnan(out)
    if not_a_number.any():
        for k, values in enumerate(taps):  # the last NaN writes last
            _set_where(winner, k, np.isnan(values, out=mask) & not_a_number, step)


def _set_where(winner, k: int, mask, step) -> None:
    """``winner[mask] = k`` as arithmetic on whole arrays (winner += (k - winner)·mask):
    several times faster than numpy's masked writes."""
    np.subtract(k, winner, out=step)
    np.multiply(step, mask, out=step)
    winner += step


def _prepare_spread(geom: Geometry, padded) -> bool:
    """Whether windows never share an element (each tap's view can then be written rather
    than added to); zeroes ``padded`` unless the windows tile it."""
    spans = [d * (k - 1) + 1 for k, d in zip(geom.kernel, geom.dilation)]
    disjoint = all(s >= span for s, span in zip(geom.stride, spans))
    tiling = disjoint and geom.dilation == (1, 1) and geom.stride == geom.kernel
    tiling = tiling and all(o * s == n for o, s, n in zip(geom.out, geom.stride, geom.padded))
    if not tiling:
        padded[...] = 0
    return disjoint


def _max_spread(gy, winner, geom: Geometry, padded, image) -> None:
    """``image`` = each window's gradient ``gy`` added at its winning tap. A window's
    gradient is multiplied by the mask of its tap rather than selected by it (several times
    faster than numpy's masked copies), so a NaN or infinite one reaches its whole window."""
    disjoint = _prepare_spread(geom, padded)
    kernels = loop_kernels(gy, padded)
    if kernels is not None:
        where = (geom.kernel, geom.stride, geom.dilation)
        kernels.max_spread(gy, winner, padded, *where, not disjoint)
        if padded is not image:
            cut_interior(padded, geom, image)
        return
    won = np.empty(winner.shape, gy.dtype)
    for k, (i, j) in enumerate(geom.offsets()):
        view = window(padded, geom, i, j)
        np.equal(winner, k, out=won)
        if disjoint:
            np.multiply(gy, won, out=view)
        else:
            view += np.multiply(gy, won, out=won)
    if padded is not image:
        cut_interior(padded, geom, image)


def _flat_indices(winner, geom: Geometry) -> np.ndarray:
    """PyTorch's ``return_indices``: each winner's position in its (H·W) input plane."""
    (sh, sw), (dh, dw), (ph, pw) = geom.stride, geom.dilation, geom.pad_before
    taps_wide = geom.kernel[1]
    rows = np.arange(geom.out[0])[:, None] * sh - ph + (winner // taps_wide) * dh
    columns = np.arange(geom.out[1]) * sw - pw + (winner % taps_wide) * dw
    return (rows * geom.image[1] + columns).astype(np.int64)


def _max_gather(padded, geom: Geometry, winner, out) -> None:
    """``out`` = each window's value at its winning tap."""
    for k, (i, j) in enumerate(geom.offsets()):
        np.copyto(out, window(padded, geom, i, j), where=winner == k)


class MaxPool(Function):
    """Each window's maximum; the winning taps are kept for the gradient, ``MaxSpread``."""

    needs_input_values = False  # (the gradient reads the winners, kept apart)

    def __init__(self, geom: Geometry, keep_winner: bool):
        self.geom, self.keep_winner = geom, keep_winner

    def forward(self, x):
        geom = self.geom
        padded = padded_array(x.numpy(), geom, -np.inf)
        out = uninitialised((*x.shape[:2], *geom.out), x.dtype)
        self.winner = None
        if self.keep_winner:
            taps = math.prod(geom.kernel)
            self.winner = np.empty(out.shape, np.int8 if taps <= 127 else np.int32)
        run(_max_windows, padded, geom, out.numpy(), self.winner)
        return out

    def backward(self, gy):
        return MaxSpread(self.geom, self.winner, self.inputs[0].shape)(gy)


class MaxSpread(Function):
    """Each window's value added at its winning tap (max pooling's gradient); its own
    gradient is ``MaxGather``."""

    needs_input_values = False

    def __init__(self, geom: Geometry, winner, shape):
        self.geom, self.winner, self.shape = geom, winner, shape

    def forward(self, gy):
        gx = uninitialised(self.shape, gy.dtype)
        image = gx.numpy()
        run(_max_spread, gy.numpy(), self.winner, self.geom, scratch(image, self.geom), image)
        return gx

    def backward(self, gg):
        return MaxGather(self.geom, self.winner)(gg)


class MaxGather(Function):
    """Each window's value at its winning tap: the transpose of ``MaxSpread``."""

    needs_input_values = False

    def __init__(self, geom: Geometry, winner):
        self.geom, self.winner = geom, winner

    def forward(self, g):
        padded = padded_array(g.numpy(), self.geom, 0)
        out = uninitialised(self.winner.shape, g.dtype)
        run(_max_gather, padded, self.geom, self.winner, out.numpy())
        return out

    def backward(self, gy):
        return MaxSpread(self.geom, self.winner, self.inputs[0].shape)(gy)


def _average(padded, geom: Geometry, divisor, out) -> None:
    for k, (i, j) in enumerate(geom.offsets()):
        values = window(padded, geom, i, j)
        if k == 0:
            out[...] = values
        else:
            out += values
    out /= divisor


def _average_spread(gy, divisor, geom: Geometry, padded, image) -> None:
    disjoint = _prepare_spread(geom, padded)
    share = gy / divisor
    for i, j in geom.offsets():
        view = window(padded, geom, i, j)
        if disjoint:
            view[...] = share
        else:
            view += share
    if padded is not image:
        cut_interior(padded, geom, image)


class AvgPool(Function):
    """Each window's sum over ``divisor`` (an (OH, OW) array or a number); its gradient is
    ``AvgSpread``."""

    needs_input_values = False

    def __init__(self, geom: Geometry, divisor):
        self.geom, self.divisor = geom, divisor

    def forward(self, x):
        padded = padded_array(x.numpy(), self.geom, 0)
        out = uninitialised((*x.shape[:2], *self.geom.out), x.dtype)
        run(_average, padded, self.geom, self.divisor, out.numpy())
        return out

    def backward(self, gy):
        return AvgSpread(self.geom, self.divisor, self.inputs[0].shape)(gy)


class AvgSpread(Function):
    """Each window's value over ``divisor`` added to every element under the window: the
    transpose of ``AvgPool``, whose gradient it is and which is its gradient."""

    needs_input_values = False

    def __init__(self, geom: Geometry, divisor, shape):
        self.geom, self.divisor, self.shape = geom, divisor, shape

    def forward(self, gy):
        gx = uninitialised(self.shape, gy.dtype)
        image = gx.numpy()
        padded = scratch(image, self.geom)
        run(_average_spread, gy.numpy(), self.divisor, self.geom, padded, image)
        return gx

    def backward(self, gg):
        return AvgPool(self.geom, self.divisor)(gg)


# -- arguments -------------------------------------------------------------------------------


def _pool_geometry(name, x, kernel_size, stride, padding, dilation, ceil_mode) -> Geometry:
    kernel = pair(name, "kernel_size", kernel_size)
    stride = kernel if stride is None or stride == () or stride == [] else stride
    stride = pair(name, "stride", stride)
    pad = pair(name, "padding", padding, minimum=0)
    dilation = pair(name, "dilation", dilation)
    image = tuple(x.shape[2:])
    out, after = [], []
    for n, k, s, p, d in zip(image, kernel, stride, pad, dilation):
        span = d * (k - 1) + 1
        if 2 * p > span:
            raise ValueError(
                f"{name}: padding {padding} should be at most half the kernel's span "
                f"({span}: kernel size {k}, dilation {d})"
            )
        count = (n + 2 * p - span + (s - 1 if ceil_mode else 0)) // s + 1
        # ceil_mode: the last window must start inside the input or its left padding.
        if ceil_mode and (count - 1) * s >= n + p:
            count -= 1
        if count < 1:
            raise ValueError(
                f"{name}: input of shape {x.shape} is too small for kernel size {kernel} "
                f"(dilation {dilation}, padding {pad}): no window fits"
            )
        out.append(count)
        after.append(max(p, (count - 1) * s + span - n - p))  # ceil_mode's last window
    return Geometry(kernel, stride, dilation, pad, tuple(after), image, tuple(out))


def _as_2d(name, input, kernel_size, stride, padding, dilation):  # noqa: A002
    """A 1-d pool's input (N, C, L) or (C, L) as a one-row image, and its arguments as the
    2-d pool's."""
    x, unbatched = image_input(name, input, 1)
    x = reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2]))
    kernel = (1, *pair(name, "kernel_size", kernel_size, 1))
    stride = None if stride is None or stride == () or stride == [] else stride
    stride = kernel if stride is None else (1, *pair(name, "stride", stride, 1))
    padding = (0, *pair(name, "padding", padding, 1, minimum=0))
    dilation = (1, *pair(name, "dilation", dilation, 1))
    return x, unbatched, kernel, stride, padding, dilation


def _from_2d(y: Tensor, unbatched: bool) -> Tensor:
    y = reshape(y, (y.shape[0], y.shape[1], y.shape[3]))
    return reshape(y, y.shape[1:]) if unbatched else y


def _max_from_2d(result, unbatched: bool, return_indices: bool):
    """A 1-d max pool's result from its 2-d pool's: the values, and the indices if asked."""
    if not return_indices:
        return _from_2d(result, unbatched)
    return _from_2d(result[0], unbatched), _from_2d(result[1], unbatched)


# -- functional ------------------------------------------------------------------------------


def max_pool2d(
    input,  # noqa: A002
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode=False,
    return_indices=False,
):
    """The maximum of each window of (N, C, H, W) (or (C, H, W)) ``input``, as PyTorch's
    ``F.max_pool2d``: ``stride`` defaults to ``kernel_size``, padding is -inf, and
    ``return_indices`` also returns each maximum's flat position in its input plane.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.max_pool2d(jg.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    name = "max_pool2d"
    x, unbatched = image_input(name, input, 2)
    check_floating(name, x)
    geom = _pool_geometry(name, x, kernel_size, stride, padding, dilation, ceil_mode)
    # The winners are found only for a gradient or the indices.
    pool = MaxPool(geom, bool(return_indices) or (x.requires_grad and is_grad_enabled()))
    y = pool(x)
    if unbatched:
        y = reshape(y, y.shape[1:])
    if not return_indices:
        return y
    indices = as_tensor(compute(_flat_indices, pool.winner, geom))
    return y, reshape(indices, y.shape)


def max_pool1d(
    input,  # noqa: A002
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode=False,
    return_indices=False,
):
    """The maximum of each window of (N, C, L) (or (C, L)) ``input``, as PyTorch's
    ``F.max_pool1d``.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.max_pool1d(jg.tensor([[[1.0, 3.0, 2.0, 0.0, 5.0]]]), 2, ceil_mode=True).tolist()
    [[[3.0, 2.0, 5.0]]]
    """
    name = "max_pool1d"
    x, unbatched, kernel, stride, padding, dilation = _as_2d(
        name, input, kernel_size, stride, padding, dilation
    )
    result = max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, return_indices)
    return _max_from_2d(result, unbatched, return_indices)


def _window_sizes(n, p, k, s, count, include_pad) -> np.ndarray:
    """PyTorch's divisor along one dimension: each window's length clipped to the padded
    input, or with ``include_pad`` False to the input itself."""
    start = np.arange(count) * s - p
    end = np.minimum(start + k, n + p)
    if include_pad:
        return end - start
    return np.minimum(end, n) - np.maximum(start, 0)


def avg_pool2d(
    input,  # noqa: A002
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
) -> Tensor:
    """The mean of each window of (N, C, H, W) (or (C, H, W)) ``input``, as PyTorch's
    ``F.avg_pool2d``: zero padding counts toward the mean unless ``count_include_pad`` is
    False, and ``divisor_override`` replaces the window size as the divisor.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.avg_pool2d(jg.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """
    name = "avg_pool2d"
    x, unbatched = image_input(name, input, 2)
    check_floating(name, x)
    geom = _pool_geometry(name, x, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or not hasattr(divisor_override, "__index__"):
            raise ValueError(f"{name}: divisor_override must be an int, got {divisor_override!r}")
        if divisor_override == 0:
            raise ValueError(f"{name}: divisor_override must not be zero")
        divisor = x.dtype.numpy.type(divisor_override)
    else:
        sizes = [
            _window_sizes(n, p, k, s, count, count_include_pad)
            for n, p, k, s, count in zip(
                geom.image, geom.pad_before, geom.kernel, geom.stride, geom.out
            )
        ]
        divisor = np.multiply.outer(*sizes).astype(x.dtype.numpy)
    y = AvgPool(geom, divisor)(x)
    return reshape(y, y.shape[1:]) if unbatched else y


def avg_pool1d(
    input,  # noqa: A002
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
) -> Tensor:
    """The mean of each window of (N, C, L) (or (C, L)) ``input``, as PyTorch's
    ``F.avg_pool1d``.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.avg_pool1d(jg.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[2.0, 1.0]]]
    """
    name = "avg_pool1d"
    x, unbatched, kernel, stride, padding, _ = _as_2d(name, input, kernel_size, stride, padding, 1)
    y = avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad)
    return _from_2d(y, unbatched)


def adaptive_windows(n: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's adaptive windows along a dimension of ``n``: window i covers
    [⌊i·n/count⌋, ⌈(i+1)·n/count⌉); returns the starts and the ends."""
    i = np.arange(count)
    return i * n // count, -(-(i + 1) * n // count)


def _averaging_matrix(n: int, count: int, dtype) -> np.ndarray:
    """(count, n): row i averages adaptive window i."""
    start, end = adaptive_windows(n, count)
    columns = np.arange(n)
    inside = (columns >= start[:, None]) & (columns < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _adaptive_size(name: str, image: tuple, output_size) -> tuple[int, ...]:
    """``output_size`` (an int, or one entry per dimension of ``image``, the input's
    spatial sizes, where None keeps that size) as a tuple of ints."""
    spatial = len(image)
    if isinstance(output_size, (tuple, list)):
        size = tuple(output_size)
    else:
        size = (output_size,) * spatial
    if len(size) != spatial:
        wanted = "an int" if spatial == 1 else f"an int or {spatial} entries"
        raise ValueError(f"{name}: output_size must be {wanted}, got {output_size!r}")
    size = tuple(n if s is None else s for n, s in zip(image, size))
    return pair(name, "output_size", size, spatial)


def _adaptive_input_2d(name: str, input, output_size):  # noqa: A002
    """An adaptive 2-d pool's input as (N, C, H, W), whether it was unbatched, and its
    ``output_size`` as a pair of ints."""
    x, unbatched = image_input(name, input, 2)
    check_floating(name, x)
    return x, unbatched, _adaptive_size(name, x.shape[2:], output_size)


def _adaptive_input_1d(name: str, input, output_size):  # noqa: A002
    """An adaptive 1-d pool's input (N, C, L) or (C, L) as a batch of one-row images
    (N, C, 1, L), whether it was unbatched, and its ``output_size`` as an int."""
    x, unbatched = image_input(name, input, 1)
    check_floating(name, x)
    (size,) = _adaptive_size(name, x.shape[2:], output_size)
    return reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2])), unbatched, size


def _even_kernel(image: tuple, size: tuple) -> tuple[int, int] | None:
    """The kernel of the windows that tile ``image`` evenly into ``size`` (so that plain
    pooling with that kernel as its stride is the adaptive pool), or None if they do not."""
    h, w = image
    if h % size[0] == 0 and w % size[1] == 0 and h and w:
        return h // size[0], w // size[1]
    return None


def adaptive_avg_pool2d(input, output_size) -> Tensor:  # noqa: A002
    """Average pooling of (N, C, H, W) (or (C, H, W)) ``input`` down to ``output_size`` (an
    int, or a pair whose None entries keep the input's size), with PyTorch's windows: row i
    of the output averages rows ⌊i·H/OH⌋ to ⌈(i+1)·H/OH⌉.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.adaptive_avg_pool2d(jg.arange(16.0).reshape(1, 1, 4, 4), 1).tolist()
    [[[[7.5]]]]
    """
    name = "adaptive_avg_pool2d"
    x, unbatched, size = _adaptive_input_2d(name, input, output_size)
    kernel = _even_kernel(x.shape[2:], size)
    if kernel is not None:
        y = avg_pool2d(x, kernel, kernel)
    else:
        # Windows of uneven sizes: one averaging matrix per dimension.
        h, w = x.shape[2:]
        dtype = x.dtype.numpy
        rows = as_tensor(_averaging_matrix(h, size[0], dtype))
        columns = as_tensor(_averaging_matrix(w, size[1], dtype).T.copy())
        y = matmul(rows, matmul(x, columns))
    return reshape(y, y.shape[1:]) if unbatched else y


def adaptive_avg_pool1d(input, output_size) -> Tensor:  # noqa: A002
    """Average pooling of (N, C, L) (or (C, L)) ``input`` down to ``output_size``
    windows, as PyTorch's ``F.adaptive_avg_pool1d``: output i averages elements
    ⌊i·L/OL⌋ to ⌈(i+1)·L/OL⌉.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.adaptive_avg_pool1d(jg.tensor([[[1.0, 3.0, 2.0, 0.0, 4.0]]]), 2).tolist()
    [[[2.0, 2.0]]]
    """
    name = "adaptive_avg_pool1d"
    x, unbatched, size = _adaptive_input_1d(name, input, output_size)
    return _from_2d(adaptive_avg_pool2d(x, (1, size)), unbatched)


def _max_along(x: Tensor, axis: int, count: int) -> tuple[Tensor, Tensor]:
    """The maximum of each of ``count`` adaptive windows along ``axis`` of ``x``, and the
    position along ``axis`` of the first element that holds it (PyTorch's pick).

    Every window is gathered as one row of the widest window's width (the shorter ones
    filled with -inf), so the work is whole-array ops, whatever the windows' sizes."""
    n = x.shape[axis]
    start, end = adaptive_windows(n, count)
    width = int((end - start).max())
    taps = start[:, None] + np.arange(width)
    inside = taps < end[:, None]
    trailing = (1,) * (x.ndim - axis - 1)
    candidates = gathered = take_at(x, np.minimum(taps, end[:, None] - 1), axis)
    if not inside.all():
        candidates = where(as_tensor(inside.reshape(inside.shape + trailing)), gathered, -np.inf)
    winner = argmax(candidates, axis + 1, keepdims=True)
    values = take_along_axis(gathered, winner, axis + 1)
    kept = x.shape[:axis] + (count,) + x.shape[axis + 1 :]
    positions = reshape(winner, kept) + as_tensor(start.reshape((count,) + trailing))
    return reshape(values, kept), positions


def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    """Max pooling of (N, C, H, W) (or (C, H, W)) ``input`` down to ``output_size`` (an
    int, or a pair whose None entries keep the input's size) over PyTorch's adaptive
    windows; ``return_indices`` also returns each maximum's flat position in its input
    plane. Of equal maxima the first in row-major order wins, as in PyTorch.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.adaptive_max_pool2d(jg.arange(9.0).reshape(1, 1, 3, 3), 2).tolist()
    [[[[4.0, 5.0], [7.0, 8.0]]]]
    """
    name = "adaptive_max_pool2d"
    x, unbatched, size = _adaptive_input_2d(name, input, output_size)
    kernel = _even_kernel(x.shape[2:], size)
    if kernel is not None:
        result = max_pool2d(x, kernel, kernel, return_indices=return_indices)
        y, indices = result if return_indices else (result, None)
    else:
        # A rectangle's maximum is the maximum over rows of each row's maximum. Columns
        # first, so that of equal maxima the first row's wins, as in PyTorch's scan.
        w = x.shape[3]
        by_column, columns = _max_along(x, 3, size[1])
        y, rows = _max_along(by_column, 2, size[0])
        if return_indices:
            indices = rows * w + take_along_axis(columns, rows, 2)
    if unbatched:
        y = reshape(y, y.shape[1:])
    if not return_indices:
        return y
    return y, reshape(indices, y.shape)


def adaptive_max_pool1d(input, output_size, return_indices=False):  # noqa: A002
    """Max pooling of (N, C, L) (or (C, L)) ``input`` down to ``output_size`` windows, as
    PyTorch's ``F.adaptive_max_pool1d`` (``return_indices`` also returns each maximum's
    position).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.adaptive_max_pool1d(jg.tensor([[[1.0, 3.0, 2.0, 0.0, 5.0]]]), 2).tolist()
    [[[3.0, 5.0]]]
    """
    name = "adaptive_max_pool1d"
    x, unbatched, size = _adaptive_input_1d(name, input, output_size)
    result = adaptive_max_pool2d(x, (1, size), return_indices)
    return _max_from_2d(result, unbatched, return_indices)


__all__ = [
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
]
