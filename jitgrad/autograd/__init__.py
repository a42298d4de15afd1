"""Define-by-run automatic differentiation: Functions, the backward engine, grad mode."""

from .dot import to_dot
from .engine import grad, run_backward
from .function import Function
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck
from .tensor import Tensor

__all__ = [
    "Function",
    "GradcheckError",
    "Tensor",
    "enable_grad",
    "inference_mode",
    "grad",
    "gradcheck",
    "is_grad_enabled",
    "no_grad",
    "run_backward",
    "set_grad_enabled",
    "to_dot",
]
