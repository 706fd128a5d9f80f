"""NaN-ignoring argmax/argmin and running sums/products, and ptp: the
reductions that NumPy keeps beside sum/max/... and olympus keeps here."""

from __future__ import annotations


import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.lax.op_docs import with_sections
from olympus.lax.sharding import accepts_out_sharding
from olympus.numpy import reductions, ufuncs
from olympus.numpy.core import (
    refuse_out,
    aval_of,
    check_arraylike,
    normalize_axis,
    scalar_like,
    to_operand,
)
from olympus.numpy.reduction_docs import DOCS as REDUCTION_DOCS
from olympus.numpy.reduction_docs import (
    MEDIAN_ARGS,
    MEDIAN_RAISES,
    MEDIAN_RETURNS,
    PERCENTILE_ARGS,
    QUANTILE_ARGS,
    QUANTILE_RAISES,
    QUANTILE_RETURNS,
)
from olympus.numpy.ufunc_docs import RAISES_AXIS, add_sections
from olympus.numpy.sorting import take_along_axis
from olympus.numpy.ufuncs import isnan, subtract, where

__all__ = [
    "median",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "nanstd",
    "nanvar",
    "percentile",
    "ptp",
    "quantile",
]


def _nan_arg_reduction(name: str, arg_reduction, fill: float):
    def fn(a, axis: int | None = None, out=None, keepdims: bool | None = None):
        refuse_out(f"jnp.{name}", out)
        check_arraylike(name, a)  # names the nan-function, not this closure
        keepdims = bool(keepdims)
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
    fn.__doc__ = REDUCTION_DOCS.get(name, f"`{name[3:]}` ignoring NaNs.")
    return fn


nanargmax = _nan_arg_reduction("nanargmax", reductions.argmax, -np.inf)
nanargmin = _nan_arg_reduction("nanargmin", reductions.argmin, np.inf)


def _nan_cumulative(name: str, running, identity: int):
    def fn(a, axis: int | None = None, dtype=None, out=None):
        refuse_out(f"jnp.{name}", out)
        check_arraylike(name, a)  # names the nan-function, not this closure
        a = to_operand(a)
        if dtypes.is_inexact(aval_of(a).dtype):
            a = where(isnan(a), np.asarray(identity, aval_of(a).dtype)[()], a)
        return running(a, axis=axis, dtype=dtype)

    fn.__name__ = name
    fn.__doc__ = REDUCTION_DOCS.get(name, f"`{name[3:]}` ignoring NaNs.")
    return fn


nancumsum = _nan_cumulative("nancumsum", reductions.cumsum, 0)
nancumprod = _nan_cumulative("nancumprod", reductions.cumprod, 1)


def ptp(a, axis=None, out=None, keepdims: bool = False):
    """The range max - min along `axis`.

    Peak to peak: max - min along `axis`.

    Args:
      a: an array or scalar.
      axis: the axis to work along (None: the flattened array).
      out: unsupported (must be None); arrays are immutable, as in JAX.
      keepdims: whether to keep reduced axes, with size 1.

    Returns:
      An array with axis reduced.

    Example:
      >>> jnp.ptp(jnp.array([[1, 5], [2, 3]]), axis=1)
      Array([4, 1], dtype=int32)
    """
    refuse_out("jnp.ptp", out)
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


def nanvar(
    a, axis=None, dtype=None, out=None, ddof: int = 0, keepdims: bool = False,
    where=None, mean=None,
):  # fmt: skip
    a = to_operand(a)
    present = lax.bitwise_not(isnan(a))
    if where is not None:
        present = ufuncs.logical_and(present, where)
    out = reductions.var(a, axis, dtype, out, ddof, keepdims, where=present, mean=mean)
    count = reductions.sum(present, axis=axis, keepdims=keepdims)
    no_freedom = lax.le(count, np.asarray(ddof, aval_of(count).dtype)[()])
    return ufuncs.where(no_freedom, np.asarray(np.nan, aval_of(out).dtype)[()], out)


nanvar.__doc__ = REDUCTION_DOCS["nanvar"]
nanstd = reductions.square_root_of(nanvar, "nanstd")


_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


class QuantileMethodError(ValueError):
    """An interpolation method JAX's quantile does not accept."""


class QuantileTypeError(TypeError):
    """quantile's q is not floating (JAX computes q * (n - 1) in q's dtype)."""


class EmptyQuantileError(TypeError, IndexError):
    """A quantile or median over no elements. JAX's gather raises TypeError,
    its nan-variant's indexing IndexError: this is both."""


