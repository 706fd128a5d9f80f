"""olympus.typing: the annotation types of JAX's `jax.typing`, for code that
type-hints its arguments as libraries written for JAX do.

>>> from olympus.typing import ArrayLike
>>> def f(x: ArrayLike) -> olympus.Array: ...
"""

from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from olympus.backends.xla.array import PublicArray as Array


class SupportsDType(Protocol):
    """Anything with a `.dtype` (an array, a ShapeDtypeStruct)."""

    @property
    def dtype(self) -> np.dtype: ...


# What olympus.numpy accepts where an array is expected.
ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
# What names a dtype: "float32", jnp.float32, np.dtype, or a thing with .dtype.
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

__all__ = ["ArrayLike", "DTypeLike"]
