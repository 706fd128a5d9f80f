"""NaN-ignoring argmax/argmin and running sums/products, and ptp: the
reductions that NumPy keeps beside sum/max/... and olympus keeps here."""

from __future__ import annotations

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy import reductions
from olympus.numpy.core import aval_of, to_operand
from olympus.numpy.ufuncs import isnan, subtract, where

__all__ = ["nanargmax", "nanargmin", "nancumprod", "nancumsum", "ptp"]


def _nan_arg_reduction(name: str, arg_reduction, fill: float):
    def fn(a, axis: int | None = None, keepdims: bool = False):
        a = to_operand(a)
        if not dtypes.is_inexact(aval_of(a).dtype):
            return arg_reduction(a, axis=axis, keepdims=keepdims)
        nan = isnan(a)
        index = arg_reduction(where(nan, np.asarray(fill, aval_of(a).dtype)[()], a),
                              axis=axis, keepdims=keepdims)
        # A slice that is all NaN has no answer: -1 marks it (JAX's convention).
        all_nan = reductions.all(nan, axis=axis, keepdims=keepdims)
        return where(all_nan, np.asarray(-1, aval_of(index).dtype)[()], index)

    fn.__name__ = name
    fn.__doc__ = f"`{name[3:]}` ignoring NaNs; -1 where a slice holds only NaNs."
    return fn


nanargmax = _nan_arg_reduction("nanargmax", reductions.argmax, -np.inf)
nanargmin = _nan_arg_reduction("nanargmin", reductions.argmin, np.inf)


def _nan_cumulative(name: str, running, identity: int):
    def fn(a, axis: int | None = None, dtype=None):
        a = to_operand(a)
        if dtypes.is_inexact(aval_of(a).dtype):
            a = where(isnan(a), np.asarray(identity, aval_of(a).dtype)[()], a)
        return running(a, axis=axis, dtype=dtype)

    fn.__name__ = name
    fn.__doc__ = f"`{name[3:]}` with NaNs counted as {identity}."
    return fn


nancumsum = _nan_cumulative("nancumsum", reductions.cumsum, 0)
nancumprod = _nan_cumulative("nancumprod", reductions.cumprod, 1)


def ptp(a, axis=None, keepdims: bool = False):
    """Peak to peak: max - min along `axis`."""
    a = to_operand(a)
    if aval_of(a).dtype == dtypes.bool_:
        raise TypeError("jnp.ptp is not defined for booleans (max - min would subtract bools)")
    high = reductions.max(a, axis=axis, keepdims=keepdims)
    low = reductions.min(a, axis=axis, keepdims=keepdims)
    return lax.sub(high, low) if aval_of(high).shape == aval_of(low).shape else subtract(high, low)
