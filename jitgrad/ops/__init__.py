"""The differentiable op set: every op is a Function with forward and backward together."""

from types import ModuleType

from . import (
    methods,  # noqa: F401  binds operators and methods onto Tensor
    torch_methods,  # noqa: F401  binds PyTorch's conveniences (x.float(), x.scatter_)
)
from .calculus import *  # noqa: F403
from .comparison import *  # noqa: F403
from .complex_parts import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .histograms import *  # noqa: F403
from .indexing import *  # noqa: F403
from .linalg import *  # noqa: F403
from .movement import (
    astype,
    basic_index,
    broadcast_to,
    cat,
    clone,
    concatenate,
    contiguous,
    diagonal,
    expand,
    expand_dims,
    flatten,
    flip,
    matrix_transpose,
    narrow,
    permute,
    reshape,
    squeeze,
    stack,
    sum_to,
    swapaxes,
    transpose,
    unbind,
    unsqueeze,
    view,
)
from .nanfunctions import *  # noqa: F403
from .number_theory import *  # noqa: F403
from .polynomial import *  # noqa: F403
from .products import *  # noqa: F403
from .reduce import *  # noqa: F403
from .selection import *  # noqa: F403
from .sets import *  # noqa: F403
from .shaping import *  # noqa: F403
from .signal import *  # noqa: F403
from .sorting import *  # noqa: F403
from .statistics import *  # noqa: F403
from .torch_functions import *  # noqa: F403
from .unary import *  # noqa: F403

# The functions, not the modules: jg.linalg is numpy's namespace (jitgrad/linalg.py).
__all__ = [
    name
    for name, value in globals().items()
    if not name.startswith("_") and not isinstance(value, ModuleType)
]
