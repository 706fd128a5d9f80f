"""The gamma distribution with shape a."""

from __future__ import annotations

import olympus.numpy as jnp
from olympus.scipy.special import _inexact, gammaln, xlogy

__all__ = ["logpdf", "pdf"]


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = _inexact(x, a, loc, scale)
    z = (x - loc) / scale
    density = xlogy(a - 1, z) - z - gammaln(a) - jnp.log(scale)
    return jnp.where(z < 0, -jnp.inf, density)


def pdf(x, a, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, loc, scale))
