"""Loss layers against float64 numpy references, with finite-difference gradients."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn
from jitgrad.autograd import gradcheck


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def np_log_softmax(x):
    z = x - x.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    a, b = data((3, 4), 0), data((3, 4), 1)
    x = jg.tensor(a, requires_grad=True)
    loss = nn.MSELoss(reduction=reduction)
    sq = (a - b) ** 2
    expected = {"mean": sq.mean(), "sum": sq.sum(), "none": sq}[reduction]
    np.testing.assert_allclose(loss(x, jg.asarray(b)).numpy(), expected, rtol=1e-12)
    assert gradcheck(lambda x: loss(x, jg.asarray(b)), x)


def test_cross_entropy_loss_with_weights_and_smoothing():
    logits, labels = data((5, 4), 2), np.array([0, 3, 1, 1, 2])
    w = np.array([1.0, 2.0, 0.5, 1.5])
    x = jg.tensor(logits, requires_grad=True)
    logp = np_log_softmax(logits)
    plain = -logp[np.arange(5), labels].mean()
    np.testing.assert_allclose(
        nn.CrossEntropyLoss()(x, jg.asarray(labels)).item(), plain, rtol=1e-12
    )
    weighted = nn.CrossEntropyLoss(weight=w)
    nll = -w[labels] * logp[np.arange(5), labels]
    np.testing.assert_allclose(
        weighted(x, jg.asarray(labels)).item(), nll.sum() / w[labels].sum(), rtol=1e-12
    )
    assert "weight" in weighted.state_dict()  # a buffer, as in PyTorch
    smooth = nn.CrossEntropyLoss(label_smoothing=0.1)
    expected = (0.9 * -logp[np.arange(5), labels] + 0.1 * -logp.mean(axis=1)).mean()
    np.testing.assert_allclose(smooth(x, jg.asarray(labels)).item(), expected, rtol=1e-12)
    ignore = nn.CrossEntropyLoss(ignore_index=1, reduction="sum")
    keep = labels != 1
    np.testing.assert_allclose(
        ignore(x, jg.asarray(labels)).item(), -logp[np.arange(5), labels][keep].sum(), rtol=1e-12
    )
    for loss in (nn.CrossEntropyLoss(), weighted, smooth, ignore):
        assert gradcheck(lambda x, loss=loss: loss(x, jg.asarray(labels)), x)


def test_cross_entropy_loss_float32_logits():
    x = jg.asarray(data((4, 3)).astype(np.float32))
    assert nn.CrossEntropyLoss()(x, jg.tensor([0, 1, 2, 0])).dtype is jg.float32


def test_bce_with_logits_loss():
    logits, target = data((4, 3), 3), (data((4, 3), 4) > 0).astype(np.float64)
    pos = np.array([1.0, 2.0, 3.0])
    x = jg.tensor(logits, requires_grad=True)
    sig = 1 / (1 + np.exp(-logits))
    per = -(pos * target * np.log(sig) + (1 - target) * np.log(1 - sig))
    loss = nn.BCEWithLogitsLoss(pos_weight=pos)
    np.testing.assert_allclose(loss(x, jg.asarray(target)).item(), per.mean(), rtol=1e-12)
    summed = nn.BCEWithLogitsLoss(weight=np.full((4, 3), 2.0), reduction="sum")
    plain = -(target * np.log(sig) + (1 - target) * np.log(1 - sig))
    np.testing.assert_allclose(summed(x, jg.asarray(target)).item(), 2 * plain.sum(), rtol=1e-12)
    assert gradcheck(lambda x: loss(x, jg.asarray(target)), x)


def test_bad_reduction_is_named():
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.MSELoss(reduction="avg")


@pytest.mark.parametrize("dtype", [jg.float32, jg.float64])
def test_weighted_losses_come_back_from_their_config_with_their_weights_dtypes(dtype):
    import json

    losses = [
        nn.CrossEntropyLoss(weight=jg.tensor([1.0, 2.0, 0.5], dtype=dtype)),
        nn.BCEWithLogitsLoss(
            weight=jg.tensor([2.0], dtype=dtype), pos_weight=jg.tensor([3.0, 1.0, 0.5], dtype=dtype)
        ),
    ]
    logits = jg.asarray(data((4, 3)).astype(dtype.numpy))
    targets = [jg.tensor([0, 2, 1, 1]), jg.asarray((data((4, 3), 1) > 0).astype(dtype.numpy))]
    for loss, target in zip(losses, targets):
        rebuilt = nn.from_config(json.loads(json.dumps(loss.config())))
        for name, buffer in loss.named_buffers():
            got = dict(rebuilt.named_buffers())[name]
            assert got.dtype is dtype and got.tolist() == buffer.tolist()
        assert rebuilt(logits, target).dtype is dtype
        assert rebuilt(logits, target).item() == loss(logits, target).item()


def test_a_config_with_a_plain_list_weight_still_loads():
    rebuilt = nn.from_config({"type": "CrossEntropyLoss", "args": {"weight": [1.0, 2.0]}})
    assert rebuilt.weight.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="'values' and 'dtype'"):
        nn.from_config({"type": "CrossEntropyLoss", "args": {"weight": {"data": [1.0]}}})


@pytest.mark.parametrize("threshold", [None, 64], ids=["one piece", "rows in pieces"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_row_kernels_match_pytorch(threshold, reduction, monkeypatch):
    """The row kernels of float32 cross-entropy, over all rows at once and in pieces
    shared among threads, eagerly and jitted: loss and gradient as PyTorch's."""
    torch = pytest.importorskip("torch")
    if threshold is not None:  # (30 rows of 7: several pieces from 64 elements)
        monkeypatch.setattr(jg.config, "parallel_threshold", threshold)
    rng = np.random.default_rng(5)
    logits = (rng.standard_normal((30, 7)) * 3).astype(np.float32)
    labels = rng.integers(0, 7, 30)
    labels[[3, 17]] = -100  # ignored rows
    t = torch.tensor(logits, requires_grad=True)
    want = torch.nn.functional.cross_entropy(t, torch.tensor(labels), reduction=reduction)
    (want.sum() if reduction == "none" else want).backward()

    def step(x, y):
        x.grad = None
        loss = nn.functional.cross_entropy(x, y, reduction=reduction)
        (loss.sum() if reduction == "none" else loss).backward()
        return loss, x.grad

    x, y = jg.tensor(logits, requires_grad=True), jg.asarray(labels)
    jitted = jg.jit(step)
    for run in (step, jitted, jitted):  # eager, the trace, then its replay
        loss, grad = run(x, y)
        np.testing.assert_allclose(loss.numpy(), want.detach().numpy(), rtol=2e-6, atol=1e-6)
        np.testing.assert_allclose(grad.numpy(), t.grad.numpy(), rtol=2e-5, atol=1e-7)
