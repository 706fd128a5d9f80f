"""The beta distribution with shapes a, b on [loc, loc + scale]."""

from __future__ import annotations

import olympus.numpy as jnp
from olympus.scipy.special import _inexact, betaln, xlog1py, xlogy

__all__ = ["logpdf", "pdf"]


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _inexact(x, a, b, loc, scale)
    z = (x - loc) / scale
    density = xlogy(a - 1, z) + xlog1py(b - 1, -z) - betaln(a, b) - jnp.log(scale)
    return jnp.where((z < 0) | (z > 1), -jnp.inf, density)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))
