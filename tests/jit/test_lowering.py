"""Kernels against the numpy reference evaluator: single ops, random fused DAGs, the cache."""

import os
import shutil
import subprocess
import sys
from importlib.util import cache_from_source

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitgrad as jg
from jitgrad import tiers
from jitgrad._config import config

UNARY = [
    "negative",
    "abs",
    "exp",
    "expm1",
    "log",
    "log1p",
    "sqrt",
    "square",
    "reciprocal",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "gelu",
    "silu",
    "softplus",
    "erf",
    "floor",
    "sign",
    "arctan",
    "log2",
]
BINARY = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "maximum",
    "minimum",
    "power",
    "arctan2",
    "remainder",
    "floor_divide",
]
POSITIVE = {"log", "log1p", "sqrt", "reciprocal", "log2", "power"}
TOL = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}


def evaluate(backend, fn, *arrays, grad=True):
    """fn's value and input gradients with the given backend, as numpy arrays."""
    previous = config.backend
    config.backend = backend
    try:
        xs = [jg.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        y = fn(*xs)
        if not grad:
            return y.numpy(), []
        weights = jg.tensor(np.linspace(-1, 1, y.numel()).reshape(y.shape).astype(y.dtype.numpy))
        (y * weights).sum().backward()
        grads = [x.grad.numpy() if x.grad is not None else np.zeros(x.shape) for x in xs]
        return y.numpy(), [g for g, x in zip(grads, xs) if x.requires_grad]
    finally:
        config.backend = previous


def assert_same(fn, *arrays, dtype="float64"):
    y_ref, g_ref = evaluate("reference", fn, *arrays)
    y_jit, g_jit = evaluate("jit", fn, *arrays)
    tol = TOL[dtype]
    np.testing.assert_allclose(
        y_jit.astype(np.float64), y_ref.astype(np.float64), rtol=tol, atol=tol
    )
    for a, b in zip(g_jit, g_ref):
        np.testing.assert_allclose(
            a.astype(np.float64), b.astype(np.float64), rtol=tol * 10, atol=tol * 10
        )


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_every_unary_kernel_matches_the_reference(name, dtype):
    x = np.linspace(0.1 if name in POSITIVE else -3, 3, 37).astype(dtype)
    assert_same(getattr(jg, name), x, dtype=dtype)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_binary_kernel_matches_the_reference_with_broadcasting(name, dtype):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5 if name in POSITIVE else -3, 3, (4, 1, 5)).astype(dtype)
    b = rng.uniform(0.7, 2.5, (3, 1)).astype(dtype)
    assert_same(getattr(jg, name), a, b, dtype=dtype)


def test_comparisons_where_and_integer_inputs():
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 4, (3, 4))
    b = rng.integers(-3, 4, (4,))
    for name in ("equal", "less", "greater_equal", "logical_and", "logical_xor"):
        got = getattr(jg, name)(jg.from_numpy(a), jg.from_numpy(b))
        np.testing.assert_array_equal(got.numpy(), getattr(np, name)(a, b))
    np.testing.assert_array_equal((jg.from_numpy(a) + 1).numpy(), a + 1)
    np.testing.assert_array_equal(jg.maximum(jg.from_numpy(a), 0).numpy(), np.maximum(a, 0))
    c = jg.from_numpy(a > 0)
    x = rng.standard_normal((3, 4))
    assert_same(lambda x: jg.where(c, x, -x * 2), x)
    np.testing.assert_array_equal(jg.isnan(jg.tensor([np.nan, 1.0])).numpy(), [True, False])


def test_special_values_in_kernels():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, -1e300])
    for name in ("exp", "tanh", "sigmoid", "abs", "relu", "square", "negative"):
        y_ref, _ = evaluate("reference", getattr(jg, name), x, grad=False)
        y_jit, _ = evaluate("jit", getattr(jg, name), x, grad=False)
        np.testing.assert_array_equal(y_jit, y_ref, err_msg=name)
    m = evaluate("jit", lambda a: jg.maximum(a, 0.0), x, grad=False)[0]
    np.testing.assert_array_equal(m, np.maximum(x, 0.0))


def test_noncontiguous_and_broadcast_layouts():
    rng = np.random.default_rng(2)
    base = rng.standard_normal((6, 8, 5))
    assert_same(lambda t: jg.tanh(t.permute(2, 0, 1)[:, ::2, ::-3]) * t[0, 0, :, None, None], base)
    assert_same(lambda t: jg.exp(t[:, :1].expand(6, 8, 5)) + t.mT.mT, base)


