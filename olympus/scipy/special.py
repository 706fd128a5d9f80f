"""scipy.special's functions on olympus arrays (JAX's `jax.scipy.special`):
traced, jitted, vmapped and differentiated like any olympus.numpy function.

    >>> from olympus.scipy.special import gammaln, xlogy
    >>> gammaln(jnp.array([0.5, 4.0])).round(5)  # log|Gamma(x)|
    Array([0.57236, 1.79176], dtype=float32)
    >>> xlogy(0.0, 0.0)  # 0 where x is 0, whatever y
    Array(0., dtype=float32, weak_type=True)
"""

from __future__ import annotations

import math

import numpy as np

import olympus.numpy as jnp
from olympus import lax
from olympus.lax.custom_derivatives import custom_jvp
from olympus.nn import logsumexp
from olympus.numpy.core import prepare

__all__ = [
    "betainc",
    "betaln",
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "expi",
    "expit",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "logit",
    "log_ndtr",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "xlog1py",
    "xlogy",
    "zeta",
]


# Python floats, so results keep their operands' dtype and weak type (as JAX's do).
_SQRT_HALF = math.sqrt(0.5)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _inexact(*args):
    """The operands as arrays of one floating-point dtype, broadcast."""
    return prepare(*[jnp.asarray(a) for a in args], inexact=True)


def _on_floats(name: str, op, doc: str):
    """A function of one operand that is the lax operation `op` on it as
    floats (integers become the default float, as in JAX)."""

    def special(x):
        return op(*_inexact(x))

    special.__name__ = special.__qualname__ = name
    special.__doc__ = doc
    return special


gammaln = _on_floats("gammaln", lax.lgamma, "log|Gamma(x)|.")
digamma = _on_floats(
    "digamma", lax.digamma, "The logarithmic derivative of Gamma, psi(x)."
)
erf = _on_floats("erf", lax.erf, "The error function 2/sqrt(pi) int_0^x e^(-t^2) dt.")
erfc = _on_floats("erfc", lax.erfc, "1 - erf(x), accurate where erf(x) is near 1.")
erfinv = _on_floats(
    "erfinv", lax.erf_inv, "The inverse of erf on (-1, 1); +-inf at +-1, NaN beyond."
)
expit = _on_floats("expit", lax.logistic, "The logistic sigmoid 1 / (1 + exp(-x)).")
i0e = _on_floats(
    "i0e",
    lax.bessel_i0e,
    "e^-|x| I0(x), the exponentially scaled modified Bessel function of order 0.",
)
i1e = _on_floats(
    "i1e",
    lax.bessel_i1e,
    "e^-|x| I1(x), the exponentially scaled modified Bessel function of order 1.",
)


def gamma(x):
    """Gamma(x): exp(gammaln(x)) with Gamma's sign (negative where floor(x)
    is odd and negative)."""
    (x,) = _inexact(x)
    odd = jnp.remainder(jnp.floor(x), 2) == 1
    magnitude = jnp.exp(lax.lgamma(x))
    return jnp.where((x < 0) & odd, -magnitude, magnitude)


def betaln(a, b):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b). Where the
    larger argument is 8 or more, gammaln(b) - gammaln(a + b) comes from
    Stirling's series as one expression, without the cancellation of two
    large gammaln values (the difference is O(a log b) where each is
    O(b log b))."""
    a, b = _inexact(a, b)
    small, large = jnp.minimum(a, b), jnp.maximum(a, b)
    direct = lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)
    y = jnp.maximum(large, 8.0)  # the series' operands, safe in either branch
    x = jnp.where(large >= 8, small, jnp.ones_like(small))
    difference = (
        x
        - (y - 0.5) * jnp.log1p(x / y)
        - x * jnp.log(x + y)
        + _stirling_correction(y)
        - _stirling_correction(x + y)
    )
    return jnp.where(large >= 8, lax.lgamma(x) + difference, direct)


def _stirling_correction(z):
    """gammaln(z) - ((z - 1/2) log z - z + log(2 pi) / 2) for z >= 8, from
    Stirling's series (its next term is under 1e-10 there)."""
    w = 1 / (z * z)
    return (1 / 12 + w * (-1 / 360 + w * (1 / 1260 + w * (-1 / 1680)))) / z


def polygamma(n, x):
    """The n-th derivative of digamma (n a whole number)."""
    n, x = _inexact(n, x)
    return lax.polygamma(n, x)


def logit(x):
    """log(x / (1 - x)), the inverse of expit."""
    (x,) = _inexact(x)
    return jnp.log(x) - jnp.log1p(-x)


def ndtr(x):
    """The standard normal CDF, erfc(-x / sqrt(2)) / 2."""
    (x,) = _inexact(x)
    return 0.5 * lax.erfc(-x * _SQRT_HALF)


def log_ndtr(x):
    """log(ndtr(x)), finite far into the lower tail: below x = -5 from the
    asymptotic series of Abramowitz & Stegun 7.1.23 (Mills' ratio), above
    from log(ndtr(x)) or, for x > 0, log1p(-ndtr(-x))."""
    (x,) = _inexact(x)
    lower = x < -5
    t = jnp.where(lower, x, jnp.full_like(x, -5))  # the series' operand, safe
    z = 1 / (t * t)
    series = 1 + z * (-1 + z * (3 + z * (-15 + z * (105 + z * -945))))
    tail = -0.5 * t * t - jnp.log(-t) - _HALF_LOG_2PI + jnp.log(series)
    m = jnp.where(lower, jnp.full_like(x, -5), x)  # no log(0) to differentiate
    middle = jnp.where(
        m > 0, jnp.log1p(-ndtr(-jnp.abs(m))), jnp.log(ndtr(jnp.minimum(m, 0)))
    )
    return jnp.where(lower, tail, middle)


