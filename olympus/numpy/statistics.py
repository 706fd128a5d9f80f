"""Statistics and discrete calculus of olympus.numpy: diff, gradient,
trapezoid, cov, corrcoef, interp, and the counting functions (bincount,
digitize, histogram and friends).

Counting functions whose result length depends on the values (bincount
without `length`, histogram of data whose range is not given) read it
from concrete input, and need it static under a trace, as in JAX.
"""

from __future__ import annotations

import builtins
import operator

import ml_dtypes
import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.lax.sharding import accepts_unsplit_out_sharding
from olympus.numpy import creation, diagonals, rearranging, shaping
from olympus.numpy import reductions as _red
from olympus.numpy import ufuncs as _uf
from olympus.numpy.compiled import compiled, jit_entry_points
from olympus.numpy.construction import ix_
from olympus.numpy.core import (
    astype,
    aval_of,
    broadcast_to,
    normalize_axis,
    promote_dtypes,
    promote_dtypes_inexact,
    requested_dtype,
    stack,
    to_operand,
)
from olympus.numpy.index_tricks import ravel_multi_index
from olympus.numpy.indexing import slice_along, take
from olympus.numpy.reductions import cumsum
from olympus.numpy.sorting import searchsorted
from olympus.tracer.core import Tracer
from olympus.tracer.errors import ConcretizationTypeError
from olympus.numpy.ufunc_docs import RAISES_AXIS, RAISES_X, add_sections

__all__ = [
    "bincount",
    "corrcoef",
    "cov",
    "diff",
    "digitize",
    "ediff1d",
    "gradient",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
    "interp",
    "trapezoid",
    "unwrap",
]


class StaticLengthError(ConcretizationTypeError):
    """A counting function needs a length that only the traced values know."""


