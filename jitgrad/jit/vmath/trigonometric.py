"""sin and cos, with Payne-Hanek argument reduction."""

import numpy as np
from numba import njit

from ._core import (
    _F32,
    _F64,
    _NAN,
    _OPTS,
    _SHIFT_F64,
    _as_int,
    _fma,
    _poly,
    _pow2_f64,
    _rint,
    _two_sum,
)


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
