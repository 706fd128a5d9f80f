"""Whole-array comparisons in olympus.numpy: isclose (within a tolerance,
elementwise), allclose and array_equal. The elementwise equal, less, ... are
ufuncs (ufuncs.py); array_equiv is in construction.py."""

from __future__ import annotations

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.core import aval_of, prepare, to_operand
from olympus.numpy.ufuncs import isfinite, isinf, isnan
from olympus.numpy.ufunc_docs import RAISES_X, add_sections

__all__ = ["allclose", "array_equal", "isclose"]


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Whether a and b are equal within a tolerance, elementwise.

    |a - b| <= atol + rtol * |b| elementwise; infinities match only themselves.

    Args:
      a: an array or scalar.
      b: an array or scalar; it broadcasts with a.
      rtol: the relative tolerance.
      atol: the absolute tolerance.
      equal_nan: whether NaNs compare equal.

    Returns:
      A bool array of the broadcast shape.

    Example:
      >>> jnp.isclose(jnp.array([1.0, 1.1]), 1.0)
      Array([ True, False], dtype=bool)
    """
    a, b = prepare(a, b)
    if not dtypes.is_inexact(aval_of(a).dtype):
        return lax.eq(a, b)
    magnitude = lax.abs(b)
    real = aval_of(magnitude).dtype
    tolerance = lax.add(
        lax.mul(magnitude, np.asarray(rtol, real)[()]), np.asarray(atol, real)[()]
    )
    close = lax.bitwise_and(lax.le(lax.abs(lax.sub(a, b)), tolerance), isfinite(a))
    out = lax.bitwise_or(close, lax.bitwise_and(isinf(a), lax.eq(a, b)))
    if equal_nan:
        out = lax.bitwise_or(out, lax.bitwise_and(isnan(a), isnan(b)))
    return out


def _all(x):
    return lax.reduce_and(x, tuple(range(aval_of(x).ndim)))


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Whether all elements of a and b are close: |a - b| <= atol + rtol * |b|.

    The tolerance is asymmetric in a and b, as NumPy's.

    Args:
      a: an array.
      b: an array broadcastable with a.
      rtol: the relative tolerance.
      atol: the absolute tolerance.
      equal_nan: if True, NaNs in the same places count as close.

    Returns:
      A boolean scalar array.

    Raises:
      IncompatibleShapesError: the shapes do not broadcast.

    Example:
      >>> jnp.allclose(jnp.array([1.0, 2.0]), jnp.array([1.0, 2.0 + 1e-7]))
      Array(True, dtype=bool)
    """
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan: bool = False):
    """Whether a1 and a2 have the same shape and elements.

    Different shapes give False rather than an error.

    Args:
      a1: an array.
      a2: an array.
      equal_nan: if True, NaNs in the same places count as equal.

    Returns:
      A boolean scalar array.

    Example:
      >>> jnp.array_equal(jnp.arange(3), jnp.array([0, 1, 2]))
      Array(True, dtype=bool)
    """
    a1, a2 = to_operand(a1), to_operand(a2)
    if aval_of(a1).shape != aval_of(a2).shape:
        return lax.full((), False)
    equal = lax.eq(*prepare(a1, a2))
    if equal_nan:
        equal = lax.bitwise_or(equal, lax.bitwise_and(isnan(a1), isnan(a2)))
    return _all(equal)


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections((isclose, array_equal), RAISES_X)
