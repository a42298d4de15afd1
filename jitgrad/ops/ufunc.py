"""numpy's ufunc protocol on jitgrad's elementwise functions: keywords and methods.

Every elementwise function (``jg.exp``, ``jg.add``, ...) is a plain Python function with
numpy's ufunc signature, ``f(x1, x2, /, out=None, *, where=True, casting='same_kind',
order='K', dtype=None, subok=True)``, and the ufunc attributes and methods (``nin``,
``nout``, ``nargs``, ``identity``, ``reduce``, ``accumulate``, ``reduceat``, ``outer``,
``at``). A call without keywords goes straight to the op (one frame, the per-op hot path);
a call with any of them takes ``_call_with_keywords``, where numpy itself resolves the
loop's dtypes and raises its own errors for bad ``dtype=``/``casting=``.

- ``out=`` writes the result into the given tensor (or ndarray) under jitgrad's in-place
  rules: recorded, as ``t += x`` is, when gradients flow.
- ``where=`` without ``out``: positions where the mask is False hold 0 (numpy leaves them
  uninitialised); the result is ``jg.where(mask, f(...), 0)`` and so differentiable.
- Methods compose jitgrad ops where they are differentiable (``add.reduce`` is ``sum``,
  ``add.at`` a scatter-add, ``outer`` broadcasting); the others run numpy's method on the
  tensors' values, without gradients.

>>> import jitgrad as jg
>>> t = jg.tensor([-1.0, 2.0, -3.0])
>>> jg.maximum(t, 0, out=t) is t, t.tolist()
(True, [0.0, 2.0, 0.0])
>>> jg.add.reduce(jg.tensor([[1, 2], [3, 4]]), axis=1).tolist(), jg.add.nin, jg.add.identity
([3, 7], 2, 0)
"""

from __future__ import annotations

import functools
import types

import numpy as np

from .. import dtypes, tiers
from .._config import config
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Tensor, as_tensor
from ..strided import layout
from ..tensor import TensorBase, array_getter
from . import indexing, movement
from .movement import astype, reshape
from .numpy_tier import tensor_over

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_NO_VALUE = np._NoValue  # numpy's marker of an argument not given (initial=)

# Every ufunc by name (aliases not repeated): what tests iterate over.
UFUNCS: dict[str, types.FunctionType] = {}

_SOURCE = """\
def make(cls, plain, keywords):
    def {name}({params}, /, out=None, *, where=True, casting="same_kind", order="K",
            dtype=None, subok=True):
        if out is None and where is True and dtype is None and casting == "same_kind":
            return {call}({params})
        return keywords({name}, ({params},), out, where, casting, order, dtype, subok)
    return {name}
"""


def make_ufunc(
    name: str,
    nin: int,
    doc: str,
    module: str,
    *,
    op_class=None,
    plain=None,
    nout: int = 1,
    numpy_name: str | None = None,
    example: tuple[str, str] | None = None,
):
    """The function ``name`` with numpy's ufunc signature, attributes and methods. Without
    keywords it returns ``op_class()(*inputs)`` (an elementwise ``Function``) or
    ``plain(*inputs)``; ``numpy_name`` is numpy's ufunc of the same meaning, if any
    (``name`` by default), which resolves dtypes and names errors as numpy does.
    ``example`` (a call and the result it shows) ends the docstring as a doctest."""
    if example is not None:
        doc = f"{doc}\n\n>>> import jitgrad as jg\n>>> {example[0]}\n{example[1]}\n"
    params = ", ".join(["x"] if nin == 1 else [f"x{k + 1}" for k in range(nin)])
    source = _SOURCE.format(name=name, params=params, call="cls()" if plain is None else "plain")
    namespace: dict = {}
    exec(compile(source, f"<ufunc {name}>", "exec"), {"__name__": module}, namespace)  # noqa: S102
    if plain is None:

        def plain(*inputs):
            return op_class()(*inputs)

    fn = namespace["make"](op_class, plain, _call_with_keywords)
    fn.__qualname__, fn.__module__, fn.__doc__ = name, module, doc
    found = getattr(np, numpy_name or name, None)
    fn._numpy = found if isinstance(found, np.ufunc) else None
    fn._plain = plain
    fn.nin, fn.nout, fn.nargs = nin, nout, nin + nout
    fn.identity = None if fn._numpy is None else fn._numpy.identity
    fn.signature = None
    for method in (reduce, accumulate, reduceat, outer, at):
        setattr(fn, method.__name__, types.MethodType(method, fn))
    UFUNCS[name] = fn
    return fn