def test_layouts_classify_each_operands_innermost_stride():
    from jitgrad.jit.lowering import plan_layout

    bias_add = plan_layout((64, 128), [(128, 1), (0, 1)])
    assert bias_add.pattern == ("strided", 2, ("unit", "unit"))
    row_scale = plan_layout((64, 10), [(10, 1), (1, 0)])
    assert row_scale.pattern == ("strided", 2, ("unit", "zero"))
    assert plan_layout((6, 8), [(1, 6)]).pattern == ("strided", 2, ("any",))
    assert plan_layout((6, 8), [(8, 1), (0, 0)]).pattern == ("flat", (False, True))


def test_in_place_updates_store_through_the_inputs_own_slice():
    from jitgrad.optim.optimizer import apply_update

    def axpy(m, p, g, *, lr):
        return (p - lr * g,)

    p, g = jg.arange(10.0, dtype=jg.float32), jg.ones(10, dtype=jg.float32)
    launches = {}
    for _ in range(2):  # the second call reuses the prepared launch
        apply_update(axpy, [p, g], [p], launches, lr=0.5)
    np.testing.assert_array_equal(p.numpy(), np.arange(10.0) - 1.0)
    (launch,) = launches.values()
    assert "store(v0, i," in launch.kernel.source  # the parameter's own slice


@pytest.mark.parametrize("threshold", [1, 1 << 40], ids=["parallel", "serial"])
def test_strided_loops_for_every_kind_of_innermost_stride(monkeypatch, threshold):
    monkeypatch.setattr(config, "parallel_threshold", threshold)
    rng = np.random.default_rng(5)
    x, b, c = rng.standard_normal((5, 6)), rng.standard_normal(6), rng.standard_normal((5, 1))
    assert_same(lambda x, b, c: jg.tanh(x + b) * c, x, b, c)  # unit, unit, zero
    assert_same(lambda x: x[::-1, ::-2] * 2 + x[:, 1::2].T.T, x)  # any, any
    assert_same(lambda x: jg.exp(x[::-2, 0]), x)  # one merged dimension, stride -12


def test_parallel_kernels_match_serial(monkeypatch):
    x = np.random.default_rng(3).standard_normal(5000)
    serial = evaluate("jit", lambda t: jg.gelu(t) * jg.sigmoid(t), x)
    monkeypatch.setattr(config, "parallel_threshold", 1)
    parallel = evaluate("jit", lambda t: jg.gelu(t) * jg.sigmoid(t), x)
    np.testing.assert_array_equal(serial[0], parallel[0])
    np.testing.assert_array_equal(serial[1][0], parallel[1][0])


OPS = st.sampled_from(
    [
        "add",
        "multiply",
        "subtract",
        "maximum",
        "tanh",
        "sigmoid",
        "exp_small",
        "square",
        "relu",
        "divide_safe",
    ]
)


def apply(op, a, b):
    if op == "exp_small":
        return jg.exp(jg.tanh(a))
    if op == "divide_safe":
        return a / (1 + b * b)
    if op in ("tanh", "sigmoid", "square", "relu"):
        return getattr(jg, op)(a)
    return getattr(jg, op)(a, b)


@settings(max_examples=20, deadline=None)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=1, max_dims=3, max_side=4),
    program=st.lists(
        st.tuples(OPS, st.integers(0, 10), st.integers(0, 10)), min_size=1, max_size=6
    ),
    dtype=st.sampled_from(["float32", "float64"]),
    transpose=st.booleans(),
)
def test_random_elementwise_dags_match_the_reference(shapes, program, dtype, transpose):
    rng = np.random.default_rng(4)
    arrays = [rng.uniform(-2, 2, s).astype(dtype) for s in shapes.input_shapes]

    def fn(*xs):
        values = [x.T.T if not transpose else x for x in xs]
        for op, i, j in program:
            values.append(apply(op, values[i % len(values)], values[j % len(values)]))
        return values[-1] + 0 * values[0]

    assert_same(fn, *arrays, dtype=dtype)


def test_kernels_are_reused_across_shapes():
    jg.exp(jg.ones((3, 4)))  # make sure the kernel exists
    before = jg.jit.stats()["generated"]
    for n in (5, 17, 1000):
        jg.exp(jg.ones((n, 4)))
    assert jg.jit.stats()["generated"] == before


def test_kernel_source_is_inspectable():
    jg.tanh(jg.ones(3)) * 2.0
    kernel = jg.jit.kernels()[-1]
    assert "def serial(" in kernel.source and "prange" not in kernel.source
    assert kernel.path.exists() and kernel.path.read_text() == kernel.source


