"""jg.nn.utils against torch.nn.utils: gradient clipping by norm and by value (eagerly and
inside a jitted training step), and flat parameter vectors."""

import math

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn
from jitgrad.nn import utils

torch = pytest.importorskip("torch")


def _grads(dtype=np.float64, scale=1.0):
    rng = np.random.default_rng(0)
    return [scale * rng.standard_normal(s).astype(dtype) for s in ((3, 4), (4,), (2, 2, 2))]


def _pair(grads):
    ours = [nn.Parameter(jg.zeros(g.shape, dtype=g.dtype)) for g in grads]
    theirs = [torch.zeros(g.shape, dtype=torch.from_numpy(g).dtype) for g in grads]
    for p, t, g in zip(ours, theirs, grads, strict=True):
        p.grad, t.grad = jg.tensor(g), torch.tensor(g)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype):
    ours, theirs = _pair(_grads(dtype))
    total = utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    want = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert isinstance(total, jg.Tensor) and total.shape == () and total.dtype.numpy == dtype
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(total.numpy(), want.numpy(), rtol=rtol)
    for p, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=1e-7)
    clipped = math.isfinite(norm_type) and want.item() > max_norm
    if clipped:  # the gradients' norm is now max_norm
        norms = [np.linalg.norm(p.grad.numpy().ravel(), norm_type) for p in ours]
        assert np.linalg.norm(norms, norm_type) == pytest.approx(max_norm, rel=1e-5)


def test_clip_grad_norm_skips_missing_gradients_and_takes_one_tensor():
    a, b = nn.Parameter(jg.zeros(2)), nn.Parameter(jg.zeros(2))
    a.grad = jg.tensor([3.0, 4.0])
    assert utils.clip_grad_norm_([a, b], 10.0).item() == 5.0 and b.grad is None
    assert utils.clip_grad_norm_(a, 1.0).item() == 5.0
    assert a.grad.tolist() == pytest.approx([0.6, 0.8])
    assert utils.clip_grad_norm_([b], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite():
    p = nn.Parameter(jg.zeros(2))
    p.grad = jg.tensor([1.0, math.inf])
    with pytest.raises(RuntimeError, match="non-finite"):
        utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert math.isinf(utils.clip_grad_norm_([p], 1.0).item())
    with pytest.raises(TypeError, match="max_norm must be a number"):
        utils.clip_grad_norm_([p], "1")


@pytest.mark.parametrize("clip_value", [0.3, 5.0])
def test_clip_grad_value_matches_torch(clip_value):
    ours, theirs = _pair(_grads())
    assert utils.clip_grad_value_(ours, clip_value) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    for p, t in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(p.grad.numpy(), t.grad.numpy())


def test_parameters_to_vector_and_back():
    rng = np.random.default_rng(1)
    values = [rng.standard_normal(s) for s in ((2, 3), (4,), (1,))]
    ours = [nn.Parameter(jg.tensor(v)) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    vec = utils.parameters_to_vector(ours)
    np.testing.assert_array_equal(
        vec.numpy(), torch.nn.utils.parameters_to_vector(theirs).detach().numpy()
    )
    (vec * jg.arange(11.0)).sum().backward()  # differentiable, as PyTorch's
    np.testing.assert_array_equal(ours[0].grad.numpy(), np.arange(6.0).reshape(2, 3))

    new = jg.arange(11.0) * 2
    utils.vector_to_parameters(new, ours)
    torch.nn.utils.vector_to_parameters(torch.arange(11.0, dtype=torch.float64) * 2, theirs)
    for p, t in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(p.numpy(), t.detach().numpy())
    with pytest.raises(ValueError, match="vec has 10 elements, the parameters 11"):
        utils.vector_to_parameters(jg.zeros(10), ours)


@pytest.mark.parametrize("max_norm", [0.05, 100.0])
def test_clipping_inside_a_jitted_training_step(max_norm, monkeypatch):
    """The norm is recomputed at every replay: each step clips by its own gradients."""
    monkeypatch.setattr(jg.config, "numpy_tier_work", 0)
    models = [nn.Linear(3, 2, generator=jg.random.default_rng(0)) for _ in range(2)]
    opts = [jg.optim.SGD(m.parameters(), lr=0.5) for m in models]

    def step(model, opt, x):
        opt.zero_grad()
        (model(x) ** 2).sum().backward()
        norm = utils.clip_grad_norm_(model.parameters(), max_norm)
        utils.clip_grad_value_(model.parameters(), 0.5)
        opt.step()
        return norm

    jitted = jg.jit(step)
    rng = np.random.default_rng(2)
    for _ in range(5):
        x = jg.tensor(rng.standard_normal((4, 3)))
        want, got = step(models[0], opts[0], x), jitted(models[1], opts[1], x)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        for a, b in zip(models[0].parameters(), models[1].parameters(), strict=True):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-7)
    assert jitted.traces == 1
