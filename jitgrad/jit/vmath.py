"""Vectorizable math (draft)."""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_OPTS = dict(cache=True, error_model="numpy", fastmath=False, forceinline=True)

_F32 = np.float32
_F64 = np.float64
_I32 = np.int32
_I64 = np.int64

_INT_OF = {types.float32: types.int32, types.float64: types.int64}
_FLOAT_OF = {types.int32: types.float32, types.int64: types.float64}


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
    """The bits of a float32/float64 as int32/int64."""
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

    Emitted as straight-line code: a loop over the tuple would be left rolled for long
    polynomials, and an inner loop stops LLVM from vectorizing the caller's loop.
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


# ---------------------------------------------------------------- exp
_LOG2E_F32 = _F32(1.442695)
_LN2HI_F32 = _F32(0.693145751953125)  # ln 2 rounded to 16 bits: k * hi is exact
_LN2LO_F32 = _F32(1.4286068e-06)
_SHIFT_F32 = _F32(12582912.0)  # 1.5 * 2**23: adding it rounds to an integer
# e**r - 1 = r + r*r * poly(r) on |r| <= 1.01 * ln(2) / 2 (minimax, relative error)
_EXPM1_F32 = tuple(
    _F32(c)
    for c in (
        0.00019777203851845115, 0.0013945576502010226, 0.008333544246852398,
        0.041666366159915924, 0.1666666567325592, 0.5,
    )
)

_LOG2E_F64 = 1.4426950408889634
_LN2HI_F64 = 0.6931471805598903  # ln 2 rounded to 42 bits
_LN2LO_F64 = 5.497923018708371e-14
_SHIFT_F64 = 6755399441055744.0  # 1.5 * 2**52
_EXPM1_F64 = (
    1.719225401483077e-09, 2.5103425801638737e-08, 2.7569780403055146e-07,
    2.7557261544708977e-06, 2.4801571979043134e-05, 0.0001984126986815376,
    0.0013888888897132193, 0.008333333333328427, 0.04166666666664881,
    0.1666666666666667, 0.5000000000000001,
)


@njit(**_OPTS)
def _pow2_f32(k):
    return _as_float(_I32((k + 127) << 23))


@njit(**_OPTS)
def _pow2_f64(k):
    return _as_float(_I64((k + 1023) << 52))


@njit(**_OPTS)
def _exp_core_f32(x):
    """e**x = (1 + r + w) * 2**k: |r| <= 0.35 and |w| < |r| / 4 (sum rounded later); |x| <= 110."""
    t = _fma(x, _LOG2E_F32, _SHIFT_F32)
    kf = t - _SHIFT_F32
    rh = _fma(kf, -_LN2HI_F32, x)  # exact
    rl = kf * -_LN2LO_F32
    r = rh + rl
    c = (rh - r) + rl  # what rounding r lost: e**(r + c) - 1 ~ em1(r) + c * (1 + r)
    w = _fma(r * r, _poly(r, _EXPM1_F32), _fma(c, r, c))
    return r, w, _as_int(t) - _as_int(_SHIFT_F32)


@njit(**_OPTS)
def _ldexp_f32(p, k):
    """p * 2**k with a single rounding, for |k| <= 250 and p normal."""
    k1 = k >> 1
    return p * _pow2_f32(k1) * _pow2_f32(k - k1)


@njit(**_OPTS)
def exp_f32(x):
    xc = _F32(-110.0) if x < _F32(-110.0) else x
    xc = _F32(90.0) if xc > _F32(90.0) else xc
    r, w, k = _exp_core_f32(xc)
    u = r + w
    y = _ldexp_f32(_F32(1.0) + u, k)
    return y if x == x else x + x


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
def _ldexp_f64(p, k):
    k1 = k >> 1
    return p * _pow2_f64(k1) * _pow2_f64(k - k1)


@njit(**_OPTS)
def exp_f64(x):
    xc = -760.0 if x < -760.0 else x
    xc = 720.0 if xc > 720.0 else xc
    r, w, k = _exp_core_f64(xc)
    u = r + w
    y = _ldexp_f64(1.0 + u, k)
    return y if x == x else x + x


