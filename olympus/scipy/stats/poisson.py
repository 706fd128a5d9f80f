"""The Poisson distribution with mean mu (a discrete distribution: k is
an integer count, from loc)."""

from __future__ import annotations

import olympus.numpy as jnp
from olympus.scipy.special import _inexact, gammaincc, gammaln, xlogy

__all__ = ["cdf", "logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    k, mu, loc = _inexact(k, mu, loc)
    n = k - loc
    mass = xlogy(n, mu) - gammaln(n + 1) - mu
    return jnp.where((n < 0) | (n != jnp.floor(n)), -jnp.inf, mass)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """P(K <= k) = Q(floor(k - loc) + 1, mu); 0 below loc."""
    k, mu, loc = _inexact(k, mu, loc)
    n = jnp.floor(k - loc)
    tail = gammaincc(jnp.maximum(n + 1, 1), mu)
    return jnp.where(n < 0, jnp.zeros_like(tail), tail)
