"""erf, and gelu (x Phi(x)) through the same erfc."""

import numpy as np
from numba import njit

from ._core import _F32, _F64, _INF, _NAN, _OPTS, _fma, _ldexp_f64, _poly, _pow2_f32, _two_sum
from .exp_log import _exp_core_f64, _expm1_core_f32, _one_plus_dd_f64

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
_ERF_SMALL_F32_AS_F32 = tuple(_F32(c) for c in _ERF_SMALL_F32)
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
    """The error function: float32, but for erfcx's polynomial and the last steps, in
    float64 (where plain float32 cost two ulps above 0.75)."""
    small = _fma(x, _poly(x * x, _ERF_SMALL_F32_AS_F32), x)
    a = abs(x)
    a = _F32(4.0) if a > _F32(4.0) else a  # erf = 1 from 3.92 on
    hi = a * a
    lo = _fma(a, a, -hi)  # a*a = hi + lo exactly
    p, k = _expm1_core_f32(-hi)  # e**-hi = (1 + p) 2**k
    scale = _pow2_f32(k)
    e = _fma(p, -lo, p - lo) * scale  # e**-(hi + lo) - 2**k, to first order in lo
    v = 1.0 / (_F64(a) + 3.0)
    erfc = v * _poly(_fma(-6.0, v, 1.0), _ERFCX_F32) * (_F64(e) + _F64(scale))
    big = _F32(1.0 - erfc)
    big = big if x > _F32(0.0) else -big
    y = small if a < _F32(0.75) else big
    return y if x == x else x + x


def erf_f32_of_array(x: np.ndarray) -> np.ndarray:
    """``erf_f32``'s polynomials over a numpy array, all in float64, rounded once: within
    an ulp of the kernel's (the reference evaluator's float32 erf, which numpy lacks)."""
    x = np.asarray(x)
    flat = x.reshape(-1)
    out = np.empty(flat.shape, np.float32)
    # A chunk at a time into buffers that stay in cache: a whole array's dozen float64
    # temporaries, fresh pages each, cost three times as much.
    buffers = np.empty((6, min(flat.size, _ERF_CHUNK)))
    for lo in range(0, flat.size, _ERF_CHUNK):
        xd, s, small, a, v, big = buffers[:, : min(_ERF_CHUNK, flat.size - lo)]
        xd[...] = flat[lo : lo + _ERF_CHUNK]
        np.clip(xd, -0.75, 0.75, out=s)  # (the small branch's range: no overflow outside it)
        _horner(small, np.multiply(s, s, out=a), _ERF_SMALL_F32)
        small *= s
        small += s
        np.minimum(np.abs(xd, out=a), 4.5, out=a)
        np.divide(1.0, np.add(a, 3.0, out=v), out=v)
        _horner(big, np.add(np.multiply(v, -6.0, out=s), 1.0, out=s), _ERFCX_F32)
        big *= v
        big *= np.exp(np.negative(np.multiply(a, a, out=s), out=s), out=s)
        np.copysign(np.subtract(1.0, big, out=big), xd, out=big)
        np.copyto(big, small, where=np.abs(xd, out=a) < 0.75)
        out[lo : lo + _ERF_CHUNK] = big
    return out.reshape(x.shape)


_ERF_CHUNK = 8192


def _horner(r: np.ndarray, x: np.ndarray, c: tuple) -> np.ndarray:
    r.fill(c[0])
    for coefficient in c[1:]:
        r *= x
        r += coefficient
    return r


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
