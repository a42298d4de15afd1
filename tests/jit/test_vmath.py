"""jitgrad.jit.vmath: the accuracy contract, numpy's special values, and vectorizability.

Every function is checked against a reference of higher precision (numpy in float64 for the
float32 functions, numpy's long double for the float64 ones; erf and gelu, which numpy lacks,
from libm's erf and erfc for float32 and long double series for float64) over dense sweeps:
at most 2 ulp in float32 and 4 in float64.
"""

import math
import re

import numpy as np
import pytest
from numba import njit

from jitgrad.jit import vmath

L = np.longdouble
F32, F64 = np.float32, np.float64
BOUND = {F32: 2.0, F64: 4.0}
NAMES = ["exp", "expm1", "log", "log1p", "tanh", "sigmoid", "softplus", "sin", "cos", "erf", "gelu"]
UNARY = [(name, dtype) for name in NAMES for dtype in (F32, F64)]


def impl(name, dtype):
    return getattr(vmath, vmath.FUNCTIONS[(name, np.dtype(dtype).name)])


@njit(error_model="numpy")
def _map(f, x, out):
    for i in range(x.size):
        out[i] = f(x[i])


@njit(error_model="numpy")
def _map2(f, x, y, out):
    for i in range(x.size):
        out[i] = f(x[i], y[i])


def apply(name, dtype, x, y=None):
    x = np.ascontiguousarray(x, dtype=dtype)
    out = np.empty_like(x)
    if y is None:
        _map(impl(name, dtype), x, out)
    else:
        _map2(impl(name, dtype), x, np.ascontiguousarray(y, dtype=dtype), out)
    return out


# ---------------------------------------------------------------- ulp error
def ulp_error(got, ref, dtype):
    """|got - ref| in units of the ulp (in ``dtype``) of the true value ``ref``.

    ``ref`` is float64 (for float32) or long double (for float64). A result equal to ref
    rounded to ``dtype`` counts 0, as do two NaNs; a NaN or infinity against a finite
    reference counts inf. The distance is measured through zero when signs differ; the sign
    of zero results is checked by the special-value tests.
    """
    info = np.finfo(dtype)
    ref = np.asarray(ref)
    with np.errstate(all="ignore"):
        _, e = np.frexp(ref)  # |ref| = m 2**e, m in [1/2, 1)
        step = np.maximum(e.astype(np.int64) - (info.nmant + 1), info.minexp - info.nmant)
        step = np.where(ref == 0, info.minexp - info.nmant, step)
        ulp = np.ldexp(np.ones_like(ref), step.astype(np.int32))
        err = np.abs(got.astype(ref.dtype) - ref) / ulp
        same = (got == ref.astype(dtype)) | (np.isnan(got) & np.isnan(ref))
    err[same] = 0
    err[np.isnan(err)] = np.inf
    return err


def test_ulp_error_helper():
    one = np.array([1.0], F32)
    assert ulp_error(one, np.array([1.0]), F32)[0] == 0
    assert ulp_error(np.nextafter(one, F32(2)), np.array([1.0]), F32)[0] == 1
    assert ulp_error(np.nextafter(one, F32(0)), np.array([1.0]), F32)[0] == 0.5  # finer binade
    tiny = np.array([2.0**-149], F32)
    assert ulp_error(-tiny, np.array([2.0**-149]), F32)[0] == 2  # across zero
    assert ulp_error(np.zeros(1, F32), np.array([2.0**-150]), F32)[0] == 0  # rounds to 0
    assert ulp_error(np.array([np.inf], F32), np.array([1e39]), F32)[0] == 0  # overflows
    assert ulp_error(np.array([np.nan], F32), np.array([1.0]), F32)[0] == np.inf
    assert ulp_error(np.array([1.0]), np.array([1.0], L) + L(3 * 2.0**-54), F64)[0] == 0.75


# ---------------------------------------------------------------- references
_SQRT_PI = L("1.7724538509055160272981674833411451828")
_ERFC_TABLE = {}  # z0 -> (erfc z0, e**-z0**2) to 1e-25, from decimal arithmetic


