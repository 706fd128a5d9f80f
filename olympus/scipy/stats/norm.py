"""The normal distribution N(loc, scale^2) (scipy.stats.norm's functions,
JAX's `jax.scipy.stats.norm`).

    >>> from olympus.scipy.stats import norm
    >>> norm.logcdf(-40.0)  # log(ndtr(-40)) would be log(0)
    Array(-804.60846, dtype=float32, weak_type=True)
"""

from __future__ import annotations

import olympus.numpy as jnp
from olympus.scipy.special import _HALF_LOG_2PI, _inexact, log_ndtr, ndtr, ndtri

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _standardized(x, loc, scale):
    x, loc, scale = _inexact(x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    z, scale = _standardized(x, loc, scale)
    return -0.5 * z * z - _HALF_LOG_2PI - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    return ndtr(_standardized(x, loc, scale)[0])


def logcdf(x, loc=0, scale=1):
    return log_ndtr(_standardized(x, loc, scale)[0])


def sf(x, loc=0, scale=1):
    """The survival function 1 - cdf, without cancellation."""
    return ndtr(-_standardized(x, loc, scale)[0])


def logsf(x, loc=0, scale=1):
    return log_ndtr(-_standardized(x, loc, scale)[0])


def ppf(q, loc=0, scale=1):
    """The quantile function, the inverse of cdf."""
    q, loc, scale = _inexact(q, loc, scale)
    return loc + scale * ndtri(q)


def isf(q, loc=0, scale=1):
    """The inverse of sf."""
    q, loc, scale = _inexact(q, loc, scale)
    return loc - scale * ndtri(q)
