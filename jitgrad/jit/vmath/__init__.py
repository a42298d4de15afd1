"""Vectorizable math for generated kernels: exp, log, tanh, sin, erf, pow... in float32/64.

Why: numba lowers ``math.exp``, ``np.tanh`` and friends to calls into the C math library
(the llvmlite wheels ship no SVML), 3-13 ns per element here, and a call in a loop body stops
LLVM from vectorizing the loop. A fused kernel then runs slower than numpy's own AVX-512
ufuncs.
The functions here are plain numba code without calls: range reduction, a polynomial, and
exponent bit tricks, branch-free (special cases are selects), so that once inlined into a
kernel's loop LLVM vectorizes the whole body (AVX-512 on this machine).

Use: one function per math function and precision, ``exp_f32``, ``exp_f64``...; ``FUNCTIONS``
maps ``(name, dtype name)`` to the function's name; call them from an
``@njit(error_model="numpy")`` loop (``error_model="numpy"`` is what lets a loop with a
division vectorize; the functions themselves are compiled with it too).

    >>> from jitgrad.jit import vmath
    >>> FUNCTIONS[("tanh", "float32")]
    'tanh_f32'
    >>> float(vmath.exp_f64(1.0))
    2.718281828459045

Compilation: every function is ``@njit(forceinline=True, cache=True)``. ``forceinline`` marks
the LLVM function ``alwaysinline``. Without it (plain ``@njit``, and also numba's IR-level
``inline="always"``) LLVM declines to inline the larger bodies (sin/cos, erf, gelu, pow in
float64) and the caller's loop stays scalar at 20-28 ns per element. Compiling a loop around
one of them costs 0.15-0.7 s. A generated kernel inlines this package's code, so a disk cache
of kernels must be keyed on ``SOURCE_HASH`` too: numba's own cache checks only the kernel's file.

Layout, by function family: ``exp_log`` (exp, expm1, log, log1p), ``hyperbolic`` (tanh,
sigmoid, softplus), ``trigonometric`` (sin, cos), ``special`` (erf, gelu), ``power`` (pow,
ipow), on the shared intrinsics and helpers of ``_core``; every public name is importable
from ``jitgrad.jit.vmath``.

Accuracy contract (tests/jit/test_vmath.py): error at most 2 ulp in float32 and 4 ulp in float64
against a reference of higher precision (float64 for float32, long double for float64), and
numpy's results for special values: +-0 (sign included), +-inf, NaN, subnormal inputs, and the
overflow, underflow and saturation points. Measured maxima, in ulp, over the test sweeps plus
every 256th float32 bit pattern, 2**22 uniform float32 in each function's range, and 2**21
random-bit-pattern, 2**21 uniform-in-range and 2**21 uniform-in-[-2, 2] float64 each:

    ==========  =======  =======  ======================================================
    function    float32  float64  how
    ==========  =======  =======  ======================================================
    exp         0.98     0.75     x = k ln2 + r, e**r - 1 minimax, 2**k as two factors;
                                 float64 carries r's rounding error, float32 need not
    expm1       1.08     1.04     same core; 2**k (1 + u) - 1 summed exactly
    log         0.95     0.94     2 atanh(f / (2 + f)) minimax on [sqrt 1/2, sqrt 2)
    log1p       0.95     0.88     log(1 + x) + (x - ((1 + x) - 1)) / (1 + x)
    tanh        0.98     1.47     x + x**3 p(x*x) below 0.9 / 0.55, else 1 - 2/(e**2x + 1)
    sigmoid     1.97*    0.78     e**-|x|, one division; float32: 1 + e rounded then corrected,
                                 float64: e**-|x| in double-double, one corrected division
    softplus    1.14     1.08     max(x, 0) + log1p(e**-|x|)
    sin, cos    0.50     0.72     Payne-Hanek reduction (float32: computed in float64)
    erf         0.50     0.85     x p(x*x) below 0.75, else 1 - e**-x*x erfcx(x)
    gelu        0.50     1.06     exact (erf) form; accurate also in the negative tail
    pow         0.50     0.93     e**(y log|x|) with log in double-double
    ==========  =======  =======  ======================================================

erfcx(a) = v H((a - 3) / (a + 3)), v = 1 / (a + 3), with H a degree 22 (float64) or 10
polynomial. Float32 sin, cos, erf, gelu and pow compute in float64 and round once: their
results are correctly rounded but within about 2**-10 ulp of a tie (the 0.50 above; pow's
float32 samples were all correctly rounded). The others compute natively in float32 (16
lanes per AVX-512 register). * Float32 sigmoid's maximum is over every float32 in
[-104, 20] (beyond, it is 0 or 1 correctly rounded): e**-|x| errs by up to 1 ulp, which
e**x / (1 + e**x) passes on for x < 0. Coefficients are weighted minimax
fits from ``tools/vmath_fit.py`` (Remez exchange in ``decimal`` arithmetic).

Where this differs from numpy or from the formula jitgrad's reference evaluator uses:

- numpy's own float32 ufuncs are not correctly rounded (float32 exp errs by up to 2.3 ulp
  near its overflow and underflow points; float32 tanh returns 0.99999994 up to 9.999999
  where the correctly rounded result is 1 from 9.0109 on). Where numpy and the correctly
  rounded result disagree, these functions follow the latter; exp's and expm1's overflow
  points and exp's underflow to 0 are exactly numpy's.
- sigmoid(x) for x in (-103.97, -88.72) in float32 is the true tiny value (as jitgrad's
  reference exp(-logaddexp(0, -x)) gives), not the 0 of numpy's 1/(1 + exp(-x)), whose
  exp(-x) overflows there.
- gelu(x) for very negative x is the true x Phi(x) (-7.6e-23 at x = -10), not the 0 that
  1 + erf(x / sqrt 2) cancels to in the reference formula; gelu(-inf) is NaN like that
  formula's -inf * 0.
- NaN inputs come back as the same NaN (quieted, sign and payload kept), as C's libm and
  numpy's float64 loops do; numpy's float32 exp/log/tanh/sin/cos return the default +NaN
  instead. Invalid operations (log(-1), sin(inf), (-2)**0.5) give x86's default NaN
  (negative sign bit), as numpy does (but for its float64 log on CPUs without AVX-512,
  which returns +NaN).

Speed: inlined into a kernel's loop, each function vectorises with it; perf/ measures the
kernels that use them against numpy, PyTorch and JAX.
"""