def ndtri(p):
    """The inverse of ndtr: sqrt(2) erfinv(2p - 1)."""
    (p,) = _inexact(p)
    return math.sqrt(2) * lax.erf_inv(2 * p - 1)


def _x_times(log, log_derivative):
    """(x, y) -> x * log(y), 0 where x is 0; its JVP x' log(y) + y' x log'(y)
    is finite there too (where log(y) is)."""

    @custom_jvp
    def f(x, y):
        return jnp.where(x == 0, jnp.zeros_like(x), x * log(y))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (x_dot, y_dot) = primals, tangents
        return f(x, y), x_dot * log(y) + y_dot * x * log_derivative(y)

    return f


_xlogy = _x_times(jnp.log, lambda y: 1 / y)
_xlog1py = _x_times(jnp.log1p, lambda y: 1 / (1 + y))


def xlogy(x, y):
    """x * log(y), 0 where x is 0 (even where y is 0)."""
    return _xlogy(*_inexact(x, y))


def xlog1py(x, y):
    """x * log1p(y), 0 where x is 0 (even where y is -1)."""
    return _xlog1py(*_inexact(x, y))


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x).

    >>> from olympus.scipy.special import gammainc
    >>> gammainc(1.0, 2.0).round(5)  # 1 - e^-2
    Array(0.86467, dtype=float32)
    """
    return lax.igamma(*_inexact(a, x))


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return lax.igammac(*_inexact(a, x))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) (differentiable in
    x only, as in JAX)."""
    return lax.betainc(*_inexact(a, b, x))


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (q + k)^-x (q is required, as in JAX)."""
    if q is None:
        raise TypeError(
            "olympus.scipy.special.zeta(x, q): q is required (as in JAX); "
            "pass q=1 for Riemann's zeta"
        )
    return lax.zeta(*_inexact(x, q))


def i0(x):
    """I0(x), the modified Bessel function of order 0: e^|x| i0e(x)."""
    (x,) = _inexact(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i0e(x)


def i1(x):
    """I1(x), the modified Bessel function of order 1: e^|x| i1e(x)."""
    (x,) = _inexact(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension `d` (a static int):
    d(d-1)/4 log(pi) + sum_j gammaln(a - j/2), j = 0 .. d-1."""
    d = int(d)
    (a,) = _inexact(a)
    halves = jnp.arange(d, dtype=a.dtype) / 2
    terms = gammaln(jnp.expand_dims(a, -1) - halves)
    return jnp.sum(terms, axis=-1) + np.asarray(
        d * (d - 1) / 4 * np.log(np.pi), a.dtype
    )


_EULER_GAMMA = 0.5772156649015329


def _ei_series(x):
    """gamma + log x + sum_k x^k / (k k!): Ei for 0 < x <= 40 (positive terms)."""

    def add_term(k, carry):
        power, total = carry
        power = power * x / k
        return power, total + power / k

    zero = jnp.zeros_like(x)
    _, total = lax.fori_loop(1, 160, add_term, (zero + 1, zero))
    return _EULER_GAMMA + jnp.log(x) + total


def _ei_asymptotic(x):
    """e^x / x sum_k k! / x^k: Ei for x > 40 (terms still falling at k = 40)."""
    term, total = jnp.ones_like(x), jnp.ones_like(x)
    for k in range(1, 41):
        term = term * k / x
        total = total + term
    return jnp.exp(x) / x * total


def _e1_series(y):
    """E1(y) = -gamma - log y - sum_k (-y)^k / (k k!), for 0 < y <= 1."""
    term, total = jnp.ones_like(y), jnp.zeros_like(y)
    for k in range(1, 25):
        term = -term * y / k
        total = total + term / k
    return -_EULER_GAMMA - jnp.log(y) - total


def _e1_continued_fraction(y):
    """E1(y) by its continued fraction (modified Lentz), for y > 1."""
    b = y + 1
    c = jnp.full_like(y, 1e30)
    d = 1 / b

    def step(i, carry):
        b, c, d, h = carry
        an = -(i * i).astype(y.dtype)
        b = b + 2
        d = 1 / (an * d + b)
        c = b + an / c
        return b, c, d, h * c * d

    *_, h = lax.fori_loop(1, 80, step, (b, c, d, d))
    return h * jnp.exp(-y)


@custom_jvp
def _expi(x):
    positive = jnp.where(x > 40, _ei_asymptotic(jnp.maximum(x, 40)),
                         _ei_series(jnp.clip(x, 1e-30, 40)))  # fmt: skip
    y = -x
    e1 = jnp.where(y > 1, _e1_continued_fraction(jnp.maximum(y, 1)),
                   _e1_series(jnp.clip(y, 1e-30, 1)))  # fmt: skip
    out = jnp.where(x > 0, positive, -e1)
    # Ei(0) is -inf, but JAX (the spec) gives NaN there
    return jnp.where(jnp.isnan(x) | (x == 0), jnp.nan, out)


@_expi.defjvp
def _expi_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _expi(x), t * jnp.exp(x) / x


def expi(x):
    """The exponential integral Ei(x) = -PV int_{-x}^inf e^-t / t dt; its
    derivative is e^x / x."""
    (x,) = _inexact(x)
    return _expi(x)
