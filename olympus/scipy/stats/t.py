"""Student's t distribution with df degrees of freedom."""

from __future__ import annotations

import math

import olympus.numpy as jnp
from olympus.scipy.special import _inexact, betainc, gammaln

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = _inexact(x, df, loc, scale)
    z = (x - loc) / scale
    norm = gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * jnp.log(df * math.pi)
    return norm - jnp.log(scale) - (df + 1) / 2 * jnp.log1p(z * z / df)


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    """The tail I_(df/(df+z^2))(df/2, 1/2) / 2 below z = 0, one minus it above
    (scipy's t.cdf; jax.scipy.stats.t has no cdf)."""
    x, df, loc, scale = _inexact(x, df, loc, scale)
    z = (x - loc) / scale
    tail = 0.5 * betainc(0.5 * df, jnp.full_like(df, 0.5), df / (df + z * z))
    return jnp.where(z < 0, tail, 1 - tail)
