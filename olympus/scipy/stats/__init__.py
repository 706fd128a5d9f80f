"""scipy.stats on olympus arrays (JAX's `jax.scipy.stats`): the
distributions below, each a module of log-density (log-mass), density and,
where closed-form, cdf functions with scipy's loc/scale parameters."""

from olympus.scipy.stats import (  # noqa: F401
    bernoulli,
    beta,
    cauchy,
    chi2,
    expon,
    gamma,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    poisson,
    t,
    uniform,
)
from olympus.scipy.stats.kde import gaussian_kde  # noqa: F401

__all__ = [
    "gaussian_kde",
    "bernoulli",
    "beta",
    "cauchy",
    "chi2",
    "expon",
    "gamma",
    "laplace",
    "logistic",
    "norm",
    "poisson",
    "t",
    "uniform",
]