def ufunc(nin: int, nout: int = 1, numpy_name: str | None = None):
    """Decorator: the function as a ufunc (``make_ufunc`` calling it without keywords)."""

    def make(plain):
        return make_ufunc(
            plain.__name__,
            nin,
            plain.__doc__,
            plain.__module__,
            plain=plain,
            nout=nout,
            numpy_name=numpy_name,
        )

    return make


def is_ufunc(fn) -> bool:
    return getattr(fn, "_plain", None) is not None and hasattr(fn, "nin")


# -- keywords ---------------------------------------------------------------------------------


def _call_with_keywords(uf, inputs, out, where, casting, order, dtype, subok):
    if where is True and dtype is None and casting == "same_kind" and out is not None:
        target = out[0] if out.__class__ is tuple and len(out) == 1 else out  # (numpy's form)
        written = written_into(uf, target, inputs)
        if written is not None:
            return written
    if casting not in _CASTINGS:
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe'")
    if order not in ("K", "A", "C", "F", None):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    outs = _outs(uf, out)
    inputs = [np.asarray(x) if isinstance(x, (list, tuple)) else x for x in inputs]
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    mask = None if where is True else _mask(where)
    loop = _loop(uf, inputs, dtype, casting)
    if dtype is not None:  # the loop's input dtypes: cast to them, as numpy computes in them
        wanted = loop[0] if loop is not None else [dtype] * uf.nin
        inputs = [
            _cast_operand(uf, k, x, d, casting, loop is None)
            for k, (x, d) in enumerate(zip(inputs, wanted))
        ]
    results = uf._plain(*inputs)
    results = results if isinstance(results, tuple) else (results,)
    if loop is not None:
        results = tuple(_astype(r, d) for r, d in zip(results, loop[1]))
    requires = any(isinstance(x, Tensor) and x.requires_grad for x in inputs)
    done = tuple(
        _masked(r, mask) if o is None else _write(uf.__name__, o, r, mask, casting, requires)
        for r, o in zip(results, outs)
    )
    return done[0] if uf.nout == 1 else done


def written_by_numpy(uf, out: Tensor, inputs) -> Tensor | None:
    """``uf(*inputs, out=out)`` by numpy's ufunc into ``out``'s memory, where numpy's loop
    for the operands gives ``out``'s dtype (nothing to cast): ``out`` holds no element
    twice (no zero stride), the operands are Python numbers or tensors of its dtype, and
    the call records nothing (no trace, nothing that requires grad with grad mode on);
    None for any other call. numpy stages operands that overlap ``out``."""
    grad = config.thread.grad_enabled
    if (
        uf._numpy is None
        or uf.nout != 1
        or out.__class__ is not Tensor
        or out._storage._half
        or (grad and out._requires_grad)
        or config.tracing
        or 0 in out._strides
    ):
        return None
    dtype = out._storage.dtype
    arrays, kinds = [], []
    for x in inputs:
        kind = x.__class__
        if kind is Tensor and x._storage.dtype is dtype:
            if grad and x._requires_grad:
                return None
            arrays.append(x.numpy())
            kinds.append(dtype.numpy)
        elif kind is float or kind is int or kind is bool:
            arrays.append(x)
            kinds.append(_BOOL if kind is bool else kind)
        else:
            return None
    if not _gives(uf._numpy, tuple(kinds), dtype.numpy):
        return None
    target = out.numpy()
    if not target.flags.writeable:
        out._check_writable()  # raises, naming the problem
    try:
        tiers.quietly(uf._numpy, *arrays, out=target)
    except ValueError:  # (shapes that do not broadcast into out: jitgrad's path names them)
        return None
    out._storage._written()
    return out


_BOOL = np.dtype(bool)  # (a Python bool is numpy's bool, not a weak number as int is)


@functools.cache
def _gives(ufunc, kinds: tuple, dtype: np.dtype) -> bool:
    """Whether numpy's loop of ``ufunc`` for operands of ``kinds`` (numpy dtypes, or the
    types int and float: Python numbers, weak as NEP 50 makes them) gives ``dtype``."""
    try:
        return ufunc.resolve_dtypes((*kinds, None))[-1] == dtype
    except TypeError:  # (no loop for these operands)
        return False


