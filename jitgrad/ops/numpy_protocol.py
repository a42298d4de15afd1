"""numpy's functions and ufuncs on tensors: NEP 13 (``__array_ufunc__``) and NEP 18
(``__array_function__``).

A numpy ufunc or function that jitgrad has under numpy's name runs as that jitgrad op, so
``np.exp(t)``, ``np.sum(t, axis=0)`` and ``np.transpose(t)`` give tensors, with gradients.
Any other numpy function or ufunc call (``np.sort(t)``, ``np.median(t)``, ``np.hypot(t, t)``,
``np.add(t, 1, where=m)``, ``np.add.reduce(t)``) sees the tensors as the arrays they share
memory with, and gives numpy's own result: arrays, which carry no gradient (a tensor that
requires grad is read as its values). ``out=`` a tensor writes numpy's result into the
tensor's memory, under the rules of jitgrad's in-place ops.

>>> import numpy as np, jitgrad as jg
>>> t = jg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> s = np.sum(t * t, axis=1)
>>> s.tolist(), type(s).__name__
([5.0, 25.0], 'Tensor')
>>> s.sum().backward()
>>> t.grad.tolist()
[[2.0, 4.0], [6.0, 8.0]]
>>> float(np.median(t))
2.5
"""

from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from .. import dtypes, printing, type_aliases
from .._config import config
from ..autograd.tensor import as_tensor
from ..tensor import TensorBase
from . import (
    calculus,
    comparison,
    complex_parts,
    histograms,
    indexing,
    linalg,
    movement,
    nanfunctions,
    polynomial,
    products,
    reduce,
    selection,
    sets,
    shaping,
    signal,
    sorting,
    statistics,
    unary,
)
from . import elementwise as ew
from .ufunc import is_ufunc


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """numpy ufuncs on tensors (NEP 13): a ufunc jitgrad has runs as that op, keywords
    (``out=``, ``where=``, ``dtype=``, ``casting=``) and methods (``reduce``, ``accumulate``,
    ``reduceat``, ``outer``, ``at``) included (``np.exp(t)``, ``array + t`` and
    ``np.add.at(t, i, v)`` give or write tensors, with gradients); any other ufunc is
    numpy's own on the tensors' arrays."""
    import jitgrad.ops as ops  # (the package imports this module, through methods)

    op = _UFUNC_OPS.get(ufunc.__name__)
    if op is None:
        op = getattr(ops, _UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__), None)
    if op is not None:
        if method == "__call__" and not kwargs:
            return op(*inputs)
        if is_ufunc(op) and kwargs.keys() <= _KEYWORDS.get(method, frozenset()):
            return (
                getattr(op, method)(*inputs, **kwargs)
                if method != "__call__"
                else op(*inputs, **kwargs)
            )
    outs = kwargs.get("out", ())
    for x in (*inputs, *outs):
        if hasattr(type(x), "__array_ufunc__") and not isinstance(x, (TensorBase, np.ndarray)):
            return NotImplemented  # another array library's objects take part: let it try
    # numpy writes into these tensors' memory (ufunc.at into its first operand).
    written = [t for t in outs if isinstance(t, TensorBase)]
    if method == "at" and isinstance(inputs[0], TensorBase):
        written.append(inputs[0])
    for t in written:
        _check_numpy_may_write(t, ufunc, method)
    kwargs = {k: v.numpy if isinstance(v, dtypes.DType) else v for k, v in kwargs.items()}
    kwargs = _as_arrays(kwargs)
    _report_numpy_fallback(ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}")
    result = getattr(ufunc, method)(*_as_arrays(inputs), **kwargs)
    for t in written:
        t._storage._written()
    if not outs:
        return result
    # numpy returns the out= arrays it was given: here the tensors, not views of them.
    if isinstance(result, tuple):
        return tuple(_given_out(r, outs, kwargs["out"]) for r in result)
    return _given_out(result, outs, kwargs["out"])


def _check_numpy_may_write(t, ufunc, method) -> None:
    """numpy's write into ``t`` bypasses autograd: allowed where jitgrad's own unrecorded
    in-place writes are (grad mode off, or no gradient involved), else an error."""
    t._check_writable()
    check = getattr(t, "_check_inplace", None)  # (a Tensor, not a bare TensorBase)
    if check is not None and check(False):
        call = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        raise RuntimeError(
            f"numpy.{call} cannot write into a tensor that requires grad: numpy's result "
            "carries no gradient; write under jg.no_grad() or into a tensor of t.detach()"
        )


def _given_out(result, outs, arrays):
    for t, a in zip(outs, arrays):
        if result is a:
            return t
    return result


