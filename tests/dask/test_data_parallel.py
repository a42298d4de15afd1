"""DataParallel on two worker processes: K steps equal K steps of the same training in one
process on the whole batches, also when a worker process is killed during the training,
and replicas that differ are caught."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import jitgrad as jg
import jitgrad.dask as jgd
from jitgrad import nn, optim
from jitgrad.dask.parallel import _checksum
from jitgrad.jit import stats as jit_stats


def make_model():
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    with jg.no_grad():
        for p in model.parameters():
            p.copy_(jg.tensor(rng.standard_normal(p.shape) * 0.5))
    return model


STEPS = 20


def loss_fn(model, x, y):
    return nn.functional.cross_entropy(model(x), y)


def make_batches():
    """Batches of 11 points labelled by a fixed linear rule (learnable: the loss falls)."""
    rng = np.random.default_rng(1)
    rule = rng.standard_normal((4, 3))
    xs = [rng.standard_normal((11, 4)) for _ in range(STEPS)]
    return [(jg.tensor(x), jg.tensor((x @ rule).argmax(axis=1))) for x in xs]


def train_alone(batches):
    """The losses and the model of the same training in this process."""
    model = make_model()
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for x, y in batches:
        opt.zero_grad()
        loss = loss_fn(model, x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


def test_steps_on_two_workers_equal_steps_in_one_process(dask_client):
    batches = make_batches()
    model = make_model()
    dp = jgd.DataParallel(
        loss_fn,
        model,
        optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
        dask_client,
        check_every=2,
    )
    losses = [dp.step(x, y) for x, y in batches]
    dp.check()
    trained = dp.state_dict()
    # The first worker compiled the step's kernels first; the second found them compiled.
    assert dask_client.run(jit_stats, workers=dp.workers[1:]).popitem()[1]["compiled"] == 0

    expected, alone = train_alone(batches)
    np.testing.assert_allclose(losses, expected, rtol=1e-12)
    assert losses[-1] < losses[0] / 2
    for name, value in alone.state_dict().items():
        assert isinstance(trained[name], jg.Tensor)
        np.testing.assert_allclose(trained[name].numpy(), value.numpy(), rtol=1e-10, atol=1e-12)
    # The client's model is untouched: the replicas trained.
    for name, value in make_model().state_dict().items():
        np.testing.assert_array_equal(model.state_dict()[name].numpy(), value.numpy())

    def nudge_a_weight(key):
        from jitgrad.dask.parallel import _replicas

        with jg.no_grad():
            _replicas[key].model[0].weight[0, 0] += 1e-9

    dask_client.run(nudge_a_weight, dp.key, workers=dp.workers[1:])
    with pytest.raises(RuntimeError, match=f"model replicas differ after step {STEPS}"):
        dp.check()
    dp.close()

    def holds(key):
        from jitgrad.dask.parallel import _replicas

        return key in _replicas

    assert set(dask_client.run(holds, dp.key).values()) == {False}
    with pytest.raises(RuntimeError, match="closed"):
        dp.step(*batches[0])


def test_a_worker_killed_during_training_is_replaced_and_training_continues(dask_client):
    batches = make_batches()
    model = make_model()
    dp = jgd.DataParallel(
        loss_fn,
        model,
        optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
        dask_client,
        check_every=5,
    )
    victim = dp.workers[1]
    pid = dask_client.run(os.getpid, workers=[victim])[victim]
    sixth_step = threading.Event()

    def kill_during_the_sixth_step():
        sixth_step.wait()
        time.sleep(0.002)
        os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_during_the_sixth_step)
    killer.start()
    losses = []
    for i, (x, y) in enumerate(batches[:10]):
        if i == 5:
            sixth_step.set()
        losses.append(dp.step(x, y))
    killer.join()
    assert victim not in dp.workers

    # The nanny's replacement receives a replica at the next step and trains with the other.
    deadline = time.monotonic() + 30
    while len(dask_client.nthreads()) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    losses += [dp.step(x, y) for x, y in batches[10:]]
    assert len(dp.workers) == 2 and victim not in dp.workers
    sums = dask_client.run(_checksum, dp.key, workers=dp.workers)
    assert len(set(sums.values())) == 1

    expected, alone = train_alone(batches)
    np.testing.assert_allclose(losses, expected, rtol=1e-12)
    assert losses[-1] < losses[5] / 2
    trained = dp.state_dict()
    for name, value in alone.state_dict().items():
        np.testing.assert_allclose(trained[name].numpy(), value.numpy(), rtol=1e-10, atol=1e-12)
    dp.close()


def test_bad_batches_are_named(dask_client):
    model = make_model()
    dp = jgd.DataParallel(
        lambda m, x: m(x).sum(), model, optim.SGD(model.parameters(), lr=0.1), dask_client
    )
    with pytest.raises(ValueError, match="differ in their first dimension"):
        dp.step(jg.ones((4, 4)), jg.ones(3))
    with pytest.raises(ValueError, match="a batch of 1 rows cannot be shared among 2 workers"):
        dp.step(jg.ones((1, 4)))
    with pytest.raises(TypeError, match="as jitgrad tensors"):
        dp.step(np.ones((4, 4)))
    with pytest.raises(ValueError, match="check_every"):
        jgd.DataParallel(lambda m, x: m(x), model, None, dask_client, check_every=0)
    dp.close()
