"""The exponential distribution with rate 1/scale, from loc."""

from __future__ import annotations

import olympus.numpy as jnp
from olympus.scipy.special import _inexact

__all__ = ["cdf", "logpdf", "pdf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(z < 0, -jnp.inf, -z - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    return -jnp.expm1(-jnp.maximum((x - loc) / scale, 0))


def sf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    return jnp.exp(-jnp.maximum((x - loc) / scale, 0))
