"""Flat indices and multi-indices: unravel_index, ravel_multi_index, mask_indices.

As in JAX, `unravel_index` takes negative indices Python's way and clips the
rest into range (NumPy raises); `ravel_multi_index` raises on an index out of
range only where it can see the values (mode "raise" needs concrete inputs,
as in JAX), else wraps or clips as asked.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from olympus.ir import dtypes
from olympus.numpy import ufuncs
from olympus.numpy.creation import ones
from olympus.numpy.core import (
    asarray,
    aval_of,
    requested_dtype,
    result_type,
    to_operand,
)
from olympus.numpy.indexing import check_mode
from olympus.numpy.reductions import nonzero
from olympus.tracer.core import Tracer
from olympus.tracer.errors import ConcretizationTypeError
from olympus.numpy.ufunc_docs import RAISES_NOTHING, add_sections

__all__ = ["mask_indices", "ravel_multi_index", "unravel_index"]


def _shape(shape, name: str) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(int(d) < 0 for d in dims):
        raise ValueError(f"jnp.{name}: dimensions must be non-negative, got {dims}")
    return tuple(int(d) for d in dims)


def _integer_indices(x, name: str):
    x = asarray(x)
    if x.dtype.kind not in "iu":
        raise TypeError(f"jnp.{name}: indices must be integers, got {x.dtype}")
    return x


def unravel_index(indices, shape) -> tuple:
    """The multi-index of each flat index into an array of `shape`.

    The multi-index of each flat index into an array of `shape` (row-major);
    negative indices count from the end and the rest clip into range. As JAX's,
    it is divmod by each dimension from the last, in the indices' own dtype
    (float or bool indices give float or int results, NaN stays NaN).

    Args:
      indices: an array of flat indices (integer, or float and bool as JAX takes
        them).
      shape: the array's shape: an int or a 1-d sequence of ints.

    Returns:
      A tuple of arrays of indices' shape and dtype, one per axis.

    Raises:
      ValueError: shape is neither a scalar nor a 1-d sequence.

    Example:
      >>> jnp.unravel_index(jnp.array([5, -1, 30]), (2, 3))
      (Array([1, 1, 1], dtype=int32), Array([2, 2, 2], dtype=int32))
    """
    flat = to_operand(indices)
    try:
        dims = list(shape)
    except TypeError:
        dims = [shape]
    if any(np.ndim(d) != 0 for d in dims):
        raise ValueError(
            f"jnp.unravel_index: shape must be a scalar or a 1-d sequence, got {shape!r}"
        )
    out = [0] * len(dims)
    for i in reversed(range(len(dims))):
        flat, out[i] = ufuncs.divmod(flat, dims[i])
    # What is left over says whether the index ran past either end.
    past_end = flat > 0
    unsigned = dtypes.is_unsigned_int(aval_of(flat).dtype)
    before_start = asarray(False) if unsigned else flat < -1
    return tuple(
        ufuncs.where(past_end, d - 1, ufuncs.where(before_start, 0, i))
        for d, i in zip(dims, out)
    )


def _strides(dims: tuple) -> list[int]:
    return [math.prod(dims[i + 1 :]) for i in range(len(dims))]


def ravel_multi_index(
    multi_index: Sequence,
    dims: Sequence[int],
    mode: str = "raise",
    order: str = "C",
    *,
    dtype=None,
):
    """The flat index of each multi-index into an array of `dims`.

    The flat index of each multi-index into an array of shape `dims`; `mode`:
    "raise" (the values must be concrete and in range), "wrap" or "clip".

    Args:
      multi_index: a sequence of integer arrays, one per axis.
      dims: the array's shape.
      mode: 'raise' (out of range raises, eager only), 'wrap' or 'clip'.
      order: 'C' (row-major) or 'F' (column-major).
      dtype: an integer dtype for the result (None: the indices' dtype, at
        least the default int's kind).

    Returns:
      An int array of the indices' broadcast shape.

    Raises:
      ValueError: multi_index has the wrong length for dims, order is unknown,
        or dtype is not an integer dtype able to hold every flat index.
      IndexModeError: mode is not 'raise', 'wrap' or 'clip'.

    Example:
      >>> jnp.ravel_multi_index((jnp.array([1, 0]), jnp.array([2, 1])), (2, 3))
      Array([5, 1], dtype=int32)
    """
    dims = _shape(dims, "ravel_multi_index")
    if len(multi_index) != len(dims):
        raise ValueError(
            f"jnp.ravel_multi_index: {len(multi_index)} index arrays for "
            f"{len(dims)} dimensions {dims}"
        )
    check_mode("jnp.ravel_multi_index", mode, ("raise", "wrap", "clip"))
    if order not in ("C", "F"):
        raise ValueError(
            f"jnp.ravel_multi_index: order must be 'C' or 'F', got {order!r}"
        )
    parts = [_integer_indices(i, "ravel_multi_index") for i in multi_index]
    dtype = _flat_index_dtype(dtype, parts, dims)
    if not parts:  # the one position of a 0-d array
        return asarray(0, dtype=dtype)
    if mode == "raise":
        _check_in_range(parts, dims)
    elif mode == "wrap":
        parts = [p % d for p, d in zip(parts, dims)]
    else:
        parts = [ufuncs.clip(p, 0, d - 1) for p, d in zip(parts, dims)]
    strides = _strides(dims) if order == "C" else _strides(dims[::-1])[::-1]
    total = asarray(0, dtype=dtype)
    for p, stride in zip(parts, strides):
        total = total + p.astype(dtype) * stride
    return total


def _flat_index_dtype(dtype, parts: list, dims: tuple) -> np.dtype:
    """ravel_multi_index's result dtype, as JAX's: the given one or the indices'
    promoted with a weak int, checked to hold the largest flat index."""
    if dtype is None:
        dtype = result_type(*parts, 0)
    else:
        dtype = requested_dtype(dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"jnp.ravel_multi_index: dtype={dtype} is not an integer type")
    if math.prod(dims) - 1 > np.iinfo(dtype).max:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={dtype} cannot hold the flat index of "
            f"dims={dims}; pass a larger integer dtype="
        )
    return dtype


def _check_in_range(parts: list, dims: tuple) -> None:
    for axis, (p, d) in enumerate(zip(parts, dims)):
        if isinstance(p, Tracer):
            raise ConcretizationTypeError(
                "jnp.ravel_multi_index with mode='raise' needs concrete indices to "
                "check them; under jit use mode='wrap' or mode='clip'"
            )
        values = np.asarray(p)
        if values.size and (values.min() < 0 or values.max() >= d):
            raise ValueError(
                f"jnp.ravel_multi_index: an index along axis {axis} is out of range "
                f"for a dimension of size {d}"
            )


def mask_indices(n: int, mask_func: Callable, k: int = 0, *, size: int | None = None):
    """The indices of an (n, n) array where mask_func(ones, k) is nonzero.

    The indices of the entries of an (n, n) array that `mask_func(ones, k)`
    keeps (`jnp.triu`, `jnp.tril`, ...), as (rows, columns).

    Args:
      n: the size of each axis.
      mask_func: a function like triu or tril taking (array, k).
      k: passed on to mask_func.
      size: a static number of indices (needed under jit).

    Returns:
      A pair of int arrays (rows, cols).

    Example:
      >>> jnp.mask_indices(2, jnp.triu)
      (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
    """
    kept = mask_func(ones((n, n), dtype=np.int32), k)
    return nonzero(kept, size=size)


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections((mask_indices,), RAISES_NOTHING)
