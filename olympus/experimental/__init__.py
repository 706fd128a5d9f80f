"""olympus.experimental: what JAX keeps under `jax.experimental` and users
import from there (`from jax.experimental import io_callback`)."""

from olympus.callback import io_callback
from olympus.experimental import checkify

__all__ = ["checkify", "io_callback"]
