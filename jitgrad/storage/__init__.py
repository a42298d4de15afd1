"""Flat, typed, one-dimensional buffers (Torch7's Storage, PyTorch's UntypedStorage)."""

from .typed import (
    BoolStorage,
    ByteStorage,
    CharStorage,
    ComplexDoubleStorage,
    ComplexFloatStorage,
    DoubleStorage,
    FloatStorage,
    HalfStorage,
    IntStorage,
    LongStorage,
    ShortStorage,
    Storage,
    UInt16Storage,
    UInt32Storage,
    UInt64Storage,
    storage_class,
)
from .untyped import UntypedStorage

__all__ = [
    "BoolStorage",
    "ByteStorage",
    "CharStorage",
    "ComplexDoubleStorage",
    "ComplexFloatStorage",
    "DoubleStorage",
    "FloatStorage",
    "HalfStorage",
    "IntStorage",
    "LongStorage",
    "ShortStorage",
    "Storage",
    "UInt16Storage",
    "UInt32Storage",
    "UInt64Storage",
    "UntypedStorage",
    "storage_class",
]
