"""Shape and stride arithmetic. Pure functions of tuples: nothing here touches memory.

Strides are in elements. Element ``(i0, …, in)`` of a tensor lives at
``offset + Σ ik·sk`` of its storage.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

Shape = tuple[int, ...]


MAX_NUMEL = 2**63 - 1


def is_index(value) -> bool:
    """Whether ``value`` is one integer (an int, a numpy integer, a 0-d array or tensor)
    rather than a sequence of them. ``hasattr(value, "__index__")`` alone cannot tell:
    every numpy array and every tensor has the method, whatever its shape."""
    ndim = getattr(value, "ndim", 0)  # (a class, np.int64, has a descriptor there)
    return hasattr(value, "__index__") and not (isinstance(ndim, int) and ndim > 0)


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def contiguous_strides(shape: Sequence[int]) -> Shape:
    strides = []
    step = 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Row-major dense; strides of size-1 dims do not matter, nor any of an empty tensor."""
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def extent(shape: Sequence[int], strides: Sequence[int], offset: int) -> tuple[int, int]:
    """The lowest and highest storage index the tensor touches (None-free: numel > 0)."""
    lo = hi = offset
    for n, s in zip(shape, strides):
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi


def check_in_bounds(shape, strides, offset, storage_size: int) -> None:
    """Raise unless every element of the layout lies inside the storage."""
    for n in shape:
        if n < 0:
            raise ValueError(f"negative dimension in shape {tuple(shape)}")
    if numel(shape) > MAX_NUMEL:
        raise ValueError(f"shape {tuple(shape)} has more than {MAX_NUMEL} elements")
    if numel(shape) == 0:
        if offset < 0 or offset > storage_size:
            raise ValueError(f"storage offset {offset} is outside a storage of size {storage_size}")
        return
    lo, hi = extent(shape, strides, offset)
    if lo < 0 or hi >= storage_size:
        raise ValueError(
            f"shape {tuple(shape)} with strides {tuple(strides)} at offset {offset} reaches "
            f"storage indices [{lo}, {hi}], outside a storage of size {storage_size}"
        )


def as_shape(shape) -> Shape:
    """Normalise ``(2, 3)``, ``[2, 3]``, ``np.array([2, 3])`` or ``2`` to a tuple of
    non-negative ints."""
    if is_index(shape):
        shape = (shape,)
    try:
        dims = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of integers, got {shape!r}") from None
    for n in dims:
        if n < 0:
            raise ValueError(f"negative dimensions are not allowed: {dims}")
    if math.prod(dims) > MAX_NUMEL:
        raise ValueError(
            f"shape {dims} has {math.prod(dims)} elements, more than the {MAX_NUMEL} that "
            "int64 indices (numpy's and the kernels') can address"
        )
    return dims


def normalize_dim(dim: int, ndim: int) -> int:
    dim = operator.index(dim)
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"dimension {dim} is out of range for a tensor of {ndim} dimensions")
    return dim % max(ndim, 1)


def normalize_dims(dims: Sequence[int], ndim: int) -> Shape:
    """``dims`` as non-negative dims, in their order; one named twice (``(0, -2)`` of a
    2-d tensor) is an error, as in numpy and PyTorch, not one flip or sum of it. A 0-d
    tensor takes dim 0 (or -1) for its one element, as in PyTorch: a dim that names no
    dimension, so none come back."""
    norm = tuple(normalize_dim(d, ndim) for d in dims)
    if len(set(norm)) != len(norm):
        raise ValueError(f"repeated axis in {tuple(dims)!r} of a tensor of {ndim} dimensions")
    return norm if ndim else ()


def swapped(ndim: int, a: int, b: int) -> list[int]:
    """The permutation of ``ndim`` dims that swaps dims ``a`` and ``b``. A 0-d tensor's
    dim 0 (-1), as PyTorch names it, is nothing to move: the empty permutation."""
    order = list(range(ndim))
    a, b = normalize_dim(a, ndim), normalize_dim(b, ndim)
    if ndim:
        order[a], order[b] = order[b], order[a]
    return order


def infer_shape(shape, total: int) -> Shape:
    """Resolve one ``-1`` in a requested shape so that it holds ``total`` elements."""
    if is_index(shape):
        shape = (shape,)
    try:
        dims = [operator.index(n) for n in shape]
    except TypeError:
        raise TypeError(f"shape must be a sequence of integers, got {shape!r}") from None
    if -1 not in dims:
        if dims and min(dims) < 0:
            raise ValueError(f"invalid shape {tuple(dims)}")
        if math.prod(dims) != total:
            raise ValueError(f"cannot reshape {total} elements into shape {tuple(dims)}")
        return tuple(dims)
    if dims.count(-1) > 1:
        raise ValueError(f"only one dimension can be -1, got shape {tuple(dims)}")
    if min(dims) < -1:
        raise ValueError(f"invalid shape {tuple(dims)}")
    known = -math.prod(dims)  # (the other sizes' product)
    if known == 0 or total % known:
        raise ValueError(f"cannot reshape {total} elements into shape {tuple(dims)}")
    dims[dims.index(-1)] = total // known
    return tuple(dims)


