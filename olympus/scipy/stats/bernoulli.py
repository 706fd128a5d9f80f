"""The Bernoulli distribution with success probability p."""

from __future__ import annotations

import olympus.numpy as jnp
from olympus.scipy.special import _inexact, xlog1py, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    k, p, loc = _inexact(k, p, loc)
    n = k - loc
    mass = xlogy(n, p) + xlog1py(1 - n, -p)
    return jnp.where((n == 0) | (n == 1), mass, -jnp.inf)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))
