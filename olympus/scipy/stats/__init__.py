"""scipy.stats on olympus arrays (JAX's `jax.scipy.stats`); so far `norm`."""

from olympus.scipy.stats import norm  # noqa: F401

__all__ = ["norm"]