import hashlib
from pathlib import Path

from .exp_log import exp_f32, exp_f64, expm1_f32, expm1_f64, log1p_f32, log1p_f64, log_f32, log_f64
from .hyperbolic import sigmoid_f32, sigmoid_f64, softplus_f32, softplus_f64, tanh_f32, tanh_f64
from .power import ipow, pow_f32, pow_f64
from .special import erf_f32, erf_f64, gelu_f32, gelu_f64
from .trigonometric import cos_f32, cos_f64, sin_f32, sin_f64

_NAMES = (
    "exp",
    "expm1",
    "log",
    "log1p",
    "tanh",
    "sigmoid",
    "softplus",
    "sin",
    "cos",
    "erf",
    "gelu",
    "pow",
)
FUNCTIONS = {
    (name, dtype): f"{name}_{suffix}"
    for name in _NAMES
    for dtype, suffix in (("float32", "f32"), ("float64", "f64"))
}
"""(function name, dtype name) -> name of its implementation in this package."""

_FILES = sorted(Path(__file__).parent.glob("*.py"))
SOURCE_HASH = hashlib.sha256(b"".join(f.read_bytes() for f in _FILES)).hexdigest()[:16]
"""Changes whenever any file of this package does: part of the key of cached kernels that
inline it."""


def _forget_stale_compilations() -> None:
    """numba checks a cached function against its own file only, and these functions inline
    helpers from the package's other files: when any file changes, every cached function of
    the package is dropped (once: a stamp of ``SOURCE_HASH`` beside numba's cache)."""
    from numba.core.dispatcher import Dispatcher

    from . import _core, exp_log, hyperbolic, power, special, trigonometric

    families = (_core, exp_log, hyperbolic, power, special, trigonometric)
    functions = [f for m in families for f in vars(m).values() if isinstance(f, Dispatcher)]
    stamp = Path(functions[0]._cache._cache_path) / "vmath-source-hash"
    try:
        if stamp.read_text() == SOURCE_HASH:
            return
    except OSError:
        pass
    try:
        for f in functions:
            f._cache.flush()
        stamp.write_text(SOURCE_HASH)
    except OSError:  # an unwritable cache: numba compiles without it anyway
        pass


_forget_stale_compilations()

__all__ = [
    "FUNCTIONS",
    "SOURCE_HASH",
    "ipow",
    "cos_f32",
    "cos_f64",
    "erf_f32",
    "erf_f64",
    "exp_f32",
    "exp_f64",
    "expm1_f32",
    "expm1_f64",
    "gelu_f32",
    "gelu_f64",
    "log1p_f32",
    "log1p_f64",
    "log_f32",
    "log_f64",
    "pow_f32",
    "pow_f64",
    "sigmoid_f32",
    "sigmoid_f64",
    "sin_f32",
    "sin_f64",
    "softplus_f32",
    "softplus_f64",
    "tanh_f32",
    "tanh_f64",
]