def written_in_place(uf, x, other) -> Tensor | None:
    """``x op= other`` as ``written_by_numpy`` writes it, or None where it does not. A
    signature written before (the ufunc, x's and other's dtypes and layouts) runs its
    remembered call (``_write_call``): in-place updates are among numpy scripts'
    commonest small calls."""
    if x.__class__ is not Tensor or config.tracing or tiers.numpy_errors is None:
        return None
    grad = config.thread.grad_enabled
    if grad and x._requires_grad:
        return None
    kind = other.__class__
    if kind is Tensor:
        if grad and other._requires_grad:
            return None
        signature = (
            "in place",
            uf,
            x._storage.dtype,
            x._shape,
            x._strides,
            other._storage.dtype,
            other._shape,
            other._strides,
        )
    elif kind is float or kind is int or kind is bool:
        signature = ("in place", uf, x._storage.dtype, x._shape, x._strides, kind)
    else:
        return written_by_numpy(uf, x, (x, other))
    call = tiers.calls.get(signature)
    if call is not None:
        return call(x, x, other)
    written = written_by_numpy(uf, x, (x, other))
    if written is not None:  # (its checks hold for every call of the signature)
        tiers.remember(signature, _write_call(uf, x, (x, other)))
    return written


def written_into(uf, out, inputs) -> Tensor | None:
    """``uf(*inputs, out=out)`` as ``written_by_numpy`` writes it, or None where it does
    not; a signature written before (the ufunc, the tensors' dtypes and layouts, which
    input is ``out`` itself) runs its remembered call (``_write_call``)."""
    if (
        out.__class__ is not Tensor
        or len(inputs) != uf.nin
        or uf.nin > 2
        or config.tracing
        or tiers.numpy_errors is None
    ):
        return written_by_numpy(uf, out, inputs)
    grad = config.thread.grad_enabled
    if grad and out._requires_grad:
        return None
    signature = ["out", uf, out._storage.dtype, out._shape, out._strides]
    for x in inputs:
        kind = x.__class__
        if kind is Tensor:
            if grad and x._requires_grad:
                return None
            signature += (x is out, x._storage.dtype, x._shape, x._strides)
        elif kind is float or kind is int or kind is bool:
            signature.append(kind)
        else:
            return written_by_numpy(uf, out, inputs)
    signature = tuple(signature)
    call = tiers.calls.get(signature)
    if call is not None:
        return call(out, *inputs)
    written = written_by_numpy(uf, out, inputs)
    if written is not None:  # (its checks hold for every call of the signature)
        tiers.remember(signature, _write_call(uf, out, inputs))
    return written


def _write_call(uf, like, inputs_like):
    """``written_by_numpy``'s write into tensors laid out as ``like`` from one or two
    inputs laid out as ``inputs_like`` (tensors, ``like`` itself, Python numbers), every
    fixed value bound: ``call(out, x0[, x1])``."""
    target = array_getter(like)
    get0, get1 = (
        _OUT if x is like else array_getter(x) if x.__class__ is Tensor else None
        for x in (*inputs_like, None)[:2]
    )
    ufunc, errors, ignore = uf._numpy, tiers.numpy_errors, tiers.IGNORE_ERRORS

    def call(out, x0, x1=None):
        a = target(out)
        if not a.flags.writeable:
            out._check_writable()  # raises, naming the problem
        a0 = a if get0 is _OUT else x0 if get0 is None else get0(x0)
        token = errors.set(ignore)
        try:
            if x1 is None:
                ufunc(a0, out=a)
            else:
                ufunc(a0, a if get1 is _OUT else x1 if get1 is None else get1(x1), out=a)
        finally:
            errors.reset(token)
        out._storage._written()
        return out

    return call


_OUT = object()  # (an input that is the output tensor itself: its array, read once)


def _outs(uf, out) -> tuple:
    if out is None:
        return (None,) * uf.nout
    if isinstance(out, tuple):
        if len(out) != uf.nout:
            raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
    elif uf.nout == 1:
        out = (out,)
    else:
        raise TypeError(f"{uf.__name__} has {uf.nout} outputs: out= must be a tuple of them")
    for o in out:
        if o is not None and not isinstance(o, (Tensor, np.ndarray)):
            raise TypeError(f"out= must be tensors or numpy arrays, got {type(o).__name__}")
    return out