# ---------------------------------------------------------------- expm1
@njit(**_OPTS)
def expm1_f32(x):
    xc = _F32(-18.0) if x < _F32(-18.0) else x
    xc = _F32(89.0) if xc > _F32(89.0) else xc
    r, w, k = _exp_core_f32(xc)
    uh = r + w
    ul = (r - uh) + w  # e**x = (1 + uh + ul) * 2**k
    # 2**k (1 + u) - 1 = 2 (h u + (h - 1/2)) with h = 2**(k-1), so k = 128 does not overflow;
    # h uh + (h - 1/2) is summed exactly (TwoSum), rounding happens once at the end.
    h = _pow2_f32(k - 1)
    a = h * uh
    b = h - _F32(0.5)
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    y = _F32(2.0) * (s + _fma(h, ul, err))
    y = x if abs(x) < _F32(1e-30) else y  # keeps -0 and subnormals exact
    return y if x == x else x + x


@njit(**_OPTS)
def expm1_f64(x):
    xc = -40.0 if x < -40.0 else x
    xc = 710.0 if xc > 710.0 else xc
    r, w, k = _exp_core_f64(xc)
    uh = r + w
    ul = (r - uh) + w
    h = _pow2_f64(k - 1)
    a = h * uh
    b = h - 0.5
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    y = 2.0 * (s + _fma(h, ul, err))
    y = x if abs(x) < 1e-300 else y
    return y if x == x else x + x


# ---------------------------------------------------------------- log
# 2 atanh(s) = 2s + s * z * poly(z), z = s*s, |s| <= (sqrt 2 - 1) / (sqrt 2 + 1) (minimax)
_LOG_F32 = tuple(_F32(c) for c in (0.2981429398059845, 0.39980268478393555, 0.6666674613952637))
_LOG_F64 = (
    0.14746057253130054, 0.15319628778248573, 0.1818331811850347, 0.2222220399597863,
    0.2857142868064797, 0.3999999999974987, 0.666666666666667,
)
_SQRT_HALF_BITS_F32 = _I32(0x3F3504F3)
_MANT_MASK_F32 = _I32(0x007FFFFF)
_SQRT_HALF_BITS_F64 = _I64(0x3FE6A09E667F3BCD)
_MANT_MASK_F64 = _I64(0x000FFFFFFFFFFFFF)
_NAN = -np.nan  # x86's default NaN, which numpy returns for log(-1)
_INF = np.inf


@njit(**_OPTS)
def _log_f32(v, c, eoff):
    """log(v * 2**eoff) + c for v positive normal and |c| << 1 (c: a first-order correction)."""
    ix = _as_int(v) - _SQRT_HALF_BITS_F32
    e = _F32((ix >> 23) + eoff)
    f = _as_float(_I32((ix & _MANT_MASK_F32) + _SQRT_HALF_BITS_F32)) - _F32(1.0)
    # log(1 + f) = f - s (f - z poly(z)), s = f / (2 + f), z = s*s
    s = f / (_F32(2.0) + f)
    z = s * s
    corr = s * (f - z * _poly(z, _LOG_F32))
    # e*hi + f is exact for |e| <= 1, where it cancels; for larger e keep f in the tail
    near = abs(e) <= _F32(1.0)
    hi = _fma(e, _LN2HI_F32, f) if near else e * _LN2HI_F32
    return hi + ((_fma(e, _LN2LO_F32, c) - corr) + (_F32(0.0) if near else f))


@njit(**_OPTS)
def log_f32(x):
    small = x < _F32(1.1754944e-38)
    y = _log_f32(x * _F32(8388608.0) if small else x, _F32(0.0), -23 if small else 0)
    y = y if x < _F32(_INF) else x
    y = _F32(-_INF) if x == _F32(0.0) else y
    y = _F32(_NAN) if x < _F32(0.0) else y
    return y if x == x else x + x


@njit(**_OPTS)
def _log_f64(v, c, eoff):
    ix = _as_int(v) - _SQRT_HALF_BITS_F64
    e = _F64((ix >> 52) + eoff)
    f = _as_float((ix & _MANT_MASK_F64) + _SQRT_HALF_BITS_F64) - 1.0
    s = f / (2.0 + f)
    z = s * s
    corr = s * (f - z * _poly(z, _LOG_F64))
    # e*hi + f is exact for |e| <= 1, where it cancels; for larger e keep f in the tail
    near = abs(e) <= 1.0
    hi = _fma(e, _LN2HI_F64, f) if near else e * _LN2HI_F64
    return hi + ((_fma(e, _LN2LO_F64, c) - corr) + (0.0 if near else f))


@njit(**_OPTS)
def log_f64(x):
    small = x < 2.2250738585072014e-308
    y = _log_f64(x * 4503599627370496.0 if small else x, 0.0, -52 if small else 0)
    y = y if x < _INF else x
    y = -_INF if x == 0.0 else y
    y = _NAN if x < 0.0 else y
    return y if x == x else x + x


