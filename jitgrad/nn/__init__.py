"""Neural-network building blocks. For now the functional forms (PyTorch's
``torch.nn.functional``): ``import jitgrad.nn.functional as F``."""

from . import functional

__all__ = ["functional"]
