"""numpy-spelled functions for the tensor views (``jg.reshape(x, shape)`` & co.)."""

from __future__ import annotations

from .creation import asarray
from .tensor import Tensor


def reshape(x, shape) -> Tensor:
    return asarray(x).reshape(shape)


def transpose(x, axes=None) -> Tensor:
    x = asarray(x)
    return x.transpose() if axes is None else x.permute(axes)


def broadcast_to(x, shape) -> Tensor:
    return asarray(x).broadcast_to(shape)


def squeeze(x, axis=None) -> Tensor:
    return asarray(x).squeeze(axis)


def flip(x, axis=None) -> Tensor:
    return asarray(x).flip(axis)
