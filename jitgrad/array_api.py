"""The Array API standard's inspection namespace and interchange: ``jg.__array_api_version__``,
``jg.__array_namespace_info__()`` and ``jg.from_dlpack``.

>>> import jitgrad as jg
>>> info = jg.__array_namespace_info__()
>>> info.default_device(), info.default_dtypes()["indexing"]
(device(type='cpu'), jitgrad.int64)
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .autograd.tensor import Tensor
from .device import CPU, check_device
from .tensor import wrap_numpy

__array_api_version__ = "2024.12"
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


class Info:
    """What this namespace offers, as the standard's ``__array_namespace_info__()`` asks."""

    def capabilities(self) -> dict:
        return {
            "boolean indexing": True,
            "data-dependent shapes": True,
            "max dimensions": 64,
        }

    def default_device(self):
        return CPU

    def devices(self) -> list:
        return [CPU]

    def default_dtypes(self, *, device=None) -> dict:
        check_device(device)
        return {
            "real floating": dtypes.get_default_dtype(),
            "complex floating": dtypes.default_complex_dtype(),
            "integral": dtypes.int64,
            "indexing": dtypes.int64,
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The dtypes of ``kind`` (a kind name or tuple of them, as ``isdtype`` takes; all
        numeric and bool dtypes when None), by name."""
        check_device(device)
        found = [d for d in dtypes.ALL_DTYPES if d.name != "float16"]
        if kind is not None:
            found = [d for d in found if dtypes.isdtype(d, kind)]
        return {d.name: d for d in found}


def __array_namespace_info__() -> Info:
    """The namespace's inspection object: its devices, dtypes and capabilities.

    >>> import jitgrad as jg
    >>> jg.__array_namespace_info__().capabilities()["boolean indexing"]
    True
    """
    return Info()


def from_dlpack(x, /, *, device=None, copy=None) -> Tensor:
    """A tensor over the memory of any object that exports DLPack (a numpy array, a
    PyTorch tensor...), without a copy unless ``copy=True``.

    >>> import numpy as np, jitgrad as jg
    >>> a = np.arange(3.0)
    >>> t = jg.from_dlpack(a)
    >>> t[0] = 7.0
    >>> a.tolist()
    [7.0, 1.0, 2.0]
    """
    check_device(device)
    return wrap_numpy(np.from_dlpack(x, copy=copy), Tensor)