def view_strides(shape: Shape, strides: Shape, new_shape: Shape) -> Shape | None:
    """Strides that show the same elements in ``new_shape`` without copying, or None.

    Splits and merges only dimensions that are laid out as one contiguous chunk, as
    PyTorch's ``view`` does.
    """
    if numel(shape) == 0 or not shape:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1]
    tensor_numel = 1
    view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base_stride = strides[d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """numpy's broadcasting of several shapes into one."""
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for shape in shapes:
        for i, n in enumerate(shape, start=ndim - len(shape)):
            if n == result[i] or n == 1:
                continue
            if result[i] != 1:
                raise ValueError(
                    "shapes " + ", ".join(str(tuple(s)) for s in shapes) + " cannot be broadcast"
                )
            result[i] = n
    return tuple(result)


def broadcast_strides(shape: Shape, strides: Shape, target: Shape) -> Shape:
    """Strides that show ``shape`` as ``target``, with stride 0 along repeated dims."""
    lead = len(target) - len(shape)
    if lead < 0:
        raise ValueError(f"cannot broadcast shape {shape} to fewer dimensions {target}")
    out = [0] * lead
    for n, s, t in zip(shape, strides, target[lead:]):
        if n == t:
            out.append(s)
        elif n == 1:
            out.append(0)
        else:
            raise ValueError(f"cannot broadcast shape {shape} to {target}")
    return tuple(out)


def broadcast_axes(shape: Shape, target: Shape) -> tuple[int, ...]:
    """The axes of ``shape`` that broadcasting ``target`` up to it added or repeated: what
    summing back to ``target`` reduces over.

    >>> broadcast_axes((4, 3, 5), (3, 1))
    (0, 2)
    """
    lead = len(shape) - len(target)
    return tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(target) if n == 1 and shape[lead + i] != 1
    )


def index_layout(shape: Shape, strides: Shape, offset: int, key) -> tuple[Shape, Shape, int]:
    """Apply a basic index (ints, slices, Ellipsis, None) to a layout."""
    if not isinstance(key, tuple):
        key = (key,)
    consumed = ellipses = 0
    for k in key:  # (a loop: indexing is among the most frequent calls)
        if k is Ellipsis:
            ellipses += 1
        elif k is not None:
            consumed += 1
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > len(shape):
        raise IndexError(
            f"too many indices: tensor has {len(shape)} dimensions, {consumed} were indexed"
        )
    new_shape: list[int] = []
    new_strides: list[int] = []
    dim = 0
    for k in key:
        if k is None:
            new_shape.append(1)
            new_strides.append(0)
        elif k is Ellipsis:
            for _ in range(len(shape) - consumed):
                new_shape.append(shape[dim])
                new_strides.append(strides[dim])
                dim += 1
        elif k.__class__ is slice:
            start, stop, step = k.indices(shape[dim])
            new_shape.append(len(range(start, stop, step)))
            offset += start * strides[dim]
            new_strides.append(strides[dim] * step)
            dim += 1
        elif isinstance(k, bool) or not hasattr(k, "__index__"):
            raise IndexError(
                "only integers, slices, Ellipsis and None are basic indices; "
                f"got {type(k).__name__}"
            )
        else:
            i = operator.index(k)
            n = shape[dim]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
            offset += (i % n) * strides[dim]
            dim += 1
    new_shape.extend(shape[dim:])
    new_strides.extend(strides[dim:])
    return tuple(new_shape), tuple(new_strides), offset


def coalesce(shape: Sequence[int], *stride_sets: Sequence[int]):
    """Merge dimensions that are one chunk in every stride set; drop size-1 dimensions.

    Dimensions keep their order. Returns the shorter shape and stride sets; a copy kernel
    then loops over as few dimensions as the layouts allow.
    """
    dims = [(n, *ss) for n, *ss in zip(shape, *stride_sets) if n != 1]
    merged: list[list[int]] = []
    for n, *ss in dims:
        if merged:
            prev = merged[-1]
            if all(prev[i + 1] == s * n for i, s in enumerate(ss)):
                prev[0] *= n
                for i, s in enumerate(ss):
                    prev[i + 1] = s
                continue
        merged.append([n, *ss])
    new_shape = tuple(m[0] for m in merged)
    return new_shape, *(tuple(m[i + 1] for m in merged) for i in range(len(stride_sets)))
