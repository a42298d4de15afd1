"""PyTorch and JAX, the libraries the report compares with beside numpy (when installed).

``load()`` imports one of them set up for this machine; only that library's own process
(``perf.isolated``) calls it. The functions below build the comparators' sides of the rows
as a user of each library would write them, PyTorch eager and JAX under ``jax.jit``, and
return None when their library is not loaded. JAX dispatches asynchronously, so every JAX
side ends in ``block_until_ready()``: a timed call includes the work, not just its launch."""

from __future__ import annotations

import importlib
import os


def load(library: str):
    """The module ``library`` ("torch" or "jax"), or None when it is not importable.

    Call it before importing jitgrad: jitgrad sets OMP_WAIT_POLICY=PASSIVE for its own
    OpenMP threads, and torch's OpenMP runtime reads the variable when torch is imported;
    imported first, PyTorch runs with the thread settings any of its users gets."""
    if library == "jax":
        # CPU only: no probing for GPU/TPU plugins (and their warnings) on a machine with none.
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        module = importlib.import_module(library)
    except ImportError:
        return None
    if library == "jax":
        # float64 rows need it; float32 inputs stay float32 (Python scalars are weakly typed).
        module.config.update("jax_enable_x64", True)
    return module


def about(library: str, module) -> str:
    """The loaded library's version and how it runs, for the report's machine section."""
    if library == "torch":
        waiting = os.environ.get("OMP_WAIT_POLICY", "unset")
        return (
            f"torch {module.__version__} ({module.get_num_threads()} threads, "
            f"OMP_WAIT_POLICY {waiting})"
        )
    import jaxlib

    devices = ", ".join(sorted({d.platform for d in module.devices()}))
    return f"jax {module.__version__} with jaxlib {jaxlib.__version__} on {devices}"


def jax_jit(jax, fn, *arrays):
    """A callable that runs ``jax.jit(fn)`` on ``arrays`` (placed on the device once,
    outside the timing) and waits for the result, or None without jax."""
    if jax is None:
        return None
    jitted, placed = jax.jit(fn), [jax.device_put(a) for a in arrays]
    return lambda: jitted(*placed).block_until_ready()


# -- the fused elementwise chain: y = tanh(0.7x + 0.1)·sigmoid(x) + 0.5x² -----------------


def torch_chain(torch, x, backward: bool):
    """PyTorch eager: the chain's value, or the gradient of its sum."""
    if torch is None:
        return None
    if not backward:
        tx = torch.from_numpy(x)
        return lambda: torch.tanh(tx * 0.7 + 0.1) * torch.sigmoid(tx) + 0.5 * tx * tx

    leaf = torch.from_numpy(x.copy()).requires_grad_()

    def run():
        leaf.grad = None
        y = torch.tanh(leaf * 0.7 + 0.1) * torch.sigmoid(leaf) + 0.5 * leaf * leaf
        y.sum().backward()
        return leaf.grad

    return run


def _jax_chain(jax):
    def chain(v):
        return jax.numpy.tanh(v * 0.7 + 0.1) * jax.nn.sigmoid(v) + 0.5 * v * v

    return chain


def jax_chain(jax, x, backward: bool):
    """``jax.jit`` of the chain, or of ``jax.grad`` of its sum."""
    if jax is None:
        return None
    chain = _jax_chain(jax)
    fn = jax.jit(jax.grad(lambda v: chain(v).sum()) if backward else chain)
    jx = jax.device_put(x)
    return lambda: fn(jx).block_until_ready()


def jax_chain_value_and_grad(jax, x):
    """``jax.jit(jax.value_and_grad)`` of the chain's sum: the value and d/dx, as jitgrad's
    ``chain(x).sum().backward()`` gives them (the compile rows time its first call)."""
    if jax is None:
        return None
    chain = _jax_chain(jax)
    fn = jax.jit(jax.value_and_grad(lambda v: chain(v).sum()))
    jx = jax.device_put(x)
    return lambda: jax.block_until_ready(fn(jx))


# -- eager per-op overhead: (tanh, ·0.9) repeated, forward and backward ---------------------