def _erfc_table():
    if not _ERFC_TABLE:
        from decimal import Decimal, localcontext

        pi = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")
        with localcontext() as c:
            c.prec = 60
            for z0 in np.arange(0.5, 3.0001, 0.125):
                z = Decimal(float(z0))
                t = s = Decimal(1)
                n = 0
                while t > Decimal(10) ** -60:
                    n += 1
                    t = t * 2 * z * z / (2 * n + 1)
                    s += t
                g = (-z * z).exp()
                _ERFC_TABLE[float(z0)] = (L(str(1 - 2 * z / pi.sqrt() * g * s)), L(str(g)))
    return _ERFC_TABLE


def _exp_neg_sq(x64, scale):
    """e**(-scale x**2) in long double, with x**2 (x float64) split into exact parts."""
    x = np.asarray(x64, dtype=F64)
    c = 134217729.0 * x
    hi = c - (c - x)
    hi, lo = hi.astype(L), (x - hi).astype(L)
    s = L(scale)
    return np.exp(-hi * hi * s) * np.exp(-2 * hi * lo * s) * np.exp(-lo * lo * s)


def _erf_erfc(z, x64, scale):
    """erf and erfc of z = sqrt(scale) |x64| in long double: series below 1/2, Taylor series
    around table points up to 3, Laplace's continued fraction above."""
    erf, erfc = np.empty_like(z), np.empty_like(z)
    s = z < 0.5
    t, acc = np.ones_like(z[s]), np.ones_like(z[s])
    for n in range(1, 40):  # erf z = 2z/sqrt(pi) e**-z*z sum (2 z*z)**n / (2n+1)!!
        t = t * 2 * z[s] ** 2 / (2 * n + 1)
        acc = acc + t
    erf[s] = 2 * z[s] / _SQRT_PI * _exp_neg_sq(x64[s], scale) * acc
    erfc[s] = 1 - erf[s]
    m = (z >= 0.5) & (z < 3)
    table = _erfc_table()
    z0 = np.clip(np.rint((z[m] - 0.5) * 8), 0, len(table) - 1) / 8 + 0.5
    e0 = np.array([table[v][0] for v in z0.astype(F64)])
    g0 = np.array([table[v][1] for v in z0.astype(F64)])
    h = z[m] - z0
    total, term = np.zeros_like(h), np.ones_like(h)
    hermite_prev, hermite = np.zeros_like(h), np.ones_like(h)  # H_{n-1}(z0), H_n(z0)
    for n in range(40):  # d**(n+1)/dz**(n+1) erfc = -2/sqrt(pi) (-1)**n H_n(z) e**-z*z
        term = term * h / (n + 1)
        total = total + (term * hermite if n % 2 == 0 else -term * hermite)
        hermite_prev, hermite = hermite, 2 * z0 * hermite - 2 * n * hermite_prev
    erfc[m] = e0 - 2 / _SQRT_PI * g0 * total
    b = z >= 3
    f = z[b].copy()
    for k in range(120, 0, -1):
        f = z[b] + L(k) / 2 / f
    erfc[b] = _exp_neg_sq(x64[b], scale) / (_SQRT_PI * f)
    erf[~s] = 1 - erfc[~s]
    return erf, erfc


def erf_ref(x):
    x = np.asarray(x, dtype=F64)
    a = np.minimum(np.abs(x), 30)
    erf, _ = _erf_erfc(a.astype(L), a, 1)
    return np.where(x < 0, -erf, erf)


def gelu_ref(x):
    x = np.asarray(x, dtype=F64)
    a = np.minimum(np.abs(x), 60)
    _, erfc = _erf_erfc(a.astype(L) / np.sqrt(L(2)), a, 0.5)
    xl = x.astype(L)
    with np.errstate(invalid="ignore"):
        return np.where(x < 0, xl * erfc / 2, xl * (1 - erfc / 2))


def _sigmoid(x):
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


REFERENCE = {
    "exp": np.exp,
    "expm1": np.expm1,
    "log": np.log,
    "log1p": np.log1p,
    "tanh": np.tanh,
    "sin": np.sin,
    "cos": np.cos,
    "sigmoid": _sigmoid,
    "softplus": _softplus,
    "erf": erf_ref,
    "gelu": gelu_ref,
}


_erf64 = np.frompyfunc(math.erf, 1, 1)
_erfc64 = np.frompyfunc(math.erfc, 1, 1)


