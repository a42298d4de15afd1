"""Convolutions in PyTorch's spelling: ``conv1d``, ``conv2d``, ``conv_transpose2d``,
``unfold`` and ``fold``, over (N, C, H, W) tensors (1-d ones as images one row high).

A convolution packs the input's windows into columns (im2col) and multiplies them by the
weight in BLAS; the padding is the packing's own, no padded copy of the input is made. The
batch goes through in chunks of a few samples, shared among jitgrad's threads, so the
columns stay in cache instead of growing to kernel-area times the input. Backward keeps
the input, and the columns only of a batch whose columns take no more memory than a
chunk's (the weight's gradient multiplies them again). How the columns lie, by sample, by
window or by tap, follows the images' size (``column_layout``). A jitted plan replays
each chunk's kernel and BLAS calls as its trace worked them out (``_Map``).

Three bilinear maps between an "image" (N, Ci, H, W), its "windows" (N, Cs, OH, OW) and a
weight (Cs, Ci/groups, KH, KW) make up every convolution and both its gradients:

- ``windows_from_image``: conv2d's forward, conv_transpose2d's input gradient;
- ``image_from_windows``: conv_transpose2d's forward, conv2d's input gradient (col2im:
  the columns added back at their windows, one strided add per kernel offset);
- ``weight_from_both``: the weight gradient of either.

The gradient of each is the other two, so one ``Function`` serves all three, and its
backward (made of the same Functions) is differentiable again.
"""

from __future__ import annotations

import contextlib
import math
from typing import NamedTuple

import numpy as np

from .. import backend, dtypes, threads
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.tensor import Tensor, as_tensor, uninitialised
from ..recording import compute, run, same_items
from . import blas, reduce
from .movement import reshape

# Columns of at most this many elements per chunk of the batch: as fast as one product
# over the whole batch or faster, at a fraction of its memory.
_CHUNK_ELEMENTS = 1 << 20
# A batch with columns of at least this many elements is cut into a chunk per thread at
# least, so that every core packs and multiplies; below, sharing costs more than it saves.
_SHARED_FROM = 1 << 17
_SAMPLE_PRODUCTS_FROM = 256  # windows a sample: see sample_products
_WINDOW_COLUMNS_FROM = 16  # taps a window (C·KH·KW): see column_layout
_SUMMED_IN_LOOPS = 1 << 14  # elements a sample: see _channel_sums


class Geometry(NamedTuple):
    """Where the windows lie: ``out`` windows of ``kernel`` taps spaced ``dilation`` apart,
    ``stride`` apart over the image of size ``image`` padded by ``pad_before`` and
    ``pad_after`` (each a (height, width) pair)."""

    kernel: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad_before: tuple[int, int]
    pad_after: tuple[int, int]
    image: tuple[int, int]
    out: tuple[int, int]

    @property
    def padded(self) -> tuple[int, int]:
        return tuple(n + b + a for n, b, a in zip(self.image, self.pad_before, self.pad_after))

    @property
    def is_padded(self) -> bool:
        return any(self.pad_before) or any(self.pad_after)

    def offsets(self):
        """The kernel's taps (i, j), row by row."""
        return ((i, j) for i in range(self.kernel[0]) for j in range(self.kernel[1]))


def window(padded: np.ndarray, geom: Geometry, i: int, j: int) -> np.ndarray:
    """The view of ``padded`` (..., H, W) that tap (i, j) of every window reads: (..., OH,
    OW)."""
    (sh, sw), (dh, dw), (oh, ow) = geom.stride, geom.dilation, geom.out
    return padded[
        ..., i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow - 1) + 1 : sw
    ]


def interior(padded: np.ndarray, geom: Geometry) -> np.ndarray:
    """The image inside ``padded``."""
    (bh, bw), (h, w) = geom.pad_before, geom.image
    return padded[..., bh : bh + h, bw : bw + w]


def loop_kernels(*arrays, columns=None):
    """The kernel backend's window loops when kernels run (``config.backend`` "jit") and
    they take ``arrays`` and ``columns``, else None (numpy's strided passes do the work)."""
    kernels = backend.kernels()
    return None if kernels is None else kernels.window_loops(*arrays, columns=columns)


def _pack_call(image: np.ndarray, geom: Geometry, cols: np.ndarray) -> tuple:
    """im2col as a call, (function, arguments): ``cols`` (N, C, KH, KW, OH, OW), a view of
    either layout (``_columns``), gets the windows of ``image`` (N, C, H, W) padded with
    zeros (the kernels pad a plane at a time, numpy's strided passes read a padded copy
    of the chunk)."""
    kernels = loop_kernels(image, columns=cols)
    if kernels is None:
        return _pack_by_numpy, (image, geom, cols)
    return kernels.move_call(
        image, cols, geom.stride, geom.dilation, geom.pad_before, geom.pad_after, False
    )