_CHILD = """
import time
start = time.perf_counter()
import numpy as np, jitgrad as jg
x = jg.tensor(np.linspace(-1, 1, 64), requires_grad=True)
y = (jg.tanh(x * 0.7 + 0.1) * jg.sigmoid(x)).sum()
y.backward()
s = jg.jit.stats()
print(s["compiled"], s["disk_hits"], round(time.perf_counter() - start, 3))
"""


def run_child(cache):
    env = dict(os.environ, JITGRAD_CACHE_DIR=str(cache))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True
    )
    compiled, disk_hits, seconds = out.stdout.split()
    return int(compiled), int(disk_hits), float(seconds)


@pytest.fixture(scope="module")
def filled_cache(tmp_path_factory):
    """A cache directory a child process filled, and how many kernels it compiled; tests
    that damage it work on a copy."""
    cache = tmp_path_factory.mktemp("filled-cache")
    with pytest.MonkeyPatch.context() as mp:  # set up before conftest's per-test setting
        mp.setenv("JITGRAD_NUMPY_TIER_WORK", "0")
        compiled, _, _ = run_child(cache)
    return cache, compiled


def copy_of(filled_cache, tmp_path):
    copy = tmp_path / "cache"
    shutil.copytree(filled_cache[0], copy)
    return copy


def test_a_fresh_process_loads_kernels_from_disk(filled_cache):
    cache, compiled = filled_cache
    assert compiled > 0
    # Each kernel module's bytecode is kept too, whatever PYTHONDONTWRITEBYTECODE says.
    sources = list((cache / "kernels").glob("k_*.py"))
    assert sources and all(os.path.exists(cache_from_source(str(p))) for p in sources)
    umask = os.umask(0o022)
    os.umask(umask)
    for p in sources:  # readable as the umask allows, for a cache shared between users
        assert p.stat().st_mode & 0o777 == 0o666 & ~umask
    compiled, disk_hits, _ = run_child(cache)
    assert compiled == 0 and disk_hits > 0


def test_a_corrupt_cache_entry_is_rebuilt(filled_cache, tmp_path):
    cache = copy_of(filled_cache, tmp_path)
    kernels = cache / "kernels"
    sources = {p: p.read_text() for p in kernels.glob("k_*.py")}
    for entry in sources:
        entry.write_text("this is not python(")
    for compiled_code in (kernels / "__pycache__").iterdir():
        compiled_code.write_bytes(b"garbage")
    compiled, _, _ = run_child(cache)  # runs, and compiles again
    assert compiled > 0
    assert {p: p.read_text() for p in sources} == sources
    compiled, disk_hits, _ = run_child(cache)
    assert compiled == 0 and disk_hits > 0


def test_an_unwritable_cache_directory_warns_once_and_kernels_still_run(tmp_path, monkeypatch):
    from jitgrad.jit import cache

    blocker = tmp_path / "a file, not a directory"
    blocker.write_text("")
    monkeypatch.setattr(config, "cache_dir", str(blocker))
    monkeypatch.setattr(cache.stats, "kernels", {})  # every kernel is looked up again
    odd = jg.function(lambda x: x * x * 0.375 - x / 7.0)
    x = np.linspace(-2, 2, 9)
    with pytest.warns(RuntimeWarning, match="cannot write its kernel cache") as caught:
        np.testing.assert_allclose(odd(jg.tensor(x)).numpy(), x * x * 0.375 - x / 7.0)
        np.testing.assert_allclose((jg.tensor(x) * 3).numpy(), x * 3)
    assert len(caught) == 1
    kernels = list(cache.stats.kernels.values())
    assert kernels and all(k.path.exists() and blocker not in k.path.parents for k in kernels)