def _gelu64(x):  # float64 from libm's erfc: plenty for float32 results, and faster
    phi_neg = _erfc64(np.abs(x) * math.sqrt(0.5)).astype(F64) / 2
    return np.where(x < 0, x * phi_neg, x * (1 - phi_neg))


def reference(name, x, dtype):
    """The true function at x (values of dtype): float64 for float32, long double for float64."""
    wide = np.asarray(x, dtype=dtype).astype(F64 if dtype == F32 else L)
    with np.errstate(all="ignore"):
        if dtype == F32 and name in ("erf", "gelu"):
            out = _erf64(wide).astype(F64) if name == "erf" else _gelu64(wide)
        else:
            out = REFERENCE[name](wide if name not in ("erf", "gelu") else wide.astype(F64))
    return np.asarray(out).astype(wide.dtype)


# ---------------------------------------------------------------- sweeps
def f32_every(stride):
    """Every stride-th float32 bit pattern (both signs, all exponents), finite only."""
    x = np.arange(0, 1 << 32, stride, dtype=np.uint64).astype(np.uint32).view(F32)
    return x[np.isfinite(x)]


def f32_all(lo, hi):
    """Every float32 in [lo, hi] (0 < lo < hi, or both negative)."""
    if hi < 0:
        return -f32_all(-hi, -lo)
    a, b = np.array([lo, hi], F32).view(np.int32)
    return np.arange(a, b + 1, dtype=np.int32).view(F32)


def f64_random(n, seed):
    """Doubles with uniformly random bit patterns (both signs, all exponents), finite."""
    x = np.random.default_rng(seed).integers(0, 1 << 64, n, dtype=np.uint64).view(F64)
    return x[np.isfinite(x)]


CORE = {  # where each function does its work
    "exp": (-110, 90, -750, 710),
    "expm1": (-20, 90, -40, 710),
    "log": (0, 5, 0, 5),
    "log1p": (-1, 5, -1, 5),
    "tanh": (-10, 10, -20, 20),
    "sigmoid": (-110, 20, -750, 40),
    "softplus": (-110, 20, -750, 40),
    "sin": (-20, 20, -20, 20),
    "cos": (-20, 20, -20, 20),
    "erf": (-5, 5, -7, 7),
    "gelu": (-15, 6, -40, 8),
}
EVERY_FLOAT32 = {  # ranges around each function's switch points, every float32 in them
    "exp": (0.3, 0.4),
    "expm1": (-0.4, -0.3),
    "log": (0.68, 0.74),
    "log1p": (-0.32, -0.27),
    "tanh": (0.85, 0.95),
    "sigmoid": (-2.0, -1.5),
    "softplus": (0.3, 0.4),
    "sin": (0.75, 0.82),
    "cos": (1.5, 1.6),
    "erf": (0.7, 0.8),
    "gelu": (-0.75, -0.65),
}


def sweep(name, dtype):
    rng = np.random.default_rng(len(name))
    lo32, hi32, lo64, hi64 = CORE[name]
    if dtype == F32:
        x = [f32_every(1024), f32_all(*EVERY_FLOAT32[name])]
        x.append(rng.uniform(lo32, hi32, 1 << 18))
    else:
        slow = name in ("erf", "gelu")  # their long double reference is slow
        x = [f64_random(1 << (18 if slow else 20), len(name))]
        x.append(rng.uniform(lo64, hi64, 1 << 18))
        x.append(rng.uniform(-1, 1, 1 << 16))
    x = np.concatenate([np.asarray(v, dtype=dtype) for v in x])
    if name in ("log", "log1p"):
        x = x[x > (0 if name == "log" else -1)]
    return x


@pytest.mark.parametrize("name,dtype", UNARY, ids=[f"{n}-{d.__name__}" for n, d in UNARY])
def test_ulp_error_within_bound(name, dtype):
    x = sweep(name, dtype)
    err = ulp_error(apply(name, dtype, x), reference(name, x, dtype), dtype)
    worst = int(np.argmax(err))
    assert err[worst] <= BOUND[dtype], f"{name}({x[worst]!r}): {err[worst]:.3f} ulp"