def quantile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear",
    keepdims=False, *, weights=None,
):  # fmt: skip
    """The q-th quantiles of `a` along `axis`, q in [0, 1].

    `method` picks how to interpolate between data points ('linear', 'lower', 'higher', 'nearest', 'midpoint').

    Example:
      >>> jnp.quantile(jnp.arange(5.0), 0.25)
      Array(1., dtype=float32)
    """
    _check_unsupported("quantile", out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, False, weights)


def nanquantile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear",
    keepdims=False, *, weights=None,
):  # fmt: skip
    """Quantiles of the non-NaN elements of `a` along `axis`.

    quantile of the non-NaN elements of each slice; NaN for a slice of only
    NaNs. Sorting puts NaNs last, so a slice's k valid values come first.

    Example:
      >>> jnp.nanquantile(jnp.array([1.0, jnp.nan, 3.0, 4.0]), 0.5)
      Array(3., dtype=float32)
    """
    _check_unsupported("nanquantile", out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, True, weights)


def _in_percent(quantile_fn, name: str, doc: str):
    """percentile or nanpercentile: `quantile_fn` of q / 100, divided in an
    inexact dtype (integer percentiles become the default float, as in JAX),
    with the quantile family's Args/Returns/Raises added to `doc`."""

    def percentile(
        a, q, axis=None, out=None, overwrite_input=False, method="linear",
        keepdims=False, *, weights=None,
    ):  # fmt: skip
        fraction = ufuncs.divide(_inexact(to_operand(q)), 100)
        return quantile_fn(
            a, fraction, axis, out, overwrite_input, method, keepdims, weights=weights
        )

    percentile.__name__ = percentile.__qualname__ = name
    percentile.__doc__ = doc
    return with_sections(PERCENTILE_ARGS, QUANTILE_RETURNS, QUANTILE_RAISES)(percentile)


# JAX's percentile takes out_sharding= (its Args gain it after the shared
# sections); its nanpercentile does not.
percentile = accepts_out_sharding(
    _in_percent(
        quantile,
        "percentile",
        """Percentiles of `a` along `axis`.

    quantile with q in percent.

    Example:
      >>> jnp.percentile(jnp.array([1.0, 2.0, 3.0, 4.0]), 50.0)
      Array(2.5, dtype=float32)
    """,
    )
)
nanpercentile = _in_percent(
    nanquantile,
    "nanpercentile",
    """Percentiles of the non-NaN elements of `a` along `axis`.

    nanquantile with q in percent.

    Example:
      >>> jnp.nanpercentile(jnp.array([1.0, jnp.nan, 3.0, 4.0]), 50.0)
      Array(3., dtype=float32)
    """,
)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of `a` along `axis`.

    NaN propagates (use nanmedian to ignore NaNs).

    Example:
      >>> jnp.median(jnp.array([3.0, 1.0, 2.0, 10.0]))
      Array(2.5, dtype=float32)
    """
    return quantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of the non-NaN elements of `a` along `axis`.

    The median of the non-NaN elements; NaN for a slice of only NaNs.

    Example:
      >>> jnp.nanmedian(jnp.array([1.0, jnp.nan, 3.0, 4.0]))
      Array(3., dtype=float32)
    """
    return nanquantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


def _check_unsupported(name, out, overwrite_input):
    if out is not None or overwrite_input:
        raise ValueError(
            f"jnp.{name}: out= and overwrite_input=True are not supported "
            "(arrays are immutable); use the returned array"
        )


def _inexact(x):
    if dtypes.is_inexact(aval_of(x).dtype):
        return x
    return lax.convert_element_type(x, dtypes.default_float_dtype())


def _reduced_last(a, axis, keepdims):
    """`a` with the axes to reduce merged into its last one, and the shape a
    keepdims result has (those axes as 1), or None without keepdims."""
    ndim = aval_of(a).ndim
    axes = tuple(range(ndim)) if axis is None else axis
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    axes = tuple(normalize_axis(int(ax), ndim) for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"jnp.quantile: repeated axis in {axis}")
    shape = aval_of(a).shape
    kept = [i for i in range(ndim) if i not in axes]
    a = lax.transpose(a, tuple(kept) + axes) if ndim else a
    size = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    a = lax.reshape(a, tuple(shape[i] for i in kept) + (size,))
    keep_shape = tuple(1 if i in axes else shape[i] for i in range(ndim))
    return a, keep_shape if keepdims else None


