"""tanh, and the logistic functions built like it on e**-|x|: sigmoid and softplus."""

from numba import njit

from ._core import _F32, _OPTS, _fma, _poly, _pow2_f32, _pow2_f64, _scale_f32, _scale_f64
from .exp_log import (
    _exp_core_f32,
    _exp_core_f64,
    _expm1_core_f32,
    _log_f32,
    _log_f64,
    _one_plus_dd_f32,
    _one_plus_dd_f64,
)

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
    1 + e is corrected, e's own error (1 ulp) passes through for x < 0. One division (a
    vector division costs as much as the rest of the function): the quotient is its
    reciprocal's product, corrected by one Newton step."""
    a = abs(x)
    a = _F32(104.0) if a > _F32(104.0) else a  # sigmoid rounds to 0 from -103.98 on
    p, k = _expm1_core_f32(-a)
    s1, s2 = _scale_f32(k)  # (k < -126: subnormal results, rounded once)
    e = (_F32(1.0) + p) * s1 * s2  # e**-|x|
    d = _F32(1.0) + e
    t = (_F32(1.0) - d) + e  # d + t = 1 + e exactly
    n = _F32(1.0) if x >= _F32(0.0) else e
    inv = _F32(1.0) / d
    q = n * inv
    q = _fma(_fma(-q, d, n), inv, q)  # n / d
    y = _fma(-q, t * inv, q)  # n / (d + t) = q (1 - t / d) to first order
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
