"""`jax.interpreters.xla` under olympus: the type tables libraries register
their array types in (tensorflow-probability's JAX substrate registers its
`ndarray` subclass).

olympus recognises NumPy arrays by `isinstance`, so an `np.ndarray` subclass
is an array already; these tables accept such subclasses (and record them)
and refuse any other type, which olympus could not take as an array.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from olympus.ir import dtypes
from olympus.tracer.core import aval_of


class ArrayTypeRegistrationError(TypeError):
    """A type registered as an array type that is not an `np.ndarray` subclass."""


class NdarrayTypeTable(dict):
    """`type -> handler` for `np.ndarray` and its subclasses only."""

    def __init__(self, name: str, ndarray_handler: Callable):
        super().__init__({np.ndarray: ndarray_handler})
        self.name = name

    def __setitem__(self, cls: type, handler: Callable) -> None:
        if not (isinstance(cls, type) and issubclass(cls, np.ndarray)):
            raise ArrayTypeRegistrationError(
                f"{self.name}[{cls!r}]: olympus takes as arrays only its own, "
                f"tracers, Python scalars and np.ndarray (with subclasses); give "
                f"{cls!r} an __jax_array__ method returning an array instead."
            )
        super().__setitem__(cls, handler)


def _canonicalize_ndarray(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtypes.canonicalize_dtype(x.dtype))


canonicalize_dtype_handlers = NdarrayTypeTable(
    "canonicalize_dtype_handlers", _canonicalize_ndarray
)
pytype_aval_mappings = NdarrayTypeTable("pytype_aval_mappings", aval_of)

__all__ = [
    "ArrayTypeRegistrationError",
    "canonicalize_dtype_handlers",
    "pytype_aval_mappings",
]