def test_float32_erf_of_numpy_arrays():
    """The reference evaluator's float32 erf: the kernels' polynomials over numpy arrays."""
    from jitgrad.jit.vmath.special import erf_f32_of_array

    x = sweep("erf", F32)
    got = erf_f32_of_array(x)
    assert got.dtype == F32
    err = ulp_error(got, reference("erf", x, F32), F32)
    assert err.max() <= BOUND[F32], x[int(np.argmax(err))]
    s = specials(F32)
    got, kernel = erf_f32_of_array(s), apply("erf", F32, s)
    exact = ~np.isfinite(s) | (s == 0)  # (the signs of zeros too)
    assert np.array_equal(bits(got[exact]), bits(kernel[exact]))
    np.testing.assert_array_max_ulp(got[~exact], kernel[~exact], maxulp=1)
    # Any shape and strides, computed a chunk at a time: each element as computed alone.
    grid = np.random.default_rng(3).uniform(-5, 5, (3, 20001)).astype(F32)[:, ::2]
    got = erf_f32_of_array(grid)
    assert got.shape == grid.shape
    for i, j in [(0, 0), (0, 4095), (0, 4096), (1, 5000), (2, 10000)]:
        assert bits(got[i, j]) == bits(erf_f32_of_array(grid[i, j : j + 1])[0])


def pow_cases(dtype):
    rng = np.random.default_rng(7)
    n = 1 << 17
    big = 1100 if dtype == F64 else 160
    span = 700 if dtype == F64 else 87
    cases = [
        (rng.uniform(0, 10, n), rng.uniform(-40, 40, n)),
        (1 + rng.uniform(-1e-3, 1e-3, n), rng.uniform(-1e5, 1e5, n)),
        (np.exp(rng.uniform(-span, span, n)), rng.uniform(-1.5, 1.5, n)),
        (rng.uniform(-10, 0, n), rng.integers(-60, 60, n)),  # negative base, integer exponent
        (rng.uniform(0.5, 2, n), rng.uniform(-big, big, n)),  # to overflow and underflow
    ]
    x = np.concatenate([c[0] for c in cases]).astype(dtype)
    y = np.concatenate([c[1] for c in cases]).astype(dtype)
    return x, y


@pytest.mark.parametrize("dtype", [F32, F64])
def test_pow_ulp_error_within_bound(dtype):
    x, y = pow_cases(dtype)
    wide = F64 if dtype == F32 else L
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(wide), y.astype(wide))
    err = ulp_error(apply("pow", dtype, x, y), ref, dtype)
    worst = int(np.argmax(err))
    assert err[worst] <= BOUND[dtype], f"pow({x[worst]!r}, {y[worst]!r}): {err[worst]:.3f} ulp"


def test_sin_cos_worst_case_reduction():
    # the double closest to a multiple of pi/2 (Muller, "Elementary Functions"), and friends
    x = np.array([6381956970095103 * 2.0**797, 5.319372648326541e255, 1e22, 1e300, np.pi, 1.0])
    for name in ("sin", "cos"):
        err = ulp_error(apply(name, F64, x), reference(name, x, F64), F64)
        assert err.max() <= 1, (name, err)


# ---------------------------------------------------------------- special values
def bits(a):
    a = np.asarray(a)
    return a.view(np.uint32 if a.dtype == F32 else np.uint64)


def specials(dtype):
    info = np.finfo(dtype)
    tiny, sub = info.smallest_normal, info.smallest_subnormal
    vals = [0.0, np.inf, np.nan, sub, tiny * 0.75, tiny - sub, tiny, info.max, 1.0, 1e-30]
    return np.array(vals + [-v for v in vals if v == v], dtype=dtype)


def numpy_expected(name, x):
    """What numpy (or, for the functions it lacks, jitgrad's reference formula) returns."""
    dtype = x.dtype.type
    with np.errstate(all="ignore"):
        if name == "sigmoid":
            return np.exp(-np.logaddexp(dtype(0), -x))
        if name == "softplus":
            return np.logaddexp(dtype(0), x)
        if name == "erf":
            return np.array([math.erf(float(v)) for v in x]).astype(dtype)
        if name == "gelu":
            e = np.array([math.erf(float(v) / math.sqrt(2)) for v in x])
            return (0.5 * x.astype(F64) * (1 + e)).astype(dtype)
        return getattr(np, name)(x)