def test_repeated_eager_calls_reuse_decisions_but_not_values():
    """The eager dispatch memo keys on dtypes, shapes, strides and constants' types: every
    other input of a call must still reach its result."""
    from jitgrad.ops import elementwise

    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = jg.tensor(base)
    for c in (0.5, 2.0, -3.0):  # same signature, new constant each time
        np.testing.assert_array_equal((x * c).numpy(), base * np.float32(c))
    assert any(k[0] is elementwise.Multiply for k in tiers.calls)
    # A float kernel takes a Python float as it is: rounded as numpy rounds it, inf beyond.
    for c in (0.1, 1e300, -1e-50):
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal((x * c).numpy(), base * np.float32(c))
    with pytest.raises(OverflowError):  # an int too large for any float, as numpy says
        x * 10**400
    # Same dtype and shape, other strides: the transposed operand is read as such.
    np.testing.assert_array_equal((x.T * 2.0).numpy(), base.T * 2)
    # A Python int out of an integer tensor's range still fails on a repeated call.
    small = jg.tensor(np.array([1, 2], dtype=np.int8))
    assert (small + 3).tolist() == [4, 5]
    with pytest.raises(OverflowError):
        small + 300
    # The default dtype decides int * float: a change of it is seen by the next call.
    ints = jg.tensor(np.array([1, 2], dtype=np.int32))
    assert (ints * 0.5).dtype is jg.float64
    jg.set_default_dtype("float32")
    try:
        assert (ints * 0.5).dtype is jg.float32
    finally:
        jg.set_default_dtype("float64")
    # Which inputs require grad may change between calls of one signature.
    for a_grad, b_grad in ((True, True), (True, False), (False, True)):
        a = jg.tensor(base, requires_grad=a_grad)
        b = jg.tensor(base + 1, requires_grad=b_grad)
        (a * b).sum().backward()
        assert (a.grad is None) != a_grad and (b.grad is None) != b_grad
        if a_grad:
            np.testing.assert_array_equal(a.grad.numpy(), base + 1)
        if b_grad:
            np.testing.assert_array_equal(b.grad.numpy(), base)
    # Remembered decisions call compiled code without per-call type matching: read-only
    # memory (another numba type) and writable memory both go through one decision.
    for writable in (True, False, True):
        data = base * (3.0 if writable else -2.0)
        data.flags.writeable = writable
        t = jg.from_numpy(data)
        np.testing.assert_allclose(
            jg.tanh(t * 0.5).numpy(), np.tanh(data * np.float32(0.5)), rtol=1e-6
        )


def test_only_jitgrads_kernels_compile_with_interleaved_vector_loops(tmp_path, monkeypatch):
    """LLVM's interleave option is process-wide: jitgrad sets it only while it compiles its
    own kernels, so a user's numba function compiles as it would without jitgrad."""
    from numba import njit

    from jitgrad.jit import cache
    from jitgrad.jit import vmath as vm

    def loop(n, x, out):  # a long body: LLVM's cost model alone does not interleave it
        for i in range(n):
            out[i] = vm.tanh_f32(x[i]) / (x[i] + np.float32(1.5))

    sig = "void(int64, float32[::1], float32[::1])"

    def divisions(source):
        function = njit(sig, error_model="numpy")(source)
        return function.inspect_asm(function.signatures[0]).count("divps")

    before = divisions(loop)
    with cache._interleaved():
        interleaved = divisions(loop)
    entered, scoped = [], cache._interleaved
    monkeypatch.setattr(cache, "_interleaved", lambda: entered.append(1) or scoped())
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(cache.stats, "kernels", {})  # every kernel is compiled afresh
    np.testing.assert_allclose((jg.tensor(np.ones(40)) / 3.0).numpy(), np.ones(40) / 3.0)
    assert entered  # the kernel's compile went through it
    assert interleaved > before == divisions(loop)


def test_a_damaged_entry_costs_only_its_own_kernel(filled_cache, tmp_path):
    cache, compiled = copy_of(filled_cache, tmp_path), filled_cache[1]
    pycache = cache / "kernels" / "__pycache__"
    bytecode = sorted(pycache.glob("k_*.pyc"))
    assert compiled > 1 and len(bytecode) == compiled
    bytecode[0].write_bytes(bytecode[0].read_bytes()[:20])  # truncated by a crash
    again, disk_hits, _ = run_child(cache)
    assert (again, disk_hits) == (1, compiled - 1)


def test_a_new_backend_forgets_eager_decisions(monkeypatch):
    x = jg.tensor([0.5, 2.0])
    for _ in range(2):
        jg.tanh(x)
    assert tiers.calls
    monkeypatch.setattr(config, "backend", "reference")
    assert not tiers.calls
    np.testing.assert_allclose(jg.tanh(x).numpy(), np.tanh([0.5, 2.0]))
    assert not tiers.calls  # the reference evaluator's calls are not remembered


def test_a_graph_kept_after_backward_holds_no_intermediate_tensor():
    """Once backward has run, a node keeps neither its inputs nor its constants' operands:
    holding the loss does not hold the step's intermediate memory."""
    import weakref

    x = jg.tensor(np.ones(3), requires_grad=True)
    for _ in range(2):  # the second time through the remembered decisions
        h = jg.tanh(x * 2.0)
        loss = (h * 3.0).sum()
        kept = weakref.ref(h)
        del h
        loss.backward()
        assert kept() is None


def test_the_backend_is_public_and_checked(monkeypatch):
    assert jg.config is config
    with pytest.raises(ValueError, match="jit, reference; got 'numba'"):
        jg.config.backend = "numba"
    monkeypatch.setattr(jg.config, "backend", "reference")
    assert (jg.ones(2) * 3).tolist() == [3.0, 3.0]
    with pytest.raises(TypeError, match="compiles a function, got int"):
        jg.jit(5)
