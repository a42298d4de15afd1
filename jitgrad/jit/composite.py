"""``@jg.function``: a user's elementwise function as one fused forward and one fused
backward kernel.

The function is called once on symbolic inputs: every jitgrad elementwise op it uses
evaluates its formula on IR values, so the whole body becomes one expression DAG. Its
gradient is derived on the DAG itself, node by node with the gradient rules of each
primitive's op class (``ops.primitives``), and the backward kernel recomputes the
forward's cheap intermediates instead of keeping them in memory.
"""

from __future__ import annotations

import functools

from .. import dtypes
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.tensor import Tensor, as_tensor, uninitialised
from ..ops.primitives import PRIMITIVES
from ..strided import layout
from . import ir, lowering


def differentiate(outputs: list[ir.Expr], seeds: list[ir.Expr], wrt: list[ir.Expr]) -> list:
    """Reverse-mode derivative of the DAG: d(Σ seed·output)/d(each of ``wrt``), as IR."""
    adjoint: dict[int, ir.Expr] = {}
    for out, seed in zip(outputs, seeds):
        adjoint[out.id] = adjoint[out.id] + seed if out.id in adjoint else seed
    for node in reversed(ir.topological(outputs)):
        g = adjoint.get(node.id)
        if g is None or node.op not in PRIMITIVES:  # loads and constants
            continue
        op = PRIMITIVES[node.op].op_class
        rules = op.grad_rules
        owner = op.__new__(op)  # rules of primitives read no parameters
        for arg, rule in zip(node.args, rules):
            if rule is None or arg.op in ("literal", "scalar"):
                continue
            contribution = getattr(owner, rule)(ir.symbolic, g, node, *node.args)
            adjoint[arg.id] = adjoint[arg.id] + contribution if arg.id in adjoint else contribution
    return [adjoint.get(x.id) for x in wrt]


class _Fused(Function):
    """One call of a ``@jg.function``: the fused forward and backward kernels."""

    def __init__(self, definition: FusedFunction, ct: str, out_dtype):
        self.definition, self.ct, self.out_dtype = definition, ct, out_dtype

    def forward(self, *xs):
        shape = layout.broadcast_shapes(*(x.shape for x in xs))
        exprs, _ = self.definition.body(len(xs))
        return self._launch("forward", lambda: exprs, xs, shape, [self.out_dtype])[0]

    def backward(self, gy):
        xs = self.inputs
        needed = [k for k, x in enumerate(xs) if x.requires_grad]
        shape = gy.shape
        exprs, loads = self.definition.body(len(xs))
        if is_grad_enabled():  # create_graph: the same derivative DAG, on recorded ops
            from ..ops import movement, tensor_math

            grads = differentiate(exprs, [ir.load(len(xs))], [loads[k] for k in needed])
            values = ir.evaluate(
                [g if g is not None else ir.literal(0) for g in grads], [*xs, gy], tensor_math
            )
            out = [None] * len(xs)
            for k, g in zip(needed, values):
                x = xs[k]
                if not isinstance(g, Tensor):  # an input the output does not depend on
                    g = movement.broadcast_to(as_tensor(g, x.dtype), shape)
                out[k] = movement.sum_to(g, x.shape).astype(x.dtype, copy=False)
            return tuple(out)
        out_dtypes = [
            xs[k].dtype if xs[k].shape == shape else dtypes.as_dtype(self.ct) for k in needed
        ]

        def gradient_exprs():
            grads = differentiate(exprs, [ir.load(len(xs))], [loads[k] for k in needed])
            return [g if g is not None else ir.literal(0) for g in grads]

        outs = self._launch(
            ("backward", tuple(needed)), gradient_exprs, [*xs, gy], shape, out_dtypes
        )
        grads = [None] * len(xs)
        for k, g in zip(needed, outs):
            x = xs[k]
            if g.shape != x.shape:
                g = lowering.sum_to_as(g, x)
            grads[k] = g
        return tuple(grads)

    def _launch(self, which, exprs, xs, shape, out_dtypes):
        strides = [layout.broadcast_strides(x.shape, x.stride(), shape) for x in xs]
        where = lowering.plan_layout(shape, strides)
        if where is None:
            raise ValueError(
                f"{self.definition.__name__}: operands with more than "
                f"{lowering.MAX_NDIM} unmergeable dimensions"
            )
        loads = tuple((x.dtype.name, False) for x in xs)
        outs = [uninitialised(shape, d) for d in out_dtypes]
        key = (
            "function",
            self.definition.fn,
            which,
            self.ct,
            loads,
            tuple(d.name for d in out_dtypes),
            where.pattern,
        )
        lowering._run(key, exprs, xs, where, loads, [], self.ct, outs)
        return outs


