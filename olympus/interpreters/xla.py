"""`jax.interpreters.xla` under olympus: the type tables libraries register
their array types in (tensorflow-probability's JAX substrate registers
`NumpyVariable`, a `wrapt.ObjectProxy` around an array).

olympus does not dispatch on these tables: it takes a value as an array by
what the value is (an olympus Array or tracer, or anything forwarding their
`aval`; an `np.ndarray`; a Python scalar; `__jax_array__`). A transparent
proxy such as tfp's forwards `aval`, so it is an array already. The tables
therefore record any registration (it reads back, as in JAX) and change
nothing else; a registered type whose values are none of the above is still
refused where it is used, with olympus's OlympusTypeError.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ShapedArray


class ArrayTypeRegistrationError(TypeError):
    """A registration in a type table whose key is not a type."""


class ArrayTypeTable(dict):
    """`type -> handler`, JAX's table; `np.ndarray`'s handler is olympus's."""

    def __init__(self, name: str, ndarray_handler: Callable):
        super().__init__({np.ndarray: ndarray_handler})
        self.name = name

    def __setitem__(self, cls: type, handler: Callable) -> None:
        if not isinstance(cls, type):
            raise ArrayTypeRegistrationError(
                f"{self.name}[{cls!r}]: the key must be a type (the class whose "
                f"values are arrays), got a {type(cls).__name__}"
            )
        super().__setitem__(cls, handler)


def _canonicalize_ndarray(x) -> np.ndarray:
    return np.asarray(x, dtypes.canonicalize_dtype(x.dtype))


def _ndarray_aval(x) -> ShapedArray:
    return ShapedArray(tuple(x.shape), dtypes.canonicalize_dtype(x.dtype))


canonicalize_dtype_handlers = ArrayTypeTable(
    "canonicalize_dtype_handlers", _canonicalize_ndarray
)
pytype_aval_mappings = ArrayTypeTable("pytype_aval_mappings", _ndarray_aval)

__all__ = [
    "ArrayTypeRegistrationError",
    "canonicalize_dtype_handlers",
    "pytype_aval_mappings",
]
