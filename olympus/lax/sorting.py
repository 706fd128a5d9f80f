"""The sort primitive (several operands ordered by their first `num_keys`,
lexicographically, along one dimension; stable), top_k (lowered to
`chlo.top_k`) and approx_top_k (the program XLA's CPU runs for JAX's
approximate top-k).

Floating-point keys compare in IEEE total order after -0.0 becomes 0.0 and
every NaN becomes +NaN (JAX's canonical keys): zeros of either sign tie, so a
stable sort keeps their order, and all NaNs sort last, as in NumPy. The derivative moves each tangent with its value: the jvp sorts an
iota beside the keys and gathers the tangents at that permutation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from olympus.lax.op_docs import with_sections
from olympus.ir import dtypes
from olympus.backends.xla.lowering import compare, i64_array
from olympus.ir.core import ShapedArray
from olympus.lax.base import define_primitive
from olympus.lax.ops import checked_axis
from olympus.lax.shapes import concatenate_p, iota_p, reshape_p
from olympus.lax.slicing import GatherDimensionNumbers, gather_p
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import batch_rules, batch_to_front, broadcast_batch
from olympus.transforms.ad_util import Zero, is_zero
from olympus.transforms.jvp import jvp_rules


def _sort_abstract_eval(*operands: ShapedArray, dimension, is_stable, num_keys):
    if not operands or any(o.shape != operands[0].shape for o in operands):
        raise OlympusTypeError(
            f"sort: operands must share one shape, got {[o.str_short() for o in operands]}"
        )
    if not 0 <= dimension < max(operands[0].ndim, 1) or operands[0].ndim == 0:
        raise OlympusTypeError(
            f"sort: dimension {dimension} is out of range for {operands[0].str_short()}"
        )
    if not 1 <= num_keys <= len(operands):
        raise OlympusTypeError(
            f"sort: num_keys {num_keys} must be in [1, {len(operands)}]"
        )
    if any(dtypes.is_complex(o.dtype) for o in operands[:num_keys]):
        raise OlympusTypeError("sort: complex keys are not ordered")
    return list(operands)


def _comparator(key_dtypes: Sequence, n_operands: int):
    """`lhs < rhs` on the keys, lexicographically (later keys break ties)."""
    boolean = ShapedArray((), dtypes.bool_)

    def build(em, *args):
        lhs, rhs = args[0::2], args[1::2]
        less = None
        for k in reversed(range(len(key_dtypes))):
            x, y = (_canonical_key(em, v, key_dtypes[k]) for v in (lhs[k], rhs[k]))
            lt = compare(em, x, y, "LT", key_dtypes[k], total_order=True)
            if less is not None:
                eq = compare(em, x, y, "EQ", key_dtypes[k], total_order=True)
                tie = em.op("stablehlo.and", [eq, less], [boolean])[0]
                lt = em.op("stablehlo.or", [lt, tie], [boolean])[0]
            less = lt
        return [less]

    return build


def _canonical_key(em, x: str, dtype) -> str:
    """A float key with -0.0 as 0.0 and any NaN as +NaN: `select(x == 0, 0, x)`
    then `select(x != x, nan, x)`, so total order ties zeros and puts NaNs last."""
    if not dtypes.is_inexact(dtype):
        return x
    scalar = ShapedArray((), dtype)
    zero, nan = em.constant(0.0, scalar), em.constant(float("nan"), scalar)
    is_zero = compare(em, x, zero, "EQ", dtype)
    (x_or_zero,) = em.op("stablehlo.select", [is_zero, zero, x], [scalar])
    is_nan = compare(em, x, x, "NE", dtype)
    return em.op("stablehlo.select", [is_nan, nan, x_or_zero], [scalar])[0]


def _sort_lower(ctx, *operands, dimension, is_stable, num_keys):
    scalars = [ShapedArray((), a.dtype) for a in ctx.avals_in for _ in (0, 1)]
    keys = [a.dtype for a in ctx.avals_in[:num_keys]]
    region = ctx.emitter.region(scalars, _comparator(keys, len(operands)))
    attrs = (
        f"dimension = {dimension} : i64, is_stable = {'true' if is_stable else 'false'}"
    )
    return ctx.emitter.op(
        "stablehlo.sort", list(operands), ctx.avals_out, attrs, [region]
    )


sort_p = define_primitive(
    "sort", _sort_abstract_eval, _sort_lower, multiple_results=True
)


def _sort_batch_rule(axis_size, vals, dims, *, dimension, is_stable, num_keys):
    operands = [
        batch_to_front(v, axis_size, d)
        if d is not None
        else broadcast_batch(v, axis_size, 0)
        for v, d in zip(vals, dims)
    ]
    outs = sort_p.bind(
        *operands, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys
    )
    return outs, [0] * len(outs)


batch_rules[sort_p] = _sort_batch_rule


def _take_along(x, positions, dimension: int):
    """x's entries at `positions` along `dimension` (positions has x's shape,
    or a shorter `dimension`): one gather."""
    shape = aval_of(positions).shape
    columns = []
    for d in range(len(shape)):
        column = (
            positions
            if d == dimension
            else iota_p.bind(dtype=aval_of(positions).dtype, shape=shape, dimension=d)
        )
        columns.append(reshape_p.bind(column, new_sizes=(*shape, 1), dimensions=None))
    indices = concatenate_p.bind(*columns, dimension=len(shape))
    everything = tuple(range(len(shape)))
    dn = GatherDimensionNumbers((), everything, everything)
    return gather_p.bind(
        x, indices, dimension_numbers=dn, slice_sizes=(1,) * len(shape)
    )


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    shape = aval_of(primals[0]).shape
    order = iota_p.bind(dtype=dtypes.int32, shape=shape, dimension=dimension)
    *outs, perm = sort_p.bind(
        *primals, order, dimension=dimension, is_stable=is_stable, num_keys=num_keys
    )
    t_outs = [
        Zero(aval_of(o)) if is_zero(t) else _take_along(t, perm, dimension)
        for o, t in zip(outs, tangents)
    ]
    return outs, t_outs


jvp_rules[sort_p] = _sort_jvp


# ---- public functions ------------------------------------------------------------
def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sorts `operand` along `dimension`.

    A sequence of arrays is sorted together, ordered by its first
    `num_keys` arrays (lexicographically), with the rest carried along.
    NaNs sort to the end.

    Args:
      operand: an array, or a sequence of arrays of one shape.
      dimension: the dimension to sort along.
      is_stable: if True, equal keys keep their order.
      num_keys: how many leading arrays are keys.

    Returns:
      The sorted array, or a tuple of sorted arrays.

    Raises:
      OlympusTypeError: the arrays' shapes differ or dimension is out of range.

    Example:
      >>> lax.sort(np.float32([3, 1, 2]))
      Array([1., 2., 3.], dtype=float32)
      >>> keys, values = lax.sort((np.int32([2, 1]), np.float32([5, 6])))
      >>> keys, values
      (Array([1, 2], dtype=int32), Array([6., 5.], dtype=float32))
    """
    single = not isinstance(operand, (tuple, list))
    operands = [operand] if single else list(operand)
    ndim = aval_of(operands[0]).ndim
    outs = sort_p.bind(
        *operands,
        dimension=checked_axis("lax.sort", dimension, ndim) if ndim else 0,
        is_stable=bool(is_stable),
        num_keys=int(num_keys),
    )
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """Sorts `keys` along `dimension` and moves `values` with them.

    A two-operand sort with one key: the values are permuted as the keys.

    Args:
      keys: an array.
      values: an array of keys' shape.
      dimension: the dimension to sort along.
      is_stable: if True, equal keys keep their order.

    Returns:
      `(sorted_keys, permuted_values)`.

    Raises:
      OlympusTypeError: the shapes differ.

    Example:
      >>> lax.sort_key_val(np.float32([3, 1, 2]), np.int32([0, 1, 2]))
      (Array([1., 2., 3.], dtype=float32), Array([1, 2, 0], dtype=int32))
    """
    if aval_of(keys).shape != aval_of(values).shape:
        raise OlympusTypeError(
            f"sort_key_val: keys {aval_of(keys).str_short()} and values "
            f"{aval_of(values).str_short()} must have one shape"
        )
    return sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)


