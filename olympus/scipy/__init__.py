"""olympus.scipy: SciPy's functions on olympus arrays (JAX's `jax.scipy`):
`fft`, `linalg`, `optimize`, `special` and `stats`."""

from olympus.scipy import fft, linalg, optimize, special, stats  # noqa: F401

__all__ = ["fft", "linalg", "optimize", "special", "stats"]
