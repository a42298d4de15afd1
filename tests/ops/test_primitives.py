"""The table of elementwise primitives: every row consistent with numpy, its op class, the
namespaces built from it, and the kernel generator."""

import math

import numpy as np
import pytest

import jitgrad as jg
from jitgrad._config import config
from jitgrad.jit import cache, codegen, ir
from jitgrad.ops import reference, tensor_math
from jitgrad.ops.primitives import PRIMITIVES

JITGRADS_OWN = {"sigmoid", "softplus", "erf"}  # numpy has no such function
FLOATS = [
    np.array([-2.5, -0.5, -0.0, 0.3, 0.75, 1.5, 4.0, np.inf, np.nan]),
    np.array([1.25, -0.5, 2.0, 0.3, -3.0, 0.5, 2.0, 1.0, 1.0]),
]
INTEGERS = [np.array([-7, -1, 0, 5, 12, 100]), np.array([0, 1, 3, 2, 65, -1])]


def operands(p):
    """Inputs of the primitive's kind: integers for bitwise ops, a condition for where."""
    if p.op_class.integer_only:
        return INTEGERS[: p.arity]
    if p.name == "where":
        return [FLOATS[0] > 0, *FLOATS]
    return FLOATS[: p.arity]


def test_names_are_numpys():
    for name in PRIMITIVES:
        assert (name in JITGRADS_OWN) != hasattr(np, name), name


@pytest.mark.parametrize("name", PRIMITIVES)
def test_each_row_is_its_op_classs_formula_and_gradient(name):
    p = PRIMITIVES[name]
    op = p.op_class()
    assert len(op.grad_rules) == p.arity
    with np.errstate(all="ignore"):
        xs = operands(p)
        np.testing.assert_array_equal(op.f(reference, *xs), p.numpy(*xs))
        if name not in JITGRADS_OWN:
            np.testing.assert_array_equal(p.numpy(*xs), getattr(np, name)(*xs))


def test_jitgrads_own_functions_agree_with_their_definitions():
    xs = [-700.0, -30.0, -1.0, 0.0, 0.5, 3.0, 40.0, 800.0]
    sigmoid = PRIMITIVES["sigmoid"].numpy(np.array(xs))
    softplus = PRIMITIVES["softplus"].numpy(np.array(xs))
    erf = PRIMITIVES["erf"].numpy(np.array(xs))
    for x, s, sp, e in zip(xs, sigmoid, softplus, erf):
        expected = math.exp(x - math.log1p(math.exp(x))) if x < 0 else 1 / (1 + math.exp(-x))
        assert s == pytest.approx(expected, rel=1e-15, abs=0)
        assert sp == pytest.approx(max(x, 0) + math.log1p(math.exp(-abs(x))), rel=1e-15)
        assert e == math.erf(x)
    assert sigmoid[0] > 0  # exp(-700) / (1 + exp(-700)), not 1 / (1 + inf)


@pytest.mark.parametrize("name", PRIMITIVES)
def test_every_namespace_and_the_kernel_generator_know_each_row(name):
    p = PRIMITIVES[name]
    assert getattr(reference, name) is p.numpy
    assert getattr(tensor_math, name) is p.function
    loads = [ir.load(k) for k in range(p.arity)]
    expr = getattr(ir.symbolic, name)(*loads)
    assert expr.op == name and expr.args == tuple(loads)
    with pytest.raises(TypeError, match=f"{name} takes {p.arity} operands"):
        getattr(ir.symbolic, name)(*loads, loads[0])

    compute = "int64" if p.op_class.integer_only else "float64"
    bools = tuple(name == "where" and k == 0 for k in range(p.arity))
    sig = codegen.Signature(
        input_dtypes=tuple("bool" if b else compute for b in bools),
        bool_inputs=bools,
        compute=compute,
        output_dtypes=(compute,),
        n_scalars=0,
        loop="flat",
        ndim=1,
        broadcast=(False,) * p.arity,
    )
    source = codegen.generate([expr], sig)
    compile(source, f"<{name} kernel>", "exec")  # Python code, without compiling with numba
    assert ("vm." in source) == (p.vmath is not None)


def test_ir_operators_are_the_primitives_of_numpys_names():
    x, y = ir.load(0), ir.load(1)
    ops = [e.op for e in (x + y, x - y, x * y, x / y, -x, x // y, x % y, x**y)]
    assert ops == [
        "add",
        "subtract",
        "multiply",
        "divide",
        "negative",
        "floor_divide",
        "remainder",
        "power",
    ]


@pytest.mark.parametrize(
    "name", ["subtract", "negative", "exp", "arctan2", "where", "rint", "maximum", "left_shift"]
)
def test_a_kernel_of_the_row_matches_numpy(name, monkeypatch):
    monkeypatch.setattr(cache.stats, "kernels", {})  # kernels looked up from here on
    monkeypatch.setattr(config, "backend", "jit")  # (and eager decisions forgotten)
    monkeypatch.setattr(config, "numpy_tier_work", 0)  # kernels at every size
    p = PRIMITIVES[name]
    xs = operands(p)
    if name == "left_shift":
        xs = [xs[0], np.abs(xs[1])]  # counts of 64 and more shift every bit out
    with np.errstate(all="ignore"):
        expected = p.numpy(*xs)
        got = p.function(*(jg.tensor(x) for x in xs)).numpy()
    np.testing.assert_array_equal(got, expected)
    sources = [k.source for k in cache.stats.kernels.values()]
    assert sources  # it ran as a kernel
    if p.vmath is not None:
        assert any(f"vm.{p.vmath}_f64(" in s for s in sources)
