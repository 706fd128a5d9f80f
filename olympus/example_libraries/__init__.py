"""Small libraries written on olympus' public API, with JAX's example_libraries API.

`optimizers` (gradient-descent optimizers as pure functions over pytrees) and
`stax` (neural-network layers as `(init_fun, apply_fun)` pairs): JAX programs
that use `jax.example_libraries` run by changing that import.
"""
