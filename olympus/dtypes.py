"""olympus.dtypes: the dtypes olympus supports and how they promote.

The definitions live where the system uses them (the lattice and x64
canonicalisation in `olympus.ir.dtypes`, `result_type`/`issubdtype`/`finfo`
beside the NumPy API); this module is their public face.

    >>> from olympus import dtypes
    >>> dtypes.promote_types("int8", "uint8")
    dtype('int16')
    >>> dtypes.promotion_table()["bf16", "f16"]
    'f32'
"""

from __future__ import annotations

import numpy as np

from olympus.ir.dtypes import (
    TypePromotionError,
    bfloat16,
    bool_,
    canonicalize_dtype,
    complex64,
    complex128,
    float0,
    float8_dtypes,
    float8_e3m4,
    float8_e4m3,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    float16,
    float32,
    float64,
    format_promotion_table,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    promotion_table,
    short_name,
    uint8,
    uint16,
    uint32,
    uint64,
    x64_enabled,
)
from olympus.numpy import finfo, iinfo, issubdtype, result_type
from olympus.prng import prng_key  # the abstract type of key dtypes


def is_weakly_typed(x) -> bool:
    """Whether `x` promotes like a Python scalar (takes the other operand's dtype).

    Python ints, floats and complexes are weak (bools are not: they are the
    bottom of the lattice anyway); arrays are weak when they came from one
    (`jnp.asarray(2.0)`), so `jnp.ones(3, jnp.float16) * jnp.asarray(2.0)` stays f16.
    """
    if isinstance(x, (int, float, complex)) and not isinstance(x, np.generic):
        return not isinstance(x, bool)
    return bool(getattr(x, "weak_type", False))


__all__ = [
    "TypePromotionError",
    "bfloat16",
    "bool_",
    "canonicalize_dtype",
    "complex64",
    "complex128",
    "finfo",
    "float0",
    "float8_dtypes",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float16",
    "float32",
    "float64",
    "format_promotion_table",
    "iinfo",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_weakly_typed",
    "issubdtype",
    "prng_key",
    "promote_types",
    "promotion_table",
    "result_type",
    "short_name",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "x64_enabled",
]
