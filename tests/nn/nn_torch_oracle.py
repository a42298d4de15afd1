"""PyTorch as the oracle of jitgrad.nn: a function's values and gradients against the same
computation in PyTorch, on tensors of the same float64 arrays."""

import numpy as np
import torch

import jitgrad as jg


def assert_matches_torch(jg_fn, torch_fn, *arrays, rtol=1e-10, atol=1e-12, grad=True, seed=0):
    """``jg_fn`` on jitgrad tensors and ``torch_fn`` on torch tensors of ``arrays``: equal
    results and, with ``grad``, equal gradients (of the result times a random tensor) for
    every floating array. Returns the jitgrad result."""
    floating = [np.asarray(a).dtype.kind == "f" for a in arrays]
    jx = [jg.tensor(a, requires_grad=grad and f) for a, f in zip(arrays, floating)]
    tx = [torch.tensor(a, requires_grad=grad and f) for a, f in zip(arrays, floating)]
    jy, ty = jg_fn(*jx), torch_fn(*tx)
    assert jy.shape == tuple(ty.shape), (jy.shape, tuple(ty.shape))
    np.testing.assert_allclose(jy.numpy(), ty.detach().numpy(), rtol=rtol, atol=atol)
    if grad:
        r = np.random.default_rng(seed).standard_normal(jy.shape)
        (jy * jg.tensor(r)).sum().backward()
        (ty * torch.tensor(r)).sum().backward()
        for i, (a, b) in enumerate(zip(jx, tx)):
            if b.requires_grad:
                expected = np.zeros(a.shape) if b.grad is None else b.grad.numpy()
                got = np.zeros(a.shape) if a.grad is None else a.grad.numpy()
                np.testing.assert_allclose(
                    got, expected, rtol=rtol, atol=atol, err_msg=f"gradient of argument {i}"
                )
    return jy


def as_jg(t, requires_grad=False):
    """A jitgrad tensor of a torch tensor's values."""
    return jg.tensor(t.detach().numpy(), requires_grad=requires_grad)


def close(got, expected, tol=1e-10):
    """A jitgrad result equals a torch one to ``tol``, relative and absolute."""
    np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), rtol=tol, atol=tol)


def copy_parameters(module, torch_module) -> None:
    """Give ``module`` the values of ``torch_module``'s parameters and buffers (matched by
    state_dict key), every key of one found in the other."""
    state = {k: as_jg(v) for k, v in torch_module.state_dict().items()}
    missing, unexpected = module.load_state_dict(state)
    assert not missing and not unexpected, (missing, unexpected)