# ---- differences and integrals -----------------------------------------------------
def _edge_piece(piece, x, axis: int):
    """`prepend`/`append`: a scalar broadcasts to one slice along `axis`."""
    piece = to_operand(piece)
    if aval_of(piece).ndim == 0:
        shape = list(aval_of(x).shape)
        shape[axis] = 1
        piece = broadcast_to(piece, tuple(shape))
    return piece


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """The n-th discrete difference along `axis`: a[i+1] - a[i].

    Each order shortens the axis by one; prepend/append add values first.

    Args:
      a: an array.
      n: the order of the difference.
      axis: the axis.
      prepend: values put before a along axis.
      append: values put after.

    Returns:
      The differences.

    Raises:
      ValueError: n is negative.

    Example:
      >>> jnp.diff(jnp.array([1, 4, 9]))
      Array([3, 5], dtype=int32)
    """
    a = to_operand(a)
    if n < 0:
        raise ValueError(f"jnp.diff: order n={n} must be non-negative")
    if aval_of(a).ndim == 0:
        raise ValueError("jnp.diff needs an array of at least one dimension")
    axis = normalize_axis(axis, aval_of(a).ndim)
    if n == 0:
        return a  # NumPy ignores prepend/append for n=0
    pieces = [_edge_piece(p, a, axis) for p in (prepend,) if p is not None]
    pieces += [a] + [_edge_piece(p, a, axis) for p in (append,) if p is not None]
    if len(pieces) > 1:
        a = shaping.concatenate(promote_dtypes(*pieces), axis=axis)
    boolean = aval_of(a).dtype == np.bool_
    for _ in range(n):
        later, earlier = slice_along(a, axis, 1, None), slice_along(a, axis, None, -1)
        a = lax.ne(later, earlier) if boolean else later - earlier
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive entries of the flattened array.

    Differences of consecutive entries of the flattened array, with optional
    values before and after.

    Args:
      ary: an array (flattened).
      to_end: values appended at the end.
      to_begin: values prepended at the start.

    Returns:
      A 1-D array.

    Example:
      >>> jnp.ediff1d(jnp.array([1, 4, 9]))
      Array([3, 5], dtype=int32)
    """
    flat = shaping.ravel(to_operand(ary))
    pieces = [flat[1:] - flat[:-1]]
    dtype = aval_of(pieces[0]).dtype
    if to_begin is not None:
        pieces.insert(0, shaping.ravel(astype(to_operand(to_begin), dtype)))
    if to_end is not None:
        pieces.append(shaping.ravel(astype(to_operand(to_end), dtype)))
    return shaping.concatenate(pieces) if len(pieces) > 1 else pieces[0]


def _spacing(spacing, n: int, dtype):
    """The n-1 gaps between sample points: from a scalar step or coordinates."""
    spacing = astype(to_operand(spacing), dtype)
    if aval_of(spacing).ndim == 0:
        return broadcast_to(spacing, (n - 1,))
    if aval_of(spacing).shape != (n,):
        raise ValueError(
            f"jnp.gradient: coordinates of shape {aval_of(spacing).shape} "
            f"do not match an axis of length {n}"
        )
    return spacing[1:] - spacing[:-1]


def _shaped(v, axis: int, ndim: int):
    """A 1-d array laid along `axis` of an ndim array, for broadcasting."""
    shape = [1] * ndim
    shape[axis] = aval_of(v).shape[0]
    return lax.reshape(v, tuple(shape))


def _gradient_interior(f, h, axis: int):
    """Second-order central differences with uneven gaps h[i-1], h[i]."""
    ndim = aval_of(f).ndim
    h1, h2 = _shaped(h[:-1], axis, ndim), _shaped(h[1:], axis, ndim)
    before, here, after = (
        slice_along(f, axis, 0, -2),
        slice_along(f, axis, 1, -1),
        slice_along(f, axis, 2, None),
    )
    return (
        -h2 / (h1 * (h1 + h2)) * before
        + (h2 - h1) / (h1 * h2) * here
        + h1 / (h2 * (h1 + h2)) * after
    )


def _gradient_edges(f, h, axis: int, edge_order: int):
    """One-sided differences at both ends, of first or second order."""

    def at(i):
        return slice_along(f, axis, i, i + 1 if i != -1 else None)

    if edge_order == 1:
        return (at(1) - at(0)) / h[0], (at(-1) - at(-2)) / h[-1]
    d1, d2 = h[0], h[1]
    first = (
        -(2 * d1 + d2) / (d1 * (d1 + d2)) * at(0)
        + (d1 + d2) / (d1 * d2) * at(1)
        - d1 / (d2 * (d1 + d2)) * at(2)
    )
    d1, d2 = h[-2], h[-1]
    last = (
        d2 / (d1 * (d1 + d2)) * at(-3)
        - (d1 + d2) / (d1 * d2) * at(-2)
        + (2 * d2 + d1) / (d2 * (d1 + d2)) * at(-1)
    )
    return first, last


def _gradient_along(f, spacing, axis: int, edge_order: int):
    n = aval_of(f).shape[axis]
    if n < edge_order + 1:
        raise ValueError(
            f"jnp.gradient: an axis of length {n} is too short for "
            f"edge_order={edge_order} (needs {edge_order + 1} samples)"
        )
    h = _spacing(spacing, n, aval_of(f).dtype)
    first, last = _gradient_edges(f, h, axis, edge_order)
    if n == 2:
        return shaping.concatenate([first, last], axis=axis)
    return shaping.concatenate([first, _gradient_interior(f, h, axis), last], axis=axis)


def gradient(f, *varargs, axis=None, edge_order: int | None = None):
    """The gradient of sampled values: central differences inside, one-sided at the edges.

    The gradient of sampled `f`: central differences inside, one-sided
    differences (of order `edge_order`, 1 or 2) at the ends. `varargs` give one
    spacing for all axes, or one per axis (a step or coordinates).

    Args:
      f: an array of samples.
      *varargs: the spacing: a scalar or coordinates per axis.
      axis: the axis or axes (None: all).
      edge_order: 1 (the only order supported; None means 1).

    Returns:
      An array of f's shape (a list of arrays for several axes).

    Example:
      >>> jnp.gradient(jnp.array([1.0, 4.0, 9.0, 16.0]))
      Array([3., 4., 6., 7.], dtype=float32)
    """
    f = to_operand(f)
    ndim = aval_of(f).ndim
    axes = (
        tuple(range(ndim))
        if axis is None
        else tuple(
            normalize_axis(a, ndim)
            for a in (axis if isinstance(axis, (tuple, list)) else (axis,))
        )
    )
    edge_order = 1 if edge_order is None else int(edge_order)
    if edge_order not in (1, 2):
        raise ValueError(f"jnp.gradient: edge_order={edge_order}; expected 1 or 2")
    if len(varargs) == 0:
        varargs = (1.0,) * len(axes)
    elif len(varargs) == 1:
        varargs = varargs * len(axes)
    elif len(varargs) != len(axes):
        raise TypeError(f"jnp.gradient: {len(varargs)} spacings for {len(axes)} axes")
    outs = compiled(_gradient)(f, varargs, axes=axes, edge_order=edge_order)
    # One axis gives an array, several (or none, for a scalar) a list, as JAX.
    return outs[0] if len(outs) == 1 else list(outs)


def _gradient(f, spacings, *, axes: tuple, edge_order: int):
    (f,) = promote_dtypes_inexact(f)
    return tuple(_gradient_along(f, s, a, edge_order) for s, a in zip(spacings, axes))


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of sampled `y` by the trapezoidal rule.

    Args:
      y: the samples.
      x: the sample points (None: spaced by dx).
      dx: the spacing when x is None.
      axis: the axis to work along; negative counts from the end.

    Returns:
      An array with axis reduced.

    Example:
      >>> jnp.trapezoid(jnp.array([1.0, 2.0, 3.0]))
      Array(4., dtype=float32)
    """
    if x is None:
        (y,) = promote_dtypes_inexact(to_operand(y))
        d = to_operand(dx)
        if aval_of(d).ndim > 0:
            d = shaping.moveaxis(_shaped_as(d, aval_of(y).ndim), axis, -1)
    else:
        y, x = promote_dtypes_inexact(to_operand(y), to_operand(x))
        if aval_of(x).ndim == 1:
            d = diff(x)
        else:
            d = shaping.moveaxis(diff(x, axis=axis), axis, -1)
    y = shaping.moveaxis(y, axis, -1)
    if aval_of(d).ndim == 0 or aval_of(d).shape[-1] == 1:
        # A constant step: dx * (sum - (first + last) / 2), as JAX computes it.
        n = aval_of(y).shape[-1]
        if n == 0:
            raise TrapezoidShapeError(
                f"jnp.trapezoid: y has no samples along axis {axis} (shape "
                f"{aval_of(y).shape}); the integral needs its first and last"
            )
        step = d if aval_of(d).ndim == 0 else slice_along(d, -1, 0, 1)[..., 0]
        ends = slice_along(y, -1, 0, 1)[..., 0] + slice_along(y, -1, n - 1, n)[..., 0]
        return step * (_red.sum(y, axis=-1) - 0.5 * ends)
    pairs = slice_along(y, -1, 1, None) + slice_along(y, -1, None, -1)
    return 0.5 * _red.sum(d * pairs, axis=-1)