def top_k(operand, k: int, *, axis: int = -1):
    """The `k` largest entries along `axis` and their indices, largest first.

    Ties keep the lower index first; floats rank by IEEE total order (+NaN
    first, -NaN last, 0.0 before -0.0). Lowered to `chlo.top_k`, as JAX does,
    which XLA runs without sorting the whole axis.

    Args:
      operand: the array.
      k: how many entries (a static int, at most the axis' size).
      axis: the axis to search (the last by default).

    Returns:
      `[values, indices]`, each with `axis` cut to k; indices are int32.

    Raises:
      ValueError: k is negative or larger than the axis.

    Example:
      >>> values, indices = lax.top_k(np.float32([1, 5, 3]), 2)
      >>> values, indices
      (Array([5., 3.], dtype=float32), Array([1, 2], dtype=int32))
    """
    shape = aval_of(operand).shape
    if not -len(shape) <= axis < max(len(shape), 1):
        raise ValueError(
            f"top_k: axis {axis} is out of range for an operand of rank {len(shape)}"
        )
    dim = axis % len(shape)
    k = int(k)
    if not 0 <= k <= shape[dim]:
        raise ValueError(
            f"top_k: k={k} is out of range for axis {axis} of size {shape[dim]}"
        )
    return list(top_k_p.bind(operand, k=k, axis=dim))  # a list, as JAX's


