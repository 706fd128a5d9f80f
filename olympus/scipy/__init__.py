"""olympus.scipy: SciPy's functions on olympus arrays (JAX's `jax.scipy`);
so far `special` and `stats.norm`."""

from olympus.scipy import special, stats  # noqa: F401

__all__ = ["special", "stats"]