def _quantile(a, q, axis, method, keepdims, squash_nans, weights):
    """JAX's quantile algorithm: sort, then read the order statistics at
    floor and ceil of q (n - 1), and combine them as `method` says."""
    a, q = _quantile_operands(a, q, method, weights)
    dtype = aval_of(a).dtype
    if weights is not None:
        weights = _weights_like(a, to_operand(weights), axis)
        weights, _ = _reduced_last(lax.convert_element_type(weights, dtype), axis, 0)
    a, keep_shape = _reduced_last(a, axis, keepdims)
    *rest, n = aval_of(a).shape
    if n == 0 and aval_of(q).size > 0:
        raise EmptyQuantileError(
            f"jnp.quantile: the axes reduced hold no elements (a has shape "
            f"{aval_of(a).shape}), so there is no order statistic to read; "
            "reduce over a non-empty axis"
        )
    a, weights = _sorted_rows(a, weights, squash_nans)
    qdtype = aval_of(q).dtype
    if squash_nans:
        counts = reductions.sum(lax.bitwise_not(isnan(a)), axis=-1, dtype=qdtype)
    else:
        counts = lax.full(tuple(rest), np.asarray(n, qdtype)[()])
    target = aval_of(q).shape + tuple(rest)
    q_b = _behind(q, target, 0)
    counts_b = _behind(counts, target, aval_of(q).ndim)
    if method == "inverted_cdf":
        out = _inverted_cdf(a, weights, q_b, counts_b, squash_nans, target)
    else:
        out = _interpolated(a, q_b, counts_b, method, target)
    out = lax.convert_element_type(out, dtype)
    if keep_shape is not None:
        out = lax.reshape(out, aval_of(q).shape + keep_shape)
    return out


def _quantile_operands(a, q, method, weights) -> tuple:
    """(a, q) as quantile computes with them: a inexact and real, q floating of
    rank <= 1; a method JAX does not know, or weights without inverted_cdf,
    are refused."""
    if method not in _QUANTILE_METHODS:
        raise QuantileMethodError(
            f"jnp.quantile: method {method!r} is not one of {_QUANTILE_METHODS}"
        )
    if weights is not None and method != "inverted_cdf":
        raise QuantileMethodError(
            f"jnp.quantile: method {method!r} takes no weights; "
            "only method='inverted_cdf' does"
        )
    q = to_operand(q)
    if not dtypes.is_inexact(aval_of(q).dtype):
        # JAX computes floor(q * (n - 1)) in q's own dtype, so it refuses these.
        raise QuantileTypeError(
            f"jnp.quantile: q must be floating, got {aval_of(q).str_short()}; "
            "pass fractions such as 0.5 (jnp.asarray(q, float))"
        )
    a = _inexact(to_operand(a))
    if dtypes.is_complex(aval_of(a).dtype):
        raise TypeError("jnp.quantile: complex input has no order; pass real values")
    if aval_of(q).ndim > 1:
        raise ValueError(f"jnp.quantile: q must have rank <= 1, got {aval_of(q).shape}")
    return a, q


def _sorted_rows(a, weights, squash_nans: bool) -> tuple:
    """a's last axis sorted (weights along with it), NaNs last: with
    squash_nans (the nan-functions) each NaN sorts last on its own, else a
    row holding one becomes all NaN, as JAX's quantile gives NaN for it."""
    dtype = aval_of(a).dtype
    nan_data = isnan(a)
    if squash_nans:
        a = where(nan_data, np.asarray(np.nan, dtype)[()], a)  # positive: sorts last
    else:
        row_nan = reductions.any(nan_data, axis=-1, keepdims=True)
        a = where(row_nan, np.asarray(np.nan, dtype)[()], a)
    last = aval_of(a).ndim - 1
    if weights is not None:
        return lax.sort_key_val(a, weights, dimension=last)
    return lax.sort(a, dimension=last), None


def _weights_like(a, weights, axis):
    """quantile's weights at a's shape: equal to it, or the reduced axes' shape."""
    shape = aval_of(a).shape
    if aval_of(weights).shape == shape:
        return weights
    axes = None if axis is None else ((axis,) if isinstance(axis, int) else axis)
    axes = None if axes is None else tuple(int(ax) % len(shape) for ax in axes)
    if axes is None or aval_of(weights).shape != tuple(shape[i] for i in axes):
        raise ValueError(
            f"jnp.quantile: weights of shape {aval_of(weights).shape} must match "
            f"a's shape {shape} or the reduced axes' shape"
        )
    return lax.broadcast_in_dim(weights, shape, axes)


