"""jg.manual_seed restarts the one default generator: default initialisation, nn.Dropout
and jg.randn / rand / randint / randperm repeat after the same seed."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn


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
