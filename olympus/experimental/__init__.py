"""olympus.experimental: what JAX keeps under `jax.experimental` and users
import from there (`from jax.experimental import io_callback`)."""

from olympus.callback import io_callback

__all__ = ["io_callback"]
