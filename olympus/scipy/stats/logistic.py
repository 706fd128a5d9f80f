"""The logistic distribution."""

from __future__ import annotations

import olympus.numpy as jnp
from olympus.scipy.special import _inexact, expit

__all__ = ["cdf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    z = -jnp.abs((x - loc) / scale)  # the density is symmetric: no overflow
    return z - 2 * jnp.log1p(jnp.exp(z)) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    return expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    return expit(-(x - loc) / scale)


def ppf(q, loc=0, scale=1):
    q, loc, scale = _inexact(q, loc, scale)
    return loc + scale * (jnp.log(q) - jnp.log1p(-q))