def _pack(image: np.ndarray, geom: Geometry, cols: np.ndarray) -> None:
    fn, args = _pack_call(image, geom, cols)
    fn(*args)


def _pack_by_numpy(image: np.ndarray, geom: Geometry, cols: np.ndarray) -> None:
    padded = image
    if geom.is_padded:
        padded = np.zeros((*image.shape[:-2], *geom.padded), image.dtype)
        interior(padded, geom)[...] = image
    for i, j in geom.offsets():
        cols[:, :, i, j] = window(padded, geom, i, j)


def _scatter(cols: np.ndarray, geom: Geometry, image: np.ndarray) -> None:
    fn, args = _scatter_call(cols, geom, image)
    fn(*args)


def _scatter_call(cols: np.ndarray, geom: Geometry, image: np.ndarray) -> tuple:
    """col2im as a call, (function, arguments): add ``cols`` (N, C, KH, KW, OH, OW), a
    view of either layout, into ``image`` (N, C, H, W) at the windows they came from,
    dropping the taps that lie in the padding. Within one tap the windows never overlap
    (stride >= 1), so each strided add is exact."""
    kernels = loop_kernels(image, columns=cols)
    if kernels is None:
        return _scatter_by_numpy, (cols, geom, image)
    return kernels.move_call(
        image, cols, geom.stride, geom.dilation, geom.pad_before, geom.pad_after, True
    )


def _scatter_by_numpy(cols: np.ndarray, geom: Geometry, image: np.ndarray) -> None:
    padded = np.zeros((*image.shape[:-2], *geom.padded), image.dtype) if geom.is_padded else image
    for i, j in geom.offsets():
        view = window(padded, geom, i, j)
        view += cols[:, :, i, j]
    if padded is not image:
        image += interior(padded, geom)


def _one_blas_thread():
    return blas.one_thread if blas.set_blas_threads is not None else contextlib.nullcontext()


class _Map:
    """One of the three maps as the call a Bilinear's forward records (``run``):
    ``chunks(*arrays)`` works out the calls of every chunk of the batch; a later call with
    the same arrays (a jitted plan's replay) runs those calls again, with none of the
    Python that decided them."""

    def __init__(self, chunks):
        self.chunks, self.arrays, self.runner = chunks, (), None

    def __call__(self, *arrays) -> None:
        if not same_items(arrays, self.arrays):
            self.runner, self.arrays = self.chunks(*arrays), arrays
        self.runner()


def _chunked(n: int, per_sample: int, calls_of, sizes, dtype, finish=None):
    """The run of a map over the batch ``range(n)`` in chunks of at most ``_CHUNK_ELEMENTS``
    column elements (``per_sample`` a sample), shared among jitgrad's threads:
    ``calls_of(first, stop, buffers)`` gives a chunk's (function, arguments) calls, with
    ``buffers`` scratch arrays of ``sizes`` elements a sample; then ``finish()``. A batch
    of at most a chunk per thread works its calls out here, once, each chunk with
    scratch arrays of its own; a larger one works out each chunk's as a thread takes it,
    in the scratch arrays of a finished chunk. BLAS runs on one thread meanwhile: the
    chunks keep the cores busy, packing included, and no BLAS thread spins waiting for a
    core another process holds."""
    step = chunk_samples(n, per_sample)
    chunks = [(first, min(first + step, n)) for first in range(0, n, step)]

    def make_buffers():
        return [np.empty(size * step, dtype) for size in sizes]

    if len(chunks) <= threads.count():
        calls = [calls_of(first, stop, make_buffers()) for first, stop in chunks]

        def piece(k):
            for fn, args in calls[k]:
                fn(*args)

    else:
        idle = []  # buffers of finished chunks, for the next

        def piece(k):
            try:
                buffers = idle.pop()  # (atomic: one thread's buffers are never another's)
            except IndexError:
                buffers = make_buffers()
            for fn, args in calls_of(*chunks[k], buffers):
                fn(*args)
            idle.append(buffers)

    def runner() -> None:
        if chunks:
            with _one_blas_thread():
                threads.run(piece, len(chunks))
        if finish is not None:
            finish()

    return runner