# Inputs whose result is fully determined (0, inf, NaN, 1, the input itself, ...); elsewhere
# numpy's own result may be an ulp off, and the ulp tests above apply.
DETERMINED = {
    "exp": lambda x: ~np.isfinite(x) | (np.abs(x) < 1e-8),
    "expm1": lambda x: ~np.isfinite(x) | (np.abs(x) < 1e-30),
    "log": lambda x: ~np.isfinite(x) | (x <= 0) | (x == 1),
    "log1p": lambda x: ~np.isfinite(x) | (x <= -1) | (np.abs(x) < 1e-30),
    "tanh": lambda x: ~np.isfinite(x) | (np.abs(x) < 1e-30) | (np.abs(x) > 100),
    "sigmoid": lambda x: ~np.isfinite(x) | (np.abs(x) < 1e-30) | (x > 100) | (x < -110),
    "softplus": lambda x: ~np.isfinite(x) | (np.abs(x) < 1e-30) | (x > 100) | (x < -110),
    "sin": lambda x: ~np.isfinite(x) | (np.abs(x) < 1e-30),
    "cos": lambda x: ~np.isfinite(x) | (np.abs(x) < 1e-30),
    "erf": lambda x: ~np.isfinite(x) | (x == 0) | (np.abs(x) > 10),
    "gelu": lambda x: (x == x) & ((x == 0) | (np.abs(x) > 100)),
}


@pytest.mark.parametrize("name,dtype", UNARY, ids=[f"{n}-{d.__name__}" for n, d in UNARY])
def test_special_values_as_numpy(name, dtype):
    x = specials(dtype)
    x = x[DETERMINED[name](x)]
    got, want = apply(name, dtype, x), numpy_expected(name, x)
    for xi, g, w in zip(x, got, want):
        # bit for bit, zeros' signs included; NaNs: see test_nan_bits
        assert (bits(g) == bits(w)) or (g != g and w != w), (name, xi, g, w)


DETERMINED_AT_SUBNORMALS = {  # f(x) for subnormal x, rounded: as numpy computes it
    "exp": lambda x: np.ones_like(x),
    "cos": lambda x: np.ones_like(x),
    "expm1": lambda x: x,
    "log1p": lambda x: x,
    "tanh": lambda x: x,
    "sin": lambda x: x,
    "sigmoid": lambda x: np.full_like(x, 0.5),
    "softplus": lambda x: np.full_like(x, np.log(2)),
    "gelu": lambda x: x * x.dtype.type(0.5),
}


@pytest.mark.parametrize("name,dtype", UNARY, ids=[f"{n}-{d.__name__}" for n, d in UNARY])
def test_subnormal_inputs(name, dtype):
    info = np.finfo(dtype)
    mant = np.random.default_rng(3).integers(1, 1 << info.nmant, 4096, dtype=np.int64)
    x = (mant.astype(np.uint32) if dtype == F32 else mant.astype(np.uint64)).view(dtype)
    x = np.concatenate([x, -x]) if name != "log" else x
    got = apply(name, dtype, x)
    if name in DETERMINED_AT_SUBNORMALS:
        assert np.array_equal(bits(got), bits(DETERMINED_AT_SUBNORMALS[name](x)))
    else:  # log, erf: no exact answer to match, the ulp bound
        assert ulp_error(got, reference(name, x, dtype), dtype).max() <= BOUND[dtype]


def test_nan_bits():
    for name, dtype in UNARY:
        nan = np.array([np.nan], dtype)  # numpy's own NaN comes back as is
        assert bits(apply(name, dtype, nan)) == bits(nan), name
    # Invalid operations give x86's default NaN (sign bit set), as numpy's ufuncs do on
    # this CPU family, except numpy's float64 log where it runs its AVX2 loop (no AVX-512):
    # that returns +NaN, so the bits are checked against the default NaN itself.
    for dtype in (F32, F64):
        default_nan = bits(np.array([-np.nan], dtype))
        for name, v in [
            ("log", -1.0),
            ("log1p", -2.0),
            ("log1p", -np.inf),
            ("sin", np.inf),
            ("cos", -np.inf),
            ("gelu", -np.inf),
        ]:
            got = apply(name, dtype, np.array([v], dtype))
            assert bits(got) == default_nan, (name, dtype, got)
        got = apply("pow", dtype, np.array([-2.0], dtype), np.array([0.5], dtype))
        assert bits(got) == default_nan
        with np.errstate(invalid="ignore"):
            assert bits(np.sin(np.array([np.inf], dtype))) == default_nan  # numpy's, likewise


