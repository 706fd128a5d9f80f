"""Running reductions along one axis (cumsum, cumprod, cummax, cummin,
cumlogsumexp) and `associative_scan`, the parallel prefix scan of any
associative function over a pytree of arrays.

Neither is a primitive: both are small programs of slices, pads and
concatenations with the combining function's own primitives, so they run
under jit, grad and vmap as those do. The cumulative reductions use
log2(n) doubling rounds (Hillis-Steele): round k combines each element with
the one 2**k before it, padding with the reduction's identity, which keeps
the program to a few equations per round. cumsum is JAX's one
reduce_window over the axis instead, whose XLA rewrite fixes the order of
its additions (float16 sums round as JAX's). `associative_scan` pairs
neighbours and recurses on the half-length sequence of pair results
(odd positions), then fills in the even positions with one more combine,
so it calls `fn` about 2 log2(n) times on ever shorter slices.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from olympus.ir import dtypes
from olympus.lax import ops
from olympus.lax.sharding import refuse_split_axis
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.lax.op_docs import RETURNS_LIKE_OPERAND, with_sections


class ScanShapeError(ValueError):
    """A running reduction or associative_scan got an axis outside the
    operand's rank, or elements whose lengths along the axis differ."""


# The sections cumsum, cumprod, cummax and cummin share (see op_docs.with_sections).
_ARGS = """Args:
  operand: an array.
  axis: the axis to run along.
  reverse: whether to run from the end."""
_RAISES = "Raises:\n  ScanShapeError: axis is out of range (a ValueError)."


def _normalized_axis(name: str, axis: int, shape: tuple) -> int:
    axis = int(axis)
    if not -len(shape) <= axis < len(shape):
        raise ScanShapeError(
            f"{name}: axis {axis} is out of range for an operand of shape {shape}"
        )
    return axis % len(shape)


# ---- running reductions ------------------------------------------------------
def _shifted(x, identity, axis: int, shift: int, reverse: bool):
    """x moved `shift` places along `axis` (towards the end, or the start if
    `reverse`), the vacated places filled with `identity`."""
    shape = aval_of(x).shape
    n = shape[axis]
    starts, limits = [0] * len(shape), list(shape)
    if reverse:
        starts[axis] = shift
    else:
        limits[axis] = n - shift
    kept = ops.slice(x, starts, limits)
    fill = (0, shift) if reverse else (shift, 0)
    config = [(*fill, 0) if d == axis else (0, 0, 0) for d in range(len(shape))]
    return ops.pad(kept, identity, config)


def _running(name: str, combine: Callable, operand, axis, reverse, identity):
    aval = aval_of(operand)
    axis = _normalized_axis(name, axis, aval.shape)
    refuse_split_axis(f"lax.{name}", operand, axis)  # as JAX, on Explicit axes
    n, shift = aval.shape[axis], 1
    while shift < n:
        operand = combine(
            operand, _shifted(operand, identity, axis, shift, bool(reverse))
        )
        shift *= 2
    return operand


def _check_number(name: str, operand, floats_only: bool = False) -> None:
    dtype = aval_of(operand).dtype
    accepted = dtypes.is_float(dtype) if floats_only else dtype != dtypes.bool_
    if not accepted:
        kinds = "real floating-point" if floats_only else "numeric (not bool)"
        raise OlympusTypeError(
            f"{name} requires a {kinds} operand, got {aval_of(operand).str_short()}"
        )


def _scalar(value, dtype):
    return np.asarray(value, dtype)[()]


@with_sections(_ARGS, RETURNS_LIKE_OPERAND, _RAISES)
def cumsum(operand, axis: int = 0, reverse: bool = False):
    """The running sum along `axis`.

    Keeps the dtype (no integer promotion, unlike jnp.cumsum); reverse
    sums from the end.

    Example:
      >>> lax.cumsum(np.float32([1, 2, 3]))
      Array([1., 3., 6.], dtype=float32)
      >>> lax.cumsum(np.int32([1, 2, 3]), reverse=True)
      Array([6, 5, 3], dtype=int32)
    """
    _check_number("cumsum", operand)
    shape = aval_of(operand).shape
    axis = _normalized_axis("cumsum", axis, shape)
    refuse_split_axis("lax.cumsum", operand, axis)  # as JAX, on Explicit axes
    n = shape[axis]
    if n == 0:
        return ops.convert_element_type(operand, aval_of(operand).dtype)
    # JAX's form: one reduce_window over the whole axis, which XLA rewrites into
    # a tree of blocks (of 16 on CPU); the same program rounds float16 sums as
    # JAX's does (the reference rule follows that rewrite).
    from olympus.lax.windowed import reduce_window_sum_p

    window = tuple(n if d == axis else 1 for d in range(len(shape)))
    padding = tuple(
        ((0, n - 1) if reverse else (n - 1, 0)) if d == axis else (0, 0)
        for d in range(len(shape))
    )
    return reduce_window_sum_p.bind(
        operand, window_dimensions=window, window_strides=(1,) * len(shape),
        padding=padding,
    )  # fmt: skip


