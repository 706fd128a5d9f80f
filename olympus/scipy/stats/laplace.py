"""The Laplace (double exponential) distribution."""

from __future__ import annotations

import math

import olympus.numpy as jnp
from olympus.scipy.special import _inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    return -jnp.abs(x - loc) / scale - jnp.log(scale) - math.log(2)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    z = (x - loc) / scale
    half_tail = 0.5 * jnp.exp(-jnp.abs(z))
    return jnp.where(z < 0, half_tail, 1 - half_tail)
