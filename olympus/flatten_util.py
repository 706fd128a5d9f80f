"""olympus.flatten_util: a pytree of arrays as one flat vector and back
(`ravel_pytree`), as optimizers and samplers written for JAX use it.

>>> from olympus.flatten_util import ravel_pytree
>>> flat, unravel = ravel_pytree({"w": jnp.ones((2, 2)), "b": jnp.zeros(3)})
>>> flat.shape, unravel(flat)["w"].shape
((7,), (2, 2))
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from olympus import dtypes, lax
from olympus import numpy as jnp
from olympus.tracer.pytree import tree_flatten


class UnravelDTypeError(TypeError):
    """An unravel function got a vector of another dtype than ravel_pytree made."""


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """(1-D array of every leaf's values, function rebuilding the pytree).

    Leaves of several dtypes are promoted to their common dtype (JAX's
    promotion) and converted back by the unravel function; an empty tree gives
    a float32 vector of length 0.
    """
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, functools.partial(_unravel_pytree, treedef, unravel_list)


def _unravel_pytree(treedef, unravel_list, flat):
    return treedef.unflatten(unravel_list(flat))


def _ravel_list(leaves: list) -> tuple[Any, Callable]:
    if not leaves:
        return jnp.zeros((0,), jnp.float32), lambda _: []
    from_dtypes = tuple(_leaf_dtype(x) for x in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    sizes = tuple(int(np.size(x)) for x in leaves)
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    if all(dt == to_dtype for dt in from_dtypes):
        # one dtype: the unravel function takes any dtype (as JAX's does)
        flat = lax.concatenate([jnp.ravel(jnp.asarray(x)) for x in leaves], 0)
        return flat, functools.partial(_split, sizes, shapes)
    flat = lax.concatenate(
        [jnp.ravel(lax.convert_element_type(x, to_dtype)) for x in leaves], 0
    )
    return flat, functools.partial(_split_and_convert, sizes, shapes, from_dtypes)


def _leaf_dtype(x) -> np.dtype:
    """A leaf's dtype, Python scalars canonicalized (1.0 -> float32 without x64)."""
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    return dtypes.canonicalize_dtype(np.result_type(x))


def _split(sizes, shapes, flat) -> list:
    ends = np.cumsum(sizes)
    starts = ends - np.asarray(sizes)
    return [
        jnp.reshape(lax.slice(flat, (int(s),), (int(e),)), shape)
        for s, e, shape in zip(starts, ends, shapes)
    ]


def _split_and_convert(sizes, shapes, from_dtypes, flat) -> list:
    expected = dtypes.result_type(*from_dtypes)
    if np.dtype(flat.dtype) != expected:
        raise UnravelDTypeError(
            f"unravel function given array of dtype {flat.dtype}, but expected "
            f"dtype {expected} (the dtype ravel_pytree returned); convert the "
            f"vector with .astype({expected}) first"
        )
    chunks = _split(sizes, shapes, flat)
    return [lax.convert_element_type(c, dt) for c, dt in zip(chunks, from_dtypes)]


__all__ = ["ravel_pytree"]