@with_sections(_ARGS, RETURNS_LIKE_OPERAND, _RAISES)
def cumprod(operand, axis: int = 0, reverse: bool = False):
    """Running product along `axis`, from the end if `reverse`.

    Example:
      >>> lax.cumprod(np.float32([1, 2, 3]))
      Array([1., 2., 6.], dtype=float32)
    """
    _check_number("cumprod", operand)
    one = _scalar(1, aval_of(operand).dtype)
    return _running("cumprod", ops.mul, operand, axis, reverse, one)


def _running_extreme(name: str, operand, axis, reverse, highest: bool):
    """cummax (highest=False) or cummin: the identity is the dtype's lowest or
    highest value (infinities for floats and complex numbers)."""
    _check_number(name, operand)
    dtype = aval_of(operand).dtype
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        identity = _scalar(info.max if highest else info.min, dtype)
    elif dtypes.is_complex(dtype):
        identity = _scalar(np.inf if highest else -np.inf, dtype)
    else:
        identity = (dtypes.float_highest if highest else dtypes.float_lowest)(dtype)
    combine = ops.min if highest else ops.max
    return _running(name, combine, operand, axis, reverse, identity)


@with_sections(_ARGS, RETURNS_LIKE_OPERAND, _RAISES)
def cummax(operand, axis: int = 0, reverse: bool = False):
    """Running maximum along `axis`, from the end if `reverse`.

    A NaN carries on to every later element, as lax.max propagates it.

    Example:
      >>> lax.cummax(np.float32([1, 3, 2]))
      Array([1., 3., 3.], dtype=float32)
      >>> lax.cummax(np.float32([1, np.nan, 2]))
      Array([ 1., nan, nan], dtype=float32)
    """
    return _running_extreme("cummax", operand, axis, reverse, highest=False)


@with_sections(_ARGS, RETURNS_LIKE_OPERAND, _RAISES)
def cummin(operand, axis: int = 0, reverse: bool = False):
    """Running minimum along `axis`, from the end if `reverse`.

    Example:
      >>> lax.cummin(np.float32([2, 3, 1]))
      Array([2., 2., 1.], dtype=float32)
      >>> lax.cummin(np.uint8([3, 1, 2]), reverse=True)  # from the end
      Array([1, 1, 2], dtype=uint8)
    """
    return _running_extreme("cummin", operand, axis, reverse, highest=True)


def logaddexp(x, y):
    """log(exp(x) + exp(y)) without overflow; -inf where both are -inf.

    Where x == y (both infinite included) the difference is taken as 0, so
    neither its value nor its derivative is NaN there.
    """
    larger = ops.max(x, y)
    zero = ops.full(aval_of(x).shape, 0, aval_of(x).dtype)
    gap = ops.select(ops.eq(x, y), zero, ops.sub(x, y))
    return ops.add(larger, ops.log1p(ops.exp(ops.neg(ops.abs(gap)))))


@with_sections(RETURNS_LIKE_OPERAND)
def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """The running log(sum(exp(x))) along `axis`.

    Running log(sum(exp(x))) along `axis`, from the end if `reverse`; stable for
    large inputs (floating-point operands only).

    Args:
      operand: an array of a real floating dtype.
      axis: the axis to run along.
      reverse: whether to run from the end.

    Raises:
      OlympusTypeError: an operand is not of a real floating dtype (cast
        integers with lax.convert_element_type); as JAX, an integer operand
        with an empty `axis` comes back unchanged.
      ScanShapeError: axis is out of range (a ValueError).

    Example:
      >>> lax.cumlogsumexp(jnp.array([0.0, 0.0, 0.0]))
      Array([0.       , 0.6931472, 1.0986123], dtype=float32)
    """
    shape, dtype = aval_of(operand).shape, aval_of(operand).dtype
    if (
        dtypes.is_integer(dtype)
        and -len(shape) <= axis < len(shape)
        and not shape[axis]
    ):
        # Nothing to run along: JAX returns an empty integer operand as it is.
        return ops.convert_element_type(operand, dtype)
    _check_number("cumlogsumexp", operand, floats_only=True)
    lowest = dtypes.float_lowest(dtype)
    return _running("cumlogsumexp", logaddexp, operand, axis, reverse, lowest)


