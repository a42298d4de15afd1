"""In a fresh process with an empty kernel cache, a trace computes on numpy what the
kernels it defers would have (elementwise launches, reductions, cross-entropy): the first
call of a jitted training step gives what its replays give."""

import os
import subprocess
import sys
import textwrap

_STEP = textwrap.dedent(
    """
    import json
    import numpy as np
    import jitgrad as jg
    from jitgrad import nn
    import jitgrad.nn.functional as F

    jg.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.LayerNorm(32), nn.GELU(), nn.Linear(32, 7))
    opt = jg.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    x = jg.asarray(rng.standard_normal((16, 12)).astype(np.float32))
    labels = rng.integers(0, 7, 16)
    labels[3] = -100  # an ignored row
    y = jg.asarray(labels)
    params = [p.numpy().copy() for p in model.parameters()]

    def step(x, y, reduction):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y, reduction=reduction)
        total = loss.sum() if reduction == "none" else loss
        (total + 0.01 * F.softmax(logits, dim=1).max(dim=1).values.sum()).backward()
        return total, [p.grad.clone() for p in model.parameters()]

    reductions = ("mean", "sum", "none")
    jitted = {reduction: jg.jit(step) for reduction in reductions}
    runs = {reduction: [] for reduction in reductions}
    for _ in range(3):  # every trace first (no kernel compiled yet), then two replays each
        for reduction in reductions:
            for p, start in zip(model.parameters(), params):
                with jg.no_grad():
                    p.copy_(jg.asarray(start))
            loss, grads = jitted[reduction](x, y, reduction)
            runs[reduction].append([loss.numpy().reshape(-1)] + [g.numpy() for g in grads])
    gaps = {
        reduction: max(
            float(np.max(np.abs(a - b) / (1e-6 + np.abs(b))))
            for run in runs[reduction][:2]
            for a, b in zip(run, runs[reduction][2])
        )
        for reduction in reductions
    }
    print(json.dumps(gaps))
    """
)


def test_a_cold_trace_gives_what_the_replays_give(tmp_path):
    env = dict(os.environ, JITGRAD_CACHE_DIR=str(tmp_path), JITGRAD_NUMPY_TIER_WORK="0")
    out = subprocess.run(
        [sys.executable, "-c", _STEP], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-2000:]
    import json

    gaps = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(gaps) == {"mean", "sum", "none"}
    for reduction, gap in gaps.items():
        assert gap < 1e-4, (reduction, gap)
