"""NaN-ignoring argmax/argmin and running sums/products, and ptp: the
reductions that NumPy keeps beside sum/max/... and olympus keeps here."""

from __future__ import annotations

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy import reductions, ufuncs
from olympus.numpy.arrays import expand_dims, moveaxis
from olympus.numpy.core import aval_of, to_operand
from olympus.numpy.sorting import _along, take_along_axis
from olympus.numpy.ufuncs import isnan, subtract, where

__all__ = [
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "nanstd",
    "nanvar",
    "ptp",
]


def _nan_arg_reduction(name: str, arg_reduction, fill: float):
    def fn(a, axis: int | None = None, keepdims: bool = False):
        a = to_operand(a)
        if not dtypes.is_inexact(aval_of(a).dtype):
            return arg_reduction(a, axis=axis, keepdims=keepdims)
        nan = isnan(a)
        index = arg_reduction(
            where(nan, np.asarray(fill, aval_of(a).dtype)[()], a),
            axis=axis,
            keepdims=keepdims,
        )
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
        raise TypeError(
            "jnp.ptp is not defined for booleans (max - min would subtract bools)"
        )
    high = reductions.max(a, axis=axis, keepdims=keepdims)
    low = reductions.min(a, axis=axis, keepdims=keepdims)
    return (
        lax.sub(high, low)
        if aval_of(high).shape == aval_of(low).shape
        else subtract(high, low)
    )


def nanvar(a, axis=None, dtype=None, out=None, ddof: int = 0, keepdims: bool = False):
    """Variance of the non-NaN elements (their count, minus `ddof`, divides); NaN
    where that leaves no degrees of freedom, as in NumPy."""
    a = to_operand(a)
    present = lax.bitwise_not(isnan(a))
    out = reductions.var(a, axis, dtype, out, ddof, keepdims, where=present)
    count = reductions.sum(present, axis=axis, keepdims=keepdims)
    no_freedom = lax.le(count, np.asarray(ddof, aval_of(count).dtype)[()])
    return where(no_freedom, np.asarray(np.nan, aval_of(out).dtype)[()], out)


def nanstd(a, axis=None, dtype=None, out=None, ddof: int = 0, keepdims: bool = False):
    """Standard deviation of the non-NaN elements."""
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims))


def nanquantile(
    a, q, axis: int | None = None, method: str = "linear", keepdims: bool = False
):
    """quantile of the non-NaN elements of each slice; NaN for a slice of only
    NaNs. q's axes come first, as in quantile.

    Sorting puts NaNs last, so a slice's k valid values come first and the q-th
    quantile interpolates between positions floor(q (k-1)) and the next one.
    """
    if method != "linear":
        raise ValueError(
            f"jnp.nanquantile: method {method!r} is not supported; use 'linear'"
        )
    a, along = _along(a, axis)
    a = moveaxis(a, along, -1)
    if not dtypes.is_inexact(aval_of(a).dtype):
        a = lax.convert_element_type(a, dtypes.default_float_dtype())
    dtype, (*rest, n) = aval_of(a).dtype, aval_of(a).shape
    q = lax.convert_element_type(to_operand(q), dtype)
    lead = aval_of(q).ndim
    target = aval_of(q).shape + tuple(rest) + (1,)
    valid = reductions.sum(lax.bitwise_not(isnan(a)), axis=-1, keepdims=True)
    last = _behind(
        lax.convert_element_type(
            lax.max(lax.sub(valid, np.int32(1)), np.int32(0)), dtype
        ),
        target,
        lead,
    )
    position = lax.mul(_behind(q, target, 0), last)
    low = lax.floor(position)
    high = lax.min(lax.add(low, np.asarray(1, dtype)[()]), last)
    ordered = _behind(lax.sort(a, dimension=len(rest)), target[:-1] + (n,), lead)
    low_value, high_value = (
        take_along_axis(ordered, lax.convert_element_type(i, dtypes.int32), -1)
        for i in (low, high)
    )
    out = lax.add(
        low_value, lax.mul(lax.sub(position, low), lax.sub(high_value, low_value))
    )
    no_values = _behind(lax.eq(valid, np.int32(0)), target, lead)
    out = lax.select(no_values, lax.full(target, np.asarray(np.nan, dtype)[()]), out)
    out = lax.reshape(out, target[:-1])
    if keepdims and axis is not None:
        out = expand_dims(out, lead + int(axis) % (len(rest) + 1))
    return out


def _behind(x, shape, lead: int):
    """x broadcast to `shape`, its axes placed after the first `lead` ones."""
    dims = tuple(range(lead, lead + aval_of(x).ndim))
    return lax.broadcast_in_dim(x, shape, dims)


def nanpercentile(
    a, q, axis: int | None = None, method: str = "linear", keepdims: bool = False
):
    """nanquantile with q in percent."""
    return nanquantile(a, ufuncs.divide(to_operand(q), 100.0), axis, method, keepdims)


def nanmedian(a, axis: int | None = None, keepdims: bool = False):
    """The median of the non-NaN elements; NaN for a slice of only NaNs."""
    return nanquantile(a, 0.5, axis, keepdims=keepdims)