def torch_op_chain(torch, x, length: int):
    if torch is None:
        return None
    leaf = torch.from_numpy(x.copy()).requires_grad_()

    def run():
        leaf.grad = None
        y = leaf
        for _ in range(length // 2):
            y = torch.tanh(y) * 0.9
        y.sum().backward()
        return leaf.grad

    return run


def jax_op_chain(jax, x, length: int):
    """``jax.grad`` without ``jax.jit``: every op is dispatched on its own, as in the other
    eager sides of the row (under jit the chain would be one compiled call)."""
    if jax is None:
        return None
    jnp = jax.numpy

    def total(y):
        for _ in range(length // 2):
            y = jnp.tanh(y) * 0.9
        return y.sum()

    grad, jx = jax.grad(total), jax.device_put(x)
    return lambda: grad(jx).block_until_ready()


# -- the digits MLP training step (64 → 128 → ReLU → 10, float32, cross-entropy) -----------
# Every side's step returns the first layer's weight after its update: the first step's,
# compared with numpy's, checks the forward, the gradients and the update at once.


def torch_digits_step(torch, params, x, y, lr: float, momentum: float = 0.9):
    """PyTorch eager: nn.Linear layers holding ``params`` (w1, b1, w2, b2 in PyTorch's
    (out, in) layout), ``F.cross_entropy`` and ``torch.optim.SGD`` with ``momentum``."""
    if torch is None:
        return None
    nn = torch.nn
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    with torch.no_grad():
        for p, a in zip(model.parameters(), params):
            p.copy_(torch.from_numpy(a))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y).long()

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(tx), ty)
        loss.backward()
        opt.step()
        return model[0].weight.detach()

    return step


def jax_digits_step(
    jax, params, x, y, optimizer: str = "sgd", lr: float | None = None, momentum: float = 0.9
):
    """``jax.jit`` of a hand-written step on ``params`` (w1, b1, w2, b2, (out, in) layout):
    SGD with ``momentum`` (none at 0) or Adam with PyTorch's defaults. The parameters and
    optimizer state are donated, so XLA updates them in place, as the other sides do.
    Returns a callable that runs one step."""
    if jax is None:
        return None
    jnp = jax.numpy

    def loss_fn(p, x, y):
        w1, b1, w2, b2 = p
        h = jnp.maximum(x @ w1.T + b1, 0)
        z = h @ w2.T + b2
        return -jnp.take_along_axis(jax.nn.log_softmax(z), y[:, None], axis=1).mean()

    def sgd(p, velocity, x, y):  # from zero, the first step's buffer is its gradient
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        velocity = tuple(momentum * v + gi for v, gi in zip(velocity, g))
        p = tuple(pi - lr * v for pi, v in zip(p, velocity))
        return p, velocity, loss

    def plain_sgd(p, state, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        return tuple(pi - lr * gi for pi, gi in zip(p, g)), state, loss

    def adam(p, state, x, y, b1=0.9, b2=0.999, eps=1e-8):
        m, v, t = state
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        t = t + 1
        m = tuple(b1 * mi + (1 - b1) * gi for mi, gi in zip(m, g))
        v = tuple(b2 * vi + (1 - b2) * gi * gi for vi, gi in zip(v, g))
        c1, c2 = 1 - b1**t, 1 - b2**t
        p = tuple(pi - lr * (mi / c1) / (jnp.sqrt(vi / c2) + eps) for pi, mi, vi in zip(p, m, v))
        return p, (m, v, t), loss

    lr = (0.02 if optimizer == "sgd" else 1e-3) if lr is None else lr
    p = tuple(jax.device_put(a) for a in params)
    zeros = tuple(jnp.zeros_like(a) for a in p)
    if optimizer == "sgd" and not momentum:
        update, state = plain_sgd, ()
    elif optimizer == "sgd":
        update, state = sgd, zeros
    elif optimizer == "adam":
        update, state = adam, (zeros, tuple(jnp.zeros_like(a) for a in p), jnp.float32(0))
    else:
        raise ValueError(f"unknown optimizer {optimizer!r}: choose 'sgd' or 'adam'")
    fn = jax.jit(update, donate_argnums=(0, 1))
    carry = [p, state]
    jx, jy = jax.device_put(x), jax.device_put(y)

    def step():
        carry[0], carry[1], loss = fn(carry[0], carry[1], jx, jy)
        jax.block_until_ready((carry[0], loss))
        return carry[0][0]

    return step
