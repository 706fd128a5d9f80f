"""Diagonals and triangles in olympus.numpy: triu and tril (of the last two
axes), diagonal and diag. Their index arrays (tril_indices, diag_indices, ...)
are in construction.py."""

from __future__ import annotations

import builtins

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.core import aval_of, broadcast_to, to_operand
from olympus.numpy.rearranging import _take_range
from olympus.numpy.shaping import moveaxis

__all__ = [
    "diag",
    "diagonal",
    "tril",
    "triu",
]


def _require_matrix(name: str, shape) -> None:
    """tril/triu act on the last two axes, so a vector or scalar has none to mask."""
    if len(shape) < 2:
        raise ValueError(
            f"jnp.{name} needs an array of at least 2 dimensions, got shape {shape}"
        )


def _diagonal_mask(shape, k: int, above: bool):
    rows = lax.broadcasted_iota(dtypes.int32, shape, len(shape) - 2)
    cols = lax.broadcasted_iota(dtypes.int32, shape, len(shape) - 1)
    offset = lax.sub(cols, rows)
    return lax.ge(offset, np.int32(k)) if above else lax.le(offset, np.int32(k))


def _triangle(name: str, above: bool, ones_3x3: str):
    """triu (above=True) or tril: `m` with the entries on the other side of
    the k-th diagonal of its last two axes zeroed."""

    def triangle(m, k: int = 0):
        m = to_operand(m)
        shape = aval_of(m).shape
        _require_matrix(name, shape)
        zero = lax.full(shape, np.zeros((), aval_of(m).dtype)[()])
        return lax.select(_diagonal_mask(shape, k, above), m, zero)

    side = "below" if above else "above"
    triangle.__name__ = triangle.__qualname__ = name
    triangle.__doc__ = f"""`m` with the entries {side} the k-th diagonal zeroed.

    Zeros {side} the k-th diagonal of the last two axes (of every matrix in a
    stack).

    Args:
      m: an array of rank >= 2 (the last two axes).
      k: the diagonal offset: 0 the main one, positive above, negative below.

    Returns:
      An array of m's shape and dtype.

    Raises:
      ArrayLikeTypeError: m is a list or other non-array (convert it with
        jnp.asarray).
      ValueError: m has fewer than 2 dimensions.

    Example:
      >>> jnp.{name}(jnp.ones((3, 3)))
      Array({ones_3x3}, dtype=float32)
    """
    return triangle


triu = _triangle("triu", True, "[[1., 1., 1.], [0., 1., 1.], [0., 0., 1.]]")
tril = _triangle("tril", False, "[[1., 0., 0.], [1., 1., 0.], [1., 1., 1.]]")


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The `offset` diagonal of the (axis1, axis2) planes of `a`, as its last axis.

    Args:
      a: an array or scalar.
      offset: the diagonal's offset.
      axis1: the first axis of the planes.
      axis2: the second axis of the planes.

    Returns:
      An array with axis1 and axis2 removed and the diagonal appended.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      ValueError: a has fewer than two dimensions, or an axis is out of range.

    Example:
      >>> jnp.diagonal(jnp.arange(6).reshape(2, 3))
      Array([0, 4], dtype=int32)
    """
    a = to_operand(a)
    ndim = aval_of(a).ndim
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    shape = aval_of(a).shape
    n, m = shape[-2:]
    length = builtins.max(
        0, builtins.min(n, m - offset) if offset >= 0 else builtins.min(n + offset, m)
    )
    if ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions")
    masked = lax.select(
        lax.eq(
            lax.sub(
                lax.broadcasted_iota(dtypes.int32, shape, ndim - 1),
                lax.broadcasted_iota(dtypes.int32, shape, ndim - 2),
            ),
            np.int32(offset),
        ),
        a,
        lax.full(shape, np.zeros((), aval_of(a).dtype)[()]),
    )
    # Each row holds at most one diagonal element: summing the row extracts it.
    row_sums = (
        lax.reduce_sum(masked, (ndim - 1,))
        if aval_of(a).dtype != dtypes.bool_
        else lax.reduce_or(masked, (ndim - 1,))
    )
    first_row = builtins.max(0, -offset)
    return _take_range(row_sums, ndim - 2, first_row, first_row + length)


def diag(v, k: int = 0):
    """The k-th diagonal of a 2-D array, or a 2-D array with v on it.

    For 1-D v it builds a matrix; for 2-D v it extracts a diagonal.

    Args:
      v: a 1-D or 2-D array.
      k: the diagonal (0 main, >0 above, <0 below).

    Returns:
      A 2-D array (for 1-D v) or a 1-D array (for 2-D v).

    Raises:
      ValueError: v is neither 1-D nor 2-D.

    Example:
      >>> jnp.diag(jnp.array([[1, 2], [3, 4]]))
      Array([1, 4], dtype=int32)
    """
    v = to_operand(v)
    if aval_of(v).ndim == 2:
        return diagonal(v, k)
    if aval_of(v).ndim != 1:
        raise ValueError("jnp.diag expects a 1-D or 2-D array")
    n = aval_of(v).shape[0] + builtins.abs(k)
    zero = np.zeros((), aval_of(v).dtype)[()]
    # Column j of the diagonal holds v[j - k] (k >= 0) or v[j] (k < 0).
    padded = lax.pad(v, zero, [(builtins.max(0, k), builtins.max(0, -k), 0)])
    on_diagonal = lax.eq(
        lax.sub(
            lax.broadcasted_iota(dtypes.int32, (n, n), 1),
            lax.broadcasted_iota(dtypes.int32, (n, n), 0),
        ),
        np.int32(k),
    )
    return lax.select(on_diagonal, broadcast_to(padded, (n, n)), lax.full((n, n), zero))