# ---------------------------------------------------------------- log1p
@njit(**_OPTS)
def log1p_f32(x):
    u = _F32(1.0) + x
    y = _log_f32(u, (x - (u - _F32(1.0))) / u, 0)  # + what 1 + x rounded away
    y = x if abs(x) < _F32(1e-30) else y  # keeps -0 and subnormals exact
    y = y if x < _F32(_INF) else x
    y = _F32(-_INF) if x == _F32(-1.0) else y
    y = _F32(_NAN) if x < _F32(-1.0) else y
    return y if x == x else x + x


@njit(**_OPTS)
def log1p_f64(x):
    u = 1.0 + x
    y = _log_f64(u, (x - (u - 1.0)) / u, 0)
    y = x if abs(x) < 1e-300 else y
    y = y if x < _INF else x
    y = -_INF if x == -1.0 else y
    y = _NAN if x < -1.0 else y
    return y if x == x else x + x


# ---------------------------------------------------------------- tanh
# tanh(x) = x + x**3 * poly(x*x) for |x| below 0.9 (float32) / 0.55 (float64) (minimax)
_TANH_F32 = tuple(
    _F32(c)
    for c in (
        -0.0005701533518731594, 0.0028996977489441633, -0.008604221977293491,
        0.021839678287506104, -0.05397392436861992, 0.13333454728126526, -0.3333333432674408,
    )
)
_TANH_F64 = (
    -1.8815896453421527e-05, 8.227338056426297e-05, -0.00023270111697057557,
    0.0005881996823810595, -0.001455490159456111, 0.003592085189497375,
    -0.008863232097530354, 0.021869488369460725, -0.053968253963906816,
    0.13333333333328795, -0.3333333333333333,
)


@njit(**_OPTS)
def tanh_f32(x):
    z = x * x
    small = _fma(x * z, _poly(z, _TANH_F32), x)
    a = abs(x)
    a = _F32(9.5) if a > _F32(9.5) else a
    r, w, k = _exp_core_f32(a + a)
    u = r + w
    big = _F32(1.0) - _F32(2.0) / ((_F32(1.0) + u) * _pow2_f32(k) + _F32(1.0))
    big = big if x > _F32(0.0) else -big
    y = small if abs(x) < _F32(0.9) else big
    return y if x == x else x + x


@njit(**_OPTS)
def tanh_f64(x):
    z = x * x
    small = _fma(x * z, _poly(z, _TANH_F64), x)
    a = abs(x)
    a = 20.0 if a > 20.0 else a
    r, w, k = _exp_core_f64(a + a)
    u = r + w
    big = 1.0 - 2.0 / ((1.0 + u) * _pow2_f64(k) + 1.0)
    big = big if x > 0.0 else -big
    y = small if abs(x) < 0.55 else big
    return y if x == x else x + x


# ---------------------------------------------------------------- sigmoid
@njit(**_OPTS)
def sigmoid_f32(x):
    a = abs(x)
    a = _F32(105.0) if a > _F32(105.0) else a
    r, w, k = _exp_core_f32(-a)
    u = r + w
    ph = _F32(1.0) + u
    eh = _ldexp_f32(ph, k)  # e**-|x| = eh + el
    el = _ldexp_f32((_F32(1.0) - ph) + u, k)
    dh = _F32(1.0) + eh  # 1 + e**-|x| = dh + dl
    dl = (eh - (dh - _F32(1.0))) + el
    pos = x >= _F32(0.0)
    nh = _F32(1.0) if pos else eh
    nl = _F32(0.0) if pos else el
    # (nh + nl) / (dh + dl): a quotient and one correction step
    inv = _F32(1.0) / dh
    q = nh * inv
    rem = _fma(-q, dh, nh) + (nl - q * dl)
    y = _fma(rem, inv, q)
    return y if x == x else x + x


@njit(**_OPTS)
def sigmoid_f64(x):
    a = abs(x)
    a = 750.0 if a > 750.0 else a
    r, w, k = _exp_core_f64(-a)
    u = r + w
    ph = 1.0 + u
    eh = _ldexp_f64(ph, k)
    el = _ldexp_f64((1.0 - ph) + u, k)
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


