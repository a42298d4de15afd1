"""e**x, e**x - 1, log x and log(1 + x)."""

from numba import njit

from ._core import (
    _F32,
    _F64,
    _I32,
    _I64,
    _INF,
    _LN2HI_F32,
    _LN2HI_F64,
    _LN2LO_F32,
    _LN2LO_F64,
    _LOG2E_F32,
    _LOG2E_F64,
    _NAN,
    _OPTS,
    _SHIFT_F32,
    _SHIFT_F64,
    _as_float,
    _as_int,
    _fma,
    _ldexp_f32,
    _ldexp_f64,
    _poly,
    _pow2_f32,
    _pow2_f64,
    _two_sum,
)

# x = k ln2 + r, |r| <= ln2 / 2, with ln2 = hi + lo and k * hi exact; e**r - 1 = r + r*r poly(r).
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
    """e**x, within 1 ulp: (1 + p) 2**k, r's rounding error left out (a quarter faster
    than carrying it, inside float32's 2-ulp contract)."""
    xc = _F32(-110.0) if x < _F32(-110.0) else x
    xc = _F32(90.0) if xc > _F32(90.0) else xc
    p, k = _expm1_core_f32(xc)
    y = _ldexp_f32(_F32(1.0) + p, k)
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
