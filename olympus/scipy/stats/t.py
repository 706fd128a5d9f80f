"""Student's t distribution with df degrees of freedom."""

from __future__ import annotations

import math

import olympus.numpy as jnp
from olympus.scipy.special import _inexact, gammaln

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = _inexact(x, df, loc, scale)
    z = (x - loc) / scale
    norm = gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * jnp.log(df * math.pi)
    return norm - jnp.log(scale) - (df + 1) / 2 * jnp.log1p(z * z / df)


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))