def _top_k_abstract_eval(operand: ShapedArray, *, k, axis):
    if dtypes.is_complex(operand.dtype) or operand.ndim == 0:
        raise OlympusTypeError(
            f"top_k: the operand must be a real array of rank >= 1, got "
            f"{operand.str_short()}"
        )
    if not 0 <= axis < operand.ndim or not 0 <= k <= operand.shape[axis]:
        raise OlympusTypeError(
            f"top_k: k={k}, axis={axis} are out of range for {operand.str_short()}"
        )
    shape = tuple(k if d == axis else n for d, n in enumerate(operand.shape))
    return [ShapedArray(shape, operand.dtype), ShapedArray(shape, dtypes.int32)]


def _top_k_lower(ctx, operand, *, k, axis):
    """`chlo.top_k` works on the last axis: another axis is swapped with it
    before and after (JAX's lowering)."""
    em, (aval,) = ctx.emitter, ctx.avals_in
    last = aval.ndim - 1
    perm = list(range(aval.ndim))
    perm[axis], perm[last] = last, axis

    def swapped(a: ShapedArray) -> ShapedArray:
        return ShapedArray(tuple(a.shape[p] for p in perm), a.dtype)

    attr = f"permutation = array<i64: {', '.join(map(str, perm))}>"
    if axis != last:
        (operand,) = em.op("stablehlo.transpose", [operand], [swapped(aval)], attr)
    outs = em.op(
        "chlo.top_k", [operand], [swapped(a) for a in ctx.avals_out], f"k = {k} : i64"
    )
    if axis == last:
        return outs
    return [
        em.op("stablehlo.transpose", [o], [a], attr)[0]
        for o, a in zip(outs, ctx.avals_out)
    ]


top_k_p = define_primitive(
    "top_k", _top_k_abstract_eval, _top_k_lower, multiple_results=True
)


def _top_k_jvp(primals, tangents, *, k, axis):
    values, indices = top_k_p.bind(*primals, k=k, axis=axis)
    (t,) = tangents
    if is_zero(t):
        t_values = Zero(aval_of(values))
    else:
        t_values = _take_along(t, indices, axis)
    return [values, indices], [t_values, Zero(aval_of(indices))]


def _top_k_batch_rule(axis_size, vals, dims, *, k, axis):
    (x,), (d,) = vals, dims
    x = batch_to_front(x, axis_size, d)
    return list(top_k_p.bind(x, k=k, axis=axis + 1)), [0, 0]