class FusedFunction:
    """A function of tensors written with jitgrad's elementwise ops, run as fused kernels."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self._bodies: dict[int, tuple] = {}

    def body(self, n_inputs: int):
        """The function's expression DAG over ``n_inputs`` loads (built once)."""
        if n_inputs not in self._bodies:
            loads = [ir.load(k) for k in range(n_inputs)]
            try:
                out = self.fn(*loads)
            except (TypeError, AttributeError, ValueError) as e:
                # The body ran on symbolic values: an op that is not elementwise (a sum, a
                # cast, another jg.function) fails on them in its own words.
                raise TypeError(
                    f"{self.__name__} cannot be fused: its body must use only elementwise "
                    f"jitgrad ops (+ - * / ** and functions like exp, tanh, where, maximum) on "
                    f"its inputs and numbers; an operation in it failed on the symbolic "
                    f"inputs with {type(e).__name__}: {e}"
                ) from e
            if not isinstance(out, ir.Expr):
                raise TypeError(
                    f"{self.__name__} must return one elementwise expression of its inputs "
                    f"(got {type(out).__name__}); only elementwise jitgrad ops can be fused"
                )
            self._bodies[n_inputs] = ([out], loads)
        return self._bodies[n_inputs]

    def __call__(self, *args):
        # Nested lists are arrays, as every op takes them.
        args = [as_tensor(a) if isinstance(a, (list, tuple)) else a for a in args]
        common = dtypes.result_type(*args)  # Python numbers are weak, as in every op
        if common.is_complex:
            raise TypeError(
                f"{self.__name__} computes in real floating dtypes (a jg.function is a "
                f"differentiable function of floats); got {common.name} arguments"
            )
        if not common.is_floating_point:
            common = dtypes.get_default_dtype()
        ct = "float32" if common is dtypes.float16 else common.name
        xs = [as_tensor(a, common) for a in args]
        xs = [x if x.dtype is common else x.astype(common) for x in xs]
        return _Fused(self, ct, common)(*xs)


def function(fn) -> FusedFunction:
    """Fuse an elementwise function into one forward and one backward kernel.

    The fused function is a differentiable function of floats: it computes in its inputs'
    common floating dtype, and integer and bool inputs in the default float dtype (so
    ``x // y`` of int64 tensors gives float64, inf for a zero divisor, where the eager op
    gives int64). For integer arithmetic call the ops themselves. Like a numpy ufunc (or
    ``np.vectorize``), it broadcasts all its arguments together: the result has their
    broadcast shape and common dtype even where the body ignores an argument.

    >>> import jitgrad as jg
    >>> @jg.function
    ... def chain(x, a, b):
    ...     return jg.tanh(x * a + b) * jg.sigmoid(x) + 0.5 * x * x
    >>> x = jg.tensor([0.5, -1.0], requires_grad=True)
    >>> chain(x, 0.7, 0.1).sum().backward()
    >>> [round(g, 6) for g in x.grad.tolist()]
    [0.957311, -0.971629]
    """
    return FusedFunction(fn)
