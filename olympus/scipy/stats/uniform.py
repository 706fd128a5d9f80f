"""The uniform distribution on [loc, loc + scale]."""

from __future__ import annotations

import olympus.numpy as jnp
from olympus.scipy.special import _inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.where(inside, -jnp.log(scale), -jnp.inf)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _inexact(x, loc, scale)
    return jnp.clip((x - loc) / scale, 0, 1)
