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