class TrapezoidShapeError(IndexError):
    """jnp.trapezoid was given no samples along the axis it integrates."""


def _shaped_as(d, ndim: int):
    """`d` with leading axes of length 1 up to `ndim` axes."""
    return shaping.reshape(d, (1,) * (ndim - aval_of(d).ndim) + aval_of(d).shape)


class UnwrapTypeError(ValueError):
    """jnp.unwrap was given complex values."""


def unwrap(p, discont=None, axis: int = -1, period=2 * np.pi):
    """Phase angles with jumps larger than `discont` undone.

    `p` with jumps between neighbours larger than `discont` (default period/2)
    removed by adding multiples of `period`, as np.unwrap.

    Args:
      p: an array of angles.
      discont: the largest jump left alone (None: period / 2).
      axis: the axis to work along; negative counts from the end.
      period: the period of the values.

    Returns:
      An array of p's shape.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      IndexError: axis is out of range for the array's rank.

    Example:
      >>> jnp.unwrap(jnp.array([0.0, 6.0]))
      Array([ 0.      , -0.283185], dtype=float32)
    """
    promoted, _ = promote_dtypes(to_operand(p), period)
    if dtypes.is_complex(aval_of(promoted).dtype):
        raise UnwrapTypeError(
            f"jnp.unwrap takes real phases, got {aval_of(promoted).str_short()}; "
            "unwrap jnp.angle(p) instead"
        )
    if aval_of(promoted).shape[axis] == 0:
        return promoted  # nothing to unwrap: p in the promoted dtype, as JAX
    (p,) = promote_dtypes_inexact(to_operand(p))
    axis = normalize_axis(axis, aval_of(p).ndim)
    dtype = aval_of(p).dtype
    period = astype(to_operand(period), dtype)
    discont = period / 2 if discont is None else astype(to_operand(discont), dtype)
    half = period / 2
    dd = diff(p, axis=axis)
    # Each step folded into [-period/2, period/2); a step of exactly +period/2
    # stays +period/2 (NumPy resolves that boundary towards the step's sign).
    folded = _uf.remainder(dd + half, period) - half
    folded = _uf.where((folded == -half) & (dd > 0), half, folded)
    correction = _uf.where(_uf.absolute(dd) < discont, 0, folded - dd)
    shifted = slice_along(p, axis, 1, None) + cumsum(correction, axis=axis)
    return shaping.concatenate([slice_along(p, axis, 0, 1), shifted], axis=axis)