# ---------------------------------------------------------------- softplus
@njit(**_OPTS)
def _softplus_f64(x):
    # max(x, 0) + log1p(e**-|x|), with e**-|x| = eh + el carried into log1p's correction
    a = abs(x)
    a = 750.0 if a > 750.0 else a
    r, w, k = _exp_core_f64(-a)
    u = r + w
    ph = 1.0 + u
    eh = _ldexp_f64(ph, k)
    el = _ldexp_f64((1.0 - ph) + u, k)
    v = 1.0 + eh
    lp = _log_f64(v, ((eh - (v - 1.0)) + el) / v, 0)
    lp = eh + el if eh < 1e-300 else lp
    return (x if x > 0.0 else 0.0) + lp


@njit(**_OPTS)
def softplus_f64(x):
    y = _softplus_f64(x)
    return y if x == x else x + x


@njit(**_OPTS)
def softplus_f32(x):
    y = _F32(_softplus_f64(_F64(x)))
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

    pi = 16 * arctan_inv(5) - 4 * arctan_inv(239)  # pi * 2**guard, error a few units
    return (1 << (nbits + guard + 1)) // pi


def _reduction_table():
    """Payne-Hanek table: row i holds frac(2/pi * 2**s_i) in four 53-bit slices.

    Row i serves |x| with exponent e in [_PH_E0 + 16 i, _PH_E0 + 16 i + 15], s_i = _PH_E0 + 16 i - 54,
    so that x' = x * 2**-s_i is an integer multiple of 4 below 2**70: the bits of 2/pi that
    x' would push above 2**2 are dropped (multiples of 4, no effect on the quadrant).
    """
    nbits = 1300
    t = _two_over_pi(nbits)
    rows = []
    for i in range(_PH_ROWS):
        s = _PH_E0 + 16 * i - 54
        v = (t >> (nbits - 212 - s)) & ((1 << 212) - 1)  # frac(2/pi 2**s) * 2**212
        for k in range(4):
            chunk = (v >> (159 - 53 * k)) & ((1 << 53) - 1)
            rows.append(float(chunk) * 2.0 ** (-53 * (k + 1)))
    return np.array(rows)


_PH_E0 = -30
_PH_ROWS = (1023 - _PH_E0) // 16 + 1
_PH_TABLE = _reduction_table()
_PIO2_HI = 1.5707963267948966
_PIO2_LO = 6.123233995736766e-17
# sin r = r + r**3 poly(r*r), cos r = 1 - r*r/2 + r**4 poly(r*r), |r| <= pi/4 (minimax)
_SIN_F64 = (
    -5.265927102091981e-13, 1.6011498658485606e-10, -2.5051741018747346e-08,
    2.75573178730465e-06, -0.0001984126983893044, 0.008333333333331795, -0.16666666666666666,
)
_COS_F64 = (
    -1.1367289014586408e-11, 2.0875884713057292e-09, -2.755731566802344e-07,
    2.480158729461079e-05, -0.001388888888888358, 0.041666666666666664,
)


@njit(**_OPTS)
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@njit(**_OPTS)
def _mod4(n):
    """n - 4 * round(n / 4), exact for integral floats."""
    return n - 4.0 * _rint(0.25 * n)


@njit(**_OPTS)
def _reduce_pio2(a):
    """a (finite, >= 0) = (q + f) * pi/2 with f in [-1/2, 1/2] (a hair wider), r = f * pi/2.

    Returns (rh, rl, q): r = rh + rl to about 2**-100 relative, q = quadrant in 0..3.
    """
    e = (_as_int(a) >> 52) - 1023
    row = (e - _PH_E0) >> 4
    row = 0 if row < 0 else row
    i = 4 * row
    xp = a * _pow2_f64(54 - _PH_E0 - 16 * row)  # multiple of 4, exact
    t0 = _PH_TABLE[i]
    t1 = _PH_TABLE[i + 1]
    t2 = _PH_TABLE[i + 2]
    t3 = _PH_TABLE[i + 3]
    # Exact products xp*tk = hk + lk: h0, l0 and h1 sit on the grid 2**-51 (or coarser),
    # the rest is below 2**-49 and is summed in double-double.
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
    # r = (fh + fl) * pi/2 in double-double
    rh = fh * _PIO2_HI
    rl = _fma(fh, _PIO2_HI, -rh) + _fma(fh, _PIO2_LO, fl * _PIO2_HI)
    r = rh + rl
    return r, (rh - r) + rl, q