# ---- associative_scan ----------------------------------------------------------
def _take(x, axis: int, start: int, stop: int, step: int = 1):
    shape = aval_of(x).shape
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return ops.slice(x, starts, limits, strides)


def _interleave(evens, odds, axis: int):
    """[e0, o0, e1, o1, ...] along `axis`; evens has as many elements as odds
    or one more (which then comes last)."""
    n_odd = aval_of(odds).shape[axis]
    paired = _take(evens, axis, 0, n_odd)
    stacked = ops.concatenate(
        [ops.expand_dims(paired, (axis + 1,)), ops.expand_dims(odds, (axis + 1,))],
        axis + 1,
    )
    shape = list(aval_of(odds).shape)
    shape[axis] *= 2
    merged = ops.reshape(stacked, shape)
    if aval_of(evens).shape[axis] == n_odd:
        return merged
    extra = _take(evens, axis, n_odd, n_odd + 1)
    return ops.concatenate([merged, extra], axis)


def _prefix(combine: Callable, elems: list, axis: int) -> list:
    """Inclusive prefix combination of the leaves in `elems` along `axis`."""
    n = aval_of(elems[0]).shape[axis]
    if n < 2:
        return elems
    pairs = combine(
        [_take(e, axis, 0, n - 1, 2) for e in elems],
        [_take(e, axis, 1, n, 2) for e in elems],
    )
    odds = _prefix(combine, pairs, axis)  # results at positions 1, 3, 5, ...
    n_rest = (n - 1) // 2  # even positions after the first
    rest = combine(
        [_take(o, axis, 0, n_rest) for o in odds],
        [_take(e, axis, 2, n, 2) for e in elems],
    )
    evens = [
        ops.concatenate([_take(e, axis, 0, 1), r], axis) for e, r in zip(elems, rest)
    ]
    return [_interleave(e, o, axis) for e, o in zip(evens, odds)]


def _leaf_combiner(fn: Callable, treedef, avals: list) -> Callable:
    """fn on flat lists of leaves, checking it returns leaves like its inputs."""

    def combine(a_leaves: list, b_leaves: list) -> list:
        out = fn(tree_unflatten(treedef, a_leaves), tree_unflatten(treedef, b_leaves))
        out_leaves, out_def = tree_flatten(out)
        if out_def != treedef:
            raise ScanShapeError(
                f"associative_scan: fn returned a {out_def}, its inputs are {treedef}"
            )
        for a, o, aval in zip(a_leaves, out_leaves, avals):
            if aval_of(o).shape != aval_of(a).shape:
                raise ScanShapeError(
                    f"associative_scan: fn turned operands of shape "
                    f"{aval_of(a).shape} into {aval_of(o).shape}; it must "
                    f"combine elementwise along the scan axis"
                )
        return out_leaves

    return combine


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0):
    """All prefix combinations `fn(...fn(fn(x0, x1), x2)..., xi)` along `axis`.

    A parallel scan: O(log n) depth instead of a sequential loop, for any
    associative `fn` (sums, products, linear recurrences). `fn` gets two
    pytrees shaped like `elems` (shortened along `axis`) and combines them
    elementwise; it need not be commutative: the earlier element is always
    the left argument. With `reverse`, the result equals reversing `elems`,
    scanning, and reversing back.

    Args:
      fn: an associative function of two pytrees.
      elems: a pytree of arrays sharing one length along `axis`.
      reverse: if True, scan from the end.
      axis: the axis to scan along.

    Returns:
      A pytree like elems.

    Raises:
      ScanShapeError: the leaves disagree on the length along axis.

    Example:
      >>> lax.associative_scan(lax.add, np.float32([1, 2, 3, 4]))
      Array([ 1.,  3.,  6., 10.], dtype=float32)
    """
    leaves, treedef = tree_flatten(elems)
    if not leaves:
        return elems
    shapes = [aval_of(x).shape for x in leaves]
    axis = _normalized_axis("associative_scan", axis, shapes[0])
    if any(len(s) <= axis or s[axis] != shapes[0][axis] for s in shapes):
        raise ScanShapeError(
            f"associative_scan: every leaf of elems needs one length along axis "
            f"{axis}, got shapes {shapes}"
        )
    if reverse:
        leaves = [ops.rev(x, (axis,)) for x in leaves]
    combine = _leaf_combiner(fn, treedef, [aval_of(x) for x in leaves])
    out = _prefix(combine, leaves, axis)
    if reverse:
        out = [ops.rev(x, (axis,)) for x in out]
    return tree_unflatten(treedef, out)
