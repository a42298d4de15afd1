"""``python -m tools.vmath_fit``: derive the polynomial coefficients of ``jitgrad.jit.vmath``.

Each polynomial is a weighted minimax fit found with the Remez exchange algorithm, in
``decimal`` arithmetic at 50 digits (the reference functions are evaluated here too, by their
series), then rounded to the precision it is evaluated in. Rounding is done one coefficient
at a time, lowest degree first, refitting the rest each time ("sequential"), or all at once.
The printed tuples are what the modules of ``jitgrad/jit/vmath/`` hold (highest degree first,
as ``_poly`` takes them).
Nothing here runs on import.
"""

from __future__ import annotations

import math
from decimal import Decimal as D
from decimal import getcontext, localcontext

import numpy as np

getcontext().prec = 50
PI = D("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899863")


# ---------------------------------------------------------------- reference functions
def _series(x, ratio, first):
    """Sum of a series whose terms satisfy t_n = t_{n-1} * ratio(n), t_0 = first."""
    eps = D(10) ** -(getcontext().prec + 5)
    s = t = first
    n = 1
    while True:
        t = t * ratio(n)
        s += t
        if abs(t) <= eps * abs(s):
            return s
        n += 1


def dsin(x):
    return _series(x, lambda n: -x * x / ((2 * n) * (2 * n + 1)), x)


def dcos(x):
    return _series(x, lambda n: -x * x / ((2 * n - 1) * (2 * n)), D(1))


def datanh(s):
    return ((1 + s) / (1 - s)).ln() / 2


def derf(x):
    """erf x = 2x/sqrt(pi) e**(-x*x) sum (2 x*x)**n / (2n+1)!!  (positive terms, x >= 0)."""
    with localcontext() as c:
        c.prec += 10
        s = _series(x, lambda n: 2 * x * x / (2 * n + 1), D(1))
        r = 2 * x / PI.sqrt() * (-x * x).exp() * s
    return +r


def derfc(x):
    if x < 3:
        with localcontext() as c:
            c.prec += 20
            return +(1 - derf(x))
    with localcontext() as c:  # Laplace's continued fraction
        c.prec += 10
        f = x
        for k in range(int(2000 / float(x) ** 2) + 60, 0, -1):
            f = x + D(k) / 2 / f
        return +((-x * x).exp() / PI.sqrt() / f)


def derfcx(x):
    return derfc(x) * (x * x).exp()


