"""Element access shared by untyped (bytes) and typed storages."""

from __future__ import annotations

import numpy as np

from . import kernels
from .convert import NOT_HALF

_REPR_EDGE = 10  # elements shown at each end of a long storage


class ElementOps:
    """Methods that only need ``array``, ``kernel_array``, ``dtype`` and ``_new_like``."""

    __array_priority__ = -1  # storages are not arrays: numpy must not try to broadcast them
    # The copy kernels' flag for ``kernel_array`` (``convert.HALF`` for float16's bits).
    half_flag = NOT_HALF

    def __len__(self) -> int:
        return self.array.size

    def size(self) -> int:
        return self.array.size

    def element_size(self) -> int:
        return self.dtype.itemsize

    def _index(self, i) -> int:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"storage indices must be integers, not {type(i).__name__}")
        n = self.array.size
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range for a storage of size {n}")
        return int(i) % n

    def __getitem__(self, i):
        return self.array[self._index(i)].item()

    def __setitem__(self, i, value) -> None:
        self._check_writable()
        self.array[self._index(i)] = self._cast_scalar(value)

    def _check_writable(self) -> None:
        """Every write to a storage's elements comes here first: one that wraps a read-only
        numpy array says so (the kernels would fail to compile for it, numpy with its own
        words)."""
        if not self.array.flags.writeable:
            raise ValueError(
                f"{self._type_name()} is read-only: it shares memory with a read-only buffer"
            )

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return self.array.tolist()

    def _cast_scalar(self, value):
        # numpy's scalar conversion raises for out-of-range ints, complex into real, text.
        if isinstance(value, ElementOps) or np.ndim(value) != 0:
            raise TypeError(f"expected a scalar, got {type(value).__name__}")
        return np.array(value, dtype=self.dtype.numpy)

    def _kernel_scalar(self, value):
        """``value`` cast to this storage's type, as the kernels see it (half as bits)."""
        return self._cast_scalar(value).reshape(1).view(self.kernel_array.dtype)[0]

    def fill_(self, value):
        """Set every element to ``value`` (cast to the storage's type)."""
        self._check_writable()
        kernels.fill(self.kernel_array, 0, self.array.size, self._kernel_scalar(value))
        return self

    def copy_(self, other):
        """Copy ``other``'s elements into this storage, casting; sizes must match."""
        if not isinstance(other, ElementOps):
            raise TypeError(f"copy_ expects a storage, got {type(other).__name__}")
        if other.size() != self.size():
            raise ValueError(f"copy_ needs storages of equal size: {self.size()} != {other.size()}")
        self._check_writable()
        source = other.kernel_array
        if np.may_share_memory(source, self.kernel_array):
            source = source.copy()  # overlapping views of one storage: as numpy's x[1:] = x[:-1]
        flags = other.half_flag, self.half_flag
        kernels.copy(source, flags[0], 0, self.kernel_array, flags[1], 0, self.size())
        return self

    def clone(self):
        """A new storage of the same type holding a copy of the elements."""
        return self._new_like(self.size()).copy_(self)

    def __repr__(self) -> str:
        values = self.array
        if values.size > 2 * _REPR_EDGE:
            lines = [*map(_format, values[:_REPR_EDGE]), "...", *map(_format, values[-_REPR_EDGE:])]
        else:
            lines = [_format(v) for v in values]
        width = max(map(len, lines), default=0)
        body = "".join(f" {line:>{width}}\n" for line in lines)
        return f"{body}[jitgrad.{self._type_name()} of size {values.size}]"


def _format(value) -> str:
    if isinstance(value, np.floating):
        return np.format_float_positional(value, trim="-")
    return str(value.item())