def _mask(where) -> Tensor:
    mask = as_tensor(np.asarray(where) if isinstance(where, (list, tuple)) else where)
    if mask.dtype is not dtypes.bool_:
        raise TypeError(
            f"Cannot cast array data from dtype({mask.dtype.numpy.name!r}) to dtype('bool') "
            "according to the rule 'safe' (where= takes a bool mask, as in numpy)"
        )
    return mask


def _numpy_dtype(x):
    """numpy's view of an operand for dtype resolution: Python numbers stay weak (NEP 50)."""
    kind = type(x)
    if kind in (int, float, complex):
        return kind
    if kind is bool:
        return np.dtype(bool)
    dtype = getattr(x, "dtype", None)
    if isinstance(dtype, dtypes.DType):
        return dtype.numpy
    return np.asarray(x).dtype


def _loop(uf, inputs, dtype, casting):
    """(input dtypes, output dtypes) of numpy's loop for these operands, ``dtype=`` and
    ``casting=``, as jitgrad dtypes; numpy raises its own errors. None for a function numpy
    has no ufunc of."""
    np_ufunc = uf._numpy
    if np_ufunc is None:
        return None
    given = tuple(_numpy_dtype(x) for x in inputs) + (None,) * uf.nout
    if dtype is None:
        resolved = np_ufunc.resolve_dtypes(given, casting=casting)
    else:
        signature = (None,) * uf.nin + (dtype.numpy,) * uf.nout
        resolved = np_ufunc.resolve_dtypes(given, signature=signature, casting=casting)
    as_jg = [dtypes.as_dtype(d) for d in resolved]
    return as_jg[: uf.nin], as_jg[uf.nin :]


def _cast_operand(uf, k, x, d, casting, check):
    """Operand ``k`` in dtype ``d`` (``check``: numpy did not check the cast already)."""
    if type(x) in (bool, int, float, complex):  # a weak scalar, of the loop's kind now
        return d.numpy.type(x).item()
    x = as_tensor(x)
    if check and not np.can_cast(x.dtype.numpy, d.numpy, casting):
        raise TypeError(
            f"Cannot cast ufunc '{uf.__name__}' input {k} from {x.dtype.numpy!r} to "
            f"{d.numpy!r} with casting rule '{casting}'"
        )
    return _astype(x, d)


def _astype(x, d):
    return x if x.dtype is d else astype(x, d)


def _masked(r, mask):
    if mask is None:
        return r
    from .elementwise import where  # (elementwise makes its ufuncs with this module)

    return where(mask, r, r.dtype.numpy.type(0).item())


def _write(name, o, r, mask, casting, requires):
    """Write ``r`` into ``o`` where ``mask`` holds (everywhere for None), broadcasting to
    ``o``'s shape and casting by ``casting``; ``o``. Recorded when gradients flow (the
    inputs, ``requires``, or ``o`` itself), as jitgrad's in-place operators are."""
    from . import methods  # (methods builds on every op module)
    from .elementwise import where  # (elementwise makes its ufuncs with this module)

    o_dtype = o.dtype if isinstance(o, np.ndarray) else o.dtype.numpy
    shape = r.shape if mask is None else layout.broadcast_shapes(r.shape, mask.shape)
    try:
        fits = layout.broadcast_shapes(shape, o.shape) == tuple(o.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"non-broadcastable output operand with shape {tuple(o.shape)} doesn't match the "
            f"broadcast shape {shape}"
        )
    if not np.can_cast(r.dtype.numpy, o_dtype, casting):
        raise TypeError(
            f"Cannot cast ufunc '{name}' output from {r.dtype.numpy!r} to {o_dtype!r} with "
            f"casting rule '{casting}'"
        )
    if isinstance(o, np.ndarray):
        np.copyto(
            o,
            TensorBase.numpy(r),
            casting="unsafe",
            where=True if mask is None else TensorBase.numpy(mask),
        )
        return o
    o._check_writable()
    if o._check_inplace(requires):
        methods._save_before_overwrite(r, o)  # (r's backward may read o's old values)
        value = r if mask is None else where(mask, r, o)
        value = movement.astype(value, o.dtype, copy=False)
        if value.shape != o.shape:
            value = movement.broadcast_to(value, o.shape)
        return movement.write_through(o, value)

    with no_grad():
        value = r.detach() if mask is None else where(mask, r.detach(), o.detach())
    TensorBase.copy_(o, value)
    return o


# -- methods ----------------------------------------------------------------------------------
# Reductions that jitgrad has as differentiable ops, by ufunc.
_REDUCTIONS = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
}
_SCANS = {"add": "cumsum", "multiply": "cumprod"}