jvp_rules[top_k_p] = _top_k_jvp
batch_rules[top_k_p] = _top_k_batch_rule


def _extreme_k(name: str, operand, k, reduction_dimension, recall_target, largest):
    """The k largest (or smallest) entries along one axis and their indices,
    found exactly: recall 1, whatever `recall_target` asks."""
    aval = aval_of(operand)
    if not dtypes.is_float(aval.dtype):
        raise OlympusTypeError(
            f"lax.{name}: the operand must be floating point, got {aval.str_short()}"
        )
    ndim = len(aval.shape)
    if not -ndim <= reduction_dimension < ndim:
        raise ValueError(
            f"lax.{name}: reduction_dimension {reduction_dimension} is out of range "
            f"for an operand of shape {aval.shape}"
        )
    dim = reduction_dimension % ndim
    k = int(k)
    if not 0 < k <= aval.shape[dim]:
        raise ValueError(
            f"lax.{name}: k={k} is out of range for an axis of size {aval.shape[dim]}"
        )
    if not 0 < recall_target <= 1:
        raise ValueError(
            f"lax.{name}: recall_target must be in (0, 1], got {recall_target}"
        )
    return list(
        approx_top_k_p.bind(
            operand,
            k=k,
            reduction_dimension=dim,
            recall_target=float(recall_target),
            is_max_k=largest,
            reduction_input_size_override=-1,
            aggregate_to_topk=True,
        )
    )


def _approx_top_k_abstract_eval(operand: ShapedArray, *, k, reduction_dimension, **_):
    shape = list(operand.shape)
    shape[reduction_dimension] = k
    return [ShapedArray(shape, operand.dtype), ShapedArray(shape, dtypes.int32)]


def _approx_top_k_lower(ctx, operand, *, k, reduction_dimension, is_max_k, **_):
    """What XLA's CPU makes of JAX's ApproxTopK custom call (its fallback):
    with a plain `>` (`<`), under which NaN is unordered, an unstable sort of
    (operand, iota) cut to k, or for k = 1 a reduce from (-inf (inf), -1)
    keeping the left pair where `>` holds. The same HLO gives JAX's results,
    NaNs included."""
    em, (aval,) = ctx.emitter, ctx.avals_in
    direction = "GT" if is_max_k else "LT"
    index = ShapedArray(aval.shape, dtypes.int32)
    (iota,) = em.op(
        "stablehlo.iota", [], [index], f"iota_dimension = {reduction_dimension} : i64"
    )
    scalar, scalar_index = ShapedArray((), aval.dtype), ShapedArray((), dtypes.int32)
    if k == 1:
        return _approx_top_1(ctx, operand, iota, direction, reduction_dimension)

    def comparator(e, lhs, rhs, _lhs_index, _rhs_index):
        return [compare(e, lhs, rhs, direction, aval.dtype)]

    region = em.region([scalar, scalar, scalar_index, scalar_index], comparator)
    attrs = f"dimension = {reduction_dimension} : i64, is_stable = false"
    outs = em.op("stablehlo.sort", [operand, iota], [aval, index], attrs, [region])
    limits = tuple(ctx.avals_out[0].shape)
    cut = (
        f"start_indices = {i64_array((0,) * aval.ndim)}, limit_indices = "
        f"{i64_array(limits)}, strides = {i64_array((1,) * aval.ndim)}"
    )
    return [
        em.op("stablehlo.slice", [o], [a], cut)[0] for o, a in zip(outs, ctx.avals_out)
    ]


