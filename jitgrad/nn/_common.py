"""Small helpers the layers share."""

from __future__ import annotations

from .. import dtypes


def param_dtype(dtype) -> dtypes.DType:
    """The dtype of a layer's parameters: ``dtype``, or the default floating dtype."""
    d = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    if not d.is_floating_point:
        raise TypeError(f"layer parameters must be floating point, got dtype {d.name}")
    return d