def chunk_samples(n: int, per_sample: int) -> int:
    """How many samples of ``per_sample`` column elements a chunk of a batch of ``n``
    holds."""
    step = min(n, _CHUNK_ELEMENTS // max(per_sample, 1))
    if n * per_sample >= _SHARED_FROM:
        step = min(step, -(-n // threads.count()))
    return max(1, step)


def sample_products(geom: Geometry) -> bool:
    """Whether a chunk's columns are laid out sample by sample, (b, C, KH, KW, OH, OW),
    and multiplied one sample at a time: from ``_SAMPLE_PRODUCTS_FROM`` windows a sample
    each product is large enough for BLAS, and the outputs' rows land in place with no
    transposing copy. Below, the chunk's columns are (C, KH, KW, b, OH, OW), one product
    over all its windows."""
    return math.prod(geom.out) >= _SAMPLE_PRODUCTS_FROM


def column_layout(geom: Geometry, channels: int, groups: int) -> str:
    """How a chunk's columns lie and multiply: "sample" (``sample_products``); else, for
    one group of windows of at least ``_WINDOW_COLUMNS_FROM`` taps, "window": each
    window's taps together, (b·OH·OW, C·KH·KW), the windows' rows of the products then
    the tall, narrow ones BLAS runs fastest (a third faster at 64×16×4×4 → 32, with the
    packing twice as fast); else "tap": (C·KH·KW, b·OH·OW)."""
    if sample_products(geom):
        return "sample"
    if groups == 1 and channels * math.prod(geom.kernel) >= _WINDOW_COLUMNS_FROM:
        return "window"
    return "tap"


def _columns(buffer: np.ndarray, channels: int, geom: Geometry, b: int, layout: str):
    """The columns of a chunk of ``b`` samples at ``buffer``'s start, as the products
    read them ((b, C·KH·KW, OH·OW) by sample, (b·OH·OW, C·KH·KW) by window, else
    (C·KH·KW, b·OH·OW)), and as a (b, C, KH, KW, OH, OW) view for packing."""
    kh, kw = geom.kernel
    cols = buffer[: b * channels * kh * kw * math.prod(geom.out)]
    if layout == "sample":
        cols = cols.reshape(b, channels, kh, kw, *geom.out)
        return cols.reshape(b, channels * kh * kw, -1), cols
    if layout == "window":
        cols = cols.reshape(b, *geom.out, channels, kh, kw)
        return cols.reshape(-1, channels * kh * kw), cols.transpose(0, 3, 4, 5, 1, 2)
    cols = cols.reshape(channels, kh, kw, b, *geom.out)
    return cols.reshape(channels * kh * kw, -1), cols.transpose(3, 0, 1, 2, 4, 5)


def _rows(buffer: np.ndarray, groups: int, channels: int, length: int) -> np.ndarray:
    """A (groups, channels/groups, length) view of ``buffer``'s start."""
    return buffer[: channels * length].reshape(groups, channels // groups, length)


def _windows_into_rows_call(windows: np.ndarray, groups: int, rows: np.ndarray) -> tuple:
    """``rows`` (groups, Cs/groups, b·OH·OW) from ``windows`` (b, Cs, OH, OW), as a call."""
    b, cs, oh, ow = windows.shape
    kernels = loop_kernels(windows, rows)
    if kernels is not None:  # (numpy's strided copy of short runs costs 2-4x more)
        return kernels.swap_leading_call(windows.reshape(b, cs, -1), rows.reshape(cs, b, -1))
    source = windows.reshape(b, groups, cs // groups, oh * ow).transpose(1, 2, 0, 3)
    return np.copyto, (rows.reshape(groups, cs // groups, b, oh * ow), source)


def _rows_into_windows_call(rows: np.ndarray, bias, windows: np.ndarray) -> tuple:
    """``windows`` (b, Cs, L) from ``rows`` (groups, Cs/groups, b·L), plus ``bias`` (Cs,)
    or None, as a call."""
    b, cs = windows.shape[:2]
    operands = (rows, windows) if bias is None else (rows, windows, bias)
    kernels = loop_kernels(*operands)
    if kernels is not None:
        return kernels.swap_leading_call(rows.reshape(cs, b, -1), windows, bias)
    source = rows.reshape(cs, b, -1).transpose(1, 0, 2)
    if bias is None:
        return np.copyto, (windows, source)
    return np.add, (source, bias.reshape(cs, 1), windows)


def _swapped_call(source: np.ndarray, bias, target: np.ndarray) -> tuple:
    """``target`` (b, Q, P) = ``source`` (b, P, Q) with its last two axes swapped, plus
    ``bias`` (Q,) or None, as a call: rows by window (b, L, Cs) into windows (b, Cs, L),
    and back."""
    operands = (source, target) if bias is None else (source, target, bias)
    kernels = loop_kernels(*operands)
    if kernels is not None:
        return kernels.swap_last_call(source, target, bias)
    if bias is None:
        return np.copyto, (target, source.mT)
    return np.add, (source.mT, bias.reshape(-1, 1), target)


def windows_from_image(geom: Geometry, groups: int) -> _Map:
    """conv2d, as a map of ``(image, weight, bias, out, kept)``: ``out`` (N, Cs, OH, OW) =
    the weight (Cs, Ci/groups, KH, KW) applied to the windows of ``image`` (N, Ci, H, W),
    plus ``bias`` (Cs,) or None. ``kept``, if not None, holds the whole batch's columns,
    chunk after chunk, for ``weight_from_both`` to reuse."""

    def chunks(image, weight, bias, out, kept):
        n, ci = image.shape[:2]
        cs = weight.shape[0]
        per_sample = ci * math.prod(geom.kernel) * math.prod(geom.out)
        locations = math.prod(geom.out)
        w = weight.reshape(groups, cs // groups, -1)
        layout = column_layout(geom, ci, groups)
        bias_rows = None if bias is None else bias.reshape(groups, cs // groups, 1)

        def calls_of(first, stop, buffers):
            b = stop - first
            buffer = buffers[0] if kept is None else kept[first * per_sample :]
            cols, packed = _columns(buffer, ci, geom, b, layout)
            calls = [_pack_call(image[first:stop], geom, packed)]
            target = out[first:stop].reshape(b, groups, cs // groups, locations)
            if layout == "sample":
                calls.append((np.matmul, (w, cols.reshape(b, groups, -1, locations), target)))
                if bias_rows is not None:
                    calls.append((np.add, (target, bias_rows, target)))
            elif layout == "window":
                rows = buffers[1][: b * locations * cs].reshape(b * locations, cs)
                calls.append((np.matmul, (cols, w[0].T, rows)))
                windows = target.reshape(b, cs, locations)
                calls.append(_swapped_call(rows.reshape(b, locations, cs), bias, windows))
            else:
                rows = _rows(buffers[1], groups, cs, b * locations)
                calls.append((np.matmul, (w, cols.reshape(groups, -1, b * locations), rows)))
                calls.append(_rows_into_windows_call(rows, bias, target.reshape(b, cs, locations)))
            return calls

        rows = 0 if layout == "sample" else cs * locations
        columns = per_sample if kept is None else 0
        return _chunked(n, per_sample, calls_of, (columns, rows), out.dtype)

    return _Map(chunks)


def image_from_windows(geom: Geometry, groups: int) -> _Map:
    """conv_transpose2d, as a map of ``(windows, weight, bias, image)``: ``image`` (N, Ci,
    H, W) = each window's values (N, Cs, OH, OW) spread through the weight (Cs,
    Ci/groups, KH, KW) over its window and summed, plus ``bias`` (Ci,) or None."""

    def chunks(windows, weight, bias, image):
        n, cs = windows.shape[:2]
        ci = weight.shape[1] * groups
        per_sample = ci * math.prod(geom.kernel) * math.prod(geom.out)
        locations = math.prod(geom.out)
        w = weight.reshape(groups, cs // groups, -1).transpose(0, 2, 1)
        layout = column_layout(geom, ci, groups)

        def calls_of(first, stop, buffers):
            b = stop - first
            target = image[first:stop]
            calls = [(target.fill, (0,))]
            cols, packed = _columns(buffers[0], ci, geom, b, layout)
            if layout == "sample":
                source = windows[first:stop].reshape(b, groups, cs // groups, locations)
                calls.append((np.matmul, (w, source, cols.reshape(b, groups, -1, locations))))
            elif layout == "window":
                rows = buffers[1][: b * locations * cs].reshape(b, locations, cs)
                calls.append(
                    _swapped_call(windows[first:stop].reshape(b, cs, locations), None, rows)
                )
                calls.append((np.matmul, (rows.reshape(-1, cs), w[0].T, cols)))
            else:
                rows = _rows(buffers[1], groups, cs, b * locations)
                calls.append(_windows_into_rows_call(windows[first:stop], groups, rows))
                calls.append((np.matmul, (w, rows, cols.reshape(groups, -1, b * locations))))
            calls.append(_scatter_call(packed, geom, target))
            if bias is not None:
                calls.append((np.add, (target, bias.reshape(1, ci, 1, 1), target)))
            return calls

        rows = 0 if layout == "sample" else cs * locations
        return _chunked(n, per_sample, calls_of, (per_sample, rows), image.dtype)

    return _Map(chunks)


def weight_from_both(geom: Geometry, groups: int) -> _Map:
    """The weight gradient of conv2d (windows = the output's gradient) and of
    conv_transpose2d (image = the output's gradient), as a map of ``(image, windows,
    grad, kept)``: ``grad`` (Cs, Ci/groups, KH, KW) = Σ over samples and windows of each
    window's value (N, Cs, OH, OW) times the image's values under it (``image``, (N, Ci,
    H, W)). ``kept``: the image's columns as ``windows_from_image`` packed them, or None."""

    def chunks(image, windows, grad, kept):
        n, ci = image.shape[:2]
        cs = windows.shape[1]
        per_sample = ci * math.prod(geom.kernel) * math.prod(geom.out)
        taps = ci // groups * math.prod(geom.kernel)
        locations = math.prod(geom.out)
        g = grad.reshape(groups, cs // groups, -1)
        partials = {}  # first sample -> that chunk's product, summed in order: reproducible
        layout = column_layout(geom, ci, groups)

        def calls_of(first, stop, buffers):
            b = stop - first
            if kept is None:
                cols, packed = _columns(buffers[0], ci, geom, b, layout)
                calls = [_pack_call(image[first:stop], geom, packed)]
            else:
                cols = _columns(kept[first * per_sample :], ci, geom, b, layout)[0]
                calls = []
            # Each product is the gradient transposed, (C·KH·KW, Cs): BLAS runs the tall,
            # narrow output faster than the wide one (12 against 16 ms at 64×32×32×32 → 64).
            if layout == "sample":
                source = windows[first:stop].reshape(b, groups, cs // groups, locations)
                products = np.empty((b, groups, taps, cs // groups), grad.dtype)
                partial = np.empty(products.shape[1:], grad.dtype)
                columns = cols.reshape(b, groups, -1, locations)
                calls.append((np.matmul, (columns, source.mT, products)))
                calls.append((_sum_samples, (products, partial)))
            elif layout == "window":
                rows = buffers[1][: b * locations * cs].reshape(b, locations, cs)
                calls.append(
                    _swapped_call(windows[first:stop].reshape(b, cs, locations), None, rows)
                )
                partial = np.empty((1, taps, cs), grad.dtype)
                calls.append((np.matmul, (cols.T, rows.reshape(-1, cs), partial[0])))
            else:
                rows = _rows(buffers[1], groups, cs, b * locations)
                calls.append(_windows_into_rows_call(windows[first:stop], groups, rows))
                partial = np.empty((groups, taps, cs // groups), grad.dtype)
                columns = cols.reshape(groups, -1, b * locations)
                calls.append((np.matmul, (columns, rows.mT, partial)))
            partials[first] = partial
            return calls

        def finish():
            g[...] = 0
            for first in sorted(partials):
                np.add(g, partials[first].mT, g)

        rows = 0 if layout == "sample" else cs * locations
        columns = per_sample if kept is None else 0
        return _chunked(n, per_sample, calls_of, (columns, rows), grad.dtype, finish)

    return _Map(chunks)


def _sum_samples(products: np.ndarray, partial: np.ndarray) -> None:
    np.sum(products, axis=0, out=partial)


class Bilinear(Function):
    """One of the three maps (``kind``: "windows", "image" or "weight") of the module
    docstring, of two tensors and an optional bias. Backward is the other two maps."""

    def __init__(self, kind: str, geom: Geometry, groups: int, kept=None):
        self.kind, self.geom, self.groups = kind, geom, groups
        # The forward's columns of the image, when they take no more memory than a chunk's
        # and the weight needs a gradient: "weight" multiplies them again instead of
        # packing.
        self.kept = kept

    def forward(self, a, b, bias=None):
        geom, groups = self.geom, self.groups
        # (C-contiguous images for the window loops; the padding is theirs to read)
        a_array = a.contiguous().numpy()
        b_array = b.contiguous().numpy() if self.kind != "weight" else b.numpy()
        bias_array = None if bias is None else bias.numpy()
        if self.kind == "windows":  # (image, weight)
            out = uninitialised((a.shape[0], b.shape[0], *geom.out), a.dtype)
            n, per_sample = a.shape[0], a.shape[1] * math.prod(geom.kernel + geom.out)
            if b.requires_grad and n * per_sample <= _CHUNK_ELEMENTS:
                self.kept = np.empty(n * per_sample, a_array.dtype)
            out_array = out.numpy()
            run(
                windows_from_image(geom, groups), a_array, b_array, bias_array, out_array, self.kept
            )
        elif self.kind == "image":  # (windows, weight)
            out = uninitialised((a.shape[0], b.shape[1] * groups, *geom.image), a.dtype)
            run(image_from_windows(geom, groups), a_array, b_array, bias_array, out.numpy())
        else:  # (image, windows)
            shape = (b.shape[1], a.shape[1] // groups, *geom.kernel)
            out = uninitialised(shape, a.dtype)
            run(weight_from_both(geom, groups), a_array, b_array, out.numpy(), self.kept)
        return out

    def backward(self, gy):
        a, b = self.inputs[:2]
        geom, groups = self.geom, self.groups

        def apply(kind, x, y):
            return Bilinear(kind, geom, groups)(x, y)

        ga = gb = gbias = None
        if self.kind == "windows":  # a: image, b: weight
            ga = apply("image", gy, b) if a.requires_grad else None
            gb = Bilinear("weight", geom, groups, self.kept)(a, gy) if b.requires_grad else None
        elif self.kind == "image":  # a: windows, b: weight
            ga = apply("windows", gy, b) if a.requires_grad else None
            gb = apply("weight", gy, a) if b.requires_grad else None
        else:  # a: image, b: windows; gy is a weight
            ga = apply("image", b, gy) if a.requires_grad else None
            gb = apply("windows", a, gy) if b.requires_grad else None
        if len(self.inputs) > 2 and self.inputs[2].requires_grad:
            if is_grad_enabled():  # create_graph: a recorded, differentiable sum
                gbias = reduce.sum(gy, (0, 2, 3))
            else:  # numpy's sum over three axes is one pass; the reduction op takes several
                gbias = as_tensor(compute(_channel_sums, gy.numpy()))
        return (ga, gb, gbias)[: len(self.inputs)]

    def _release(self) -> None:
        self.kept = None


def _channel_sums(g: np.ndarray) -> np.ndarray:
    """``g.sum((0, 2, 3))``: for small samples (at most ``_SUMMED_IN_LOOPS`` elements) in
    a loop kernel when the window loops take ``g``; else, of a C-contiguous ``g``, as
    products with a vector of ones, each sample's channels then summed (BLAS's dot
    products take a fifth of the time of numpy's reduction over the outer and inner axes
    alike, and a third of the loop kernel's on large samples)."""
    n, c = g.shape[:2]
    kernels = loop_kernels(g) if g[:1].size <= _SUMMED_IN_LOOPS else None
    if kernels is not None:
        return kernels.channel_sums(g.reshape(n, c, -1))
    if not g.flags.c_contiguous or g.dtype not in (np.float32, np.float64):
        return g.sum((0, 2, 3))
    return (g.reshape(n, c, -1) @ np.ones(math.prod(g.shape[2:]), g.dtype)).sum(0)


class Unfold(Function):
    """im2col as an op: (N, C, H, W) -> (N, C·KH·KW, L); its gradient is ``Fold``."""

    def __init__(self, geom: Geometry):
        self.geom = geom

    def forward(self, x):
        geom = self.geom
        n, c = x.shape[:2]
        out = uninitialised((n, c * math.prod(geom.kernel), math.prod(geom.out)), x.dtype)
        cols = out.numpy().reshape(n, c, *geom.kernel, *geom.out)
        run(_pack, x.contiguous().numpy(), geom, cols)
        return out

    def backward(self, gy):
        return Fold(self.geom)(gy)


class Fold(Function):
    """col2im as an op: (N, C·KH·KW, L) -> (N, C, H, W), overlapping windows summed; its
    gradient is ``Unfold``."""

    needs_input_values = False

    def __init__(self, geom: Geometry):
        self.geom = geom

    def forward(self, cols):
        geom = self.geom
        n, c = cols.shape[0], cols.shape[1] // math.prod(geom.kernel)
        out = uninitialised((n, c, *geom.image), cols.dtype)
        source = cols.numpy().reshape(n, c, *geom.kernel, *geom.out)
        run(_fold, source, geom, out.numpy())
        return out

    def backward(self, gy):
        return Unfold(self.geom)(gy)


def _fold(cols, geom: Geometry, image) -> None:
    image[...] = 0
    _scatter(cols, geom, image)


# -- arguments -------------------------------------------------------------------------------


def pair(name: str, what: str, value, n: int = 2, minimum: int = 1) -> tuple[int, ...]:
    """``value`` (an int or a sequence of ``n`` ints, each at least ``minimum``) as an
    ``n``-tuple."""
    values = (value,) * n if hasattr(value, "__index__") else tuple(value)
    if len(values) != n or not all(
        hasattr(v, "__index__") and not isinstance(v, bool) for v in values
    ):
        raise ValueError(f"{name}: {what} must be an int or {n} ints, got {value!r}")
    values = tuple(int(v) for v in values)
    if any(v < minimum for v in values):
        raise ValueError(f"{name}: {what} must be at least {minimum}, got {value!r}")
    return values


def windows_count(
    name: str, size: int, before: int, after: int, kernel: int, stride: int, dilation: int
) -> int:
    """How many windows fit along a dimension of ``size`` padded by ``before`` and
    ``after`` (rounding down); a ValueError when not even one does."""
    span = dilation * (kernel - 1) + 1
    if size + before + after < span:
        raise ValueError(
            f"{name}: the kernel spans {span} (kernel size {kernel}, dilation {dilation}), "
            f"more than the padded input's {size + before + after} (size {size}, padding "
            f"{before + after} in all)"
        )
    return (size + before + after - span) // stride + 1


def image_input(name: str, x, spatial: int) -> tuple[Tensor, bool]:
    """``x`` as a tensor of ``spatial + 2`` dimensions (a batch of one added to an unbatched
    input), and whether it was unbatched."""
    x = as_tensor(x)
    if x.ndim == spatial + 1:
        return x.reshape(1, *x.shape), True
    if x.ndim != spatial + 2:
        raise ValueError(
            f"{name}: expected a {spatial + 2}-d (batched) or {spatial + 1}-d (unbatched) "
            f"input, got shape {x.shape}"
        )
    return x, False


def check_floating(name: str, *tensors) -> None:
    for t in tensors:
        if t is not None and t.dtype not in (dtypes.float32, dtypes.float64):
            raise TypeError(f"{name}: supports float32 and float64 tensors, got {t.dtype.name}")
    dts = {t.dtype for t in tensors if t is not None}
    if len(dts) > 1:
        raise TypeError(
            f"{name}: input, weight and bias must have one dtype, got "
            f"{', '.join(sorted(d.name for d in dts))}"
        )


def _check_weight(name: str, x: Tensor, weight: Tensor, bias, groups, transposed: bool):
    if isinstance(groups, bool) or not hasattr(groups, "__index__") or groups < 1:
        raise ValueError(f"{name}: groups must be a positive int, got {groups!r}")
    if weight.ndim != 4:
        raise ValueError(f"{name}: weight must be 4-d, got shape {weight.shape}")
    in_channels = x.shape[1]
    if in_channels % groups:
        raise ValueError(
            f"{name}: groups={groups} does not divide the input's {in_channels} channels"
        )
    if transposed:
        if weight.shape[0] != in_channels:
            raise ValueError(
                f"{name}: weight of shape {weight.shape} expects {weight.shape[0]} input "
                f"channels (its dimension 0), got input of shape {x.shape} with {in_channels}"
            )
        out_channels = weight.shape[1] * groups
    else:
        if weight.shape[0] % groups:
            raise ValueError(
                f"{name}: groups={groups} does not divide the weight's {weight.shape[0]} "
                "output channels"
            )
        if weight.shape[1] * groups != in_channels:
            raise ValueError(
                f"{name}: weight of shape {weight.shape} expects {weight.shape[1] * groups} "
                f"input channels ({weight.shape[1]} per group × groups={groups}), got input "
                f"of shape {x.shape} with {in_channels}"
            )
        out_channels = weight.shape[0]
    if bias is not None and bias.shape != (out_channels,):
        raise ValueError(
            f"{name}: bias of shape {bias.shape} should have shape ({out_channels},), one "
            "entry per output channel"
        )
    check_floating(name, x, weight, bias)


def _same_padding(name: str, kernel, dilation, stride):
    if any(s != 1 for s in stride):
        raise ValueError(f"{name}: padding='same' needs stride 1, got stride {stride}")
    # An odd total puts the extra row or column after the image, as PyTorch does.
    total = [d * (k - 1) for k, d in zip(kernel, dilation)]
    return tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)


# -- functional ------------------------------------------------------------------------------


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:  # noqa: A002
    """2-d cross-correlation of (N, C, H, W) (or unbatched (C, H, W)) ``input`` with
    ``weight`` (out_channels, C/groups, KH, KW), as PyTorch's ``F.conv2d``. ``padding`` is
    an int, a pair, "valid" (none) or "same" (the output as large as the input, stride 1).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.conv2d(jg.ones((1, 1, 3, 3)), jg.ones((1, 1, 2, 2))).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    name = "conv2d"
    x, unbatched = image_input(name, input, 2)
    weight = as_tensor(weight)
    bias = None if bias is None else as_tensor(bias)
    _check_weight(name, x, weight, bias, groups, transposed=False)
    kernel = weight.shape[2:]
    stride = pair(name, "stride", stride)
    dilation = pair(name, "dilation", dilation)
    if padding == "same":
        before, after = _same_padding(name, kernel, dilation, stride)
    elif padding == "valid":
        before = after = (0, 0)
    elif isinstance(padding, str):
        raise ValueError(
            f"{name}: padding must be an int, a pair, 'same' or 'valid', got {padding!r}"
        )
    else:
        before = after = pair(name, "padding", padding, minimum=0)
    image = x.shape[2:]
    out = tuple(
        windows_count(name, n, b, a, k, s, d)
        for n, b, a, k, s, d in zip(image, before, after, kernel, stride, dilation)
    )
    geom = Geometry(tuple(kernel), stride, dilation, before, after, tuple(image), out)
    args = (x, weight) if bias is None else (x, weight, bias)
    y = Bilinear("windows", geom, int(groups))(*args)
    return reshape(y, y.shape[1:]) if unbatched else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:  # noqa: A002
    """1-d cross-correlation of (N, C, L) (or unbatched (C, L)) ``input`` with ``weight``
    (out_channels, C/groups, K), as PyTorch's ``F.conv1d``: ``conv2d`` on a one-row image.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.conv1d(jg.arange(5.0).reshape(1, 1, 5), jg.ones((1, 1, 2)), padding="same").tolist()
    [[[1.0, 3.0, 5.0, 7.0, 4.0]]]
    """
    name = "conv1d"
    x, unbatched = image_input(name, input, 1)
    weight = as_tensor(weight)
    if weight.ndim != 3:
        raise ValueError(
            f"{name}: weight must be 3-d (out, in/groups, K), got shape {weight.shape}"
        )
    if not isinstance(padding, str):
        padding = (0, *pair(name, "padding", padding, 1, minimum=0))
    y = conv2d(
        reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2])),
        reshape(weight, (*weight.shape[:2], 1, weight.shape[2])),
        bias,
        (1, *pair(name, "stride", stride, 1)),
        padding,
        (1, *pair(name, "dilation", dilation, 1)),
        groups,
    )
    y = reshape(y, (y.shape[0], y.shape[1], y.shape[3]))
    return reshape(y, y.shape[1:]) if unbatched else y


def conv_transpose2d(
    input,  # noqa: A002
    weight,
    bias=None,
    stride=1,
    padding=0,
    output_padding=0,
    groups=1,
    dilation=1,
) -> Tensor:
    """The transpose (gradient) of ``conv2d`` with respect to its input, as PyTorch's
    ``F.conv_transpose2d``: ``weight`` is (in_channels, out_channels/groups, KH, KW), and
    each output dimension is (n - 1)·stride - 2·padding + dilation·(k - 1) +
    output_padding + 1.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.conv_transpose2d(jg.ones((1, 1, 2, 2)), jg.ones((1, 1, 2, 2)), stride=2).shape
    (1, 1, 4, 4)
    """
    name = "conv_transpose2d"
    x, unbatched = image_input(name, input, 2)
    weight = as_tensor(weight)
    bias = None if bias is None else as_tensor(bias)
    _check_weight(name, x, weight, bias, groups, transposed=True)
    kernel = weight.shape[2:]
    stride = pair(name, "stride", stride)
    dilation = pair(name, "dilation", dilation)
    pad = pair(name, "padding", padding, minimum=0)
    extra = pair(name, "output_padding", output_padding, minimum=0)
    for e, s, d in zip(extra, stride, dilation):
        if e >= max(s, d):
            raise ValueError(
                f"{name}: output_padding {extra} must be smaller than the stride {stride} or "
                f"the dilation {dilation}"
            )
    windows = x.shape[2:]
    image = tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + e + 1
        for n, s, p, d, k, e in zip(windows, stride, pad, dilation, kernel, extra)
    )
    if any(n < 1 for n in image):
        raise ValueError(
            f"{name}: input of shape {x.shape} gives an output of size {image}: the padding "
            f"{pad} is too large"
        )
    geom = Geometry(tuple(kernel), stride, dilation, pad, pad, image, tuple(windows))
    args = (x, weight) if bias is None else (x, weight, bias)
    y = Bilinear("image", geom, int(groups))(*args)
    return reshape(y, y.shape[1:]) if unbatched else y


def _fold_geometry(name, image, kernel_size, dilation, padding, stride) -> Geometry:
    kernel = pair(name, "kernel_size", kernel_size)
    dilation = pair(name, "dilation", dilation)
    pad = pair(name, "padding", padding, minimum=0)
    stride = pair(name, "stride", stride)
    out = tuple(
        windows_count(name, n, p, p, k, s, d)
        for n, p, k, s, d in zip(image, pad, kernel, stride, dilation)
    )
    return Geometry(kernel, stride, dilation, pad, pad, tuple(image), out)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:  # noqa: A002
    """The sliding windows of a (N, C, H, W) (or (C, H, W)) input as columns: (N,
    C·KH·KW, L), L the number of windows, as PyTorch's ``F.unfold``.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.unfold(jg.arange(9.0).reshape(1, 1, 3, 3), 2).tolist()
    [[[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]]
    """
    name = "unfold"
    x, unbatched = image_input(name, input, 2)
    check_floating(name, x)
    geom = _fold_geometry(name, x.shape[2:], kernel_size, dilation, padding, stride)
    y = Unfold(geom)(x)
    return reshape(y, y.shape[1:]) if unbatched else y


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:  # noqa: A002
    """The inverse arrangement of ``unfold``: columns (N, C·KH·KW, L) (or unbatched) summed
    into an (N, C, *output_size) image where windows overlap, as PyTorch's ``F.fold``.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.fold(jg.ones((1, 4, 4)), (3, 3), 2).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    name = "fold"
    cols = as_tensor(input)
    unbatched = cols.ndim == 2
    if unbatched:
        cols = reshape(cols, (1, *cols.shape))
    if cols.ndim != 3:
        raise ValueError(f"{name}: expected a 3-d (batched) or 2-d input, got shape {cols.shape}")
    check_floating(name, cols)
    image = pair(name, "output_size", output_size)
    geom = _fold_geometry(name, image, kernel_size, dilation, padding, stride)
    taps, locations = math.prod(geom.kernel), math.prod(geom.out)
    if cols.shape[1] % taps or cols.shape[2] != locations:
        raise ValueError(
            f"{name}: input of shape {cols.shape} does not fit: dimension 1 must be a multiple "
            f"of the kernel's {taps} taps and dimension 2 the number of windows, {locations}"
        )
    y = Fold(geom)(cols)
    return reshape(y, y.shape[1:]) if unbatched else y


__all__ = ["conv1d", "conv2d", "conv_transpose2d", "unfold", "fold"]
