"""jg.random against numpy.random: the same numbers, dtypes, shapes and scalar types for
the same seed, the legacy global state kept apart from numpy's, in-place shuffles of
tensors and views, tensors as arguments, numpy's errors."""

import re
import warnings

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.recording import TracerWarning


def assert_same(got, want):
    """A tensor equal to numpy's array (values, dtype, shape), or numpy's very scalar."""
    if isinstance(want, np.ndarray):
        assert isinstance(got, jg.Tensor), type(got)
        assert got.dtype.numpy == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
    else:
        assert type(got) is type(want) and got == want, (got, want)


P = [0.1, 0.2, 0.3, 0.4]
COV = [[1.0, 0.5], [0.5, 2.0]]

# (method, args, kwargs): each called on both sides with the same seed; a list given as
# an argument is passed to jitgrad as a tensor and to numpy as an array.
COMMON_CALLS = [
    ("normal", (), {}),
    ("normal", ([1.0, 2.0], 3.0), {}),
    ("normal", (0.0, 1.0, (2, 3)), {}),
    ("uniform", (-1.0, 1.0, 4), {}),
    ("uniform", (), {}),
    ("standard_normal", ((2, 2),), {}),
    ("standard_normal", (), {}),
    ("exponential", (2.0, 3), {}),
    ("exponential", (), {}),
    ("poisson", (3.0, 5), {}),
    ("poisson", (), {}),
    ("binomial", (10, 0.3, (2, 2)), {}),
    ("binomial", (10, 0.3), {}),
    ("multinomial", (20, P, 3), {}),
    ("multinomial", (20, P), {}),
    ("beta", (2.0, 3.0, 4), {}),
    ("gamma", (2.0, 1.5, 4), {}),
    ("gamma", (2.0,), {}),
    ("laplace", (0.0, 1.0, 3), {}),
    ("lognormal", (0.0, 0.5, 3), {}),
    ("geometric", (0.3, 4), {}),
    ("geometric", (0.3,), {}),
    ("dirichlet", ([1.0, 2.0, 3.0], 2), {}),
    ("dirichlet", ([1.0, 2.0, 3.0],), {}),
    ("multivariate_normal", ([0.0, 1.0], COV, 3), {}),
    ("multivariate_normal", ([0.0, 1.0], COV), {}),
    ("bytes", (7,), {}),
    ("choice", (5,), {}),
    ("choice", (5, 3), {}),
    ("choice", (4, 6), {"p": P}),
    ("choice", ([10, 20, 30, 40], (2, 2)), {"replace": True, "p": P}),
    ("choice", ([1.5, 2.5, 3.5, 4.5], 3), {"replace": False}),
    ("permutation", (6,), {}),
    ("permutation", ([[1, 2], [3, 4], [5, 6]],), {}),
    ("chisquare", (3.0, 2), {}),
    ("standard_t", (4.0, 2), {}),
    ("weibull", (1.5, 2), {}),
    ("zipf", (2.0, 3), {}),
    ("standard_gamma", (2.0, 3), {}),
    ("standard_exponential", (3,), {}),
]

LEGACY_CALLS = COMMON_CALLS + [
    ("rand", (), {}),
    ("rand", (2, 3), {}),
    ("randn", (), {}),
    ("randn", (4,), {}),
    ("randint", (5,), {}),
    ("randint", (5,), {"dtype": np.int32}),
    ("randint", (-3, 7, (2, 4)), {}),
    ("randint", (0, 100, 3), {"dtype": jg.int16}),
    ("random_sample", (), {}),
    ("random_sample", ((2, 2),), {}),
    ("random_sample", ((),), {}),
    ("random", (3,), {}),
    ("random_integers", (1, 6, 4), {}),
]

GENERATOR_CALLS = COMMON_CALLS + [
    ("random", (), {}),
    ("random", ((2, 3),), {}),
    ("random", (3,), {"dtype": np.float32}),
    ("random", (), {"dtype": jg.float32}),
    ("random", ((),), {}),
    ("standard_normal", (3,), {"dtype": jg.float32}),
    ("integers", (5,), {}),
    ("integers", (-3, 7, (2, 4)), {}),
    ("integers", (0, 6, 5), {"endpoint": True}),
    ("integers", (0, 100, 3), {"dtype": np.int8}),
    ("integers", (0, 2, 4), {"dtype": bool}),
    ("choice", ([[1, 2], [3, 4], [5, 6]], 2), {"axis": 0}),
    ("choice", ([[1, 2, 3], [4, 5, 6]], 2), {"axis": 1, "replace": False, "shuffle": False}),
    ("choice", (10, 4), {"replace": False, "shuffle": True}),
    ("permuted", ([[1, 2, 3], [4, 5, 6]],), {"axis": 1}),
    ("permuted", ([[1, 2, 3], [4, 5, 6]],), {}),
    ("multivariate_normal", ([0.0, 1.0], COV, 2), {"method": "cholesky"}),
    ("multivariate_hypergeometric", ([3, 4, 5], 6), {}),
    ("standard_exponential", (3,), {"dtype": np.float32}),
    ("standard_gamma", (2.0, 3), {"dtype": np.float32}),
]