@njit(**_OPTS)
def _sincos_kernel(rh, rl):
    z = rh * rh
    s = rh + _fma(rh * z, _poly(z, _SIN_F64), rl * _fma(-0.5, z, 1.0))
    hz = 0.5 * z
    hz_err = _fma(0.5 * rh, rh, -hz)  # hz + hz_err = rh*rh/2 exactly
    w = 1.0 - hz
    tail = (((1.0 - w) - hz) - hz_err) + _fma(z * z, _poly(z, _COS_F64), -rh * rl)
    return s, w + tail


@njit(**_OPTS)
def _sin_cos_f64(x):
    a = abs(x)
    finite = a <= 1.7976931348623157e308
    rh, rl, q = _reduce_pio2(a if finite else 1.0)
    s, c = _sincos_kernel(rh, rl)
    # sin: [s, c, -s, -c][q], then odd in x; cos: [c, -s, -c, s][q]
    sv = c if q & 1 else s
    sv = -sv if q & 2 else sv
    sv = -sv if x < 0.0 else sv
    cv = s if q & 1 else c
    cv = -cv if (q + 1) & 2 else cv
    return sv, cv, finite


@njit(**_OPTS)
def sin_f64(x):
    s, c, finite = _sin_cos_f64(x)
    y = x if abs(x) < 1e-9 else s  # also -0 and subnormals
    y = y if finite else _NAN
    return y if x == x else x + x


@njit(**_OPTS)
def cos_f64(x):
    s, c, finite = _sin_cos_f64(x)
    y = c if finite else _NAN
    return y if x == x else x + x


# float32: the same reduction with 24-bit inputs needs two slices of 2/pi, scaled so that
# x' = x * 2**-s is an integer multiple of 4 below 2**42; computed in float64.
def _reduction_table_f32():
    nbits = 400
    t = _two_over_pi(nbits)
    rows = []
    for i in range(_PH32_ROWS):
        s = _PH_E0 + 16 * i - 25
        v = (t >> (nbits - 106 - s)) & ((1 << 106) - 1)
        rows += [float(v >> 53) * 2.0**-53, float(v & ((1 << 53) - 1)) * 2.0**-106]
    return np.array(rows)


_PH32_ROWS = (127 - _PH_E0) // 16 + 1
_PH32_TABLE = _reduction_table_f32()
_SIN_F32 = (2.7208353060848704e-06, -0.00019839660933824703, 0.008333330701924912, -0.1666666665773906)
_COS_F32 = (-2.7249865010355164e-07, 2.4800078049035635e-05, -0.0013888886280377353, 0.04166666665921646)


@njit(**_OPTS)
def _sin_cos_f32(x):
    """sin and cos of a float32 (as float64, about 2**-36 relative), and whether x is finite."""
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
    l0 = _fma(xp, t0, -h0)  # |l0| < 2**-12, same grid as h0 - n0: the sum below is exact
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
    sv = c if q & 1 else s
    sv = -sv if q & 2 else sv
    sv = -sv if x < _F32(0.0) else sv
    cv = s if q & 1 else c
    cv = -cv if (q + 1) & 2 else cv
    return sv, cv, finite


@njit(**_OPTS)
def sin_f32(x):
    s, c, finite = _sin_cos_f32(x)
    y = x if abs(x) < _F32(1e-5) else _F32(s)
    y = y if finite else _F32(_NAN)
    return y if x == x else x + x


@njit(**_OPTS)
def cos_f32(x):
    s, c, finite = _sin_cos_f32(x)
    y = _F32(c) if finite else _F32(_NAN)
    return y if x == x else x + x


