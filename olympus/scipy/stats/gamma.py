"""The gamma distribution with shape a."""

from __future__ import annotations

import olympus.numpy as jnp
from olympus.scipy.special import _inexact, gammainc, gammaincc, gammaln, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = _inexact(x, a, loc, scale)
    z = (x - loc) / scale
    density = xlogy(a - 1, z) - z - gammaln(a) - jnp.log(scale)
    return jnp.where(z < 0, -jnp.inf, density)


def pdf(x, a, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, loc, scale))


def _standardized(x, a, loc, scale):
    x, a, loc, scale = _inexact(x, a, loc, scale)
    return jnp.maximum((x - loc) / scale, 0), a


def cdf(x, a, loc=0, scale=1):
    """P(a, z) at z = (x - loc) / scale (0 below the support)."""
    return gammainc(*reversed(_standardized(x, a, loc, scale)))


def sf(x, a, loc=0, scale=1):
    """1 - cdf, as Q(a, z) without cancellation."""
    return gammaincc(*reversed(_standardized(x, a, loc, scale)))


def logcdf(x, a, loc=0, scale=1):
    return jnp.log(cdf(x, a, loc, scale))


def logsf(x, a, loc=0, scale=1):
    return jnp.log(sf(x, a, loc, scale))