_UFUNC_ALIASES = {"true_divide": "divide", "absolute": "abs", "mod": "remainder"}
# The keywords jitgrad's ufuncs take, by method (numpy's others go to numpy's own).
_KEYWORDS = {
    "__call__": frozenset({"out", "where", "casting", "order", "dtype", "subok"}),
    "reduce": frozenset({"axis", "dtype", "out", "keepdims", "initial", "where"}),
    "accumulate": frozenset({"axis", "dtype", "out"}),
    "reduceat": frozenset({"axis", "dtype", "out"}),
    "outer": frozenset({"out", "where", "casting", "order", "dtype", "subok"}),
    "at": frozenset(),
}


@functools.cache
def _report_numpy_fallback(name: str) -> None:
    """With ``JITGRAD_DEBUG`` set, say once per numpy function that it ran as numpy's own."""
    if config.debug:
        warnings.warn(
            f"jitgrad has no numpy.{name}: it ran as numpy's own on the tensors' numpy "
            "arrays, without gradients",
            stacklevel=4,
        )


def _rint(x):
    # jitgrad's round keeps integers as np.round does; np.rint is a float ufunc, whose
    # integer operands give floats (jitgrad's default float, as for np.sin).
    x = as_tensor(x)
    if x.dtype.kind in "bui":
        x = movement.astype(x, dtypes.get_default_dtype())
    return unary.round(x)


_UFUNC_OPS = {"rint": _rint}


def array_function(self, func, types, args, kwargs):
    """numpy functions on tensors (NEP 18): jitgrad's op under numpy's name and signature
    where there is one, else numpy's own function on the tensors' arrays."""
    if not all(issubclass(t, (TensorBase, np.ndarray)) for t in types):
        return NotImplemented  # another array library's objects take part: let it try
    op = _FUNCTIONS.get(func)
    if op is not None:
        return op(**_numpy_arguments(func, op, args, kwargs))
    same = _same_name_functions().get(func)
    if same is not None:
        return same(*args, **kwargs)
    if not hasattr(func, "_implementation"):
        return _created_like(func, args, kwargs)
    _report_numpy_fallback(func.__name__)
    return func._implementation(*_as_arrays(args), **_as_arrays(kwargs))


def _created_like(func, args, kwargs):
    """numpy's creation function called with ``like=`` a tensor (NEP 35: ``np.empty((0,),
    like=t)``, ``np.asarray(x, like=t)``), which numpy hands over without an implementation
    of its own: jitgrad's function of the same name (they take numpy's parameters)."""
    import jitgrad  # (the package imports this module)

    create = getattr(jitgrad, func.__name__, None)
    if create is None:
        raise TypeError(f"jitgrad has no numpy.{func.__name__}: it cannot create like= a tensor")
    return create(*args, **kwargs)


@functools.cache
def _same_name_functions() -> dict:
    """numpy's function -> jitgrad's of the same name, for the modules whose functions take
    numpy's signatures (np.piecewise excepted: its functions expect numpy's arrays)."""
    from .. import (  # (these build on the ops: imported when first asked)
        array_queries,
        creation,
        fft,
        index_tricks,
        linalg,
    )

    namespaces = [
        (np, m)
        for m in (
            calculus,
            comparison,
            creation,
            histograms,
            nanfunctions,
            polynomial,
            products,
            selection,
            sets,
            shaping,
            sorting,
            statistics,
            complex_parts,
            signal,
            index_tricks,
            array_queries,
            printing,
            type_aliases,
        )
    ]
    namespaces += [(np.linalg, linalg), (np.fft, fft)]
    found = {
        np.pad: indexing.pad,
        np.unravel_index: indexing.unravel_index,
        np.ravel_multi_index: indexing.ravel_multi_index,
        np.fix: unary.fix,
    }
    for numpy_namespace, module in namespaces:
        for name in module.__all__:
            func = getattr(numpy_namespace, name, None)
            if hasattr(func, "_implementation") and name != "piecewise":
                found[func] = getattr(module, name)
    return found


