"""scipy.stats.gaussian_kde on olympus arrays (JAX's
`jax.scipy.stats.gaussian_kde`): a kernel density estimate with Gaussian
kernels whose covariance is the data's, scaled by Scott's or Silverman's factor.

>>> kde = olympus.scipy.stats.gaussian_kde(jnp.array([0.0, 1.0, 2.0]))
>>> kde.pdf(jnp.array([1.0])).round(4)
Array([0.3182], dtype=float32)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

import olympus.numpy as jnp
from olympus import random
from olympus.numpy.core import promote_dtypes_inexact
from olympus.scipy.special import logsumexp
from olympus.tracer.pytree import register_pytree_node


class KdeInputError(ValueError):
    """A dataset, weights, points or bandwidth gaussian_kde cannot use."""


@dataclasses.dataclass(frozen=True, init=False)
class gaussian_kde:  # noqa: N801  (SciPy's and JAX's name)
    """A Gaussian kernel density estimate of `dataset` (shape (d, n), or (n,)
    for one dimension), optionally `weights`-ed; a pytree, so it passes
    through jit."""

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = jnp.atleast_2d(jnp.asarray(dataset))
        if jnp.iscomplexobj(dataset):
            raise KdeInputError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise KdeInputError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is None:
            (dataset,) = promote_dtypes_inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        else:
            dataset, weights = promote_dtypes_inexact(dataset, jnp.asarray(weights))
            weights = jnp.atleast_1d(weights)
            if weights.ndim != 1 or len(weights) != n:
                raise KdeInputError(
                    f"`weights` input should be one-dimensional of length n={n}"
                )
            weights = weights / jnp.sum(weights)
        neff = 1 / jnp.sum(weights**2)
        factor = _bandwidth_factor(bw_method, neff, d, self, dataset, weights)
        data_cov = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, aweights=weights))
        for name, value in [
            ("neff", neff),
            ("dataset", dataset),
            ("weights", weights),
            ("covariance", data_cov * factor**2),
            ("inv_cov", jnp.linalg.inv(data_cov) / factor**2),
        ]:
            object.__setattr__(self, name, value)

    @property
    def d(self) -> int:
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        return self.dataset.shape[1]

    def evaluate(self, points):
        """The estimated density at each of `points` (shape (d, m))."""
        return jnp.exp(self.logpdf(points))

    __call__ = pdf = evaluate

    def logpdf(self, points):
        """The log of the estimated density at each of `points`."""
        points = self._reshape_points(points)
        whitening = jnp.linalg.cholesky(self.inv_cov)
        data = self.dataset.T @ whitening
        xi = points.T @ whitening
        log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * self.d * np.log(
            2 * np.pi
        )
        sq = jnp.sum((xi[:, None, :] - data[None, :, :]) ** 2, axis=-1)
        return logsumexp(log_norm - 0.5 * sq + jnp.log(self.weights), axis=1)

    def resample(self, key, shape: tuple = ()):
        """Draws of shape (d,) + shape from the estimated density."""
        index_key, noise_key = random.split(key)
        index = random.choice(index_key, self.n, shape=shape, p=self.weights)
        mean = jnp.zeros(self.d, self.covariance.dtype)
        noise = random.multivariate_normal(
            noise_key, mean, self.covariance, shape=shape, dtype=self.dataset.dtype
        )
        return self.dataset[:, index] + jnp.moveaxis(noise, -1, 0)

    def _reshape_points(self, points):
        points = jnp.atleast_2d(jnp.asarray(points))
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return jnp.reshape(points, (self.d, 1))
            raise KdeInputError(
                f"points have dimension {d}, dataset has dimension {self.d}"
            )
        return points


_FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")


def _unflatten(_, children) -> gaussian_kde:
    kde = object.__new__(gaussian_kde)
    for name, value in zip(_FIELDS, children):
        object.__setattr__(kde, name, value)
    return kde


register_pytree_node(
    gaussian_kde, lambda k: ([getattr(k, f) for f in _FIELDS], None), _unflatten
)


def _bandwidth_factor(bw_method, neff, d, kde, dataset, weights):
    if bw_method is None or bw_method == "scott":
        return jnp.power(neff, -1.0 / (d + 4))
    if bw_method == "silverman":
        return jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
    if np.isscalar(bw_method) and not isinstance(bw_method, str):
        return bw_method
    if callable(bw_method):
        object.__setattr__(kde, "dataset", dataset)
        object.__setattr__(kde, "weights", weights)
        object.__setattr__(kde, "neff", neff)
        return bw_method(kde)
    raise KdeInputError(
        "`bw_method` should be 'scott', 'silverman', a scalar, or a callable."
    )


__all__ = ["gaussian_kde"]
