"""NumPy semantics of the special-function primitives (erfc, erf_inv, lgamma,
digamma, polygamma), in float64 element by element from Python's `math` and
textbook series, written apart from XLA's CHLO expansions they check.

digamma and polygamma shift x up by their recurrences until x >= 10, then
sum the asymptotic series (Abramowitz & Stegun 6.3.18 and 6.4.11) in
Bernoulli numbers; digamma reflects x < 0.5 (6.3.7). erf_inv solves
erf(y) = x by Newton's method from a logarithmic first guess.
"""

from __future__ import annotations

import math

import numpy as np

from olympus.backends.reference.table import rule

_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _elementwise(fn):
    """A rule applying the scalar float64 `fn` to every element."""

    def apply(*args):
        arrays = np.broadcast_arrays(*[np.asarray(a, np.float64) for a in args])
        out = np.empty(arrays[0].shape, np.float64)
        for index in np.ndindex(out.shape):
            out[index] = fn(*[float(a[index]) for a in arrays])
        return out

    return apply


def _lgamma(x: float) -> float:
    if x <= 0 and x == math.floor(x):
        return math.inf  # the poles, as XLA gives them
    return math.lgamma(x) if math.isfinite(x) else (math.inf if x > 0 else math.nan)


def _digamma(x: float) -> float:
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    if x <= 0 and x == math.floor(x):
        return math.nan  # the poles
    if x < 0.5:  # reflection: psi(1 - x) - psi(x) = pi cot(pi x)
        return _digamma(1 - x) - math.pi / math.tan(math.pi * x)
    shift = 0.0
    while x < 10:
        shift -= 1 / x
        x += 1
    series = math.log(x) - 1 / (2 * x)
    for k, b in enumerate(_BERNOULLI, start=1):
        series -= b / (2 * k * x ** (2 * k))
    return shift + series


def _polygamma(m: float, x: float) -> float:
    if m != math.floor(m) or m < 0 or math.isnan(x):
        return math.nan
    n = int(m)
    if n == 0:
        return _digamma(x)
    if x <= 0 and x == math.floor(x):
        return math.inf if n % 2 == 1 else math.nan
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    shift = 0.0
    while x < 10:
        shift += sign * math.factorial(n) / x ** (n + 1)
        x += 1
    series = math.factorial(n - 1) / x**n + math.factorial(n) / (2 * x ** (n + 1))
    for k, b in enumerate(_BERNOULLI, start=1):
        series += (
            b
            * math.factorial(2 * k + n - 1)
            / (math.factorial(2 * k) * x ** (2 * k + n))
        )
    return shift + sign * series


def _erf_inv(x: float) -> float:
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    if abs(x) == 1:
        return math.copysign(math.inf, x)
    # first guess from erf(y) ~ sign(y) sqrt(1 - exp(-4 y^2 / pi))
    y = math.copysign(math.sqrt(-math.log1p(-x * x) * math.pi / 4), x)
    for _ in range(60):
        step = (math.erf(y) - x) / (2 / math.sqrt(math.pi) * math.exp(-y * y))
        y -= step
        if abs(step) <= 1e-16 * max(1.0, abs(y)):
            break
    return y


rule("erfc")(_elementwise(math.erfc))
rule("erf_inv")(_elementwise(_erf_inv))
rule("lgamma")(_elementwise(_lgamma))
rule("digamma")(_elementwise(_digamma))
rule("polygamma")(_elementwise(_polygamma))


# ---- incomplete gamma and beta, Hurwitz zeta, I0e and I1e ----------------------
# Textbook float64 loops run to convergence (Numerical Recipes' series and
# Lentz continued fractions, with math.lgamma prefactors), the derivatives
# in a by Richardson-extrapolated central differences, and the Bessel
# functions by the trapezoid rule on their integral representation.
def _igamma_pair(a: float, x: float) -> tuple[float, float]:
    if math.isnan(a) or math.isnan(x) or a < 0 or x < 0 or a == math.inf:
        return math.nan, math.nan
    if x == 0:
        return (0.0, 1.0) if a > 0 else (math.nan, math.nan)
    if a == 0 or x == math.inf:
        return 1.0, 0.0
    log_prefactor = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1 / a
        n = 0
        while abs(term) > 1e-17 * abs(total) and n < 100000:
            n += 1
            term *= x / (a + n)
            total += term
        p = total * math.exp(log_prefactor)
        return p, 1 - p
    tiny = 1e-300
    b, c, d = x + 1 - a, 1 / tiny, 1 / (x + 1 - a)
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1 / (d if abs(d) > tiny else tiny)
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    q = h * math.exp(log_prefactor)
    return 1 - q, q


