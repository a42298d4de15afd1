"""The differentiable op set: every op is a Function with forward and backward together."""

from . import methods  # noqa: F401  binds operators and methods onto Tensor
from .broadcasting import *  # noqa: F403
from .complex_parts import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .indexing import *  # noqa: F403
from .linalg import *  # noqa: F403
from .movement import (
    astype,
    basic_index,
    cat,
    clone,
    concatenate,
    contiguous,
    diagonal,
    expand,
    expand_dims,
    flatten,
    flip,
    narrow,
    permute,
    reshape,
    squeeze,
    stack,
    swapaxes,
    transpose,
    unsqueeze,
    view,
)
from .reduce import *  # noqa: F403
from .unary import *  # noqa: F403