# ---- covariance and correlation ----------------------------------------------------
def _observations(m, y, rowvar: bool):
    """Variables as rows of one 2-d inexact array, as np.cov reads them."""
    (m,) = promote_dtypes_inexact(to_operand(m))
    if aval_of(m).ndim > 2:
        raise ValueError(
            f"jnp.cov: m has shape {aval_of(m).shape}; expected 1-d or 2-d"
        )
    x = shaping.atleast_2d(m)
    if not rowvar and aval_of(x).shape[0] != 1:
        x = x.T
    if y is not None:
        y = shaping.atleast_2d(to_operand(y))
        if not rowvar and aval_of(y).shape[0] != 1:
            y = y.T
        x = shaping.concatenate(promote_dtypes_inexact(x, y), axis=0)
    return x


def _weights(fweights, aweights, n: int, dtype):
    w = None
    for given in (fweights, aweights):
        if given is not None:
            given = astype(to_operand(given), dtype)
            if aval_of(given).shape != (n,):
                raise ValueError(
                    f"jnp.cov: weights of shape {aval_of(given).shape} do not "
                    f"match {n} observations"
                )
            w = given if w is None else w * given
    return w


def cov(
    m,
    y=None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights=None,
    aweights=None,
    dtype=None,
):
    """The covariance matrix of the variables in `m` (and `y`).

    The covariance matrix of the variables in `m` (and `y`), with optional
    frequency and reliability weights, normalised as np.cov.

    Args:
      m: a 1-D or 2-D array of observations.
      y: an optional second set of variables.
      rowvar: whether each row is a variable (True) or each column.
      bias: whether to divide by N (True) or N - 1.
      ddof: overrides bias: the divisor is N - ddof.
      fweights: integer frequency weights per observation.
      aweights: observation weights.
      dtype: the dtype to compute and return in (None: the observations'
        inexact dtype).

    Returns:
      A 2-D array (a scalar array for one variable).

    Example:
      >>> jnp.cov(jnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
      Array([[ 1., -1.],
             [-1.,  1.]], dtype=float32)
    """
    x = _observations(m, y, rowvar)
    variables, n = aval_of(x).shape
    if n == 0:  # no observations: NaN, as JAX (np.cov warns and gives NaN too)
        shape = () if variables == 1 else (variables, variables)
        return lax.full(shape, np.nan, aval_of(x).dtype)
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    if dtype is not None:
        x = astype(x, dtype)
    dtype = aval_of(x).dtype
    w = _weights(fweights, aweights, n, dtype)
    if w is None:
        mean = _red.mean(x, axis=1, keepdims=True)
        fact = np.asarray(n - ddof, dtype)[()]
        centred = x - mean
        weighted = centred
    else:
        w_sum = _red.sum(w)
        mean = _red.sum(x * w, axis=1, keepdims=True) / w_sum
        fact = w_sum - ddof * (
            1
            if aweights is None
            else _red.sum(w * to_operand(aweights)) / w_sum  # aweights' dtype, as JAX
        )
        centred = x - mean
        weighted = centred * w
    c = _red.matmul(centred, _uf.conjugate(weighted).T) / fact
    return shaping.squeeze(c)


def corrcoef(x, y=None, rowvar: bool = True, dtype=None):
    """Pearson correlation coefficients of the variables in `x` (and `y`).

    Pearson correlation coefficients (cov normalised by the standard deviations,
    clipped to [-1, 1]).

    Args:
      x: a 1-D or 2-D array of observations.
      y: an optional second set of variables.
      rowvar: whether each row is a variable (True) or each column.
      dtype: a float or complex dtype to compute and return in (None: the
        observations' inexact dtype).

    Returns:
      A 2-D array of coefficients in [-1, 1].

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      ValueError: dtype is not a float or complex dtype.

    Example:
      >>> jnp.corrcoef(jnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
      Array([[ 1., -1.],
             [-1.,  1.]], dtype=float32)
    """
    if dtype is not None and not dtypes.is_inexact(requested_dtype(dtype)):
        raise ValueError(
            f"jnp.corrcoef: dtype must be a float or complex dtype, got {dtype!r}"
        )
    c = cov(x, y, rowvar, dtype=dtype)
    if aval_of(c).ndim == 0:
        return c / c
    std = _uf.sqrt(_uf.real(diagonals.diagonal(c)))
    c = c / std[:, None] / std[None, :]
    if dtypes.is_complex(aval_of(c).dtype):
        return lax.complex(_uf.clip(_uf.real(c), -1, 1), _uf.clip(_uf.imag(c), -1, 1))
    return _uf.clip(c, -1, 1)


