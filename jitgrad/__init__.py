"""jitgrad: numpy-like tensors over flat storages, with autograd and fused numba kernels.

>>> import jitgrad as jg
>>> x = jg.arange(6).reshape(2, 3)
>>> x.T.stride(), x.T.is_contiguous()
((1, 3), False)
"""

# First: numba's start-up without SciPy's import (see _numba_startup).
from . import _numba_startup  # noqa: F401  isort: skip

import numpy as np  # noqa: E402  isort: skip
from . import array_api, autograd, data, fft, jit, linalg, nn, ops, optim, random
from ._config import config
from .array_api import __array_api_version__, __array_namespace_info__, from_dlpack
from .array_queries import *  # noqa: F403  numpy's ndim, shape, size, require, shares_memory, ...
from .autograd import (
    Tensor,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .creation import *  # noqa: F403  numpy's other creation functions (its __all__)
from .device import Device
from .dtypes import (
    DType,
    bool_,
    can_cast,
    complex64,
    complex128,
    complexfloating,
    finfo,
    float16,
    float32,
    float64,
    floating,
    generic,
    get_default_dtype,
    iinfo,
    inexact,
    int8,
    int16,
    int32,
    int64,
    integer,
    isdtype,
    issubdtype,
    number,
    promote_types,
    result_type,
    set_default_dtype,
    signedinteger,
    uint8,
    uint16,
    uint32,
    uint64,
    unsignedinteger,
)
from .index_tricks import *  # noqa: F403  numpy's r_, c_, ix_, copyto, vectorize, ...
from .io import load, save
from .io.numpy_formats import *  # noqa: F403  numpy's files: jg.savez, jg.loadtxt, ...
from .jit import function
from .ops import *  # noqa: F403  numpy's spellings: jg.exp, jg.sum, jg.matmul, ...
from .printing import *  # noqa: F403  numpy's print options and formatters
from .random.default import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
)
from .storage import (
    BoolStorage,
    ByteStorage,
    CharStorage,
    ComplexDoubleStorage,
    ComplexFloatStorage,
    DoubleStorage,
    FloatStorage,
    HalfStorage,
    IntStorage,
    LongStorage,
    ShortStorage,
    Storage,
    UInt16Storage,
    UInt32Storage,
    UInt64Storage,
    UntypedStorage,
)
from .type_aliases import *  # noqa: F403  numpy's intp, intc, single, str_, common_type, ...

bool = bool_  # noqa: A001  numpy 2 and PyTorch both spell it jg.bool
half, double, long, short = float16, float64, int64, int16
cfloat, cdouble = complex64, complex128
dtype, ndarray = DType, Tensor  # jg.dtype("float32"); isinstance(t, jg.ndarray)
from numpy import e, euler_gamma, inf, nan, newaxis, pi  # noqa: E402  numpy's constants

# numpy's floating-point error settings, for the numpy routines jitgrad runs; jitgrad's
# kernels compute as numpy's defaults say (inf and nan results) and never warn or raise.
errstate, geterr, seterr = np.errstate, np.geterr, np.seterr

__version__ = "0.1.0"


def empty_cache() -> None:
    """Release the large freed buffers jitgrad keeps for reuse (see ``BufferPool``)."""
    from .storage.buffers import pool

    pool.clear()
