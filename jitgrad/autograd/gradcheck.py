"""Finite-difference checks of gradients: what every op's backward is tested against."""

from __future__ import annotations

import numpy as np

from .engine import grad
from .grad_mode import enable_grad
from .tensor import Tensor, as_tensor


class GradcheckError(AssertionError):
    """An analytical gradient disagrees with central finite differences."""


def gradcheck(
    fn, *inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, seed: int = 0
) -> bool:
    """Compare autograd's gradients of ``fn`` with central differences, in float64.

    Every output is weighted by a fixed random tensor and summed, so all of them are
    checked through one scalar. Inputs that require grad are perturbed one element at a
    time (they must be leaves; build views and broadcasts inside ``fn``).

    The inputs come one per argument, or as PyTorch passes them: one tuple (or list).

    >>> import jitgrad as jg
    >>> x = jg.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    >>> jg.autograd.gradcheck(lambda t: jg.tanh(t @ t.T), x)
    True
    >>> y = jg.tensor([3.0, -2.0], requires_grad=True)
    >>> jg.autograd.gradcheck(lambda a, b: a * b, (x, y))
    True
    """
    if len(inputs) == 1 and isinstance(inputs[0], (tuple, list)):
        inputs = tuple(inputs[0])
    inputs = [as_tensor(x) for x in inputs]
    wrt = [x for x in inputs if x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck needs at least one input with requires_grad=True")
    for k, x in enumerate(wrt):
        if not x.is_leaf or x.dtype.name != "float64":
            raise ValueError("gradcheck perturbs float64 leaf tensors; build views inside fn")
        if _overlaps(x):
            # (as PyTorch's gradcheck: the differences would move several elements at once)
            raise ValueError(
                f"gradcheck: input {k} (shape {x.shape}, strides {x.stride()}) has elements "
                "that share memory, so perturbing one perturbs others; pass x.clone() and "
                "build the broadcast or view inside fn"
            )
    rng = np.random.default_rng(seed)
    weights = None

    def scalar(*xs):
        nonlocal weights
        outs = fn(*xs)
        returned = outs if isinstance(outs, (tuple, list)) else (outs,)
        outs = [o for o in returned if isinstance(o, Tensor) and o.dtype.is_floating_point]
        if not outs:
            kinds = ", ".join(
                f"a {o.dtype.name} tensor" if isinstance(o, Tensor) else type(o).__name__
                for o in returned
            )
            raise ValueError(
                f"gradcheck: fn returned no floating-point tensor to differentiate (got {kinds})"
            )
        if weights is None:
            weights = [as_tensor(rng.standard_normal(o.shape)) for o in outs]
        total = None
        for o, w in zip(outs, weights):
            term = (o * w).sum()
            total = term if total is None else total + term
        return total

    analytical = grad(scalar(*inputs), wrt, allow_unused=True)
    for k, (x, g) in enumerate(zip(wrt, analytical)):
        numeric = np.zeros(x.shape)
        data = x.numpy()  # perturbed through numpy: not an in-place op autograd would see
        with enable_grad():  # fn may itself differentiate (higher-order checks)
            for index in np.ndindex(*x.shape):
                original = data[index]
                data[index] = original + eps
                plus = scalar(*inputs).item()
                data[index] = original - eps
                minus = scalar(*inputs).item()
                data[index] = original
                numeric[index] = (plus - minus) / (2 * eps)
        got = np.zeros(x.shape) if g is None else g.numpy()
        if not np.allclose(got, numeric, atol=atol, rtol=rtol, equal_nan=True):
            worst = np.unravel_index(np.argmax(np.abs(got - numeric)), x.shape) if x.ndim else ()
            raise GradcheckError(
                f"gradient of input {k} (shape {x.shape}) disagrees with finite differences: "
                f"at index {worst} autograd gives {got[worst]!r}, central differences give "
                f"{numeric[worst]!r} (atol={atol}, rtol={rtol})"
            )
    return True


def _overlaps(x) -> bool:
    """Whether two of ``x``'s elements are one memory location (an expand, an as_strided)."""
    locations = np.zeros((), np.int64)
    for n, stride in zip(x.shape, x.stride()):
        locations = np.add.outer(locations, np.arange(n) * stride)
    return np.unique(locations).size != x.numel()
