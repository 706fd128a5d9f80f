"""olympus.scipy: SciPy's functions on olympus arrays (JAX's `jax.scipy`):
`fft`, `linalg`, `special` and `stats`."""

from olympus.scipy import fft, linalg, special, stats  # noqa: F401

__all__ = ["fft", "linalg", "special", "stats"]
