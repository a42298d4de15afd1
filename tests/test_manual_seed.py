"""jg.manual_seed restarts the one default generator: default initialisation, nn.Dropout
and jg.randn / rand / randint / randperm repeat after the same seed."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn
from jitgrad.data import random_split


def _model():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Embedding(5, 3), nn.Linear(3, 2))


def _weights(model):
    return {k: v.numpy().copy() for k, v in model.state_dict().items()}


def test_a_model_built_twice_after_the_same_seed_has_the_same_weights():
    jg.manual_seed(7)
    first = _weights(_model())
    jg.manual_seed(7)
    second = _weights(_model())
    third = _weights(_model())  # the stream goes on: another model, other weights
    jg.manual_seed(8)
    other_seed = _weights(_model())
    for name, value in first.items():
        np.testing.assert_array_equal(second[name], value, err_msg=name)
        if name.endswith("weight"):
            assert not np.array_equal(third[name], value), name
            assert not np.array_equal(other_seed[name], value), name


def test_init_functions_and_dropout_follow_the_seed():
    def draws():
        w = jg.empty((3, 4))
        nn.init.kaiming_uniform_(w)
        u = nn.init.normal_(jg.empty(5), std=2.0)
        mask = nn.Dropout(0.5)(jg.ones(20))
        return [w.numpy().copy(), u.numpy().copy(), mask.numpy().copy()]

    jg.manual_seed(3)
    a = draws()
    jg.manual_seed(3)
    b = draws()
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_random_creation_functions():
    jg.manual_seed(0)
    first = [jg.randn(2, 3), jg.rand((4,)), jg.randint(10, (5,)), jg.randperm(6)]
    jg.manual_seed(0)
    again = [jg.randn((2, 3)), jg.rand(size=[4]), jg.randint(0, 10, size=(5,)), jg.randperm(6)]
    for x, y in zip(first, again, strict=True):
        assert x.dtype is y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    # numpy's numbers for the same seed: the default generator is PCG64(seed)
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(
        first[0].numpy(), rng.standard_normal((2, 3), dtype=first[0].dtype.numpy)
    )
    assert jg.initial_seed() == 0
    assert sorted(first[3].tolist()) == list(range(6)) and first[3].dtype is jg.int64
    assert first[2].dtype is jg.int64 and ((first[2] >= 0) & (first[2] < 10)).all()


def test_random_creation_options():
    x = jg.randn(3, dtype=jg.float32, requires_grad=True)
    assert x.dtype is jg.float32 and x.requires_grad
    assert jg.rand(2, 2).dtype is jg.get_default_dtype()
    r = jg.randint(low=5, high=7, size=(100,), dtype=jg.int32)
    assert r.dtype is jg.int32 and set(r.tolist()) == {5, 6}
    assert jg.randperm(4, dtype=jg.float64).dtype is jg.float64
    own = jg.random.default_rng(1)
    np.testing.assert_array_equal(
        jg.randn(3, generator=own).numpy(), jg.random.default_rng(1).standard_normal(3)
    )
    with pytest.raises(TypeError, match="manual_seed takes an int"):
        jg.manual_seed(1.5)
    with pytest.raises(TypeError, match="needs a size"):
        jg.randint(5)
    with pytest.raises(ValueError, match="negative"):
        jg.randn(-1)
    with pytest.raises(TypeError, match="generator must be"):
        jg.rand(2, generator=3)


def test_drawn_afresh_inside_a_jitted_function():
    @jg.jit
    def noisy(x):
        return x + jg.randn(3)

    jg.manual_seed(5)
    eager = [(jg.zeros(3) + jg.randn(3)).numpy() for _ in range(3)]
    jg.manual_seed(5)
    jitted = [noisy(jg.zeros(3)).numpy() for _ in range(3)]
    for e, j in zip(eager, jitted, strict=True):
        np.testing.assert_array_equal(e, j)


# -- jg.Generator ----------------------------------------------------------------------------


def test_the_default_generator_is_a_generator():
    assert isinstance(jg.default_generator, jg.Generator)
    assert isinstance(jg.default_generator, jg.random.Generator)  # numpy's methods too
    assert jg.manual_seed(4) is jg.default_generator and jg.initial_seed() == 4
    g = jg.Generator()
    assert g.manual_seed(5) is g and g.initial_seed() == 5 and g.device == "cpu"
    assert g.manual_seed(-1).initial_seed() == 2**64 - 1  # PyTorch's: modulo 2**64
    with pytest.raises(ValueError, match="seed lies in"):
        g.manual_seed(2**64)
    with pytest.raises(TypeError, match="manual_seed takes an int"):
        g.manual_seed(2.0)
    with pytest.raises(ValueError, match="CPU only"):
        jg.Generator("cuda")


def test_generators_with_one_seed_draw_alike_apart_from_the_global_seed_and_each_other():
    first, second = jg.Generator().manual_seed(11), jg.Generator().manual_seed(11)
    jg.manual_seed(0)
    a = jg.randn(5, generator=first)
    jg.manual_seed(99)
    jg.randn(3)
    b = jg.randn(5, generator=second)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    jg.randn(4, generator=first)  # one generator's draws leave the other's stream alone
    replay = jg.Generator().manual_seed(11)
    jg.randn(5, generator=replay)
    np.testing.assert_array_equal(
        jg.rand(3, generator=second).numpy(), jg.rand(3, generator=replay).numpy()
    )
    assert not np.array_equal(jg.randn(5, generator=jg.Generator().manual_seed(12)).numpy(), a)
    jg.manual_seed(4)
    alone = jg.randn(3)
    jg.manual_seed(4)
    jg.randn(5, generator=first)  # nor the default generator's
    np.testing.assert_array_equal(jg.randn(3).numpy(), alone.numpy())


def test_seed_draws_a_fresh_seed():
    g = jg.Generator()
    seed = g.seed()
    assert isinstance(seed, int) and 0 <= seed < 2**64 and g.initial_seed() == seed
    replay = jg.Generator().manual_seed(seed)
    np.testing.assert_array_equal(jg.rand(4, generator=g).numpy(), jg.rand(4, generator=replay))
    assert jg.Generator().initial_seed() != jg.Generator().initial_seed()


def test_get_state_and_set_state_replay_the_draws():
    g = jg.Generator().manual_seed(3)
    jg.randn(1, generator=g)  # a cached half-draw is part of the state too
    state = g.get_state()
    assert state.dtype is jg.uint8 and state.ndim == 1
    drawn = [jg.randn(3, generator=g), jg.randint(10, (4,), generator=g)]
    assert g.manual_seed(8).set_state(state) is g and g.initial_seed() == 3
    again = [jg.randn(3, generator=g), jg.randint(10, (4,), generator=g)]
    for x, y in zip(drawn, again, strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    other = jg.Generator()
    other.set_state(state)  # a state moves between generators
    np.testing.assert_array_equal(jg.randn(3, generator=other).numpy(), drawn[0].numpy())
    with pytest.raises(TypeError, match="uint8 tensor"):
        g.set_state(state.numpy())
    with pytest.raises(TypeError, match="got float32"):
        g.set_state(state.float())
    with pytest.raises(ValueError, match="bytes"):
        g.set_state(state[:8])


def _loader_order(generator):
    data = jg.data.TensorDataset(jg.arange(10))
    loader = jg.data.DataLoader(data, batch_size=10, shuffle=True, generator=generator)
    return next(iter(loader))[0]


DRAWS = {
    "randn": lambda g: jg.randn(2, 3, generator=g),
    "rand": lambda g: jg.rand(4, generator=g),
    "randint": lambda g: jg.randint(0, 100, (5,), generator=g),
    "randperm": lambda g: jg.randperm(8, generator=g),
    "randn_like": lambda g: jg.randn_like(jg.zeros(3), generator=g),
    "rand_like": lambda g: jg.rand_like(jg.zeros(3), generator=g),
    "randint_like": lambda g: jg.randint_like(jg.zeros(3), 100, generator=g),
    "normal_": lambda g: jg.zeros(4).normal_(2.0, 0.5, generator=g),
    "uniform_": lambda g: jg.zeros(4).uniform_(-1.0, 1.0, generator=g),
    "init.normal_": lambda g: nn.init.normal_(jg.empty(4), generator=g),
    "dropout": lambda g: nn.functional.dropout(jg.ones(12), 0.5, generator=g),
    "DataLoader": _loader_order,
    "normal": lambda g: jg.normal(jg.zeros(4), 2.0, generator=g),
    "multinomial": lambda g: jg.multinomial(jg.ones(20), 5, generator=g),
    "random_split": lambda g: jg.tensor(
        [i for part in random_split(range(10), [6, 4], generator=g) for i in part.indices]
    ),
}


@pytest.mark.parametrize("name", DRAWS)
def test_generator_is_honoured(name):
    draw = DRAWS[name]
    g = jg.Generator()
    jg.manual_seed(1)
    first = draw(g.manual_seed(7)).numpy()
    after_first = jg.randn(2).numpy()  # the default generator did not move
    jg.manual_seed(2)
    jg.randn(5)
    np.testing.assert_array_equal(draw(g.manual_seed(7)).numpy(), first)
    assert not np.array_equal(draw(g.manual_seed(8)).numpy(), first)
    jg.manual_seed(1)
    np.testing.assert_array_equal(jg.randn(2).numpy(), after_first)


@pytest.mark.parametrize("name", DRAWS)
def test_a_generator_of_the_wrong_type_is_refused(name):
    for wrong in ("7", np.random.default_rng(0), 1.5):
        with pytest.raises(TypeError, match="generator must be a jg.Generator"):
            DRAWS[name](wrong)


def test_a_generator_seeded_inside_a_jitted_function_restarts_each_call():
    g = jg.Generator()

    @jg.jit
    def noisy(x):
        g.manual_seed(5)
        return x + jg.randn(3, generator=g)

    expected = jg.randn(3, generator=jg.Generator().manual_seed(5)).numpy()
    for _ in range(3):
        np.testing.assert_array_equal(noisy(jg.zeros(3)).numpy(), expected)
    assert noisy.traces == 1


def test_normal_draws_each_element_from_its_own_distribution():
    g = jg.Generator().manual_seed(0)
    mean = jg.tensor([-3.0, 0.0, 5.0], dtype=jg.float32).reshape(3, 1, 1)
    std = jg.tensor([0.5, 1.0, 2.0, 4.0], dtype=jg.float32).reshape(1, 4, 1)
    x = jg.normal(mean + jg.zeros((3, 4, 20000), dtype=jg.float32), std, generator=g)
    assert x.shape == (3, 4, 20000) and x.dtype is jg.float32
    expected_mean, expected_std = np.broadcast_arrays(mean.numpy()[..., 0], std.numpy()[..., 0])
    np.testing.assert_allclose(x.mean(axis=2).numpy(), expected_mean, atol=0.1)
    np.testing.assert_allclose(x.std(axis=2).numpy(), expected_std, rtol=0.03)
    y = jg.normal(1.0, 0.0, (2, 3), generator=g)
    assert y.shape == (2, 3) and y.tolist() == [[1.0] * 3] * 2 and y.dtype is jg.float64
    weighted = jg.tensor([1.0, 2.0], requires_grad=True)
    assert not jg.normal(weighted, 1.0).requires_grad  # (a draw: no gradient flows)
    with pytest.raises(ValueError, match="std must be non-negative"):
        jg.normal(jg.zeros(2), jg.tensor([1.0, -1.0]))
    with pytest.raises(TypeError, match="need a size"):
        jg.normal(0.0, 1.0)


def test_multinomial_draws_in_proportion_and_without_replacement_in_order():
    g = jg.Generator().manual_seed(1)
    p = np.array([0.1, 0.2, 0.0, 0.7])
    drawn = jg.multinomial(jg.tensor(p * 3), 100000, replacement=True, generator=g)
    assert drawn.shape == (100000,) and drawn.dtype is jg.int64
    np.testing.assert_allclose(np.bincount(drawn.numpy(), minlength=4) / 1e5, p, atol=0.006)
    rows = jg.multinomial(jg.tensor(np.tile(p, (40000, 1))), 3, generator=g).numpy()
    assert rows.shape == (40000, 3)
    assert all(len(set(r)) == 3 and 2 not in r for r in rows[:100])  # (never twice, never 0)
    # the second draw picks among those left: P(k) = sum over j of p_j p_k / (1 - p_j)
    second = [sum(p[j] * p[k] / (1 - p[j]) for j in range(4) if j != k) for k in range(4)]
    np.testing.assert_allclose(np.bincount(rows[:, 0], minlength=4) / 4e4, p, atol=0.01)
    np.testing.assert_allclose(np.bincount(rows[:, 1], minlength=4) / 4e4, second, atol=0.01)
    for bad, message in [
        (lambda: jg.multinomial(jg.tensor([1.0, -1.0]), 1), "non-negative"),
        (lambda: jg.multinomial(jg.zeros(3), 1), "sums to 0"),
        (lambda: jg.multinomial(jg.tensor([1.0, 0.0, 1.0]), 3), "fewer than 3 categories"),
        (lambda: jg.multinomial(jg.ones(2), 3), "cannot draw 3 samples from 2"),
        (lambda: jg.multinomial(jg.ones(2), 0), "num_samples must be positive"),
        (lambda: jg.multinomial(jg.ones((2, 2, 2)), 1), "1-d or 2-d"),
    ]:
        with pytest.raises(ValueError, match=message):
            bad()


def test_normal_and_multinomial_draw_afresh_inside_a_jitted_function():
    @jg.jit
    def sample(weights):
        return jg.multinomial(weights, 4, replacement=True), jg.normal(weights, 1.0)

    jg.manual_seed(3)
    eager = [(jg.multinomial(jg.ones(50), 4, replacement=True), jg.normal(jg.ones(50), 1.0))]
    eager += [(jg.multinomial(jg.ones(50), 4, replacement=True), jg.normal(jg.ones(50), 1.0))]
    jg.manual_seed(3)
    jitted = [sample(jg.ones(50)) for _ in range(2)]
    for (e_index, e_value), (j_index, j_value) in zip(eager, jitted, strict=True):
        np.testing.assert_array_equal(e_index.numpy(), j_index.numpy())
        np.testing.assert_array_equal(e_value.numpy(), j_value.numpy())


def test_seed_and_the_rng_state_of_the_default_generator():
    drawn = jg.seed()
    assert jg.initial_seed() == drawn and jg.default_generator.initial_seed() == drawn
    state = jg.get_rng_state()
    assert state.dtype is jg.uint8
    first = jg.randn(4).tolist()
    jg.randn(3)
    jg.set_rng_state(state)
    assert jg.randn(4).tolist() == first
    with pytest.raises(TypeError, match="uint8 tensor"):
        jg.set_rng_state([1, 2, 3])