def _approx_top_1(ctx, operand, iota, direction: str, dim: int):
    em, (aval,) = ctx.emitter, ctx.avals_in
    scalar, scalar_index = ShapedArray((), aval.dtype), ShapedArray((), dtypes.int32)
    worst = -np.inf if direction == "GT" else np.inf
    inits = [em.constant(worst, scalar), em.constant(-1, scalar_index)]

    def keep_left(e, lhs, lhs_index, rhs, rhs_index):
        better = compare(e, lhs, rhs, direction, aval.dtype)
        value = e.op("stablehlo.select", [better, lhs, rhs], [scalar])[0]
        where = e.op(
            "stablehlo.select", [better, lhs_index, rhs_index], [scalar_index]
        )[0]
        return [value, where]

    region = em.region([scalar, scalar_index, scalar, scalar_index], keep_left)
    reduced = [
        ShapedArray(tuple(n for d, n in enumerate(aval.shape) if d != dim), a.dtype)
        for a in ctx.avals_out
    ]
    outs = em.op(
        "stablehlo.reduce",
        [operand, iota, *inits],
        reduced,
        f"dimensions = {i64_array((dim,))}",
        [region],
    )
    return [
        em.op("stablehlo.reshape", [o], [a])[0] for o, a in zip(outs, ctx.avals_out)
    ]


approx_top_k_p = define_primitive(
    "approx_top_k",
    _approx_top_k_abstract_eval,
    _approx_top_k_lower,
    multiple_results=True,
)


def _approx_top_k_jvp(primals, tangents, **params):
    values, indices = approx_top_k_p.bind(*primals, **params)
    (t,) = tangents
    dim = params["reduction_dimension"]
    t_values = Zero(aval_of(values)) if is_zero(t) else _take_along(t, indices, dim)
    return [values, indices], [t_values, Zero(aval_of(indices))]


def _approx_top_k_batch_rule(axis_size, vals, dims, *, reduction_dimension, **params):
    (x,), (d,) = vals, dims
    x = batch_to_front(x, axis_size, d)
    outs = approx_top_k_p.bind(x, reduction_dimension=reduction_dimension + 1, **params)
    return list(outs), [0, 0]


jvp_rules[approx_top_k_p] = _approx_top_k_jvp
batch_rules[approx_top_k_p] = _approx_top_k_batch_rule


# The sections approx_max_k and approx_min_k share (op_docs.with_sections).
_APPROX_ARGS = """Args:
  operand: an array.
  k: how many entries to keep.
  reduction_dimension: the axis to search.
  recall_target: accepted for JAX's signature (the result is exact).
  reduction_input_size_override: accepted for JAX's signature.
  aggregate_to_topk: accepted for JAX's signature."""
_APPROX_RETURNS = "Returns:\n  (values, indices), each with the axis cut to k."
_APPROX_RAISES = "Raises:\n  ValueError: k is out of range for the axis."


def _approx_extreme_k(largest: bool, doc: str):
    """approx_max_k (largest) or approx_min_k with JAX's signature, computed
    exactly by _extreme_k; `doc` is its summary and example."""
    name = "approx_max_k" if largest else "approx_min_k"

    def approx_k(
        operand,
        k: int,
        reduction_dimension: int = -1,
        recall_target: float = 0.95,
        reduction_input_size_override: int = -1,
        aggregate_to_topk: bool = True,
    ):
        return _extreme_k(name, operand, k, reduction_dimension, recall_target, largest)

    approx_k.__name__ = approx_k.__qualname__ = name
    approx_k.__doc__ = doc
    return with_sections(_APPROX_ARGS, _APPROX_RETURNS, _APPROX_RAISES)(approx_k)


approx_max_k = _approx_extreme_k(
    True,
    """The `k` largest entries along an axis and their indices.

    The `k` largest entries along `reduction_dimension` and their indices,
    largest first. JAX's approximate top-k; here exact (recall 1, as XLA's CPU
    gives), so `aggregate_to_topk=False` also returns exactly k, sorted.

    Example:
      >>> values, indices = lax.approx_max_k(np.float32([[3, 1, 2, 5]]), 2)
      >>> values, indices
      (Array([[5., 3.]], dtype=float32), Array([[3, 0]], dtype=int32))
    """,
)
approx_min_k = _approx_extreme_k(
    False,
    """The `k` smallest entries along an axis and their indices.

    The `k` smallest entries along `reduction_dimension` and their indices,
    smallest first (exact, as approx_max_k).

    Example:
      >>> lax.approx_min_k(jnp.array([3.0, 1.0, 2.0]), 2)
      [Array([1., 2.], dtype=float32), Array([1, 2], dtype=int32)]
    """,
)
