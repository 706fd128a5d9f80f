"""olympus.scipy: SciPy's functions on olympus arrays (JAX's `jax.scipy`);
so far `special`."""

from olympus.scipy import special  # noqa: F401

__all__ = ["special"]
