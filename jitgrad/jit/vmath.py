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
one of them costs 0.15-0.7 s. A generated kernel inlines this module's code, so a disk cache of
kernels must be keyed on ``SOURCE_HASH`` too: numba's own cache checks only the kernel's file.

Accuracy contract (tests/jit/test_vmath.py): error at most 2 ulp in float32 and 4 ulp in float64
against a reference of higher precision (float64 for float32, long double for float64), and
numpy's results for special values: +-0 (sign included), +-inf, NaN, subnormal inputs, and the
overflow, underflow and saturation points. Measured maxima, in ulp, over the test sweeps plus
every 256th float32 bit pattern, 2**22 uniform float32 in each function's range, and 2**21
random-bit-pattern, 2**21 uniform-in-range and 2**21 uniform-in-[-2, 2] float64 each:

    ==========  =======  =======  ======================================================
    function    float32  float64  how
    ==========  =======  =======  ======================================================
    exp         0.75     0.75     x = k ln2 + r, e**r - 1 minimax, 2**k as two factors
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
fits from ``jitgrad/jit/_vmath_fit.py`` (Remez exchange in ``decimal`` arithmetic).

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

Speed: ns per element of ``out[i] = f(x[i])`` over 2**22 elements (x in [0.1, 5]; pow's y in
[-2, 2]) against numpy's ufunc writing into a preallocated output, one run side by side. For
scale: a copy of the same arrays takes 0.12 (float32) and 0.30 ns (float64) per element, and
numba's libm calls in such a loop 3.0 (math.exp), 13 (math.sin) and 10 ns (math.tanh):

    ========  =====  =====  =====  =====
    function  f32    numpy  f64    numpy
    ========  =====  =====  =====  =====
    exp       0.30   0.30   0.63   0.87
    expm1     0.39   0.34   0.95   1.04
    log       0.37   0.24   0.63   0.76
    tanh      0.28*  0.16   0.92   0.83
    sigmoid   0.43*  --     1.08   --
    softplus  0.82   --     1.72   --
    sin       1.68   0.68   2.93   13.1
    erf       1.18   --     2.97   --
    gelu      1.35   --     4.23   --
    pow       3.38   0.50   3.55   1.31
    ========  =====  =====  =====  =====

    * measured in a later run (exp: 0.27 there, 0.30 in the table's run), after float32
      sigmoid moved to float64, whose wider exponent needs none of the double-float code
      that took 0.49 in the table's run, and float32 tanh's e**2x dropped the rounding
      compensation of its reduced argument (0.32 before; 2/(e**2x + 1) damps that
      error): a fused chain's loop with tanh and sigmoid went from 0.92 to 0.69 ns per
      element. Float32 sigmoid has since moved back to float32, without the double-float
      code: in float64 it erred by 0.58 ulp at most, but on a Zen 3 (AVX2: 4 float64 lanes
      to float32's 8) it took 1.80 ns per element on one thread, against 1.14 now; the
      fused chain's forward at 2**24 went from 25.4 to 20.4 ms on two threads.

    The table's runs predate two changes to how kernels compile, measured on the fused
    chain's loop on one thread of an AVX-512 machine: float32 exponents kept in int32
    (``_exponent_f32``; 0.55 -> 0.48 ns per element) and LLVM interleaving four vectors
    of a kernel's loop (``jit/cache.py``; 0.71 -> 0.56 before the first). Together, 0.71
    -> 0.50.
"""

import hashlib
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

# fastmath is spelled out because numba lets a callee inherit its caller's flags otherwise.
_OPTS = dict(cache=True, error_model="numpy", fastmath=False, forceinline=True)

_F32 = np.float32
_F64 = np.float64
_I32 = np.int32
_I64 = np.int64
_NAN = -np.nan  # x86's default NaN, which numpy returns for invalid operations
_INF = np.inf

_INT_OF = {types.float32: types.int32, types.float64: types.int64}
_FLOAT_OF = {types.int32: types.float32, types.int64: types.float64}


# ---------------------------------------------------------------- primitives
@intrinsic
def _fma(typingctx, a, b, c):
    """a*b + c with one rounding (llvm.fma: one instruction with FMA3, else libm's fma)."""
    if not (a == b == c and a in _INT_OF):
        return None

    def codegen(context, builder, signature, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [t], ir.FunctionType(t, [t, t, t]))
        return builder.call(fn, args)

    return a(a, b, c), codegen


@intrinsic
def _rint(typingctx, x):
    """Round to the nearest integer, ties to even (llvm.roundeven), as a float."""
    if x not in _INT_OF:
        return None

    def codegen(context, builder, signature, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic("llvm.roundeven", [t], ir.FunctionType(t, [t]))
        return builder.call(fn, args)

    return x(x), codegen


@intrinsic
def _as_int(typingctx, x):
    """The bits of a float32/float64 as int32/int64 (signed, unlike storage.convert's)."""
    if x not in _INT_OF:
        return None
    rt = _INT_OF[x]

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(rt))

    return rt(x), codegen


@intrinsic
def _as_float(typingctx, i):
    """int32/int64 bits as float32/float64."""
    if i not in _FLOAT_OF:
        return None
    rt = _FLOAT_OF[i]

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(rt))

    return rt(i), codegen


@intrinsic
def _poly(typingctx, x, c):
    """Horner's scheme with fma; c is a tuple of coefficients, highest degree first.

    Emitted as straight-line code: a loop over the tuple is left rolled for long polynomials,
    and an inner loop stops LLVM from vectorizing the caller's loop.
    """
    if not (isinstance(c, types.UniTuple) and c.dtype == x and x in _INT_OF):
        return None

    def codegen(context, builder, signature, args):
        xv, cv = args
        t = xv.type
        fma = builder.module.declare_intrinsic("llvm.fma", [t], ir.FunctionType(t, [t, t, t]))
        r = builder.extract_value(cv, 0)
        for i in range(1, c.count):
            r = builder.call(fma, [r, xv, builder.extract_value(cv, i)])
        return r

    return x(x, c), codegen


@njit(**_OPTS)
def _two_sum(a, b):
    """a + b = s + e exactly (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@njit(**_OPTS)
def _pow2_f32(k):
    """2**k for -126 <= k <= 127."""
    return _as_float(_I32((k + 127) << 23))


@njit(**_OPTS)
def _pow2_f64(k):
    """2**k for -1022 <= k <= 1023."""
    return _as_float(_I64((k + 1023) << 52))


@njit(**_OPTS)
def _scale_f32(k):
    """2**k as two factors, |k| <= 250: p * s1 * s2 rounds once, into subnormals too."""
    k1 = _I32(k >> 1)
    return _pow2_f32(k1), _pow2_f32(_I32(k - k1))


@njit(**_OPTS)
def _scale_f64(k):
    k1 = k >> 1
    return _pow2_f64(k1), _pow2_f64(k - k1)


@njit(**_OPTS)
def _ldexp_f32(p, k):
    """p * 2**k with a single rounding, for p normal and |k| <= 250."""
    s1, s2 = _scale_f32(k)
    return p * s1 * s2


@njit(**_OPTS)
def _ldexp_f64(p, k):
    s1, s2 = _scale_f64(k)
    return p * s1 * s2


# ---------------------------------------------------------------- exp, expm1
# x = k ln2 + r, |r| <= ln2 / 2, with ln2 = hi + lo and k * hi exact; e**r - 1 = r + r*r poly(r).
_LOG2E_F32 = _F32(1.442695)
_LN2HI_F32 = _F32(0.693145751953125)  # ln 2 rounded to 16 bits
_LN2LO_F32 = _F32(1.4286068e-06)
_SHIFT_F32 = _F32(12582912.0)  # 1.5 * 2**23: t + shift rounds t to an integer in the low bits
_LOG2E_F64 = 1.4426950408889634
_LN2HI_F64 = 0.6931471805598903  # ln 2 rounded to 42 bits
_LN2LO_F64 = 5.497923018708371e-14
_SHIFT_F64 = 6755399441055744.0  # 1.5 * 2**52
_EXPM1_F32 = tuple(
    _F32(c)
    for c in (
        0.0001967513671843335,
        0.0013935917522758245,
        0.008333634585142136,
        0.041666459292173386,
        0.1666666567325592,
        0.5,
    )
)
_EXPM1_F64 = (
    1.7555040786978198e-09,
    2.5103409506426422e-08,
    2.756909545064421e-07,
    2.755726159211256e-06,
    2.480157228649664e-05,
    0.00019841269868107398,
    0.0013888888897118108,
    0.008333333333328443,
    0.04166666666664881,
    0.1666666666666667,
    0.5000000000000001,
)


@njit(**_OPTS)
def _exponent_f32(t):
    """k from t = shift + k, as int32. numba computes int32 - int32 in int64, and LLVM
    cannot narrow the shifts and sums of k after that (an int32 sum might overflow where
    the int64 one does not): the vector loop then widens every k to 64 bits and back,
    ten instructions that made a fused tanh-and-sigmoid loop 12% slower."""
    return _I32(_as_int(t) - _as_int(_SHIFT_F32))


@njit(**_OPTS)
def _exp_core_f32(x):
    """e**x = (1 + r + w) * 2**k with |r| <= 0.35, |w| < |r| / 4; |x| <= 110."""
    t = _fma(x, _LOG2E_F32, _SHIFT_F32)
    kf = t - _SHIFT_F32
    rh = _fma(kf, -_LN2HI_F32, x)  # exact
    rl = kf * -_LN2LO_F32
    r = rh + rl
    c = (rh - r) + rl  # what rounding r lost: e**(r + c) - 1 ~ em1(r) + c (1 + r)
    w = _fma(r * r, _poly(r, _EXPM1_F32), _fma(c, r, c))
    return r, w, _exponent_f32(t)


@njit(**_OPTS)
def _expm1_core_f32(x):
    """e**x = (1 + p) * 2**k, p to about 1 ulp: ``_exp_core_f32`` without the rounding
    compensation of the reduced argument, for callers that damp exp's error."""
    t = _fma(x, _LOG2E_F32, _SHIFT_F32)
    kf = t - _SHIFT_F32
    r = _fma(kf, -_LN2LO_F32, _fma(kf, -_LN2HI_F32, x))
    return _fma(r * r, _poly(r, _EXPM1_F32), r), _exponent_f32(t)


@njit(**_OPTS)
def _exp_core_f64(x):
    t = _fma(x, _LOG2E_F64, _SHIFT_F64)
    kf = t - _SHIFT_F64
    rh = _fma(kf, -_LN2HI_F64, x)
    rl = kf * -_LN2LO_F64
    r = rh + rl
    c = (rh - r) + rl
    w = _fma(r * r, _poly(r, _EXPM1_F64), _fma(c, r, c))
    return r, w, _as_int(t) - _as_int(_SHIFT_F64)


@njit(**_OPTS)
def _one_plus_dd_f32(r, w):
    """1 + r + w = ph + pl (|w| < |r| < 1), ph the sum rounded once."""
    s = _F32(1.0) + r
    t = ((_F32(1.0) - s) + r) + w
    ph = s + t
    return ph, (s - ph) + t


@njit(**_OPTS)
def _one_plus_dd_f64(r, w):
    s = 1.0 + r
    t = ((1.0 - s) + r) + w
    ph = s + t
    return ph, (s - ph) + t


@njit(**_OPTS)
def exp_f32(x):
    """e**x."""
    xc = _F32(-110.0) if x < _F32(-110.0) else x
    xc = _F32(90.0) if xc > _F32(90.0) else xc
    r, w, k = _exp_core_f32(xc)
    y = _ldexp_f32(_one_plus_dd_f32(r, w)[0], k)
    return y if x == x else x + x


@njit(**_OPTS)
def exp_f64(x):
    """e**x."""
    xc = -760.0 if x < -760.0 else x
    xc = 720.0 if xc > 720.0 else xc
    r, w, k = _exp_core_f64(xc)
    y = _ldexp_f64(_one_plus_dd_f64(r, w)[0], k)
    return y if x == x else x + x


@njit(**_OPTS)
def expm1_f32(x):
    """e**x - 1, accurate near 0."""
    xc = _F32(-18.0) if x < _F32(-18.0) else x
    xc = _F32(89.0) if xc > _F32(89.0) else xc
    r, w, k = _exp_core_f32(xc)
    uh = r + w
    ul = (r - uh) + w  # e**x = (1 + uh + ul) * 2**k
    # 2**k (1 + u) - 1 = 2 (h u + (h - 1/2)) with h = 2**(k-1), so that k = 128 does not
    # overflow; the terms are summed exactly and rounded once at the end.
    h = _pow2_f32(k - 1)
    bh = h - _F32(0.5)
    bl = h - (bh + _F32(0.5))  # h - 1/2 = bh + bl (not representable for k < -24)
    s, err = _two_sum(h * uh, bh)
    y = _F32(2.0) * (s + (_fma(h, ul, err) + bl))
    y = x if abs(x) < _F32(1e-30) else y  # keeps -0 and subnormals exact
    return y if x == x else x + x


@njit(**_OPTS)
def expm1_f64(x):
    """e**x - 1, accurate near 0."""
    xc = -40.0 if x < -40.0 else x
    xc = 710.0 if xc > 710.0 else xc
    r, w, k = _exp_core_f64(xc)
    uh = r + w
    ul = (r - uh) + w
    h = _pow2_f64(k - 1)
    bh = h - 0.5
    bl = h - (bh + 0.5)
    s, err = _two_sum(h * uh, bh)
    y = 2.0 * (s + (_fma(h, ul, err) + bl))
    y = x if abs(x) < 1e-300 else y
    return y if x == x else x + x


# ---------------------------------------------------------------- log, log1p
# x = 2**e (1 + f), 1 + f in [sqrt 1/2, sqrt 2); log(1 + f) = 2 atanh(s) = 2s + s z poly(z),
# s = f / (2 + f), z = s*s, written as f - s (f - z poly(z)) (f exact, the correction small).
_LOG_F32 = tuple(_F32(c) for c in (0.298935204744339, 0.3997679054737091, 0.6666678190231323))
_LOG_F64 = (
    0.14812101566533428,
    0.15312516118323385,
    0.18183620990799276,
    0.22222197550873585,
    0.2857142875163636,
    0.3999999999937659,
    0.666666666666674,
)
_SQRT_HALF_BITS_F32 = _I32(0x3F3504F3)
_MANT_MASK_F32 = _I32(0x007FFFFF)
_SQRT_HALF_BITS_F64 = _I64(0x3FE6A09E667F3BCD)
_MANT_MASK_F64 = _I64(0x000FFFFFFFFFFFFF)


@njit(**_OPTS)
def _log_f32(v, c, eoff):
    """log(v * 2**eoff) + c for v positive normal, |c| tiny (a first-order correction)."""
    ix = _as_int(v) - _SQRT_HALF_BITS_F32
    e = _F32((ix >> 23) + eoff)
    f = _as_float(_I32((ix & _MANT_MASK_F32) + _SQRT_HALF_BITS_F32)) - _F32(1.0)
    s = f / (_F32(2.0) + f)
    z = s * s
    corr = s * (f - z * _poly(z, _LOG_F32))
    # e*hi + f is exact for |e| <= 1, where it cancels; for larger e, f goes to the tail
    near = abs(e) <= _F32(1.0)
    hi = _fma(e, _LN2HI_F32, f) if near else e * _LN2HI_F32
    return hi + ((_fma(e, _LN2LO_F32, c) - corr) + (_F32(0.0) if near else f))


@njit(**_OPTS)
def _log_f64(v, c, eoff):
    ix = _as_int(v) - _SQRT_HALF_BITS_F64
    e = _F64((ix >> 52) + eoff)
    f = _as_float((ix & _MANT_MASK_F64) + _SQRT_HALF_BITS_F64) - 1.0
    s = f / (2.0 + f)
    z = s * s
    corr = s * (f - z * _poly(z, _LOG_F64))
    near = abs(e) <= 1.0
    hi = _fma(e, _LN2HI_F64, f) if near else e * _LN2HI_F64
    return hi + ((_fma(e, _LN2LO_F64, c) - corr) + (0.0 if near else f))


@njit(**_OPTS)
def log_f32(x):
    """Natural logarithm."""
    small = x < _F32(1.1754944e-38)  # subnormal: scale by 2**23 first
    y = _log_f32(x * _F32(8388608.0) if small else x, _F32(0.0), -23 if small else 0)
    y = y if x < _F32(_INF) else x
    y = _F32(-_INF) if x == _F32(0.0) else y
    y = _F32(_NAN) if x < _F32(0.0) else y
    return y if x == x else x + x


@njit(**_OPTS)
def log_f64(x):
    """Natural logarithm."""
    small = x < 2.2250738585072014e-308
    y = _log_f64(x * 4503599627370496.0 if small else x, 0.0, -52 if small else 0)
    y = y if x < _INF else x
    y = -_INF if x == 0.0 else y
    y = _NAN if x < 0.0 else y
    return y if x == x else x + x


@njit(**_OPTS)
def log1p_f32(x):
    """log(1 + x), accurate near 0."""
    u = _F32(1.0) + x
    y = _log_f32(u, (x - (u - _F32(1.0))) / u, 0)  # + what 1 + x rounded away
    y = x if abs(x) < _F32(1e-30) else y  # keeps -0 and subnormals exact
    y = y if x < _F32(_INF) else x
    y = _F32(-_INF) if x == _F32(-1.0) else y
    y = _F32(_NAN) if x < _F32(-1.0) else y
    return y if x == x else x + x


@njit(**_OPTS)
def log1p_f64(x):
    """log(1 + x), accurate near 0."""
    u = 1.0 + x
    y = _log_f64(u, (x - (u - 1.0)) / u, 0)
    y = x if abs(x) < 1e-300 else y
    y = y if x < _INF else x
    y = -_INF if x == -1.0 else y
    y = _NAN if x < -1.0 else y
    return y if x == x else x + x


# ---------------------------------------------------------------- tanh, sigmoid, softplus
# tanh x = x + x**3 poly(x*x) for |x| < 0.9 (float32) / 0.55 (float64), else 1 - 2/(e**2|x| + 1)
_TANH_F32 = tuple(
    _F32(c)
    for c in (
        -0.00045570809743367136,
        0.002583423163741827,
        -0.008265454322099686,
        0.02166409231722355,
        -0.05392947420477867,
        0.13332980871200562,
        -0.33333322405815125,
    )
)
_TANH_F64 = (
    -1.9486532491692517e-05,
    8.33035331966951e-05,
    -0.0002333727610731417,
    0.0005884411064747077,
    -0.0014555420436476087,
    0.0035920919088171044,
    -0.008863232589684035,
    0.02186948838515459,
    -0.053968253963736626,
    0.1333333333332658,
    -0.333333333333333,
)


@njit(**_OPTS)
def tanh_f32(x):
    """Hyperbolic tangent."""
    z = x * x
    small = _fma(x * z, _poly(z, _TANH_F32), x)
    a = abs(x)
    a = _F32(9.5) if a > _F32(9.5) else a  # tanh = 1 from 9.0109
    p, k = _expm1_core_f32(a + a)
    # e**2a to ~1 ulp is plenty: 2/(e**2a + 1) shrinks its error by e**2a/(e**2a + 1)**2.
    big = _F32(1.0) - _F32(2.0) / ((_F32(1.0) + p) * _pow2_f32(k) + _F32(1.0))
    big = big if x > _F32(0.0) else -big
    y = small if a < _F32(0.9) else big
    y = x if a < _F32(1e-5) else y  # tanh x rounds to x there; keeps -0
    return y if x == x else x + x


@njit(**_OPTS)
def tanh_f64(x):
    """Hyperbolic tangent."""
    z = x * x
    small = _fma(x * z, _poly(z, _TANH_F64), x)
    a = abs(x)
    a = 20.0 if a > 20.0 else a
    r, w, k = _exp_core_f64(a + a)
    big = 1.0 - 2.0 / (_one_plus_dd_f64(r, w)[0] * _pow2_f64(k) + 1.0)
    big = big if x > 0.0 else -big
    y = small if abs(x) < 0.55 else big
    y = x if abs(x) < 1e-9 else y
    return y if x == x else x + x


@njit(**_OPTS)
def sigmoid_f32(x):
    """1 / (1 + e**-x), = e**x / (1 + e**x) for x < 0: no overflow, the tiny values exact.
    Natively in float32 (8 lanes per AVX2 register, not float64's 4): the rounding of
    1 + e is corrected, e's own error (1 ulp) passes through for x < 0."""
    a = abs(x)
    a = _F32(104.0) if a > _F32(104.0) else a  # sigmoid rounds to 0 from -103.98 on
    p, k = _expm1_core_f32(-a)
    s1, s2 = _scale_f32(k)  # (k < -126: subnormal results, rounded once)
    e = (_F32(1.0) + p) * s1 * s2  # e**-|x|
    d = _F32(1.0) + e
    t = (_F32(1.0) - d) + e  # d + t = 1 + e exactly
    q = (_F32(1.0) if x >= _F32(0.0) else e) / d
    y = _fma(-q, t / d, q)  # n / (d + t) = q (1 - t / d) to first order
    return y if x == x else x + x


@njit(**_OPTS)
def sigmoid_f64(x):
    """1 / (1 + e**-x), = e**x / (1 + e**x) for x < 0: no overflow, exact tiny values."""
    a = abs(x)
    a = 750.0 if a > 750.0 else a
    r, w, k = _exp_core_f64(-a)
    ph, pl = _one_plus_dd_f64(r, w)
    s1, s2 = _scale_f64(k)
    eh = ph * s1 * s2
    el = pl * s1 * s2
    dh = 1.0 + eh
    dl = (eh - (dh - 1.0)) + el
    pos = x >= 0.0
    nh = 1.0 if pos else eh
    nl = 0.0 if pos else el
    inv = 1.0 / dh
    q = nh * inv
    rem = _fma(-q, dh, nh) + (nl - q * dl)
    y = _fma(rem, inv, q)
    return y if x == x else x + x


@njit(**_OPTS)
def softplus_f32(x):
    """log(1 + e**x) = max(x, 0) + log1p(e**-|x|), without overflow."""
    a = abs(x)
    a = _F32(105.0) if a > _F32(105.0) else a
    r, w, k = _exp_core_f32(-a)
    ph, pl = _one_plus_dd_f32(r, w)
    s1, s2 = _scale_f32(k)
    eh = ph * s1 * s2  # e**-|x| = eh + el, carried into log1p's correction
    el = pl * s1 * s2
    v = _F32(1.0) + eh
    lp = _log_f32(v, ((eh - (v - _F32(1.0))) + el) / v, 0)
    lp = eh + el if eh < _F32(1e-30) else lp
    y = (x if x > _F32(0.0) else _F32(0.0)) + lp
    return y if x == x else x + x


@njit(**_OPTS)
def softplus_f64(x):
    """log(1 + e**x) = max(x, 0) + log1p(e**-|x|), without overflow."""
    a = abs(x)
    a = 750.0 if a > 750.0 else a
    r, w, k = _exp_core_f64(-a)
    ph, pl = _one_plus_dd_f64(r, w)
    s1, s2 = _scale_f64(k)
    eh = ph * s1 * s2
    el = pl * s1 * s2
    v = 1.0 + eh
    lp = _log_f64(v, ((eh - (v - 1.0)) + el) / v, 0)
    lp = eh + el if eh < 1e-300 else lp
    y = (x if x > 0.0 else 0.0) + lp
    return y if x == x else x + x


# ---------------------------------------------------------------- sin, cos
def _two_over_pi(nbits):
    """floor(2/pi * 2**nbits), from Machin's formula in integer arithmetic."""
    guard = nbits + 64

    def arctan_inv(k):  # arctan(1/k) * 2**guard
        total, term, n, k2 = 0, (1 << guard) // k, 1, k * k
        while term:
            total += term // n if n % 4 == 1 else -(term // n)
            term //= k2
            n += 2
        return total

    pi = 16 * arctan_inv(5) - 4 * arctan_inv(239)  # pi * 2**guard, off by a few units
    return (1 << (nbits + guard + 1)) // pi


def _reduction_table(rows, shift, slices):
    """Payne-Hanek table: row i holds frac(2/pi * 2**s), s = _PH_E0 + 16 i - shift, in
    ``slices`` 53-bit slices (values below 2**-53, 2**-106, ...).

    Row i serves |x| with exponent in [_PH_E0 + 16 i, _PH_E0 + 16 i + 15]: x' = x * 2**-s is
    then an integer multiple of 4 (shift = 54 for 53-bit significands, 25 for 24-bit), so
    the bits of 2/pi that x' pushes above 2**2 may be dropped: they add multiples of 4 to
    x * 2/pi and leave the quadrant alone.
    """
    nbits = 1300
    t = _two_over_pi(nbits)
    width = 53 * slices
    table = []
    for i in range(rows):
        s = _PH_E0 + 16 * i - shift
        v = (t >> (nbits - width - s)) & ((1 << width) - 1)
        for j in range(slices):
            chunk = (v >> (width - 53 * (j + 1))) & ((1 << 53) - 1)
            table.append(float(chunk) * 2.0 ** (-53 * (j + 1)))
    return np.array(table)


_PH_E0 = -30
_PH_TABLE = _reduction_table((1023 - _PH_E0) // 16 + 1, 54, 4)
_PH32_TABLE = _reduction_table((127 - _PH_E0) // 16 + 1, 25, 2)
_PIO2_HI = 1.5707963267948966
_PIO2_LO = 6.123233995736766e-17
# sin r = r + r**3 poly(r*r), cos r = 1 - r*r/2 + r**4 poly(r*r), |r| <= pi/4
_SIN_F64 = (
    -7.389456021600747e-13,
    1.6054311527906418e-10,
    -2.505207092307982e-08,
    2.75573190739846e-06,
    -0.00019841269840962473,
    0.008333333333333042,
    -0.16666666666666666,
)
_COS_F64 = (
    -1.1225314465732391e-11,
    2.087329490498285e-09,
    -2.7557298389781167e-07,
    2.480158724455412e-05,
    -0.0013888888888828744,
    0.041666666666666595,
)
_SIN_F32 = (  # float64 coefficients good to 2**-37, for the float32 functions
    2.7180464632918454e-06,
    -0.00019839304414674311,
    0.008333329280522536,
    -0.166666666405882,
)
_COS_F32 = (
    -2.7205046150568707e-07,
    2.479945154767405e-05,
    -0.0013888883467242407,
    0.04166666661910656,
)


@njit(**_OPTS)
def _mod4(n):
    """n - 4 * round(n / 4): an integral float modulo 4 (into -2..2), exactly."""
    return n - 4.0 * _rint(0.25 * n)


@njit(**_OPTS)
def _reduce_pio2(a):
    """a = (q + f) pi/2 for finite a >= 0, |f| <= 1/2 (a hair more); returns r = f pi/2 as
    rh + rl (about 2**-100 relative, even for the a closest to a multiple of pi/2) and q & 3.
    """
    e = (_as_int(a) >> 52) - 1023
    row = (e - _PH_E0) >> 4
    row = 0 if row < 0 else row
    xp = a * _pow2_f64(54 - _PH_E0 - 16 * row)  # an integer multiple of 4 (when e >= _PH_E0)
    t0 = _PH_TABLE[4 * row]
    t1 = _PH_TABLE[4 * row + 1]
    t2 = _PH_TABLE[4 * row + 2]
    t3 = _PH_TABLE[4 * row + 3]
    # Exact products xp * tk = hk + lk. h0, l0 and h1 lie on the grid 2**-51 (or coarser):
    # their fractional parts sum exactly; everything else is below 2**-49 and is summed
    # in double-double, so the result keeps its precision however much it cancels.
    h0 = xp * t0
    l0 = _fma(xp, t0, -h0)
    h1 = xp * t1
    l1 = _fma(xp, t1, -h1)
    h2 = xp * t2
    l2 = _fma(xp, t2, -h2)
    h3 = xp * t3
    n0 = _rint(h0)
    n1 = _rint(l0)
    n2 = _rint(h1)
    g = h1 - n2
    gh = (g + 3.0) - 3.0  # g rounded to the grid 2**-51
    big = (h0 - n0) + (l0 - n1) + gh  # exact
    n3 = _rint(big)
    big = big - n3
    s, se = _two_sum(g - gh, l1)
    s, se2 = _two_sum(s, h2)
    s, se3 = _two_sum(s, l2 + h3)
    fh, fe = _two_sum(big, s)
    fl = fe + (se + (se2 + se3))
    q = _as_int(((_mod4(n0) + _mod4(n1)) + (_mod4(n2) + n3)) + _SHIFT_F64) & 3
    rh = fh * _PIO2_HI  # r = (fh + fl) pi/2 in double-double
    rl = _fma(fh, _PIO2_HI, -rh) + _fma(fh, _PIO2_LO, fl * _PIO2_HI)
    r = rh + rl
    return r, (rh - r) + rl, q


@njit(**_OPTS)
def _quadrants(s, c, q, negative):
    """sin and cos of x from those of r: [s, c, -s, -c][q] (odd in x) and [c, -s, -c, s][q]."""
    sv = c if q & 1 else s
    sv = -sv if q & 2 else sv
    sv = -sv if negative else sv
    cv = s if q & 1 else c
    cv = -cv if (q + 1) & 2 else cv
    return sv, cv


@njit(**_OPTS)
def _sin_cos_f64(x):
    a = abs(x)
    finite = a <= 1.7976931348623157e308
    rh, rl, q = _reduce_pio2(a if finite else 1.0)
    z = rh * rh
    s = rh + _fma(rh * z, _poly(z, _SIN_F64), rl * _fma(-0.5, z, 1.0))
    hz = 0.5 * z
    hz_err = _fma(0.5 * rh, rh, -hz)  # hz + hz_err = rh*rh/2 exactly
    w = 1.0 - hz
    c = w + ((((1.0 - w) - hz) - hz_err) + _fma(z * z, _poly(z, _COS_F64), -rh * rl))
    sv, cv = _quadrants(s, c, q, x < 0.0)
    return sv, cv, finite


@njit(**_OPTS)
def _sin_cos_f32(x):
    """sin and cos of a float32 as float64 (about 2**-36 relative), and whether x is finite.

    The reduction of _reduce_pio2 for 24-bit inputs: x' = x * 2**-s below 2**42, two slices
    of 2/pi, and no double-double for r.
    """
    a = abs(_F64(x))
    finite = a <= 3.4028234663852886e38
    a = a if finite else 1.0
    e = (_as_int(a) >> 52) - 1023
    row = (e - _PH_E0) >> 4
    row = 0 if row < 0 else row
    xp = a * _pow2_f64(25 - _PH_E0 - 16 * row)
    t0 = _PH32_TABLE[2 * row]
    t1 = _PH32_TABLE[2 * row + 1]
    h0 = xp * t0
    l0 = _fma(xp, t0, -h0)  # |l0| < 2**-12, on the grid of h0 - n0: the sum below is exact
    h1 = xp * t1
    l1 = _fma(xp, t1, -h1)
    n0 = _rint(h0)
    big = (h0 - n0) + l0
    n1 = _rint(big)
    big = big - n1
    fh, fe = _two_sum(big, h1)
    q = _as_int((_mod4(n0) + n1) + _SHIFT_F64) & 3
    r = _fma(fh, _PIO2_HI, _fma(fh, _PIO2_LO, (fe + l1) * _PIO2_HI))
    z = r * r
    s = _fma(r * z, _poly(z, _SIN_F32), r)
    c = _fma(z * z, _poly(z, _COS_F32), _fma(-0.5, z, 1.0))
    sv, cv = _quadrants(s, c, q, x < _F32(0.0))
    return sv, cv, finite


@njit(**_OPTS)
def sin_f32(x):
    """Sine (float32 in, computed in float64)."""
    s, c, finite = _sin_cos_f32(x)
    y = x if abs(x) < _F32(1e-5) else _F32(s)  # sin x rounds to x there; keeps -0
    y = y if finite else _F32(_NAN)
    return y if x == x else x + x


@njit(**_OPTS)
def cos_f32(x):
    """Cosine (float32 in, computed in float64)."""
    s, c, finite = _sin_cos_f32(x)
    y = _F32(c) if finite else _F32(_NAN)
    return y if x == x else x + x


@njit(**_OPTS)
def sin_f64(x):
    """Sine, with exact argument reduction for every finite x."""
    s, c, finite = _sin_cos_f64(x)
    y = x if abs(x) < 1e-9 else s
    y = y if finite else _NAN
    return y if x == x else x + x


@njit(**_OPTS)
def cos_f64(x):
    """Cosine, with exact argument reduction for every finite x."""
    s, c, finite = _sin_cos_f64(x)
    y = c if finite else _NAN
    return y if x == x else x + x


# ---------------------------------------------------------------- erf, gelu
# erf x = x + x poly(x*x) for |x| < 0.75. Above, erfc a = e**(-a*a) erfcx(a) with
# erfcx(a) = v H(t), v = 1 / (a + 3), t = (a - 3) / (a + 3), H a polynomial over a in
# [0.5, 27.35] (float64, constant term in double-double) or [0.5, 10.6] (float32 functions).
# Phi(x) = 1/2 + x poly(x*x) for |x| < sqrt(1/2) (gelu); its 1/sqrt(2 pi) is fixed.
_ERF_SMALL_F64 = (  # its 2/sqrt(pi) - 1 is fixed (as the float32 one's): erf x ~ 2x/sqrt(pi)
    1.3328207545673767e-08,
    -1.646622385073859e-07,
    1.6494147923970765e-06,
    -1.492843912825633e-05,
    0.00012055461214025923,
    -0.0008548330493747048,
    0.005223977681288572,
    -0.026866170650232394,
    0.11283791670978656,
    -0.3761263890318417,
    0.1283791670955126,
)
_ERF_SMALL_F32 = (
    9.490769038642928e-05,
    -0.0008360773255765781,
    0.0052170707086719665,
    -0.026864870981189903,
    0.11283780351016356,
    -0.37612638572946666,
    0.1283791670955126,
)
_PHI_SMALL_F64 = (
    -1.0042211226206845e-10,
    2.259873144903548e-09,
    -4.121847193960332e-08,
    6.659664222768022e-07,
    -9.4446556362396e-06,
    0.00011543468754193822,
    -0.0011873282154763367,
    0.009973557010035763,
    -0.06649038006690544,
    0.3989422804014327,
)
_PHI_SMALL_F64_C0_LO = -2.49232720227773e-17
_PHI_SMALL_F32 = (
    -8.403614777167197e-06,
    0.00011477869214025526,
    -0.0011871261347514194,
    0.00997352627117806,
    -0.06649037802122802,
    0.39894228036108054,
)
_ERFCX_F32 = (
    6.778208112336284e-05,
    -0.0002524772183693954,
    -0.0005226694822954817,
    0.0030262017319183654,
    -0.0012191743277143684,
    -0.026826013430583037,
    0.11952851708440887,
    -0.3104673475156415,
    0.5902283274944145,
    -0.8833944513333105,
    1.074006907268489,
)
_ERFCX_F64 = (
    1.070154885365367e-09,
    -7.4494156905542595e-09,
    -5.794423206284707e-09,
    5.14961374047335e-08,
    5.1264443866092936e-08,
    -2.35975018977803e-07,
    -4.1111009896747666e-07,
    1.0010197268607246e-06,
    2.7665254415003525e-06,
    -4.750228781978224e-06,
    -1.7470814014195866e-05,
    3.0398448624488418e-05,
    0.0001075615187560928,
    -0.0002767778958193547,
    -0.0005483096941384437,
    0.0030340620062477845,
    -0.0012124166271089071,
    -0.026827234624755805,
    0.11952776128728773,
    -0.3104672619005607,
    0.5902283571041018,
    -0.8833944531698836,
)
_ERFCX_F64_C0, _ERFCX_F64_C0_LO = 1.0740069070883398, -8.864186182901444e-17
_SQRT_HALF, _SQRT_HALF_LO = 0.7071067811865476, -4.833646656726457e-17


@njit(**_OPTS)
def _erfc_parts_f64(a, al, sh, sl):
    """erfc(a + al) = (yh + yl) * 2**k for a in [0.5, 27.35], given (a + al)**2 = sh + sl.

    All but the high-degree tail of H runs in double-double: H's terms vary by a factor of
    about 3 over the range, and plain evaluation would cost about two ulps.
    """
    dh, dl = _two_sum(a, 3.0)
    vh = 1.0 / dh
    vl = vh * (_fma(-vh, dh, 1.0) - vh * (dl + al))  # 1 / (a + 3) = vh + vl
    nh, nl = _two_sum(a, -3.0)
    th = nh * vh
    tl = _fma(nh, vh, -th) + _fma(nh, vl, (nl + al) * vh)  # t = th + tl
    p2 = _poly(th, _ERFCX_F64[:-1])
    ph = th * p2  # s1 = c1 + t p2 and h = c0 + t s1, in double-double
    s1h, s1l = _two_sum(_ERFCX_F64[-1], ph)
    s1l = s1l + _fma(th, p2, -ph) + tl * p2
    ph = th * s1h
    hh, hl = _two_sum(_ERFCX_F64_C0, ph)
    hl = hl + (_fma(th, s1h, -ph) + _fma(th, s1l, tl * s1h) + _ERFCX_F64_C0_LO)
    xh = vh * hh  # erfcx = v h
    xl = _fma(vh, hh, -xh) + _fma(vh, hl, vl * hh)
    r, w, k = _exp_core_f64(-sh)  # e**-(sh + sl) = (eh + el) 2**k
    eh, el = _one_plus_dd_f64(r, w)
    el = el - eh * sl
    yh = xh * eh
    yl = _fma(xh, eh, -yh) + _fma(xh, el, xl * eh)
    return yh, yl, k


@njit(**_OPTS)
def _erfc_parts_f32(a, sh):
    """erfc(a) = m * 2**k to about 2**-32 (for the float32 functions, in float64)."""
    v = 1.0 / (a + 3.0)
    h = _poly(_fma(-6.0, v, 1.0), _ERFCX_F32)
    r, w, k = _exp_core_f64(-sh)
    return ((1.0 + (r + w)) * v) * h, k


@njit(**_OPTS)
def erf_f32(x):
    """The error function (float32 in, computed in float64)."""
    xd = _F64(x)
    small = _fma(xd, _poly(xd * xd, _ERF_SMALL_F32), xd)
    a = abs(xd)
    a = 4.5 if a > 4.5 else a  # erf = 1 from 3.92 on
    m, k = _erfc_parts_f32(a, a * a)
    big = 1.0 - _ldexp_f64(m, k)
    big = big if x > _F32(0.0) else -big
    y = _F32(small if abs(x) < _F32(0.75) else big)
    return y if x == x else x + x


@njit(**_OPTS)
def erf_f64(x):
    """The error function."""
    small = _fma(x, _poly(x * x, _ERF_SMALL_F64), x)
    a = abs(x)
    a = 6.0 if a > 6.0 else a  # erf = 1 from 5.93 on
    sh = a * a
    eh, el, k = _erfc_parts_f64(a, 0.0, sh, _fma(a, a, -sh))
    eh = _ldexp_f64(eh, k)
    one_minus = 1.0 - eh
    big = one_minus + (((1.0 - one_minus) - eh) - _ldexp_f64(el, k))  # 1 - erfc, rounded once
    big = big if x > 0.0 else -big
    y = small if abs(x) < 0.75 else big
    return y if x == x else x + x


@njit(**_OPTS)
def gelu_f32(x):
    """x Phi(x) = x/2 (1 + erf(x / sqrt 2)) (float32 in, computed in float64)."""
    xd = _F64(x)
    xc = 20.0 if xd > 20.0 else xd
    xc = -20.0 if xc < -20.0 else xc  # gelu = x above, rounds to -0 below
    x2 = xc * xc
    small = _fma(x2, _poly(x2, _PHI_SMALL_F32), 0.5 * xc)
    m, k = _erfc_parts_f32(abs(xc) * _SQRT_HALF, 0.5 * x2)
    m = 0.5 * m  # Phi(-|x|) = m 2**k
    neg = _ldexp_f64(xc * m, k)
    pos = xd * (1.0 - _ldexp_f64(m, k))
    y = _F32(small if abs(xd) < _SQRT_HALF else (pos if xd > 0.0 else neg))
    y = x if x == _F32(0.0) else y
    y = _F32(_NAN) if x == _F32(-_INF) else y  # as the erf formula gives: -inf * 0
    return y if x == x else x + x


@njit(**_OPTS)
def gelu_f64(x):
    """x Phi(x) = x/2 (1 + erf(x / sqrt 2)), accurate also in the negative tail."""
    xc = 40.0 if x > 40.0 else x
    xc = -40.0 if xc < -40.0 else xc  # gelu = x above, underflows to -0 below -38.5
    x2 = xc * xc
    x2l = _fma(xc, xc, -x2)
    # x Phi(x) = x/2 + x**2 (q0 + x**2 poly(x**2)), q0 = 1/sqrt(2 pi) in double-double;
    # x/2 and x**2 q0 cancel for negative x, so they are summed exactly
    c0 = _PHI_SMALL_F64[-1]
    tail = _fma(x2, _poly(x2, _PHI_SMALL_F64[:-1]), _PHI_SMALL_F64_C0_LO)
    p = x2 * c0
    s, se = _two_sum(0.5 * x, p)
    small = s + (se + (_fma(x2, c0, -p) + _fma(x2l, c0, x2 * tail)))
    # Phi(-|x|) = erfc(|x| / sqrt 2) / 2 = (eh + el)/2 2**k, with |x| / sqrt 2 = zh + zl and
    # its square x2/2 + x2l/2 exact
    ax = abs(xc)
    zh = ax * _SQRT_HALF
    zl = _fma(ax, _SQRT_HALF, -zh) + ax * _SQRT_HALF_LO
    eh, el, k = _erfc_parts_f64(zh, zl, 0.5 * x2, 0.5 * x2l)
    neg = _ldexp_f64(_fma(0.5 * xc, eh, 0.5 * xc * el), k)
    qh = _ldexp_f64(0.5 * eh, k)
    ph = 1.0 - qh  # Phi(x) = 1 - Phi(-x) = ph + pl
    pl = ((1.0 - ph) - qh) - _ldexp_f64(0.5 * el, k)
    pos = x if x >= 40.0 else _fma(xc, ph, xc * pl)  # also inf
    y = small if abs(x) < _SQRT_HALF else (pos if x > 0.0 else neg)
    y = 0.5 * x if abs(x) < 1e-300 else y  # x/2 rounded, with the sign of x (and -0)
    y = _NAN if x == -_INF else y
    return y if x == x else x + x


# ---------------------------------------------------------------- pow
# e**(y log|x|) needs log to about 2**-66: an error in y log x is multiplied by up to 745.
# log(1 + f) = 2s + 2/3 s**3 + s**5 poly(s*s), the first two terms in double-double.
_POW_LOG_F64 = (
    0.12004647867453426,
    0.11672935266595262,
    0.1333641049067465,
    0.15384554443896195,
    0.18181818906010816,
    0.22222222217244528,
    0.28571428571446317,
    0.39999999999999974,
)
_TWO_THIRDS_HI, _TWO_THIRDS_LO = 0.6666666666666666, 3.700743415417188e-17


@njit(**_OPTS)
def _log_dd_f64(v, eoff):
    """log(v * 2**eoff) = lh + ll to about 2**-66 relative, for v positive and normal."""
    ix = _as_int(v) - _SQRT_HALF_BITS_F64
    e = _F64((ix >> 52) + eoff)
    f = _as_float((ix & _MANT_MASK_F64) + _SQRT_HALF_BITS_F64) - 1.0
    dh = 2.0 + f
    dl = f - (dh - 2.0)  # 2 + f = dh + dl
    sh = f / dh
    sl = (_fma(-sh, dh, f) - sh * dl) / dh  # s = f / (2 + f) = sh + sl
    zh = sh * sh
    zl = _fma(sh, sh, -zh) + 2.0 * sh * sl
    s3h = sh * zh
    s3l = _fma(sh, zh, -s3h) + _fma(sh, zl, sl * zh)
    t3h = _TWO_THIRDS_HI * s3h
    t3l = _fma(_TWO_THIRDS_HI, s3h, -t3h) + _fma(_TWO_THIRDS_HI, s3l, _TWO_THIRDS_LO * s3h)
    rest = s3h * zh * _poly(zh, _POW_LOG_F64)
    mh, ml = _two_sum(2.0 * sh, t3h)
    ml = ml + ((2.0 * sl + t3l) + rest)
    lh, ll = _two_sum(e * _LN2HI_F64, mh)  # e * hi is exact
    return _two_sum(lh, ll + _fma(e, _LN2LO_F64, ml))  # normalized: |ll| <= ulp(lh) / 2


@njit(**_OPTS)
def _pow_f64(x, y):
    """x**y with numpy's (C99's) special cases."""
    ax = abs(x)
    finite = (ax > 0.0) & (ax < _INF)
    ax = ax if finite else 1.0  # zero, inf and NaN bases are settled below
    small = ax < 2.2250738585072014e-308
    lh, ll = _log_dd_f64(ax * 4503599627370496.0 if small else ax, -52 if small else 0)
    ph = y * lh
    pl = _fma(y, lh, -ph) + y * ll  # y log|x| = ph + pl
    big = abs(ph) > 800.0  # overflows or underflows; also keeps inf and NaN out
    pl = 0.0 if big else pl
    ph = (800.0 if ph > 0.0 else -800.0) if big else ph
    ph = 0.0 if ph != ph else ph
    t = _fma(ph, _LOG2E_F64, _SHIFT_F64)  # e**(ph + pl): exp's core with a low part
    kf = t - _SHIFT_F64
    rh = _fma(kf, -_LN2HI_F64, ph)
    rl = _fma(kf, -_LN2LO_F64, pl)
    r = rh + rl
    c = (rh - r) + rl
    w = _fma(r * r, _poly(r, _EXPM1_F64), _fma(c, r, c))
    v = _ldexp_f64(_one_plus_dd_f64(r, w)[0], _as_int(t) - _as_int(_SHIFT_F64))
    hy = 0.5 * y
    is_int = _rint(y) == y
    is_odd = is_int & (_rint(hy) != hy)
    v = -v if (x < 0.0) & is_odd else v
    v = v if (x > 0.0) | is_int else _F64(_NAN)  # negative base, non-integer exponent
    # 0**y and inf**y: 0 or inf, negative for a negative base and an odd integer y
    mag = _INF if (y < 0.0) == (x == 0.0) else 0.0
    v = v if finite else (-mag if (_as_int(x) < 0) & is_odd else mag)
    # x**+-inf
    iy = _INF if (abs(x) > 1.0) == (y > 0.0) else 0.0
    v = (1.0 if abs(x) == 1.0 else iy) if abs(y) == _INF else v
    v = x + y if (x != x) | (y != y) else v
    return 1.0 if (y == 0.0) | (x == 1.0) else v


@njit(**_OPTS)
def pow_f32(x, y):
    """x**y as numpy's float32 power (computed in float64: exact cases stay exact)."""
    return _F32(_pow_f64(_F64(x), _F64(y)))


@njit(**_OPTS)
def pow_f64(x, y):
    """x**y as numpy's float64 power: e**(y log|x|) with log in double-double."""
    return _pow_f64(x, y)


@njit(**_OPTS)
def ipow(x, n):
    """x**n of integers as numpy computes it, for n >= 0 (a negative exponent is refused
    before any kernel runs): repeated squaring, wrapping on overflow. numba's own ``**``
    goes through floats for large n (3**2**40 gave the int64 minimum); the low bits of
    int64 products are those of the narrower type's, so one cast at the end is numpy's."""
    result = x - x + 1
    base = x - x + x  # (the same int64 type as result: numba widens small ints)
    while n > 0:
        if n & 1:
            result *= base
        base *= base
        n >>= 1
    return result


# ---------------------------------------------------------------- lookup
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
"""(function name, dtype name) -> name of its implementation in this module."""

SOURCE_HASH = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
"""Changes whenever this module does: part of the key of cached kernels that inline it."""
