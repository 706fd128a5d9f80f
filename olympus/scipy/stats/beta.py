"""The beta distribution with shapes a, b on [loc, loc + scale]."""

from __future__ import annotations

import olympus.numpy as jnp
from olympus.scipy.special import _inexact, betainc, betaln, xlog1py, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _inexact(x, a, b, loc, scale)
    z = (x - loc) / scale
    density = xlogy(a - 1, z) + xlog1py(b - 1, -z) - betaln(a, b) - jnp.log(scale)
    return jnp.where((z < 0) | (z > 1), -jnp.inf, density)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _clipped(x, a, b, loc, scale):
    x, a, b, loc, scale = _inexact(x, a, b, loc, scale)
    return jnp.clip((x - loc) / scale, 0, 1), a, b


def cdf(x, a, b, loc=0, scale=1):
    """I_z(a, b) at z = (x - loc) / scale, clipped to [0, 1]."""
    z, a, b = _clipped(x, a, b, loc, scale)
    return betainc(a, b, z)


def sf(x, a, b, loc=0, scale=1):
    """1 - cdf, as I_(1-z)(b, a)."""
    z, a, b = _clipped(x, a, b, loc, scale)
    return betainc(b, a, 1 - z)


def logcdf(x, a, b, loc=0, scale=1):
    return jnp.log(cdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    return jnp.log(sf(x, a, b, loc, scale))