# ---------------------------------------------------------------- erf, gelu
# erf x = x + x * poly(x*x) for |x| < 3/4.  Above, erfc a = e**(-a*a) * erfcx(a) with
# erfcx(a) = v * H(t), v = 1 / (a + 3), t = (a - 3) / (a + 3) = 1 - 6 v, H a minimax polynomial
# (float64: a in [0.5, 27.35], its constant term in double-double; float32: a in [0.5, 10.6]).
# Phi(x) = 1/2 + x * poly(x*x) for |x| < sqrt(1/2) (gelu). All minimax, relative error.
_ERF_SMALL_F64 = (
    1.1463236362723695e-08, -1.5937460009617079e-07, 1.6430372275354496e-06,
    -1.4924175635000352e-05, 0.00012055288739259958, -0.0008548326168204478,
    0.005223977615109733, -0.026866170644401464, 0.11283791670952477,
    -0.37612638903183715, 0.1283791670955126,
)
_ERF_SMALL_F32 = (
    -0.0006749233224851822, 0.005114309850540701, -0.026834608804836846,
    0.11283376293879979, -0.37612618739543807, 0.12837916549480485,
)
_PHI_SMALL_F64 = (
    -1.0097116427426684e-10, 2.2612655061844764e-09, -4.121991541336175e-08,
    6.65967204547722e-07, -9.444655870148097e-06, 0.00011543468757885935,
    -0.00118732821547889, 0.009973557010035798, -0.06649038006690544,
    0.3989422804014327,  # 1/sqrt(2 pi), fixed; the fit is of the rest
)
_PHI_SMALL_F64_C0_LO = -2.49232720227773e-17
_PHI_SMALL_F32 = (
    -8.403614777167197e-06, 0.00011477869214025526, -0.0011871261347514194,
    0.00997352627117806, -0.06649037802122802, 0.39894228036108054,
)
_ERFCX_F32 = (
    6.778208112336284e-05, -0.0002524772183693954, -0.0005226694822954817,
    0.0030262017319183654, -0.0012191743277143684, -0.026826013430583037,
    0.11952851708440887, -0.3104673475156415, 0.5902283274944145, -0.8833944513333105,
    1.074006907268489,
)
_ERFCX_F64 = (
    1.070154885365367e-09, -7.4494156905542595e-09, -5.794423206284707e-09,
    5.14961374047335e-08, 5.1264443866092936e-08, -2.35975018977803e-07,
    -4.1111009896747666e-07, 1.0010197268607246e-06, 2.7665254415003525e-06,
    -4.750228781978224e-06, -1.7470814014195866e-05, 3.0398448624488418e-05,
    0.0001075615187560928, -0.0002767778958193547, -0.0005483096941384437,
    0.0030340620062477845, -0.0012124166271089071, -0.026827234624755805,
    0.11952776128728773, -0.3104672619005607, 0.5902283571041018, -0.8833944531698836,
)
_ERFCX_F64_C0 = 1.0740069070883398
_ERFCX_F64_C0_LO = -8.864186182901444e-17
_SQRT_HALF = 0.7071067811865476
_SQRT_HALF_LO = -4.833646656726457e-17


@njit(**_OPTS)
def _erfc_parts_f64(a, al, sh, sl):
    """erfc(a + al) = (yh + yl) * 2**k for a in [0.5, 27.35], given (a + al)**2 = sh + sl.

    Everything but the high-degree tail of H runs in double-double: H's terms vary by a
    factor of ~3 across the range, so plain evaluation would cost about two ulps.
    """
    dh, dl = _two_sum(a, 3.0)  # a + 3
    dl = dl + al
    vh = 1.0 / dh
    vl = vh * (_fma(-vh, dh, 1.0) - vh * dl)  # 1 / (a + 3) = vh + vl
    nh, nl = _two_sum(a, -3.0)  # a - 3
    nl = nl + al
    th = nh * vh
    tl = _fma(nh, vh, -th) + _fma(nh, vl, nl * vh)  # t = th + tl
    p2 = _poly(th, _ERFCX_F64[:-1])
    # s1 = c1 + t * p2, h = c0 + t * s1, both in double-double
    ph = th * p2
    s1h, s1l = _two_sum(_ERFCX_F64[-1], ph)
    s1l = s1l + _fma(th, p2, -ph) + tl * p2
    ph = th * s1h
    hh, hl = _two_sum(_ERFCX_F64_C0, ph)
    hl = hl + (_fma(th, s1h, -ph) + _fma(th, s1l, tl * s1h) + _ERFCX_F64_C0_LO)
    # erfcx = v * h
    xh = vh * hh
    xl = _fma(vh, hh, -xh) + _fma(vh, hl, vl * hh)
    # e**-(sh + sl) = (1 + u) * 2**k * (1 - sl)
    r, w, k = _exp_core_f64(-sh)
    u = r + w
    eh = 1.0 + u
    el = ((1.0 - eh) + u) - eh * sl
    yh = xh * eh
    yl = _fma(xh, eh, -yh) + _fma(xh, el, xl * eh)
    return yh, yl, k


@njit(**_OPTS)
def _erfc_parts_f32(a, sh):
    """The same to about 2**-32, for the float32 functions (computed in float64)."""
    v = 1.0 / (a + 3.0)
    h = _poly(_fma(-6.0, v, 1.0), _ERFCX_F32)
    r, w, k = _exp_core_f64(-sh)
    return ((1.0 + (r + w)) * v) * h, k