def _as_arrays(obj):
    if isinstance(obj, TensorBase):
        return TensorBase.numpy(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_as_arrays(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _as_arrays(v) for k, v in obj.items()}
    return obj


def _numpy_arguments(func, op, args, kwargs) -> dict:
    """The call's arguments by numpy's parameter names. One that ``op`` does not take (out,
    where, initial, order, ...) must be numpy's default: jitgrad cannot honour it."""
    params = inspect.signature(func).parameters
    given = inspect.signature(func).bind(*args, **kwargs).arguments
    for name, p in params.items():
        if p.kind is p.VAR_KEYWORD and name in given:
            given.update(given.pop(name))
    takes = inspect.signature(op).parameters
    for name, value in given.items():
        if name in takes:
            continue
        default = params[name].default if name in params else inspect.Parameter.empty
        if value is default or (_is_plain(value) and _is_plain(default) and value == default):
            continue
        shown = repr(value) if _is_plain(value) else f"a {type(value).__name__}"
        raise TypeError(
            f"numpy.{func.__name__} on jitgrad tensors cannot take {name}={shown}: jitgrad's "
            f"{func.__name__} takes {', '.join(takes)}; call it on t.numpy() for numpy's own "
            "result"
        )
    return {name: value for name, value in given.items() if name in takes}


def _is_plain(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _computed_in(dtype, op, x, *args, **kwargs):
    """numpy's ``dtype=`` for an op that has none: computed in, and returned as, ``dtype``
    (an integer sum in int8 wraps in numpy; jitgrad's in int64 cast back wraps alike)."""
    if dtype is None:
        return op(x, *args, **kwargs)
    x = movement.astype(as_tensor(x), dtype, copy=False)
    return movement.astype(op(x, *args, **kwargs), dtype, copy=False)


# numpy function -> jitgrad's op, called with numpy's parameter names (numpy's defaults
# beside them); a numpy parameter missing here must keep numpy's default.
# fmt: off
_FUNCTIONS = {
    np.sum: lambda a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
        where=True: reduce.sum(a, axis, dtype, out, keepdims, initial=initial, where=where),
    np.mean: lambda a, axis=None, dtype=None, out=None, keepdims=False, where=True:
        reduce.mean(a, axis, dtype, out, keepdims, where=where),
    np.prod: lambda a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
        where=True: reduce.prod(a, axis, dtype, out, keepdims, initial=initial, where=where),
    np.max: lambda a, axis=None, out=None, keepdims=False, initial=None, where=True:
        reduce.max(a, axis, out, keepdims, initial, where),
    np.amax: lambda a, axis=None, out=None, keepdims=False, initial=None, where=True:
        reduce.max(a, axis, out, keepdims, initial, where),
    np.min: lambda a, axis=None, out=None, keepdims=False, initial=None, where=True:
        reduce.min(a, axis, out, keepdims, initial, where),
    np.amin: lambda a, axis=None, out=None, keepdims=False, initial=None, where=True:
        reduce.min(a, axis, out, keepdims, initial, where),
    np.all: lambda a, axis=None, out=None, keepdims=False, where=True:
        reduce.all(a, axis, out, keepdims, where=where),
    np.any: lambda a, axis=None, out=None, keepdims=False, where=True:
        reduce.any(a, axis, out, keepdims, where=where),
    np.std: lambda a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None:
        reduce.std(a, axis, dtype, out, ddof, keepdims, correction=correction),
    np.var: lambda a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None:
        reduce.var(a, axis, dtype, out, ddof, keepdims, correction=correction),
    np.argmax: lambda a, axis=None, out=None, keepdims=False:
        reduce.argmax(a, axis, out, keepdims=keepdims),
    np.argmin: lambda a, axis=None, out=None, keepdims=False:
        reduce.argmin(a, axis, out, keepdims=keepdims),
    np.cumsum: lambda a, axis=None, dtype=None: _computed_in(dtype, reduce.cumsum, a, axis),
    np.cumprod: lambda a, axis=None, dtype=None: _computed_in(dtype, reduce.cumprod, a, axis),
    # numpy's axes are always a whole permutation: never PyTorch's swap of two dims.
    np.transpose: lambda a, axes=None:
        movement.transpose(a) if axes is None else movement.permute(a, axes),
    np.reshape: lambda a, shape: movement.reshape(a, shape),
    np.squeeze: lambda a, axis=None: movement.squeeze(a, axis),
    np.expand_dims: lambda a, axis: movement.expand_dims(a, axis),
    np.swapaxes: lambda a, axis1, axis2: movement.swapaxes(a, axis1, axis2),
    np.flip: lambda m, axis=None: movement.flip(m, axis),
    np.diagonal: lambda a, offset=0, axis1=0, axis2=1: movement.diagonal(a, offset, axis1, axis2),
    np.trace: lambda a, offset=0, axis1=0, axis2=1, dtype=None:
        _computed_in(dtype, linalg.trace, a, offset, axis1, axis2),
    np.broadcast_to: lambda array, shape: movement.broadcast_to(array, shape),
    np.concatenate: lambda arrays, axis=0: movement.concatenate(arrays, axis),
    np.stack: lambda arrays, axis=0: movement.stack(arrays, axis),
    np.split: lambda ary, indices_or_sections, axis=0:
        indexing.split(ary, indices_or_sections, axis),
    np.take_along_axis: lambda arr, indices, axis=-1: indexing.take_along_axis(arr, indices, axis),
    np.clip: lambda a, a_min=None, a_max=None, min=None, max=None:
        unary.clip(a, a_min if min is None else min, a_max if max is None else max),
    np.round: lambda a, decimals=0: unary.round(a, decimals),
    np.around: lambda a, decimals=0: unary.round(a, decimals),
    np.dot: lambda a, b: linalg.dot(a, b),
    np.outer: lambda a, b: linalg.outer(a, b),
    np.tensordot: lambda a, b, axes=2: linalg.tensordot(a, b, axes),
    np.where: lambda condition, x=None, y=None: ew.where(condition, x, y),
    np.real: lambda val: complex_parts.real(val),
    np.imag: lambda val: complex_parts.imag(val),
}
# fmt: on
