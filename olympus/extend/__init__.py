"""olympus.extend: JAX's `jax.extend` face over olympus's own IR and tables.

A library that defines its own primitive the JAX way (equinox, lineax) reaches
for `jax.extend.core.Primitive`, `ClosedJaxpr`, `Literal`, `linear_util` and
`source_info_util`; these modules give it olympus's classes under those names,
so a primitive made here is an ordinary olympus primitive:

>>> from olympus.extend import core
>>> double_p = core.Primitive("double")
>>> double_p.def_impl(lambda x: 2 * x)  # doctest: +ELLIPSIS
<function <lambda> at ...>

Its rules go in `olympus.interpreters` (`ad.primitive_jvps`,
`batching.primitive_batchers`, `mlir.register_lowering`).
"""

from olympus.extend import core, linear_util, source_info_util  # noqa: F401

__all__ = ["core", "linear_util", "source_info_util"]