@njit(**_OPTS)
def erf_f64(x):
    small = _fma(x, _poly(x * x, _ERF_SMALL_F64), x)
    a = abs(x)
    a = 6.0 if a > 6.0 else a  # erf = 1 beyond 5.93; also keeps inf out of the products
    sh = a * a
    eh, el, k = _erfc_parts_f64(a, 0.0, sh, _fma(a, a, -sh))
    eh = _ldexp_f64(eh, k)
    el = _ldexp_f64(el, k)
    one_minus = 1.0 - eh
    big = one_minus + (((1.0 - one_minus) - eh) - el)  # 1 - erfc, rounded once
    big = big if x > 0.0 else -big
    y = small if abs(x) < 0.75 else big
    return y if x == x else x + x


@njit(**_OPTS)
def erf_f32(x):
    xd = _F64(x)
    small = _fma(xd, _poly(xd * xd, _ERF_SMALL_F32), xd)
    a = abs(xd)
    a = 4.5 if a > 4.5 else a
    m, k = _erfc_parts_f32(a, a * a)
    big = 1.0 - _ldexp_f64(m, k)
    big = big if x > _F32(0.0) else -big
    y = _F32(small if abs(x) < _F32(0.75) else big)
    return y if x == x else x + x


@njit(**_OPTS)
def gelu_f64(x):
    """x * Phi(x) = x/2 * (1 + erf(x / sqrt 2)), accurate also in the negative tail."""
    xc = 40.0 if x > 40.0 else x
    xc = -40.0 if xc < -40.0 else xc  # gelu(x) = x beyond 40, underflows to -0 below -38.5
    x2 = xc * xc
    x2l = _fma(xc, xc, -x2)
    # x Phi(x) = x/2 + x**2 (q0 + x**2 poly(x**2)), with q0 = 1/sqrt(2 pi) in double-double
    c0 = _PHI_SMALL_F64[-1]
    tail = _fma(x2, _poly(x2, _PHI_SMALL_F64[:-1]), _PHI_SMALL_F64_C0_LO)
    p = x2 * c0
    s, se = _two_sum(0.5 * x, p)  # x/2 and x**2 q0 cancel for negative x: sum them exactly
    small = s + (se + (_fma(x2, c0, -p) + _fma(x2l, c0, x2 * tail)))
    # Phi(-|x|) = erfc(|x| / sqrt 2) / 2 = (eh + el) / 2 * 2**k, |x|**2 / 2 = x2/2 + x2l/2 exactly
    ax = abs(xc)
    zh = ax * _SQRT_HALF
    zl = _fma(ax, _SQRT_HALF, -zh) + ax * _SQRT_HALF_LO
    eh, el, k = _erfc_parts_f64(zh, zl, 0.5 * x2, 0.5 * x2l)
    neg = _ldexp_f64(_fma(0.5 * xc, eh, 0.5 * xc * el), k)
    pos = x * (1.0 - _ldexp_f64(0.5 * (eh + el), k))
    y = small if abs(x) < _SQRT_HALF else (pos if x > 0.0 else neg)
    y = x if x == 0.0 else y  # keeps -0
    y = _NAN if x == -_INF else y  # as the erf formula (and numpy on it) gives: -inf * 0
    return y if x == x else x + x


@njit(**_OPTS)
def gelu_f32(x):
    xd = _F64(x)
    xc = 20.0 if xd > 20.0 else xd
    xc = -20.0 if xc < -20.0 else xc
    x2 = xc * xc
    small = _fma(x2, _poly(x2, _PHI_SMALL_F32), 0.5 * xc)
    m, k = _erfc_parts_f32(abs(xc) * _SQRT_HALF, 0.5 * x2)
    m = 0.5 * m
    neg = _ldexp_f64(xc * m, k)
    pos = xd * (1.0 - _ldexp_f64(m, k))
    y = _F32(small if abs(xd) < _SQRT_HALF else (pos if xd > 0.0 else neg))
    y = x if x == _F32(0.0) else y
    y = _F32(_NAN) if x == _F32(-_INF) else y
    return y if x == x else x + x


# ---------------------------------------------------------------- pow
# log(1 + f) = 2 atanh(s) = 2s + 2/3 s**3 + s**5 poly(s*s): pow needs log(x) to ~2**-66
# (the error of y * log(x) is multiplied by up to 745 in e**(y log x)), so the first two
# terms are carried in double-double (minimax fit of the rest, absolute error 2**-66 of log).
_POW_LOG_F64 = (
    0.11798857599547821, 0.11698827328255258, 0.13335081913829497, 0.15384590094528114,
    0.18181818373901307, 0.22222222221564145, 0.2857142857142924, 0.4,
)
_TWO_THIRDS_HI = 0.6666666666666666
_TWO_THIRDS_LO = 3.700743415417188e-17