def _igamma_grad_a(a: float, x: float) -> float:
    """dP/da (= -dQ/da, differenced on whichever of P, Q is smaller)."""
    if not (a > 0 and 0 < x < math.inf):
        return 0.0 if a > 0 else math.nan
    side = 0 if _igamma_pair(a, x)[0] < 0.5 else 1
    sign = 1.0 if side == 0 else -1.0

    def central(h):
        up, down = _igamma_pair(a + h, x)[side], _igamma_pair(a - h, x)[side]
        return sign * (up - down) / (2 * h)

    h = 1e-3 * min(a, 1.0)
    return (4 * central(h / 2) - central(h)) / 3


def _random_gamma_grad(a: float, x: float) -> float:
    if x == 0:
        return 0.0
    density = math.exp((a - 1) * math.log(x) - x - math.lgamma(a))
    return -_igamma_grad_a(a, x) / density


def _betainc(a: float, b: float, x: float) -> float:
    if any(math.isnan(v) for v in (a, b, x)) or a < 0 or b < 0 or not 0 <= x <= 1:
        return math.nan
    if a == 0 and b == 0:
        return math.nan
    if x in (0.0, 1.0) or a == 0 or b == 0:
        return 1.0 if x == 1 or a == 0 else 0.0
    if x > (a + 1) / (a + b + 2):
        return 1 - _betainc(b, a, 1 - x)
    log_prefactor = (
        a * math.log(x)
        + b * math.log1p(-x)
        - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    )
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100000):
        for coefficient in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + coefficient * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + coefficient / c
            c = c if abs(c) > tiny else tiny
            h *= c * d
        if abs(c * d - 1) < 1e-16:
            break
    return math.exp(log_prefactor) * h / a


def _zeta(s: float, q: float) -> float:
    """Euler-Maclaurin: sum_(k<N) (q+k)^-s + (q+N)^(1-s)/(s-1) + (q+N)^-s/2
    + sum_j B_2j/(2j)! s(s+1)...(s+2j-2) (q+N)^(1-s-2j)."""
    if math.isnan(s) or math.isnan(q) or s < 1:
        return math.nan
    if s == 1 or (q <= 0 and q == math.floor(q)):
        return math.inf
    head = 0.0
    while q < 0:  # sum_k (q+k)^-s is real for negative q only at whole s
        if s != math.floor(s):
            return math.nan
        head += q**-s
        q += 1
    n = 12
    total = head + sum((q + k) ** -s for k in range(n))
    w = q + n
    total += w ** (1 - s) / (s - 1) + w**-s / 2
    rising = s
    for j, b in enumerate(_BERNOULLI, start=1):
        total += b / math.factorial(2 * j) * rising * w ** (1 - s - 2 * j)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return total


def _bessel_ie(order: int):
    """x -> e^-|x| I_order(x) = (1/pi) int_0^pi e^(|x|(cos t - 1)) cos(order t) dt,
    odd in x for order 1; the trapezoid rule converges geometrically on it."""

    def fn(x: float) -> float:
        if math.isnan(x):
            return math.nan
        if math.isinf(x):
            return 0.0
        y, points = abs(x), 4000
        total = 0.0
        for k in range(points + 1):
            t = math.pi * k / points
            weight = 0.5 if k in (0, points) else 1.0
            total += weight * math.exp(y * (math.cos(t) - 1)) * math.cos(order * t)
        value = total / points
        return math.copysign(value, x) if order == 1 else value

    return fn


rule("igamma")(_elementwise(lambda a, x: _igamma_pair(a, x)[0]))
rule("igammac")(_elementwise(lambda a, x: _igamma_pair(a, x)[1]))
rule("igamma_grad_a")(_elementwise(_igamma_grad_a))
rule("random_gamma_grad")(_elementwise(_random_gamma_grad))
rule("regularized_incomplete_beta")(_elementwise(_betainc))
rule("zeta")(_elementwise(_zeta))
rule("bessel_i0e")(_elementwise(_bessel_ie(0)))
rule("bessel_i1e")(_elementwise(_bessel_ie(1)))
