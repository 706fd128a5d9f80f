"""olympus.interpreters: JAX's `jax.interpreters` face over olympus's rule tables.

`ad.primitive_jvps` and `ad.primitive_transposes` are olympus's own jvp and
transpose tables (JAX's rule signatures are olympus's); `batching.primitive_batchers`
adapts JAX's batching signature to olympus's; `mlir.register_lowering` takes a
rule made by `mlir.lower_fun`. A primitive made with `olympus.extend.core.Primitive`
and registered here works eagerly and under jit, grad and vmap.
"""

from olympus.interpreters import ad, batching, mlir, partial_eval, xla  # noqa: F401

__all__ = ["ad", "batching", "mlir", "partial_eval", "xla"]
