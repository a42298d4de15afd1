"""x**y of floats (e**(y log|x|), log in double-double) and of integers."""

from numba import njit

from ._core import (
    _F32,
    _F64,
    _INF,
    _LN2HI_F64,
    _LN2LO_F64,
    _LOG2E_F64,
    _NAN,
    _OPTS,
    _SHIFT_F64,
    _as_float,
    _as_int,
    _fma,
    _ldexp_f64,
    _poly,
    _rint,
    _two_sum,
)
from .exp_log import _EXPM1_F64, _MANT_MASK_F64, _SQRT_HALF_BITS_F64, _one_plus_dd_f64

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
