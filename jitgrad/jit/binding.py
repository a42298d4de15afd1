"""Large plan inputs and results by reference: no copy in, no copy out.

A plan computes on its own buffers. Copying a 64 MiB argument into its buffer and the
result out again costs more than a fused kernel over them (a jitted gradient of a 2^24
chain: 7.7 ms of kernel, 26 ms with the copies). When only kernel launches touch a
buffer, the replay instead points those launches' argument slots at the caller's array
(an input) or hands the buffer itself to the caller and gives the plan a fresh one from
the pool (a result), so an output buffer is recycled only once the caller has dropped
it. Anything else that reads the buffer (a BLAS call, numpy, an optimizer step, a
leaf's ``.grad``) keeps the copies.
"""

from __future__ import annotations

import numpy as np

from .._config import config
from ..tensor import TensorBase


def owner(a: np.ndarray) -> int:
    """The identity of the allocation ``a`` views: arrays with different owners never
    overlap."""
    while isinstance(getattr(a, "base", None), np.ndarray):
        a = a.base
    return id(a.base if a.base is not None else a)


class Slots:
    """The places in launch arguments that hold one buffer's array (and its offset)."""

    def __init__(self):
        self.places: list[tuple[list, int, int | None, int]] = []
        self.written = False

    def point_at(self, array: np.ndarray, offset: int) -> None:
        for args, position, offset_position, traced_offset in self.places:
            args[position] = array
            if offset_position is not None:
                args[offset_position] = traced_offset + offset


def launch_slots(steps) -> dict[int, tuple[np.ndarray, Slots] | None]:
    """Per allocation: the array launches pass for it and its slots; None when another
    step reads or writes that memory, or launches see it through different arrays
    (those buffers keep copying)."""
    found: dict[int, tuple[np.ndarray, Slots] | None] = {}
    for fn, args in steps:
        if not kernel_step(fn):
            for key in owners_in(args):
                found[key] = None
            continue
        outs_from = len(fn.args) - len(fn.outs)
        for position, offset_position in fn.array_positions():
            array = fn.args[position]
            key = owner(array)
            if key not in found:
                found[key] = (array, Slots())
            entry = found[key]
            if entry is None:
                continue
            if entry[0] is not array:
                found[key] = None
                continue
            traced = fn.args[offset_position] if offset_position is not None else 0
            entry[1].places.append((fn.args, position, offset_position, traced))
            entry[1].written |= position >= outs_from
    return found


def kernel_step(fn) -> bool:
    """Whether a step is a kernel call over arrays it names (a ``Launch``, a
    ``reduction.Reduce``, a ``row_fusion.RowLaunch``): which it reads and which it writes
    is known."""
    return hasattr(fn, "array_positions")


def accesses(fn, args) -> tuple[list[int], list[int]]:
    """(the allocations a step reads, those it writes): for any other step than a
    kernel's, every allocation its arguments reach, both ways."""
    if kernel_step(fn):
        return [owner(a) for a in fn.arrays], [owner(o) for o in fn.outs]
    touched = owners_in(args)
    return touched, touched


def slots_of(found, tensor: TensorBase) -> Slots | None:
    """``tensor``'s buffer's slots, when only launches use it, through its own array."""
    array = tensor._storage.kernel_array
    entry = found.get(owner(array))
    return entry[1] if entry is not None and entry[0] is array else None


def big(tensor: TensorBase) -> bool:
    return tensor.numel() >= config.parallel_threshold


def fresh_storage_like(storage, numel: int | None = None):
    """A pooled storage of ``storage``'s type (and size), for a plan whose buffer left
    with a result."""
    return type(storage)._uninitialised(storage.size() if numel is None else numel)


def owners_in(value) -> list[int]:
    """The allocations a recorded call's arguments reach (``arrays_in``)."""
    return [owner(a) for a in arrays_in(value)]


def arrays_in(value) -> list[np.ndarray]:
    """The arrays a recorded call's arguments reach: arrays and tensors' storages, inside
    lists, tuples and dicts (an optimizer step's work list)."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, TensorBase):
        return [value._storage.kernel_array]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in arrays_in(v)]
    if isinstance(value, dict):
        return [a for v in value.values() for a in arrays_in(v)]
    return []