def _binary_only(uf, method: str) -> None:
    if uf.nin != 2 or uf.nout != 1:
        raise ValueError(f"{method} only supported for binary functions ({uf.__name__})")
    if uf._numpy is None:
        raise TypeError(f"{uf.__name__}.{method}: numpy has no ufunc {uf.__name__}")


def _operand(array) -> Tensor:
    return as_tensor(np.asarray(array) if isinstance(array, (list, tuple)) else array)


def _by_numpy(uf, method, *args, **kwargs) -> Tensor:
    """numpy's method on the tensors' values: a new tensor, without gradient."""
    args = [TensorBase.numpy(a) if isinstance(a, TensorBase) else a for a in args]
    kwargs = {k: TensorBase.numpy(v) if isinstance(v, TensorBase) else v for k, v in kwargs.items()}
    return tensor_over(getattr(uf._numpy, method)(*args, **kwargs))


def _method_out(uf, result, out):
    if out is None or out == (None,):
        return result
    (o,) = _outs(uf, out)
    # numpy's methods cast their result into out= unsafely.
    return _write(uf.__name__, o, result, None, "unsafe", result.requires_grad)


def reduce(uf, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    """Reduce ``array`` along ``axis`` (None: all axes) by applying the ufunc repeatedly:
    numpy's ``ufunc.reduce``. ``add``, ``multiply``, ``maximum``, ``minimum``,
    ``logical_and`` and ``logical_or`` reduce with jitgrad's sum, prod, max, min, all and
    any (differentiable); other ufuncs with numpy's method on the values.

    >>> import jitgrad as jg
    >>> jg.multiply.reduce(jg.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [3.0, 8.0]
    >>> jg.maximum.reduce(jg.tensor([1.0, 5.0]), initial=9.0).item()
    9.0
    """
    from . import elementwise  # (elementwise makes its ufuncs with this module)
    from . import reduce as reductions  # (reduce builds on elementwise)

    _binary_only(uf, "reduce")
    t = _operand(array)
    name = _REDUCTIONS.get(uf.__name__)
    if name is None or t.numel() == 0 or (dtype is not None and name not in ("sum", "prod")):
        kwargs = {} if initial is _NO_VALUE else {"initial": initial}
        if where is not True:
            kwargs["where"] = where
        dtype = None if dtype is None else dtypes.as_dtype(dtype).numpy
        r = _by_numpy(uf, "reduce", t, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
        return _method_out(uf, r, out)
    x = t
    if where is not True:
        fill = uf.identity if uf.identity is not None else initial
        if fill is _NO_VALUE:
            raise ValueError(
                f"reduction operation '{uf.__name__}' does not have an identity, so to use a "
                "where mask one has to specify 'initial'"
            )
        x = elementwise.where(_mask(where), x, fill)
    function = getattr(reductions, name)
    extra = {"dtype": dtype} if name in ("sum", "prod") else {}
    r = function(x, axis, keepdims=keepdims, **extra)
    if initial is not _NO_VALUE:
        r = uf(r, initial)
    return _method_out(uf, r, out)


def accumulate(uf, array, axis=0, dtype=None, out=None):
    """The running results of ``reduce`` along ``axis``: numpy's ``ufunc.accumulate``
    (``add`` and ``multiply``: jitgrad's cumsum and cumprod, differentiable).

    >>> import jitgrad as jg
    >>> jg.add.accumulate(jg.tensor([1, 2, 3])).tolist()
    [1, 3, 6]
    """
    from . import reduce as reductions  # (reduce builds on elementwise)

    _binary_only(uf, "accumulate")
    t = _operand(array)
    name = _SCANS.get(uf.__name__)
    np_dtype = None if dtype is None else dtypes.as_dtype(dtype).numpy
    if name is None or axis is None or t.ndim == 0 or t.numel() == 0:
        return _method_out(uf, _by_numpy(uf, "accumulate", t, axis=axis, dtype=np_dtype), out)
    # numpy's result dtype (add on int8 accumulates in int64), from a one-element probe
    d = uf._numpy.accumulate(np.zeros(1, t.dtype.numpy), dtype=np_dtype).dtype
    r = getattr(reductions, name)(t, axis, dtype=dtypes.as_dtype(d))
    return _method_out(uf, r, out)


def reduceat(uf, array, indices, axis=0, dtype=None, out=None):
    """Reductions over the slices ``indices[i]:indices[i + 1]`` along ``axis`` (one
    element where ``indices[i] >= indices[i + 1]``): numpy's ``ufunc.reduceat``.

    >>> import jitgrad as jg
    >>> jg.add.reduceat(jg.arange(8), [0, 4, 1, 5]).tolist()
    [6, 4, 10, 18]
    """
    _binary_only(uf, "reduceat")
    t = _operand(array)
    np_dtype = None if dtype is None else dtypes.as_dtype(dtype).numpy
    idx = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
    if uf.__name__ not in _REDUCTIONS or t.ndim == 0 or idx.ndim != 1 or idx.dtype.kind not in "iu":
        r = _by_numpy(uf, "reduceat", t, idx, axis=axis, dtype=np_dtype)
        return _method_out(uf, r, out)
    axis = layout.normalize_dim(axis, t.ndim)
    n = t.shape[axis]
    for i in idx.tolist():
        if not 0 <= i < n:
            raise IndexError(f"index {i} out-of-bounds in {uf.__name__}.reduceat [0, {n})")
    d = dtypes.as_dtype(uf._numpy.reduceat(np.zeros(1, t.dtype.numpy), [0], dtype=np_dtype).dtype)
    bounds = idx.tolist() + [n]
    pieces = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        if start < stop:
            piece = reduce(
                uf, movement.narrow(t, axis, start, stop - start), axis, d.numpy, keepdims=True
            )
        else:
            piece = movement.narrow(t, axis, start, 1)
        pieces.append(_astype(piece, d))
    return _method_out(uf, movement.concatenate(pieces, axis), out)


def outer(uf, a, b, /, **kwargs):
    """``ufunc(a[i, ..., None, ...], b[j, ...])`` over every pair: numpy's ``ufunc.outer``
    (broadcasting, so differentiable; keywords as in a call).

    >>> import jitgrad as jg
    >>> jg.multiply.outer(jg.tensor([1, 2]), jg.tensor([1, 10, 100])).tolist()
    [[1, 10, 100], [2, 20, 200]]
    """
    _binary_only(uf, "outer")
    a, b = _operand(a), _operand(b)
    return uf(reshape(a, a.shape + (1,) * b.ndim), b, **kwargs)


def at(uf, a, indices, b=None, /):
    """Apply the ufunc in place at ``a[indices]``, unbuffered: an index repeated applies
    it again (``add.at`` accumulates), numpy's ``ufunc.at``. A write that records a
    gradient (``a`` or ``b`` requires grad) is a scatter-add, for ``add`` and ``subtract``.

    >>> import jitgrad as jg
    >>> t = jg.zeros(3)
    >>> jg.add.at(t, [0, 0, 2], 1.0); t.tolist()
    [2.0, 0.0, 1.0]
    """
    from . import elementwise  # (elementwise makes its ufuncs with this module)

    if uf._numpy is None:
        raise TypeError(f"{uf.__name__}.at: numpy has no ufunc {uf.__name__}")
    if (b is None) != (uf.nin == 1):
        raise ValueError(f"{uf.__name__}.at takes {uf.nin} operand(s) after the indices")
    if not isinstance(a, Tensor):
        uf._numpy.at(a, _values(indices), *(() if b is None else (_values(b),)))
        return None
    key = indexing.index_key(a.shape, _values(indices))
    if not a._check_inplace(isinstance(b, Tensor) and b.requires_grad):
        a._check_writable()
        uf._numpy.at(TensorBase.numpy(a), key, *(() if b is None else (_values(b),)))
        a._storage._written()
        return None
    if uf.__name__ not in ("add", "subtract"):
        raise RuntimeError(
            f"{uf.__name__}.at cannot record a gradient (add.at and subtract.at can); "
            "write under jg.no_grad() or into a tensor of t.detach()"
        )
    v = movement.astype(_operand(b), a.dtype, copy=False)
    if uf.__name__ == "subtract":
        v = -v
    shape = np.empty(a.shape, dtype=np.bool_)[key].shape
    delta = indexing.ScatterAdd(key, a.shape)(movement.broadcast_to(v, shape))
    movement.write_through(a, elementwise.add(a, delta))
    return None


def _values(x):
    if isinstance(x, TensorBase):
        return TensorBase.numpy(x)
    if isinstance(x, tuple):
        return tuple(_values(p) for p in x)
    return x
