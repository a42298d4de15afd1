"""The saved object as JSON: nested dicts, lists and tuples of tensors and plain values.

The tag scheme is specified in ``format.py``. Encoding checks every value before anything
is written; decoding checks every tag, so a crafted header gets an error, never a surprise.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..autograd.tensor import Tensor
from .format import FormatError

# Exact types only: a numpy float64 is a float subclass, but saving it as a float would
# silently change its type on load.
_PLAIN = (type(None), bool, int, float, str)
_NON_FINITE = ("nan", "inf", "-inf")


def encode(obj, tensor_entry: Callable[[Tensor, str], dict]):
    """The JSON tree of ``obj``; ``tensor_entry(t, where)`` encodes each tensor.

    Raises TypeError naming the type and its place (``obj['layers'][2]``) for anything that
    is not a tensor, a container of them, or a plain value.
    """
    return _encode(obj, "obj", tensor_entry, set())


def _encode(obj, where: str, tensor_entry, active: set[int]):
    kind = type(obj)
    if kind is float:
        return obj if math.isfinite(obj) else {"float": repr(obj)}
    if kind in _PLAIN:
        return obj
    if isinstance(obj, Tensor):
        return {"tensor": tensor_entry(obj, where)}
    if kind not in (dict, list, tuple):
        raise TypeError(
            f"cannot save an object of type {kind.__module__}.{kind.__qualname__} at {where}: "
            "jg.save takes tensors, dicts, lists and tuples of them, and None, bool, int, "
            "float and str"
        )
    if id(obj) in active:
        raise ValueError(f"cannot save a container that contains itself (at {where})")
    active.add(id(obj))
    try:
        if kind is dict:
            items = []
            for key, value in obj.items():
                if type(key) not in _PLAIN:
                    raise TypeError(
                        f"cannot save a dict key of type {type(key).__qualname__} "
                        f"({key!r}) at {where}: keys may be str, int, float, bool or None"
                    )
                items.append(
                    [
                        _encode(key, where, tensor_entry, active),
                        _encode(value, f"{where}[{key!r}]", tensor_entry, active),
                    ]
                )
            return {"dict": items}
        values = [_encode(v, f"{where}[{i}]", tensor_entry, active) for i, v in enumerate(obj)]
        return {kind.__name__: values}
    finally:
        active.discard(id(obj))


def decode(tree, path: str, make_tensor: Callable[[object, str], Tensor]):
    """The object a JSON tree encodes; ``make_tensor(entry, where)`` builds each tensor."""
    try:
        return _decode(tree, "object", path, make_tensor)
    except RecursionError:
        raise FormatError(path, "corrupt header: the object is nested too deeply") from None


def _decode(node, where: str, path: str, make_tensor):
    if type(node) in _PLAIN:
        return node
    if not isinstance(node, dict) or len(node) != 1:
        raise FormatError(path, f"corrupt header: {node!r} at {where} is not a valid tag")
    ((tag, value),) = node.items()
    if tag == "tensor":
        return make_tensor(value, where)
    if tag == "float":
        if value not in _NON_FINITE:
            raise FormatError(path, f"corrupt header: float {value!r} at {where}")
        return float(value)  # a new object each time, as two nan keys must stay two
    if tag in ("list", "tuple") and isinstance(value, list):
        items = [_decode(v, f"{where}[{i}]", path, make_tensor) for i, v in enumerate(value)]
        return items if tag == "list" else tuple(items)
    if tag == "dict" and isinstance(value, list):
        out = {}
        for pair in value:
            if not isinstance(pair, list) or len(pair) != 2:
                raise FormatError(path, f"corrupt header: dict item {pair!r} at {where}")
            key = _decode(pair[0], where, path, make_tensor)
            if type(key) not in _PLAIN:
                raise FormatError(path, f"corrupt header: dict key {pair[0]!r} at {where}")
            out[key] = _decode(pair[1], f"{where}[{key!r}]", path, make_tensor)
        return out
    raise FormatError(path, f"corrupt header: unknown tag {tag!r} (or bad value) at {where}")
