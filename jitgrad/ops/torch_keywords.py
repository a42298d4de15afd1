"""PyTorch's keyword names on numpy's functions, in one place.

jitgrad's functions take numpy's parameter names (``axis``, ``keepdims``, ``axis1``).
``@torch_keywords`` lets each also take PyTorch's (``dim``, ``keepdim``, ``dim1``), so
``jg.sum(x, dim=1, keepdim=True)`` and ``jg.cat(xs, dim=0)`` read as they do in PyTorch.
``@values_and_indices`` makes ``dim=`` select PyTorch's meaning where the two libraries
differ: ``x.max(1)`` is numpy's maximum values, ``x.max(dim=1)`` PyTorch's
``(values, indices)``.
"""

from __future__ import annotations

import functools
import inspect
from collections import namedtuple

# PyTorch's keyword -> numpy's parameter name, for every parameter a function has.
TORCH_NAMES = {"dim": "axis", "keepdim": "keepdims", "dim1": "axis1", "dim2": "axis2"}


def torch_keywords(fn=None, *, torch_defaults=None, unless_given=(), **extra):
    """Decorate ``fn`` so that PyTorch's keywords stand for numpy's parameters it has.

    ``extra`` adds function-specific names (``dims="axis"`` for ``flip``). Giving both
    names of one parameter is a TypeError naming both. ``torch_defaults`` are PyTorch's
    defaults where they differ from numpy's (``var``'s ``correction=1``): a call in
    PyTorch's spelling gets them unless it gives one of ``unless_given``.

    >>> @torch_keywords
    ... def total(x, axis=None, keepdims=False):
    ...     return axis, keepdims
    >>> total(0, dim=1, keepdim=True)
    (1, True)
    >>> total(0, 1, dim=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: total() got both axis= and dim=: pass either axis= or dim= ...
    """
    if fn is None:
        return functools.partial(
            torch_keywords, torch_defaults=torch_defaults, unless_given=unless_given, **extra
        )
    params = inspect.signature(fn).parameters

    def position(name):  # where the parameter can be given positionally, else None
        return list(params).index(name) if params[name].kind <= 1 else None

    aliases = {
        torch: (numpy, position(numpy))
        for torch, numpy in {**TORCH_NAMES, **extra}.items()
        if numpy in params and torch not in params
    }  # PyTorch's name -> (numpy's name, its position)
    overriders = [(name, position(name)) for name in unless_given]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            for torch in aliases.keys() & kwargs.keys():
                numpy, at = aliases[torch]
                if numpy in kwargs or (at is not None and len(args) > at):
                    raise TypeError(
                        f"{fn.__name__}() got both {numpy}= and {torch}=: pass either "
                        f"{numpy}= or {torch}= (numpy's and PyTorch's name for one argument)"
                    )
                kwargs[numpy] = kwargs.pop(torch)
                if torch_defaults and not any(
                    name in kwargs or (at is not None and len(args) > at) for name, at in overriders
                ):
                    kwargs.update(torch_defaults)
        return fn(*args, **kwargs)

    wrapper.torch_keywords = tuple(aliases)
    return wrapper


_RESULTS: dict[str, type] = {}


def values_indices(name: str, values, indices):
    """PyTorch's named ``(values, indices)`` result of ``name`` (``max``, ``sort`` ...)."""
    result = _RESULTS.get(name)
    if result is None:
        result = _RESULTS[name] = namedtuple(name, ["values", "indices"])
        result.__doc__ = f"{name}(dim=...)'s result: the values and their indices along dim."
    return result(values, indices)


def values_and_indices(index_fn):
    """Decorate a numpy function ``fn(x, axis, ...)`` whose name PyTorch gives a
    ``(values, indices)`` result along ``dim`` (``max``, ``min``, ``sort``): with
    ``dim=``, PyTorch's named tuple, the values ``fn(x, dim, ...)`` and the indices
    ``index_fn(x, dim, ...)`` (``argmax`` for ``max``, ``argsort`` for ``sort``), passing
    ``keepdims`` when ``fn`` takes it (``keepdim=`` keeps the reduced dimension in both).
    Without ``dim=`` it is numpy's function.
    """

    def decorate(fn):
        numpy_fn = torch_keywords(fn)  # keepdim= alone still means keepdims=
        reduces = "keepdims" in inspect.signature(fn).parameters

        @functools.wraps(fn)
        def wrapper(x, *args, dim=None, **kwargs):
            if fn.__name__ in ("max", "min") and args and _is_array_of_values(args[0]):
                pair = "maximum" if fn.__name__ == "max" else "minimum"
                raise TypeError(
                    f"{fn.__name__}(other): the second argument is an axis; for PyTorch's "
                    f"elementwise {fn.__name__}(input, other) use jg.{pair}(x, other)"
                )
            if dim is None:
                return numpy_fn(x, *args, **kwargs)
            if args or "axis" in kwargs:
                raise TypeError(
                    f"{fn.__name__}() got both axis= and dim=: pass either axis= or dim= "
                    "(numpy's and PyTorch's name for one argument)"
                )
            if not _is_one_dim(dim):
                raise TypeError(
                    f"{fn.__name__}(dim=...) takes one dimension and gives values and indices "
                    f"(PyTorch); got {dim!r}: use axis= for numpy's reduction over several"
                )
            if not reduces:
                return values_indices(fn.__name__, fn(x, dim, **kwargs), index_fn(x, dim, **kwargs))
            keepdims = _keep(fn.__name__, kwargs)
            return values_indices(
                fn.__name__,
                fn(x, dim, keepdims=keepdims, **kwargs),
                index_fn(x, dim, keepdims=keepdims),
            )

        return wrapper

    return decorate


def _is_array_of_values(value) -> bool:
    """A tensor or array that cannot be an axis (numpy's would be a 0-d integer)."""
    kind = getattr(getattr(value, "dtype", None), "kind", "i")
    return getattr(value, "ndim", 0) > 0 or kind not in "iu"


def _is_one_dim(dim) -> bool:
    return hasattr(dim, "__index__") and not isinstance(dim, (tuple, list))


def _keep(name: str, kwargs: dict) -> bool:
    if "keepdim" in kwargs and "keepdims" in kwargs:
        raise TypeError(
            f"{name}() got both keepdims= and keepdim=: pass either keepdims= or keepdim= "
            "(numpy's and PyTorch's name for one argument)"
        )
    return bool(kwargs.pop("keepdim", False) or kwargs.pop("keepdims", False))


__all__: list[str] = []