def _order_statistics(a, positions, target):
    """a[..., positions] for positions of shape `target` (q's axes first)."""
    lead = len(target) - (aval_of(a).ndim - 1)
    n = aval_of(a).shape[-1]
    ordered = _behind(a, target + (n,), lead)
    index = lax.reshape(positions, target + (1,))
    return lax.reshape(take_along_axis(ordered, index, -1), target)


def _interpolated(a, q, counts, method, target):
    position = lax.mul(q, lax.sub(counts, scalar_like(counts, 1)))
    low, high = lax.floor(position), lax.ceil(position)
    high_weight = lax.sub(position, low)
    last = lax.sub(counts, scalar_like(counts, 1))
    zero = scalar_like(counts, 0)
    low_i, high_i = (
        lax.convert_element_type(lax.max(zero, lax.min(i, last)), dtypes.int32)
        for i in (low, high)
    )
    low_value = _order_statistics(a, low_i, target)
    high_value = _order_statistics(a, high_i, target)
    if method == "lower":
        return low_value
    if method == "higher":
        return high_value
    if method == "nearest":
        return lax.select(
            lax.le(high_weight, scalar_like(high_weight, 0.5)), low_value, high_value
        )
    if method == "midpoint":
        return lax.mul(lax.add(low_value, high_value), scalar_like(low_value, 0.5))
    qdtype = aval_of(q).dtype
    low_weight = lax.sub(scalar_like(high_weight, 1), high_weight)
    return lax.add(
        lax.mul(lax.convert_element_type(low_value, qdtype), low_weight),
        lax.mul(lax.convert_element_type(high_value, qdtype), high_weight),
    )


def _inverted_cdf(a, weights, q, counts, squash_nans, target):
    """The first order statistic whose cumulative weight reaches q of the
    total (unit weights without `weights`); NaN where a weight is negative or
    NaN, or where the slice has no valid value (any NaN, without squashing)."""
    if weights is None:
        weights = lax.full_like(a, scalar_like(a, 1))
    zero = lax.full_like(weights, scalar_like(weights, 0))
    bad = lax.bitwise_or(lax.lt(weights, zero), isnan(weights))
    nan_data = isnan(a)
    clean = lax.select(lax.bitwise_or(bad, nan_data), zero, weights)
    cumulative = reductions.cumsum(clean, axis=-1)
    n = aval_of(a).shape[-1]
    lead = len(target) - (aval_of(a).ndim - 1)
    total = lax.slice_in_dim(cumulative, n - 1, n, axis=-1) if n else cumulative
    wanted = lax.mul(lax.reshape(q, target + (1,)), _behind(total, target + (1,), lead))
    wanted = lax.broadcast_in_dim(wanted, target + (n,), tuple(range(len(target) + 1)))
    below = lax.lt(_behind(cumulative, target + (n,), lead), wanted)
    index = reductions.sum(below, axis=-1, dtype=dtypes.default_int_dtype())
    last = lax.convert_element_type(
        lax.sub(counts, scalar_like(counts, 1)), aval_of(index).dtype
    )
    index = lax.max(scalar_like(index, 0), lax.min(index, last))
    out = _order_statistics(a, lax.convert_element_type(index, dtypes.int32), target)
    if squash_nans:
        no_value = lax.eq(counts, scalar_like(counts, 0))
    else:
        no_value = _behind(reductions.any(nan_data, axis=-1), target, lead)
    force_nan = lax.bitwise_or(
        _behind(reductions.any(bad, axis=-1), target, lead), no_value
    )
    nan = lax.full(target, np.asarray(np.nan, aval_of(out).dtype)[()])
    return lax.select(force_nan, nan, out)


def _behind(x, shape, lead: int):
    """x broadcast to `shape`, its axes placed after the first `lead` ones."""
    dims = tuple(range(lead, lead + aval_of(x).ndim))
    return lax.broadcast_in_dim(x, shape, dims)


# The sections each family shares (reduction_docs), added to its docstrings.
add_sections((quantile, nanquantile), QUANTILE_ARGS, QUANTILE_RETURNS, QUANTILE_RAISES)
add_sections((median, nanmedian), MEDIAN_ARGS, MEDIAN_RETURNS, MEDIAN_RAISES)


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections((ptp,), RAISES_AXIS)
