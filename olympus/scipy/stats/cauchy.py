"""The Cauchy distribution."""

from __future__ import annotations

import math

import olympus.numpy as jnp
from olympus.scipy.special import _inexact

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    z = (x - loc) / scale
    return -math.log(math.pi) - jnp.log(scale) - jnp.log1p(z * z)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    return 0.5 + jnp.arctan((x - loc) / scale) / math.pi


def ppf(q, loc=0, scale=1):
    q, loc, scale = _inexact(q, loc, scale)
    return loc + scale * jnp.tan(math.pi * (q - 0.5))
