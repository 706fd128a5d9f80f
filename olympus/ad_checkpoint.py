"""`olympus.ad_checkpoint`: rematerialisation, as JAX's `jax.ad_checkpoint`."""

from olympus.lax.custom_derivatives import (  # noqa: F401
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    remat,
)
