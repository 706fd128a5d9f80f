"""olympus.scipy: SciPy's functions on olympus arrays (JAX's `jax.scipy`):
`linalg`, `special` and `stats`."""

from olympus.scipy import linalg, special, stats  # noqa: F401

__all__ = ["linalg", "special", "stats"]