def as_tensors(values):
    return [jg.tensor(v) if isinstance(v, list) else v for v in values]


def call(obj, name, args, kwargs, tensors):
    args = (
        as_tensors(args) if tensors else [np.array(a) if isinstance(a, list) else a for a in args]
    )
    kwargs = dict(zip(kwargs, (as_tensors if tensors else list)(kwargs.values())))
    if not tensors:
        kwargs = {k: np.array(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        kwargs = {k: v.numpy if isinstance(v, jg.dtypes.DType) else v for k, v in kwargs.items()}
    return getattr(obj, name)(*args, **kwargs)


def ids(calls):
    return [f"{name}{args}{kwargs or ''}" for name, args, kwargs in calls]


@pytest.mark.filterwarnings("ignore:This function is deprecated:DeprecationWarning")
@pytest.mark.parametrize("name, args, kwargs", LEGACY_CALLS, ids=ids(LEGACY_CALLS))
def test_legacy_functions_draw_numpys_numbers(name, args, kwargs):
    jg.random.seed(12)
    got = call(jg.random, name, args, kwargs, tensors=True)
    want = call(np.random.RandomState(12), name, args, kwargs, tensors=False)
    assert_same(got, want)
    assert_same(
        call(jg.random.RandomState(3), name, args, kwargs, tensors=True),
        call(np.random.RandomState(3), name, args, kwargs, tensors=False),
    )


@pytest.mark.parametrize("name, args, kwargs", GENERATOR_CALLS, ids=ids(GENERATOR_CALLS))
def test_generator_methods_draw_numpys_numbers(name, args, kwargs):
    got = call(jg.random.default_rng(12), name, args, kwargs, tensors=True)
    want = call(np.random.default_rng(12), name, args, kwargs, tensors=False)
    assert_same(got, want)


def test_streams_continue_as_numpys_over_many_calls():
    jg.random.seed(0)
    np.random.seed(0)
    for _ in range(3):
        assert_same(jg.random.rand(3), np.random.rand(3))
        assert_same(jg.random.randn(), np.random.randn())  # (numpy caches a second gauss)
        assert_same(jg.random.randint(0, 9, 4), np.random.randint(0, 9, 4))
    rng, ref = jg.random.default_rng(7), np.random.default_rng(7)
    for _ in range(3):
        assert_same(rng.standard_normal(3), ref.standard_normal(3))
        assert_same(rng.integers(9), ref.integers(9))


def test_the_global_state_is_jitgrads_own():
    np.random.seed(5)
    jg.random.seed(0)
    want = np.random.RandomState(0).rand(4)
    np.random.rand(100)  # numpy's global draws leave jitgrad's stream alone
    np.random.seed(1)
    assert_same(jg.random.rand(4), want)
    after_numpy = np.random.RandomState(1).rand(2)
    jg.random.rand(100)  # and jitgrad's leave numpy's alone
    np.testing.assert_array_equal(np.random.rand(2), after_numpy)


def test_state_round_trips_and_accepts_numpys_state():
    jg.random.seed(3)
    jg.random.randn()  # a cached second gauss is part of the state
    state = jg.random.get_state()
    a = jg.random.randn(3)
    jg.random.set_state(state)
    assert_same(jg.random.randn(3), a.numpy())
    ref = np.random.RandomState(9)
    jg.random.set_state(ref.get_state())
    assert_same(jg.random.rand(2), ref.rand(2))
    assert jg.random.get_state(legacy=False)["bit_generator"] == "MT19937"
    assert isinstance(jg.random.get_bit_generator(), jg.random.MT19937)


def test_set_bit_generator_makes_the_legacy_functions_draw_from_it():
    before = jg.random.get_bit_generator()
    try:
        jg.random.set_bit_generator(jg.random.PCG64(4))
        assert_same(
            jg.random.random_sample(3), np.random.RandomState(np.random.PCG64(4)).random_sample(3)
        )
    finally:
        jg.random.set_bit_generator(before)


def test_aliases_of_random_sample():
    for alias in (jg.random.ranf, jg.random.sample, jg.random.random):
        jg.random.seed(2)
        assert_same(alias(3), np.random.RandomState(2).random_sample(3))


def test_numpys_classes_are_reexported():
    assert jg.random.PCG64 is np.random.PCG64 and jg.random.MT19937 is np.random.MT19937
    assert jg.random.SeedSequence is np.random.SeedSequence
    assert jg.random.BitGenerator is np.random.BitGenerator
    assert_same(
        jg.random.Generator(jg.random.PCG64(5)).random(3),
        np.random.Generator(np.random.PCG64(5)).random(3),
    )
    assert_same(
        jg.random.Generator(jg.random.MT19937(5)).normal(size=2),
        np.random.Generator(np.random.MT19937(5)).normal(size=2),
    )
    assert_same(
        jg.random.default_rng(jg.random.SeedSequence(8)).random(2),
        np.random.default_rng(np.random.SeedSequence(8)).random(2),
    )
    assert_same(
        jg.random.RandomState(jg.random.MT19937(6)).rand(2),
        np.random.RandomState(np.random.MT19937(6)).rand(2),
    )


def test_default_rng_takes_generators_as_they_are():
    rng = jg.random.default_rng(1)
    assert jg.random.default_rng(rng) is rng
    shared = np.random.default_rng(2)
    wrapped = jg.random.default_rng(shared)
    first = wrapped.random()
    assert shared.bit_generator is wrapped.bit_generator  # one state: draws move both
    assert_same(first, np.random.default_rng(2).random())
    assert repr(rng) == "Generator(PCG64)"


def test_spawned_generators_are_numpys_children():
    got = [g.random(2) for g in jg.random.default_rng(3).spawn(2)]
    want = [g.random(2) for g in np.random.default_rng(3).spawn(2)]
    for a, b in zip(got, want):
        assert_same(a, b)
    assert all(isinstance(g, jg.random.Generator) for g in jg.random.default_rng(3).spawn(2))


# -- shuffle in place ------------------------------------------------------------------


def shuffled(shuffle, x, *args):
    shuffle(x, *args)
    return x


@pytest.mark.parametrize(
    "view",
    [
        lambda a: a,
        lambda a: a[::2],
        lambda a: a[:, 1],
        lambda a: a.T,
        lambda a: a[::-1, 1:],
    ],
    ids=["whole", "every other row", "a column", "transposed", "reversed rows"],
)
def test_shuffle_in_place_on_tensors_and_views_as_numpy(view):
    values = np.arange(24.0).reshape(6, 4)
    t, a = jg.tensor(values), values.copy()
    jg.random.seed(4)
    jg.random.shuffle(view(t))
    np.random.RandomState(4).shuffle(view(a))
    assert_same(t, a)  # the view's writes reach its base
    g, b = jg.tensor(values), values.copy()
    jg.random.default_rng(4).shuffle(view(g), 1 if view(a).ndim == 2 else 0)
    np.random.default_rng(4).shuffle(view(b), 1 if view(a).ndim == 2 else 0)
    assert_same(g, b)


def test_shuffle_of_lists_and_arrays_is_numpys():
    jg.random.seed(1)
    items = list(range(8))
    jg.random.shuffle(items)
    assert items == shuffled(np.random.RandomState(1).shuffle, list(range(8)))
    a = np.arange(8)
    jg.random.default_rng(1).shuffle(a)
    np.testing.assert_array_equal(a, shuffled(np.random.default_rng(1).shuffle, np.arange(8)))


def test_shuffle_refuses_a_tensor_that_requires_grad():
    x = jg.arange(4.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        jg.random.shuffle(x)
    with jg.no_grad():
        jg.random.shuffle(x)
    assert sorted(x.tolist()) == [0.0, 1.0, 2.0, 3.0]


def test_a_shuffle_is_seen_by_autograds_version_checks():
    w = jg.arange(4.0, requires_grad=True)
    x = jg.arange(4.0)
    y = (w * x).sum()
    jg.random.shuffle(x)
    with pytest.raises(RuntimeError, match="modified"):
        y.backward()


def test_shuffle_of_a_0d_tensor_is_numpys_error():
    with pytest.raises(TypeError) as want:
        np.random.shuffle(np.array(1.0))
    with pytest.raises(TypeError, match=re.escape(str(want.value))):
        jg.random.shuffle(jg.tensor(1.0))


# -- tensors as arguments, out=, errors ------------------------------------------------


def test_choice_with_p_as_a_tensor():
    p = jg.tensor(P)
    jg.random.seed(0)
    assert_same(jg.random.choice(4, 10, p=p), np.random.RandomState(0).choice(4, 10, p=P))
    values = jg.tensor([[1, 2], [3, 4], [5, 6], [7, 8]])
    assert_same(
        jg.random.default_rng(0).choice(values, 2, p=p, axis=0),
        np.random.default_rng(0).choice(values.numpy(), 2, p=P, axis=0),
    )


@pytest.mark.parametrize(
    "rng, ref",
    [
        (lambda: jg.random, lambda: np.random),
        (lambda: jg.random.default_rng(0), lambda: np.random.default_rng(0)),
    ],
    ids=["legacy", "generator"],
)
def test_numpys_errors_pass_through_with_their_messages(rng, ref):
    for p in ([0.5, 0.6], [1.5, -0.5]):
        with pytest.raises(ValueError) as want:
            ref().choice(2, p=p)
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            rng().choice(2, p=jg.tensor(p))
    with pytest.raises(ValueError) as want:
        ref().choice(3, 5, replace=False)
    with pytest.raises(ValueError, match=re.escape(str(want.value))):
        rng().choice(3, 5, replace=False)
    with pytest.raises(ValueError) as want:
        ref().normal(0.0, -1.0)
    with pytest.raises(ValueError, match=re.escape(str(want.value))):
        rng().normal(0.0, -1.0)


def test_out_tensors_are_filled_in_place():
    out = jg.zeros((2, 3))
    got = jg.random.default_rng(5).random(out=out)
    assert got is out
    assert_same(out, np.random.default_rng(5).random((2, 3)))
    out32 = jg.zeros(4, dtype=jg.float32)
    jg.random.default_rng(5).standard_normal(dtype=jg.float32, out=out32)
    assert_same(out32, np.random.default_rng(5).standard_normal(4, dtype=np.float32))
    x = jg.tensor([[1, 2, 3], [4, 5, 6]])
    assert jg.random.default_rng(5).permuted(x, axis=1, out=x) is x  # in place, as numpy's
    a = np.array([[1, 2, 3], [4, 5, 6]])
    np.random.default_rng(5).permuted(a, axis=1, out=a)
    assert_same(x, a)


def test_draws_jitgrad_has_no_dtype_for_stay_numpys_arrays():
    got = jg.random.default_rng(0).choice(["a", "b", "c"], 4)
    np.testing.assert_array_equal(got, np.random.default_rng(0).choice(["a", "b", "c"], 4))
    assert isinstance(got, np.ndarray)


# -- jg.jit ------------------------------------------------------------------------------


def test_jitted_draws_are_fresh_and_follow_the_stream():
    rs = jg.random.RandomState(0)
    step = jg.jit(lambda x: x + rs.standard_normal(3))
    got = [step(jg.zeros(3)).numpy() for _ in range(4)]
    ref = np.random.RandomState(0)
    for g in got:
        np.testing.assert_array_equal(g, ref.standard_normal(3))


@pytest.mark.parametrize(
    "seeded",
    [
        lambda: jg.random.seed(1) or jg.random,
        lambda: jg.random.RandomState(1),
    ],
    ids=["global seed", "RandomState made in the call"],
)
def test_a_seed_inside_a_jitted_function_reseeds_on_every_call(seeded):
    step = jg.jit(lambda x: x + seeded().rand(2))
    want = np.random.RandomState(1).rand(2)
    for _ in range(3):
        assert_same(step(jg.zeros(2)), want)


def test_jitted_shuffles_shuffle_again_on_every_call():
    rng = jg.random.default_rng(0)

    @jg.jit
    def mix(x):
        rng.shuffle(x)
        return x * 1

    x = jg.arange(8)
    orders = [mix(x).tolist() for _ in range(3)]
    ref, a = np.random.default_rng(0), np.arange(8)
    for order in orders:
        ref.shuffle(a)
        assert order == a.tolist()


def test_a_scalar_draw_while_tracing_is_warned():
    rng = jg.random.default_rng(0)
    with pytest.warns(TracerWarning, match="size=\\(\\)"):
        jg.jit(lambda x: x + rng.random())(jg.zeros(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        jg.jit(lambda x: x + rng.random(()))(jg.zeros(2))
