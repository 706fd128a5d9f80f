"""The multivariate normal distribution N(mean, cov), through the Cholesky
factor of `cov` (no inverse, no determinant)."""

from __future__ import annotations

import math

import olympus.numpy as jnp
from olympus.lax import linalg as lax_linalg
from olympus.numpy.core import promote_dtypes_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, mean, cov):
    """log N(x; mean, cov) over x's last axis (leading axes: a batch of
    points); `cov` (n, n) positive definite."""
    x, mean, cov = promote_dtypes_inexact(
        jnp.asarray(x), jnp.asarray(mean), jnp.asarray(cov)
    )
    n = cov.shape[-1]
    factor = lax_linalg.cholesky(cov)
    centered = jnp.broadcast_to(x - mean, jnp.broadcast_shapes(x.shape, mean.shape))
    points = centered.reshape(-1, n).T  # one point per column
    z = lax_linalg.triangular_solve(factor, points, left_side=True, lower=True)
    log_det = 2 * jnp.sum(jnp.log(jnp.diagonal(factor)))
    quadratic = jnp.sum(z * z, axis=0).reshape(centered.shape[:-1])
    return -0.5 * (quadratic + log_det + n * math.log(2 * math.pi))


def pdf(x, mean, cov):
    return jnp.exp(logpdf(x, mean, cov))