# ---------------------------------------------------------------- Remez exchange
def _solve(a, b):
    n = len(b)
    m = [row[:] + [bb] for row, bb in zip(a, b)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        for r in range(i + 1, n):
            f = m[r][i] / m[i][i]
            if f:
                for c in range(i, n + 1):
                    m[r][c] -= f * m[i][c]
    x = [D(0)] * n
    for i in range(n - 1, -1, -1):
        x[i] = (m[i][n] - sum(m[i][c] * x[c] for c in range(i + 1, n))) / m[i][i]
    return x


def _grid(a, b, n):
    """Chebyshev-distributed points of [a, b], never exactly 0."""
    pts = []
    for i in range(n + 1):
        x = (a + b) / 2 + (b - a) / 2 * D(math.cos(math.pi * (n - i) / n))
        pts.append(D("1e-30") if x == 0 else x)
    return pts


def remez(f, w, powers, a, b, fixed=(), nscan=1200, iters=200):
    """Coefficients c of sum c_i x**p_i minimizing max |w(x) (f(x) - fixed(x) - sum)| on [a, b].

    ``fixed``: (power, coefficient) pairs already chosen. Returns (coefficients, max error).
    """
    a, b, n = D(a), D(b), len(powers)
    grid = _grid(a, b, nscan)
    target = [f(x) - sum(c * x**p for p, c in fixed) for x in grid]
    weight = [w(x) for x in grid]
    ref = sorted({round(nscan * (1 - math.cos(math.pi * j / n)) / 2) for j in range(n + 1)})
    best = None
    for _ in range(iters):
        rows = [[grid[j] ** p for p in powers] + [(-1) ** k / weight[j]] for k, j in enumerate(ref)]
        sol = _solve(rows, [target[j] for j in ref])
        c, level = sol[:n], abs(sol[n])
        err = [
            wt * (t - sum(ci * x**p for ci, p in zip(c, powers)))
            for x, t, wt in zip(grid, target, weight)
        ]
        worst = max(abs(e) for e in err)
        if best is None or worst < best[1]:
            best = (c, worst)
        if worst <= level * D("1.000001"):
            break
        # multi-point exchange: the alternating local extrema, trimmed to n + 1 points
        ext = [
            i
            for i in range(len(grid))
            if (i == 0 or abs(err[i]) >= abs(err[i - 1]))
            and (i == len(grid) - 1 or abs(err[i]) >= abs(err[i + 1]))
        ]
        alt = []
        for i in ext:
            if alt and (err[alt[-1]] > 0) == (err[i] > 0):
                if abs(err[i]) > abs(err[alt[-1]]):
                    alt[-1] = i
            else:
                alt.append(i)
        while len(alt) > n + 1:
            alt.pop(0 if abs(err[alt[0]]) < abs(err[alt[-1]]) else -1)
        if len(alt) == n + 1 and alt != ref:
            ref = alt
            continue
        # otherwise a single exchange with the global maximum, keeping signs alternating
        y = max(range(len(grid)), key=lambda i: abs(err[i]))
        if y in ref:
            break
        sign = [err[i] > 0 for i in ref]
        if y < ref[0]:
            ref = [y] + ref[1:] if sign[0] == (err[y] > 0) else [y] + ref[:-1]
        elif y > ref[-1]:
            ref = ref[:-1] + [y] if sign[-1] == (err[y] > 0) else ref[1:] + [y]
        else:
            j = max(k for k in range(len(ref)) if ref[k] < y)
            ref[j if sign[j] == (err[y] > 0) else j + 1] = y
    return best


def max_error(f, w, terms, a, b, n=4000):
    a, b = D(a), D(b)
    return max(abs(w(x) * (f(x) - sum(c * x**p for p, c in terms))) for x in _grid(a, b, n))


def fit(f, w, degree, a, b, dtype, sequential, fixed=(), first=0):
    """Rounded coefficients (highest degree first) and the max weighted error after rounding."""
    rnd = lambda c: D(float(dtype(float(c))))  # noqa: E731
    fixed, powers = list(fixed), list(range(first, degree + 1))
    while sequential and powers:
        c, _ = remez(f, w, powers, a, b, fixed)
        fixed.append((powers.pop(0), rnd(c[0])))
    if powers:
        c, _ = remez(f, w, powers, a, b, fixed)
        fixed += [(p, rnd(ci)) for p, ci in zip(powers, c)]
    err = max_error(f, w, fixed, a, b)
    return [float(c) for _, c in sorted(fixed, reverse=True)], err


# ---------------------------------------------------------------- the fits
def _exact(f):
    """f evaluated with 100 extra digits: the fitted remainders cancel badly near 0."""

    def g(x):
        with localcontext() as c:
            c.prec += 100
            r = f(x)
        return +r

    return g


def _specs():
    """name -> (function, weight, degree, a, b, dtype, sequential rounding, fixed, first power)."""
    h = D(2).ln() / 2 * D("1.01")
    smax2 = ((D(2).sqrt() - 1) / (D(2).sqrt() + 1)) ** 2 * D("1.01")
    r32, r64 = (PI / 4 * D("1.001")) ** 2, (PI / 4 * D("1.0001")) ** 2
    sq2 = D(2).sqrt()
    z0 = D("1e-30")

    @_exact
    def em1(r):  # e**r - 1 = r + r*r poly(r), relative error of e**r - 1
        return (r.exp() - 1 - r) / (r * r)

    def em1_w(r):
        return r * r / (r.exp() - 1)

    @_exact
    def log_q(z):  # 2 atanh(s) = 2s + s z poly(z), absolute error over 2s
        s = z.sqrt()
        return (2 * datanh(s) - 2 * s) / (s * z)

    def log_w(z):
        return z / 2

    @_exact
    def pow_q(z):  # 2 atanh(s) = 2s + 2/3 s**3 + s**5 poly(z)
        s = z.sqrt()
        return (2 * datanh(s) - 2 * s - 2 * s**3 / 3) / s**5

    def pow_w(z):
        return z * z / 2

    @_exact
    def tanh_q(z):  # tanh x = x + x**3 poly(x*x)
        x = z.sqrt()
        e = (2 * x).exp()
        return ((e - 1) / (e + 1) - x) / (x * z)

    def tanh_w(z):
        x = z.sqrt()
        e = (2 * x).exp()
        return x * z / ((e - 1) / (e + 1))

    @_exact
    def sin_q(z):  # sin r = r + r**3 poly(r*r)
        r = z.sqrt()
        return (dsin(r) / r - 1) / z

    def sin_w(z):
        return z * z.sqrt() / dsin(z.sqrt())

    @_exact
    def cos_q(z):  # cos r = 1 - r*r/2 + r**4 poly(r*r)
        return (dcos(z.sqrt()) - 1 + z / 2) / (z * z)

    def cos_w(z):
        return z * z / dcos(z.sqrt())

    @_exact
    def erf_q(z):  # erf x = x + x poly(x*x)
        x = z.sqrt()
        return derf(x) / x - 1

    def erf_w(z):
        return z.sqrt() / derf(z.sqrt())

    @_exact
    def phi_q(z):  # Phi(x) = 1/2 + x poly(x*x)
        x = z.sqrt()
        return derf(x / sq2) / 2 / x

    def phi_w(z):  # relative error of Phi on the negative side, where it is smallest
        x = z.sqrt()
        return x / (derfc(x / sq2) / 2)

    def erfcx_h(t):  # erfcx(a) = v poly(t), v = 1/(a + 3), t = (a - 3)/(a + 3)
        a = 3 * (1 + t) / (1 - t)
        return derfcx(a) * (a + 3)

    def erfcx_w(t):
        return 1 / erfcx_h(t)

    def t_of(a):
        return (D(a) - 3) / (D(a) + 3)

    f32, f64 = np.float32, np.float64
    erf_c0 = [(0, D(float(2 / PI.sqrt() - 1)))]
    phi_c0 = [(0, 1 / (2 * PI).sqrt())]
    return {
        "_EXPM1_F32": (em1, em1_w, 5, -h, h, f32, True, (), 0),
        "_EXPM1_F64": (em1, em1_w, 10, -h, h, f64, True, (), 0),
        "_LOG_F32": (log_q, log_w, 2, z0, smax2, f32, True, (), 0),
        "_LOG_F64": (log_q, log_w, 6, z0, smax2, f64, True, (), 0),
        "_POW_LOG_F64": (pow_q, pow_w, 7, z0, smax2, f64, False, (), 0),
        "_TANH_F32": (tanh_q, tanh_w, 6, z0, D("0.81"), f32, True, (), 0),
        "_TANH_F64": (tanh_q, tanh_w, 10, z0, D("0.3025"), f64, True, (), 0),
        "_SIN_F64": (sin_q, sin_w, 6, z0, r64, f64, True, (), 0),
        "_COS_F64": (cos_q, cos_w, 5, z0, r64, f64, True, (), 0),
        "_SIN_F32": (sin_q, sin_w, 3, z0, r32, f64, True, (), 0),
        "_COS_F32": (cos_q, cos_w, 3, z0, r32, f64, True, (), 0),
        "_ERF_SMALL_F64": (erf_q, erf_w, 10, z0, D("0.5626"), f64, False, erf_c0, 1),
        "_ERF_SMALL_F32": (erf_q, erf_w, 6, z0, D("0.5626"), f64, False, erf_c0, 1),
        "_PHI_SMALL_F64": (phi_q, phi_w, 9, z0, D("0.5001"), f64, False, phi_c0, 1),
        "_PHI_SMALL_F32": (phi_q, phi_w, 5, z0, D("0.5001"), f64, False, (), 0),
        "_ERFCX_F32": (erfcx_h, erfcx_w, 10, t_of("0.499"), t_of("10.6"), f64, False, (), 0),
        "_ERFCX_F64": (erfcx_h, erfcx_w, 22, t_of("0.499"), t_of("27.35"), f64, False, (), 0),
    }


def main():
    for name, spec in _specs().items():
        f, w, degree, a, b, dtype, sequential, fixed, first = spec
        if name == "_ERFCX_F64":  # its constant term is used in double-double: round the rest only
            c, _ = remez(f, w, list(range(degree + 1)), a, b)
            hi = float(c[0])
            terms = [(0, c[0])] + [(p, D(float(ci))) for p, ci in enumerate(c[1:], 1)]
            err = max_error(f, w, terms, a, b)
            coeffs = [float(ci) for ci in c[1:]][::-1]
            print(f"{name}_C0, {name}_C0_LO = {hi!r}, {float(c[0] - D(hi))!r}")
        else:
            coeffs, err = fit(f, w, degree, a, b, dtype, sequential, fixed, first)
            if name == "_PHI_SMALL_F64":  # the fixed 1/sqrt(2 pi) is used in double-double
                q0 = 1 / (2 * PI).sqrt()
                print(f"_PHI_SMALL_F64_C0_LO = {float(q0 - D(float(q0)))!r}")
        kind = "float32" if dtype is np.float32 else "float64"
        print(f"# max weighted error 2**{math.log2(err):.1f}, {kind} coefficients")
        print(f"{name} = {tuple(coeffs)!r}\n", flush=True)


if __name__ == "__main__":
    main()