@njit(**_OPTS)
def _log_dd_f64(x):
    """log(x) = (lh, ll) to about 2**-66 relative, for x positive and normal."""
    ix = _as_int(x) - _SQRT_HALF_BITS_F64
    e = _F64(ix >> 52)
    f = _as_float((ix & _MANT_MASK_F64) + _SQRT_HALF_BITS_F64) - 1.0  # exact
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
    return lh, ll + _fma(e, _LN2LO_F64, ml)


@njit(**_OPTS)
def _pow_special(x, y, r, is_int, is_odd):
    """numpy's (C99's) special cases of x**y around the generic result r."""
    ax = abs(x)
    ay = abs(y)
    r = r if x > 0.0 or is_int else _F64(_NAN)  # negative base, non-integer exponent
    # zero base: +-inf for y < 0, +-0 for y > 0; the sign survives for odd integer y
    zero = _INF if y < 0.0 else 0.0
    zero = (x * 0.0 + (1.0 / x if y < 0.0 else x)) if is_odd else zero
    r = zero if x == 0.0 else r
    # infinite base: (1/x) ** -y
    inf = 0.0 if y < 0.0 else _INF
    inf = (1.0 / x if y < 0.0 else x) if is_odd else inf
    r = inf if ax == _INF else r
    # infinite exponent
    iy = _INF if (ax > 1.0) == (y > 0.0) else 0.0
    iy = 1.0 if ax == 1.0 else iy
    r = iy if ay == _INF else r
    r = x + y if (x != x) or (y != y) else r
    return 1.0 if (y == 0.0) or (x == 1.0) else r


@njit(**_OPTS)
def pow_f64(x, y):
    ax = abs(x)
    ax = 1.0 if (ax == 0.0) or (ax == _INF) or (ax != ax) else ax  # keep the core finite
    small = ax < 2.2250738585072014e-308
    lh, ll = _log_dd_f64(ax * 4503599627370496.0 if small else ax)
    lh, ll = _two_sum(lh, ll - (36.04365338911715 if small else 0.0))  # 52 ln 2
    ph = y * lh
    pl = _fma(y, lh, -ph) + y * ll
    big = abs(ph) > 800.0  # over/underflows anyway; also keeps inf/NaN out of the core
    pl = 0.0 if big else pl
    ph = (800.0 if ph > 0.0 else -800.0) if big else ph
    ph = 0.0 if ph != ph else ph
    # e**(ph + pl), as exp with a low part
    t = _fma(ph, _LOG2E_F64, _SHIFT_F64)
    kf = t - _SHIFT_F64
    rh = _fma(kf, -_LN2HI_F64, ph)
    rl = _fma(kf, -_LN2LO_F64, pl)
    r = rh + rl
    c = (rh - r) + rl
    u = _fma(r * r, _poly(r, _EXPM1_F64), _fma(c, r, c)) + r
    v = _ldexp_f64(1.0 + u, _as_int(t) - _as_int(_SHIFT_F64))
    ry = _rint(y)
    is_int = ry == y
    hy = 0.5 * y
    is_odd = is_int and (_rint(hy) != hy)
    v = -v if (x < 0.0 and is_odd) else v
    return _pow_special(x, y, v, is_int, is_odd)


@njit(**_OPTS)
def pow_f32(x, y):
    xd = _F64(x)
    yd = _F64(y)
    ax = abs(xd)
    ax = 1.0 if (ax == 0.0) or (ax == _INF) or (ax != ax) else ax
    p = yd * _log_f64(ax, 0.0, 0)  # |x| as float64 is normal; ~2**-52 relative suffices
    p = 200.0 if p > 200.0 else p
    p = -200.0 if p < -200.0 else p
    p = 0.0 if p != p else p
    r, w, k = _exp_core_f64(p)
    v = (1.0 + (r + w)) * _pow2_f64(k)
    ry = _rint(yd)
    is_int = ry == yd
    hy = 0.5 * yd
    is_odd = is_int and (_rint(hy) != hy)
    v = -v if (xd < 0.0 and is_odd) else v
    return _F32(_pow_special(xd, yd, v, is_int, is_odd))