@pytest.mark.parametrize("dtype", [F32, F64])
def test_pow_special_values_as_numpy(dtype):
    v = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, np.inf, -np.inf, np.nan, 2.5]
    x, y = (a.ravel().astype(dtype) for a in np.meshgrid(v, v))
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    with np.errstate(all="ignore"):
        wide = np.power(x.astype(L), y.astype(L))
    # special operands, and results that are exactly representable (numpy gets those right)
    exact = ~np.isfinite(x) | ~np.isfinite(y) | (x == 0) | (np.abs(x) == 1) | (y == 0)
    exact |= (want.astype(L) == wide) | (np.isnan(want) & np.isnan(wide))
    got = apply("pow", dtype, x, y)
    for xi, yi, g, w in zip(x[exact], y[exact], got[exact], want[exact]):
        assert (bits(g) == bits(w)) or (g != g and w != w), (xi, yi, g, w)


# ---------------------------------------------------------------- boundaries
def f64_window(center, n=2000):
    """n consecutive doubles around center."""
    c = np.array([center], F64).view(np.int64)[0]
    return np.arange(c - n // 2, c + n // 2, dtype=np.int64).view(F64)


def test_exp_overflow_and_underflow_where_numpy_does():
    for name in ("exp", "expm1"):
        for x in (f32_all(88.5, 89.0), f64_window(709.782712893384)):
            with np.errstate(over="ignore"):
                want = np.isinf(getattr(np, name)(x))
            assert np.array_equal(np.isinf(apply(name, x.dtype.type, x)), want)
    x = f32_all(-104.0, -103.9)
    assert np.array_equal(apply("exp", F32, x) == 0, np.exp(x) == 0)
    x = f64_window(-745.1332191019411)
    assert np.array_equal(apply("exp", F64, x) == 0, np.exp(x) == 0)


def _distance_to_one(name, x):
    """1 - |f(x)| (tanh, sigmoid: 1 - f; expm1: f + 1), in long double, without cancellation."""
    x = x.astype(L)
    if name == "tanh":
        return 2 / (np.exp(2 * np.abs(x)) + 1)
    if name == "sigmoid":
        return 1 / (np.exp(x) + 1)
    return np.exp(x)  # expm1 + 1


SATURATION = [  # (function, dtype, inputs, value it saturates to)
    ("expm1", F32, f32_all(-17.4, -17.2), -1.0),
    ("expm1", F64, f64_window(-37.42994775023705), -1.0),
    ("tanh", F32, f32_all(8.9, 9.1), 1.0),
    ("tanh", F32, f32_all(-9.1, -8.9), -1.0),
    ("tanh", F64, f64_window(19.061547465398498), 1.0),
    ("sigmoid", F32, f32_all(16.5, 17.5), 1.0),
    ("sigmoid", F64, f64_window(37.42994775023705), 1.0),
    ("sigmoid", F32, f32_all(-104.0, -103.9), 0.0),  # the true tiny values before
    ("sigmoid", F64, f64_window(-745.1332191019411), 0.0),
    ("softplus", F32, f32_all(-104.0, -103.9), 0.0),
    ("softplus", F64, f64_window(-745.1332191019411), 0.0),
    ("gelu", F32, f32_all(-14.5, -14.0), -0.0),
    ("gelu", F64, f64_window(-38.56), -0.0),
]


@pytest.mark.parametrize(
    "name,dtype,x,value", SATURATION, ids=[f"{n}-{d.__name__}-{v}" for n, d, _, v in SATURATION]
)
def test_saturation_where_correctly_rounded(name, dtype, x, value):
    """Results become exactly -1, 1 or +-0 exactly where the correctly rounded result does
    (numpy's float32 tanh, for one, still returns 0.99999994 at x = 10)."""
    got = apply(name, dtype, x)
    if value == 0:
        want = reference(name, x, dtype).astype(dtype) == 0
        assert np.array_equal(np.signbit(got[got == 0]), np.signbit(x[got == 0]) & (name == "gelu"))
    else:  # |f| rounds to 1 when its distance to 1 is at most half an ulp below 1 (a tie: even)
        want = _distance_to_one(name, x) <= L(np.finfo(dtype).epsneg) / 2
    assert np.array_equal(got == value, want), name


def test_large_arguments_as_numpy():
    for dtype in (F32, F64):
        x = np.array([40.0, 100.0, 1e10, np.finfo(dtype).max], dtype)
        assert np.array_equal(apply("softplus", dtype, x), x)  # log(1 + e**x) = x
        assert np.array_equal(apply("gelu", dtype, x), x)
        assert np.all(apply("tanh", dtype, x) == 1) and np.all(apply("tanh", dtype, -x) == -1)
        assert np.all(apply("erf", dtype, x) == 1) and np.all(apply("erf", dtype, -x) == -1)
        x = x[2:]
        assert np.all(apply("sigmoid", dtype, x) == 1) and np.all(apply("sigmoid", dtype, -x) == 0)
        assert np.all(apply("softplus", dtype, -x) == 0) and np.all(apply("exp", dtype, -x) == 0)
        two = np.full(4, 2.0, dtype)
        exps = np.array([127, 128, -149, -150] if dtype == F32 else [1023, 1024, -1074, -1075])
        with np.errstate(all="ignore"):
            want = np.power(two, exps.astype(dtype))
        assert np.array_equal(apply("pow", dtype, two, exps), want)


# ---------------------------------------------------------------- vectorized loop
def mixed_inputs(dtype):
    rng = np.random.default_rng(11)
    wide = f64_random(500, 5)
    wide = wide[np.abs(wide) < np.finfo(dtype).max]
    parts = [specials(dtype), rng.uniform(-3, 3, 500), rng.uniform(-120, 120, 500), wide]
    return np.concatenate([p.astype(dtype) for p in parts])


@pytest.mark.parametrize("name,dtype", UNARY, ids=[f"{n}-{d.__name__}" for n, d in UNARY])
def test_vectorized_loop_equals_scalar_calls(name, dtype):
    x = mixed_inputs(dtype)
    loop = apply(name, dtype, x)
    f = impl(name, dtype)
    one_by_one = np.array([f(v) for v in x], dtype=dtype)
    assert np.array_equal(bits(loop), bits(one_by_one))


def test_pow_vectorized_loop_equals_scalar_calls():
    for dtype in (F32, F64):
        x = mixed_inputs(dtype)
        y = np.random.default_rng(2).permutation(x)
        loop = apply("pow", dtype, x, y)
        f = impl("pow", dtype)
        assert np.array_equal(bits(loop), bits(np.array([f(a, b) for a, b in zip(x, y)], dtype)))


@pytest.mark.parametrize(
    "name,dtype", UNARY + [("pow", F32), ("pow", F64)], ids=lambda v: getattr(v, "__name__", v)
)
def test_loop_vectorizes_without_calls(name, dtype):
    """The loop around each function compiles to SIMD code with no call left in it."""
    apply(name, dtype, np.ones(8), None if name != "pow" else np.ones(8))
    kernel = _map2 if name == "pow" else _map
    fn = f"type(CPUDispatcher(<function {impl(name, dtype).__name__} "
    sig = [s for s in kernel.signatures if str(s[0]).startswith(fn)]
    functions = re.split(r"\n(?=define )", kernel.inspect_llvm(sig[0]))
    body = next(f for f in functions if re.match(r"define [^@]*@_ZN\w*_map", f))
    lanes = re.findall(r"<(\d+) x (?:float|double)>", body)
    assert lanes and max(int(n) for n in lanes) >= 4, "no vector code"
    calls = set(re.findall(r"call [^@]*@([\w.$]+)\(", body))
    assert all(c.startswith("llvm.") for c in calls), calls  # intrinsics only: no libm


def test_functions_table():
    assert len(vmath.FUNCTIONS) == 2 * (len(NAMES) + 1)
    for (name, dtype), fn in vmath.FUNCTIONS.items():
        assert fn == f"{name}_{'f32' if dtype == 'float32' else 'f64'}"
        assert hasattr(vmath, fn)
    assert re.fullmatch("[0-9a-f]{16}", vmath.SOURCE_HASH)