# ---- interpolation -----------------------------------------------------------------
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at `x`.

    Piecewise-linear interpolation of points (xp, fp) at `x`; xp increasing.
    Outside [xp[0], xp[-1]] it gives `left`/`right` (default fp[0]/fp[-1]), or
    wraps around with a `period`.

    Args:
      x: the points to evaluate at.
      xp: the sample points, increasing.
      fp: the sample values.
      left: the value below xp[0] (None: fp[0]; 'extrapolate': the first
        segment's line).
      right: the value above xp[-1] (None: fp[-1]; 'extrapolate': the last
        segment's line).
      period: a period for angular x (None: not periodic).

    Returns:
      An array of x's shape.

    Example:
      >>> jnp.interp(jnp.array([0.5, 1.5]), jnp.array([0.0, 1.0, 2.0]), jnp.array([0.0, 10.0, 20.0]))
      Array([ 5., 15.], dtype=float32)
    """
    for name, end in (("left", left), ("right", right)):
        if isinstance(end, str) and end != "extrapolate":
            raise ValueError(
                f"jnp.interp: the only string {name}= takes is 'extrapolate', "
                f"got {end!r}"
            )
    extrapolate = (isinstance(left, str), isinstance(right, str))
    left, right = (None if e else v for e, v in zip(extrapolate, (left, right)))
    return compiled(_interp)(x, xp, fp, left, right, period, extrapolate=extrapolate)


def _interp(x, xp, fp, left, right, period, *, extrapolate):
    x, xp = promote_dtypes_inexact(to_operand(x), to_operand(xp))
    (fp,) = promote_dtypes_inexact(to_operand(fp))
    if aval_of(xp).ndim != 1 or aval_of(fp).shape != aval_of(xp).shape:
        raise ValueError(
            f"jnp.interp: xp {aval_of(xp).shape} and fp {aval_of(fp).shape} "
            "must be 1-d of the same length"
        )
    if dtypes.is_complex(aval_of(x).dtype):
        raise TypeError("jnp.interp: complex x has no order; pass real values")
    if period is not None:
        x, xp, fp = _periodic(x, xp, fp, period)
    return _interpolate(x, xp, fp, left, right, period is None, extrapolate)


def _periodic(x, xp, fp, period):
    """Samples folded into one period and extended by one on each side."""
    period = _uf.absolute(astype(to_operand(period), aval_of(x).dtype))
    x, xp = _uf.remainder(x, period), _uf.remainder(xp, period)
    xp, fp = lax.sort((xp, fp), dimension=0, num_keys=1)
    xp = shaping.concatenate([xp[-1:] - period, xp, xp[:1] + period])
    fp = shaping.concatenate([fp[-1:], fp, fp[:1]])
    return x, xp, fp


def _interpolate(x, xp, fp, left, right, clamp_ends: bool, extrapolate=(False, False)):
    n = aval_of(xp).shape[0]
    if n == 1:
        return broadcast_to(fp[0], aval_of(x).shape) + 0 * x
    i = _uf.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    x0, x1 = take(xp, i - 1, mode="clip"), take(xp, i, mode="clip")
    f0, f1 = take(fp, i - 1, mode="clip"), take(fp, i, mode="clip")
    dx = x1 - x0
    # JAX treats steps up to spacing(eps) as flat (no NaN gradients there).
    flat = _uf.absolute(dx) <= _flat_step(aval_of(xp).dtype)
    safe_dx = _uf.where(flat, creation.ones_like(dx), dx)
    f = _uf.where(flat, f0, f0 + ((x - x0) / safe_dx) * (f1 - f0))
    if clamp_ends and not extrapolate[0]:
        f = _uf.where(x < xp[0], fp[0] if left is None else left, f)
    if clamp_ends and not extrapolate[1]:
        f = _uf.where(x > xp[-1], fp[-1] if right is None else right, f)
    return astype(f, aval_of(fp).dtype)


def _flat_step(dtype):
    """spacing(eps) of `dtype`: the widest step interp treats as flat."""
    info = ml_dtypes.finfo(dtype) if dtype == ml_dtypes.bfloat16 else np.finfo(dtype)
    return np.spacing(info.eps)


# ---- counting ----------------------------------------------------------------------
def _static_length(value, name: str, hint: str) -> int:
    if isinstance(value, Tracer):
        raise StaticLengthError(
            f"jnp.{name}: the length of the result depends on the values of a traced "
            f"array; under jit/vmap/grad pass a static {hint}"
        )
    return int(np.asarray(value))


def _counts_into(index, weights, length: int, dtype):
    """Sums of `weights` (or 1s) at each index in [0, length); others dropped."""
    index = lax.convert_element_type(index, dtypes.int32)
    index = _uf.where((index < 0) | (index >= length), length, index)
    ones = lax.full(aval_of(index).shape, np.ones((), dtype)[()])
    updates = ones if weights is None else astype(weights, dtype)
    return lax.full((length,), np.zeros((), dtype)[()]).at[index].add(updates)


@accepts_unsplit_out_sharding
def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None):
    """How often each value 0, 1, ... occurs in a non-negative int array.

    How often each value 0, 1, ... occurs in the 1-d non-negative integer array
    `x` (summing `weights` instead of 1s). Under a trace the result length must
    be static (`length=`); negative values count as 0 and values past `length`
    are dropped, as in JAX.

    Args:
      x: a 1-D array of non-negative integers.
      weights: a weight per entry of x (None: count 1 each).
      minlength: the least length of the result.
      length: the static length of the result (needed under jit).

    Returns:
      A 1-D array of counts (or summed weights), of length max(x) + 1, minlength
      or length.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).

    Example:
      >>> jnp.bincount(jnp.array([0, 1, 1, 3]))
      Array([1, 2, 0, 1], dtype=int32)
    """
    x = to_operand(x)
    if aval_of(x).dtype == np.bool_:  # False/True count as 0/1, as JAX
        x = lax.convert_element_type(x, dtypes.int32)
    if not dtypes.is_integer(aval_of(x).dtype):
        raise TypeError(
            f"jnp.bincount: x must have an integer type, got "
            f"{aval_of(x).str_short()}; round it first (x.astype(int))"
        )
    if aval_of(x).ndim != 1:
        raise HistogramShapeError(
            f"jnp.bincount takes 1-d input, got {aval_of(x).str_short()}; "
            "flatten it first (x.ravel())"
        )
    if length is None:
        top = _red.max(x) + 1 if aval_of(x).size else 0
        length = builtins.max(
            _static_length(top, "bincount", "length="), int(minlength)
        )
    return compiled(_bincount)(x, weights, length=int(length))


def _bincount(x, weights, *, length: int):
    dtype = (
        dtypes.default_int_dtype()
        if weights is None
        else aval_of(to_operand(weights)).dtype
    )
    if weights is not None:
        weights = broadcast_to(to_operand(weights), aval_of(x).shape)
    return _counts_into(_uf.clip(x, 0, None), weights, length, dtype)


def digitize(x, bins, right: bool = False, *, method: str | None = None):
    """The index of the bin of each entry of `x`.

    Index of the bin of each entry of `x`; `bins` increasing or decreasing.

    Args:
      x: an array.
      bins: a 1-D monotonic array of bin edges.
      right: whether bins include their right edge.
      method: searchsorted's algorithm (None: its default); it changes the
        speed, not the result.

    Returns:
      An int array of x's shape.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      SearchSortedMethodError: method is not one of searchsorted's.

    Example:
      >>> jnp.digitize(jnp.array([0.5, 1.5, 3.0]), jnp.array([1.0, 2.0]))
      Array([0, 1, 2], dtype=int32)
    """
    x, bins = promote_dtypes(to_operand(x), to_operand(bins))
    if aval_of(bins).ndim != 1:
        raise ValueError(
            f"jnp.digitize: bins must be 1-d, got shape {aval_of(bins).shape}"
        )
    n = aval_of(bins).shape[0]
    side = "left" if right else "right"
    # int32 even with x64 on, as JAX's searchsorted gives.
    if n == 0:
        return lax.full(aval_of(x).shape, np.int32(0))
    kwargs = {} if method is None else {"method": method}
    rising = searchsorted(bins, x, side=side, **kwargs)
    falling = n - searchsorted(rearranging.flip(bins), x, side=side, **kwargs)
    out = _uf.where(bins[-1] >= bins[0], rising, falling)
    return astype(out, dtypes.int32)


class HistogramRangeError(ValueError):
    """A histogram was given no range and no samples to take one from."""


class HistogramShapeError(ValueError):
    """A histogram's samples, weights, bins or ranges do not fit together."""


def _inexact_dtype(dtype) -> np.dtype:
    return dtype if dtypes.is_inexact(dtype) else dtypes.default_float_dtype()


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges histogram would use.

    The edges np.histogram would use for `bins` (a count or edges): `bins` equal
    bins from a's min to max (or over `range`), widened by 0.5 on each side when
    the two are equal, as JAX.

    Args:
      a: an array (flattened).
      bins: the number of bins, or the bin edges.
      range: the (lower, upper) range of the bins (None: the data's).
      weights: ignored, as NumPy's.

    Returns:
      A 1-D array of edges.

    Example:
      >>> jnp.histogram_bin_edges(jnp.array([0.0, 1.0]), bins=4)
      Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    del weights  # string bin rules (which would use them) are not taken
    a = to_operand(a)
    dtype = _inexact_dtype(aval_of(a).dtype)
    if _is_edges(bins):
        return astype(to_operand(bins), dtype)
    count = operator.index(bins)
    if range is None:
        if aval_of(a).size == 0:
            raise HistogramRangeError(
                "jnp.histogram_bin_edges: the samples are empty, so they have no "
                "min and max to span; pass range=(low, high)"
            )
        lo, hi = _red.min(a), _red.max(a)
    else:
        given = astype(to_operand(np.asarray(range)), dtype)
        if aval_of(given).shape != (2,):
            raise HistogramShapeError(
                f"jnp.histogram_bin_edges: range must be None or (low, high); got "
                f"{range!r}"
            )
        lo, hi = given[0], given[1]
    lo, hi = astype(lo, dtype), astype(hi, dtype)
    same = (_uf.maximum(lo, hi) - _uf.minimum(lo, hi)) == 0
    lo, hi = _uf.where(same, lo - 0.5, lo), _uf.where(same, hi + 0.5, hi)
    return creation.linspace(lo, hi, count + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """The counts of `a` in bins, and the bin edges.

    Counts (summed weights, or a density) of `a` in each bin, and the edges.
    `bins` is a static count or an array of edges; the counts have a's inexact
    dtype, as JAX's.

    Args:
      a: an array (flattened).
      bins: the number of bins, or the bin edges.
      range: the (lower, upper) range of the bins (None: the data's).
      weights: optional weights, broadcasting against the data (None: all 1).
      density: whether to normalise the counts to a probability density.

    Returns:
      (counts, edges).

    Example:
      >>> jnp.histogram(jnp.array([1.0, 2.0, 2.0, 3.0]), bins=2)
      (Array([1., 3.], dtype=float32), Array([1., 2., 3.], dtype=float32))
    """
    a = to_operand(a)
    if weights is None:
        (a,) = promote_dtypes_inexact(a)
        weights = creation.ones_like(a)
    else:
        weights = to_operand(weights)
        if aval_of(weights).shape != aval_of(a).shape:
            raise HistogramShapeError(
                f"jnp.histogram: weights of shape {aval_of(weights).shape} for "
                f"samples of shape {aval_of(a).shape}; give one weight per sample"
            )
        a, weights = promote_dtypes_inexact(a, weights)
    edges = histogram_bin_edges(a, bins, range)
    n = aval_of(edges).shape[0]
    index = searchsorted(edges, a, side="right")
    index = _uf.where(a == edges[-1], n - 1, index)
    zero = np.zeros((), aval_of(weights).dtype)[()]
    counts = lax.full((n,), zero).at[index].add(weights, mode="drop")[1:]
    if density:
        counts = counts / diff(edges) / _red.sum(counts)
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """The 2-d histogram of points (x, y), and the edges along x and y.

    Args:
      x: the points' x coordinates.
      y: the points' y coordinates.
      bins: the number of bins, or the bin edges.
      range: the (lower, upper) range of the bins (None: the data's).
      weights: optional weights, broadcasting against the data (None: all 1).
      density: whether to normalise the counts to a probability density.

    Returns:
      (counts, x edges, y edges).

    Raises:
      HistogramShapeError: x and y differ in shape (a ValueError).

    Example:
      >>> h, ex, ey = jnp.histogram2d(jnp.array([0.0, 1.0]), jnp.array([0.0, 1.0]), bins=2)
      >>> h
      Array([[1, 0],
             [0, 1]], dtype=int32)
    """
    x, y = to_operand(x), to_operand(y)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):  # one array of edges for both axes
        bins = [to_operand(bins)] * 2
    if aval_of(x).shape != aval_of(y).shape:
        raise HistogramShapeError(
            f"jnp.histogram2d: x {aval_of(x).shape} and y {aval_of(y).shape} "
            "must have one shape"
        )
    sample = shaping.transpose(stack(promote_dtypes(x, y)))
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """The D-dimensional histogram of N points, and the edges per dimension.

    The D-dimensional histogram of N points, given as an (N, D) array: counts
    (default int; summed weights with weights) and the edges.

    Args:
      sample: an (N, D) array of points.
      bins: the number of bins, or the bin edges.
      range: the (lower, upper) range of the bins (None: the data's).
      weights: optional weights, broadcasting against the data (None: all 1).
      density: whether to normalise the counts to a probability density.

    Returns:
      (counts, list of edge arrays).

    Raises:
      HistogramShapeError: sample is not (N, D), or weights, bins or range do
        not fit it (a ValueError).

    Example:
      >>> h, edges = jnp.histogramdd(jnp.array([[0.0, 0.0], [1.0, 1.0]]), bins=2)
      >>> h
      Array([[1, 0],
             [0, 1]], dtype=int32)
    """
    sample = to_operand(sample)
    if weights is None:
        (sample,) = promote_dtypes_inexact(sample)
    else:
        weights = to_operand(weights)
        if aval_of(weights).shape != aval_of(sample).shape[:1]:
            raise HistogramShapeError(
                f"jnp.histogramdd: weights of shape {aval_of(weights).shape} for "
                f"samples of shape {aval_of(sample).shape}; give one per sample"
            )
        sample, weights = promote_dtypes_inexact(sample, weights)
    if aval_of(sample).ndim != 2:
        raise HistogramShapeError(
            f"jnp.histogramdd: sample has shape {aval_of(sample).shape}; expected "
            "(N, D), N points of D coordinates (reshape 1-d data to (-1, 1))"
        )
    d = aval_of(sample).shape[1]
    if range is not None and (
        len(range) != d
        or builtins.any(r is not None and np.shape(r)[0] != 2 for r in range)
    ):
        raise HistogramShapeError(
            f"jnp.histogramdd: for samples of shape {aval_of(sample).shape}, range "
            f"must be {d} pairs or Nones; got {range!r}"
        )
    try:
        per_dimension = list(bins)
    except TypeError:
        per_dimension = [bins] * d
    if len(per_dimension) != d:
        raise HistogramShapeError(
            f"jnp.histogramdd: {len(per_dimension)} bins for {d} dimensions"
        )
    indices, edges = [], []
    for i in builtins.range(d):
        column = sample[:, i]
        e = histogram_bin_edges(
            column, per_dimension[i], None if range is None else range[i]
        )
        index = searchsorted(e, column, side="right")
        indices.append(_uf.where(column == e[-1], index - 1, index))
        edges.append(e)
    nbins = tuple(aval_of(e).shape[0] + 1 for e in edges)
    flat = ravel_multi_index(tuple(indices), nbins, mode="clip")
    hist = bincount(flat, weights, length=int(np.prod(nbins)))
    hist = shaping.reshape(hist, nbins)[(slice(1, -1),) * d]
    if density:
        hist = astype(hist, aval_of(sample).dtype)
        hist = hist / _red.sum(hist)
        for norm in ix_(*(diff(e) for e in edges)):
            hist = hist / norm
    return hist, edges


def _is_edges(bins) -> bool:
    if isinstance(bins, str):
        raise TypeError(
            f"jnp.histogram: bins={bins!r}; olympus takes a bin count or edges, "
            "not NumPy's estimator names"
        )
    return np.ndim(bins) == 1 if not hasattr(bins, "ndim") else bins.ndim == 1


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections((ediff1d, cov, interp, histogram_bin_edges, histogram), RAISES_X)
add_sections((gradient, trapezoid), RAISES_AXIS)


# ---- one compiled program per call ----------------------------------------------------
# Public functions whose every call is one compiled program; their options static.
_STATIC_OPTIONS = {
    "diff": ("n", "axis"),
    "ediff1d": (),
    "trapezoid": ("axis",),
    "cov": ("rowvar", "bias", "ddof", "dtype"),
    "corrcoef": ("rowvar", "dtype"),
    "digitize": ("right", "method"),
    "unwrap": ("axis",),
}


jit_entry_points(globals(), _STATIC_OPTIONS)
