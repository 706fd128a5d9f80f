"""Primitives that read or write at computed positions: gather and the
scatter family (scatter, scatter_add, scatter_mul, scatter_min, scatter_max),
and the batching rules of dynamic_slice / dynamic_update_slice (defined in
shapes.py), which become a gather / scatter when starts differ per example.

Dimension numbers follow StableHLO with the index vector always in the last
axis of `indices`. Gather clamps each window start so the window fits, as
XLA does; scatter drops windows that do not fit. The numpy layer brings
indices into range first, so the two agree and gather's transpose is a
scatter-add.
"""

from __future__ import annotations

from typing import NamedTuple

import ml_dtypes  # its iinfo also knows the narrow int4/uint4 types
import numpy as np

from olympus.backends.xla.lowering import i64_array
from olympus.ir import dtypes
from olympus.ir.core import ShapedArray, register_param_type
from olympus.lax.base import define_primitive
from olympus.lax.op_docs import DOCS as OP_DOCS
from olympus.lax.elementwise import (
    add_p,
    clamp_p,
    convert_element_type_p,
    div_p,
    eq_p,
    max_p,
    mul_p,
    select_n_p,
)
from olympus.lax.shapes import (
    broadcast_in_dim_p,
    concatenate_p,
    dynamic_slice_p,
    dynamic_update_slice_p,
    iota_p,
)
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import batch_rules, batch_to_front, move_batch_axis
from olympus.transforms.ad_util import (
    Zero,
    instantiate,
    is_zero,
    zeros_like_aval,
)
from olympus.transforms.jvp import jvp_rules
from olympus.transforms.linearize import is_undefined, transpose_rules
from olympus.lax.op_docs import RETURNS_NEW_LIKE_OPERAND, with_sections


@register_param_type
class GatherDimensionNumbers(NamedTuple):
    """Which output axes are window (offset) axes, which operand axes the
    window drops (size-1 slices), and which operand axis each index component
    starts."""

    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple


@register_param_type
class ScatterDimensionNumbers(NamedTuple):
    """Which update axes are window axes, which operand axes the window lacks,
    and which operand axis each index component starts."""

    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple


def _dims_attr(kind: str, dn: NamedTuple, ctx) -> str:
    """`#stablehlo.gather<...>` (or scatter) text of dimension numbers `dn`,
    whose field names are StableHLO's; empty lists are left out, as the
    parser wants. The index vector is the indices' last axis."""
    fields = dn._asdict().items()
    parts = [f"{k} = [{', '.join(map(str, v))}]" for k, v in fields if v]
    parts.append(f"index_vector_dim = {len(ctx.avals_in[1].shape) - 1}")
    return f"#stablehlo.{kind}<{', '.join(parts)}>"


def _check_indices(
    name: str, indices: ShapedArray, index_map: tuple, operand: ShapedArray
):
    if not dtypes.is_integer(indices.dtype):
        raise OlympusTypeError(
            f"{name}: indices must be integers, got {indices.str_short()}"
        )
    if indices.ndim < 1 or indices.shape[-1] != len(index_map):
        raise OlympusTypeError(
            f"{name}: the last axis of indices {indices.str_short()} must have one entry per "
            f"index component ({len(index_map)}, from {index_map})"
        )
    if any(not 0 <= d < operand.ndim for d in index_map) or len(set(index_map)) != len(
        index_map
    ):
        raise OlympusTypeError(
            f"{name}: index map {index_map} is not a set of operand axes"
        )


# ---- gather --------------------------------------------------------------------
def _gather_abstract_eval(
    operand: ShapedArray, indices: ShapedArray, *, dimension_numbers, slice_sizes
):
    dn = dimension_numbers
    _check_indices("gather", indices, dn.start_index_map, operand)
    if len(slice_sizes) != operand.ndim or any(
        not 0 <= s <= d for s, d in zip(slice_sizes, operand.shape)
    ):
        raise OlympusTypeError(
            f"gather: slice_sizes {tuple(slice_sizes)} do not fit {operand.str_short()}"
        )
    if any(slice_sizes[d] != 1 for d in dn.collapsed_slice_dims):
        raise OlympusTypeError(
            f"gather: collapsed_slice_dims {dn.collapsed_slice_dims} "
            f"must have slice size 1, got {tuple(slice_sizes)}"
        )
    window = [s for d, s in enumerate(slice_sizes) if d not in dn.collapsed_slice_dims]
    if len(window) != len(dn.offset_dims):
        raise OlympusTypeError(
            f"gather: offset_dims {dn.offset_dims} must name one output "
            f"axis per window axis {tuple(window)}"
        )
    batch = iter(indices.shape[:-1])
    windows = iter(window)
    rank = len(window) + indices.ndim - 1
    shape = [next(windows) if d in dn.offset_dims else next(batch) for d in range(rank)]
    return ShapedArray(tuple(shape), operand.dtype, operand.weak_type)


def _gather_lower(ctx, operand, indices, *, dimension_numbers, slice_sizes):
    attr = _dims_attr("gather", dimension_numbers, ctx)
    return ctx.op(
        "stablehlo.gather",
        [operand, indices],
        f"dimension_numbers = {attr}, slice_sizes = {i64_array(slice_sizes)}, "
        f"indices_are_sorted = false",
    )


gather_p = define_primitive("gather", _gather_abstract_eval, _gather_lower)


def _gather_jvp(primals, tangents, *, dimension_numbers, slice_sizes):
    """Linear in the operand; the indices have no derivative."""
    out = gather_p.bind(
        *primals, dimension_numbers=dimension_numbers, slice_sizes=slice_sizes
    )
    if is_zero(tangents[0]):
        return out, Zero(aval_of(out))
    return out, gather_p.bind(
        tangents[0],
        primals[1],
        dimension_numbers=dimension_numbers,
        slice_sizes=slice_sizes,
    )


def _scatter_dims_of(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(
        dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map
    )


def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes):
    """Each window's cotangent is added back where it was read from."""
    ct_operand = scatter_add_p.bind(
        zeros_like_aval(operand.aval),
        indices,
        ct,
        dimension_numbers=_scatter_dims_of(dimension_numbers),
    )
    return [ct_operand, None]


jvp_rules[gather_p] = _gather_jvp
transpose_rules[gather_p] = _gather_transpose


# ---- batching: the batch becomes one more index component ------------------------
def _with_batch_component(indices, axis_size: int):
    """indices (B, ..., k) -> (B, ..., k + 1) whose first component is the example."""
    shape = aval_of(indices).shape
    example = iota_p.bind(
        dtype=aval_of(indices).dtype, shape=(*shape[:-1], 1), dimension=0
    )
    return concatenate_p.bind(example, indices, dimension=len(shape) - 1)


def _one_example(operand):
    """A batch of one (zeros) in place of an empty batch of operands, for
    windows over the batch axis of size 1 when no index reads them."""
    aval = aval_of(operand)
    zero = np.zeros((), aval.dtype)[()]
    return broadcast_in_dim_p.bind(
        zero, shape=(1, *aval.shape[1:]), broadcast_dimensions=()
    )


def _at_front(x, axis_size: int, bdim):
    """x with the batch axis first, broadcast if x is not batched."""
    if bdim is None:
        shape = aval_of(x).shape
        return broadcast_in_dim_p.bind(
            x,
            shape=(axis_size, *shape),
            broadcast_dimensions=tuple(range(1, len(shape) + 1)),
        )
    return batch_to_front(x, axis_size, bdim)


def _gather_batch_rule(axis_size, vals, dims, *, dimension_numbers, slice_sizes):
    operand, indices = (_at_front(v, axis_size, d) for v, d in zip(vals, dims))
    if axis_size == 0:  # a window of 1 must fit: gather from one unread example
        operand = _one_example(operand)
    dn = dimension_numbers
    batched = GatherDimensionNumbers(
        offset_dims=tuple(d + 1 for d in dn.offset_dims),
        collapsed_slice_dims=(0, *(d + 1 for d in dn.collapsed_slice_dims)),
        start_index_map=(0, *(d + 1 for d in dn.start_index_map)),
    )
    out = gather_p.bind(
        operand,
        _with_batch_component(indices, axis_size),
        dimension_numbers=batched,
        slice_sizes=(1, *slice_sizes),
    )
    return out, 0


batch_rules[gather_p] = _gather_batch_rule


# ---- the scatter family ----------------------------------------------------------
def _scatter_abstract_eval(name):
    def abstract_eval(
        operand: ShapedArray,
        indices: ShapedArray,
        updates: ShapedArray,
        *,
        dimension_numbers,
    ):
        dn = dimension_numbers
        _check_indices(name, indices, dn.scatter_dims_to_operand_dims, operand)
        if updates.dtype != operand.dtype:
            raise OlympusTypeError(
                f"{name}: updates {updates.str_short()} must have the "
                f"operand's dtype {operand.str_short()}"
            )
        window_rank = operand.ndim - len(dn.inserted_window_dims)
        if (
            len(dn.update_window_dims) != window_rank
            or updates.ndim != window_rank + indices.ndim - 1
        ):
            raise OlympusTypeError(
                f"{name}: updates {updates.str_short()} do not match indices "
                f"{indices.str_short()} and operand {operand.str_short()} under {dn}"
            )
        return operand

    return abstract_eval


def _combiner(hlo_name, scalar: ShapedArray):
    """The update region: `None` keeps the update (plain scatter)."""

    def build(em, old, new):
        if hlo_name is None:
            return [new]
        return em.op(hlo_name, [old, new], [scalar])

    return build


def _scatter_lower(hlo_name):
    def lower(ctx, operand, indices, updates, *, dimension_numbers):
        scalar = ShapedArray((), ctx.avals_in[0].dtype)
        region = ctx.emitter.region([scalar, scalar], _combiner(hlo_name, scalar))
        attr = _dims_attr("scatter", dimension_numbers, ctx)
        return ctx.op(
            "stablehlo.scatter",
            [operand, indices, updates],
            f"scatter_dimension_numbers = {attr}, indices_are_sorted = false, "
            f"unique_indices = false",
            [region],
        )

    return lower


def _define_scatter(name, hlo_name):
    return define_primitive(
        name, _scatter_abstract_eval(name), _scatter_lower(hlo_name)
    )


scatter_p = _define_scatter("scatter", None)
scatter_add_p = _define_scatter("scatter_add", "stablehlo.add")
scatter_mul_p = _define_scatter("scatter_mul", "stablehlo.multiply")
scatter_min_p = _define_scatter("scatter_min", "stablehlo.minimum")
scatter_max_p = _define_scatter("scatter_max", "stablehlo.maximum")


def _scatter_batch_rule(prim):
    def rule(axis_size, vals, dims, *, dimension_numbers):
        operand, indices, updates = (
            _at_front(v, axis_size, d) for v, d in zip(vals, dims)
        )
        if axis_size == 0:  # no example: nothing is written
            return operand, 0
        dn = dimension_numbers
        batched = ScatterDimensionNumbers(
            update_window_dims=tuple(d + 1 for d in dn.update_window_dims),
            inserted_window_dims=(0, *(d + 1 for d in dn.inserted_window_dims)),
            scatter_dims_to_operand_dims=(
                0,
                *(d + 1 for d in dn.scatter_dims_to_operand_dims),
            ),
        )
        out = prim.bind(
            operand,
            _with_batch_component(indices, axis_size),
            updates,
            dimension_numbers=batched,
        )
        return out, 0

    return rule


for _prim in (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    batch_rules[_prim] = _scatter_batch_rule(_prim)


def _gather_of_scatter(operand_aval, updates_aval, dn: ScatterDimensionNumbers):
    """The gather that reads back what a scatter with `dn` wrote (its windows)."""
    window = iter(updates_aval.shape[d] for d in dn.update_window_dims)
    slice_sizes = tuple(
        1 if d in dn.inserted_window_dims else next(window)
        for d in range(operand_aval.ndim)
    )
    gdn = GatherDimensionNumbers(
        dn.update_window_dims, dn.inserted_window_dims, dn.scatter_dims_to_operand_dims
    )
    return {"dimension_numbers": gdn, "slice_sizes": slice_sizes}


def _gather_updates(x, indices, updates_aval, dn):
    return gather_p.bind(x, indices, **_gather_of_scatter(aval_of(x), updates_aval, dn))


def _updates_cotangent(ct, indices, updates_aval, dn):
    """What each update's window landed on; zero for windows the scatter
    dropped (out of range), where a plain gather would read clamped ones."""
    params = _gather_of_scatter(aval_of(ct), updates_aval, dn)
    gdn = params["dimension_numbers"]
    fits = _window_fits(
        aval_of(ct).shape, indices, gdn.start_index_map, params["slice_sizes"]
    )
    read = gather_p.bind(ct, indices, **params)
    return _fill_where_not(
        fits, read, gdn.offset_dims, np.zeros((), updates_aval.dtype)[()]
    )


def _linear_scatter_jvp(prim):
    """scatter and scatter_add are linear in (operand, updates) jointly."""

    def rule(primals, tangents, *, dimension_numbers):
        operand, indices, updates = primals
        out = prim.bind(operand, indices, updates, dimension_numbers=dimension_numbers)
        t_x, _, t_u = tangents
        if is_zero(t_x) and is_zero(t_u):
            return out, Zero(aval_of(out))
        return out, prim.bind(
            instantiate(t_x),
            indices,
            instantiate(t_u),
            dimension_numbers=dimension_numbers,
        )

    return rule


def _scatter_add_transpose(ct, operand, indices, updates, *, dimension_numbers):
    ct = instantiate(ct) if is_zero(ct) else ct
    ct_u = None
    if is_undefined(updates):
        ct_u = _updates_cotangent(ct, indices, updates.aval, dimension_numbers)
    return [ct if is_undefined(operand) else None, None, ct_u]


def _scatter_transpose(ct, operand, indices, updates, *, dimension_numbers):
    """Overwritten positions pass no cotangent to the operand; the updates get
    the cotangent of where they landed."""
    ct = instantiate(ct) if is_zero(ct) else ct
    ct_x = ct_u = None
    if is_undefined(operand):
        u_aval = updates.aval if is_undefined(updates) else aval_of(updates)
        ct_x = scatter_p.bind(
            ct, indices, zeros_like_aval(u_aval), dimension_numbers=dimension_numbers
        )
    if is_undefined(updates):
        ct_u = _updates_cotangent(ct, indices, updates.aval, dimension_numbers)
    return [ct_x, None, ct_u]


jvp_rules[scatter_p] = _linear_scatter_jvp(scatter_p)
jvp_rules[scatter_add_p] = _linear_scatter_jvp(scatter_add_p)
transpose_rules[scatter_p] = _scatter_transpose
transpose_rules[scatter_add_p] = _scatter_add_transpose


def _scatter_mul_jvp(primals, tangents, *, dimension_numbers):
    """d(x * u) = t_x * u + x * t_u at the written positions (indices assumed
    unique, as for JAX's scatter_mul derivative)."""
    operand, indices, updates = primals
    dn = dimension_numbers
    out = scatter_mul_p.bind(operand, indices, updates, dimension_numbers=dn)
    t_x, _, t_u = tangents
    t_out = Zero(aval_of(out))
    if not is_zero(t_x):
        t_out = scatter_mul_p.bind(t_x, indices, updates, dimension_numbers=dn)
    if not is_zero(t_u):
        x_at = _gather_updates(operand, indices, aval_of(updates), dn)
        from_u = scatter_add_p.bind(
            zeros_like_aval(aval_of(out)),
            indices,
            mul_p.bind(x_at, t_u),
            dimension_numbers=dn,
        )
        t_out = from_u if is_zero(t_out) else add_p.bind(t_out, from_u)
    return out, t_out


def _scatter_extremum_jvp(prim):
    """The tangent follows whichever values won, as JAX's: at each position,
    the mean tangent of everything that ties for the result, the operand's
    own value included (x.at[0].max(u) with x[0] == u splits it in halves)."""

    def rule(primals, tangents, *, dimension_numbers):
        operand, indices, updates = primals
        dn = dimension_numbers
        out = prim.bind(operand, indices, updates, dimension_numbers=dn)
        t_x, t_u = instantiate(tangents[0]), instantiate(tangents[2])
        dtype = aval_of(out).dtype
        won = eq_p.bind(updates, _gather_updates(out, indices, aval_of(updates), dn))
        zeros_u = zeros_like_aval(aval_of(updates))
        ones_u = convert_element_type_p.bind(won, new_dtype=dtype, weak_type=False)
        zeros = zeros_like_aval(aval_of(out))
        t_sum = scatter_add_p.bind(
            zeros, indices, select_n_p.bind(won, zeros_u, t_u), dimension_numbers=dn
        )
        count = scatter_add_p.bind(zeros, indices, ones_u, dimension_numbers=dn)
        kept = eq_p.bind(out, operand)
        kept_ones = convert_element_type_p.bind(kept, new_dtype=dtype, weak_type=False)
        one = broadcast_in_dim_p.bind(
            np.ones((), dtype), shape=aval_of(out).shape, broadcast_dimensions=()
        )
        # Nothing ties only where NaN won: JAX's tangent there is 0 (0 / 1).
        ties = max_p.bind(add_p.bind(count, kept_ones), one)
        total = add_p.bind(t_sum, select_n_p.bind(kept, zeros, t_x))
        return out, div_p.bind(total, ties)

    return rule


def _scatter_mul_transpose(ct, operand, indices, updates, *, dimension_numbers):
    """Linear in the operand only (the jvp keeps updates primal): each
    position's cotangent is scaled by the product written there."""
    if is_undefined(updates):
        raise TypeError("scatter_mul is not linear in its updates")
    ct = instantiate(ct) if is_zero(ct) else ct
    return [
        scatter_mul_p.bind(ct, indices, updates, dimension_numbers=dimension_numbers),
        None,
        None,
    ]


jvp_rules[scatter_mul_p] = _scatter_mul_jvp
transpose_rules[scatter_mul_p] = _scatter_mul_transpose
jvp_rules[scatter_min_p] = _scatter_extremum_jvp(scatter_min_p)
jvp_rules[scatter_max_p] = _scatter_extremum_jvp(scatter_max_p)


# ---- batching dynamic_slice and dynamic_update_slice -----------------------------
# Shared starts slice the whole batch at once. Starts that differ per example
# make one start vector per example for a gather (scatter), as in JAX: exact
# for every dtype, and no bigger than the windows themselves.
def _shared_starts(indices, bdim: int) -> tuple:
    """The starts with a 0 inserted for the batch axis at `bdim`."""
    zero = np.zeros((), aval_of(indices[0]).dtype if indices else np.int32)[()]
    return (*indices[:bdim], zero, *indices[bdim:])


def _unbatched_shape(x, bdim) -> tuple:
    shape = aval_of(x).shape
    return shape if bdim is None else shape[:bdim] + shape[bdim + 1 :]


def _start_vectors(indices, index_dims, axis_size: int, limits):
    """(batch, n) int32 start vectors, each start clamped to [0, limit] first
    (as dynamic_slice clamps) so that no value wraps in the conversion."""
    columns = []
    for start, bdim, limit in zip(indices, index_dims, limits):
        dtype = aval_of(start).dtype
        high = np.asarray(min(limit, ml_dtypes.iinfo(dtype).max), dtype)[()]
        start = clamp_p.bind(np.zeros((), dtype)[()], start, high)
        if dtype != np.int32:
            start = convert_element_type_p.bind(
                start, new_dtype=np.dtype(np.int32), weak_type=False
            )
        dims = () if bdim is None else (0,)
        columns.append(
            broadcast_in_dim_p.bind(
                start, shape=(axis_size, 1), broadcast_dimensions=dims
            )
        )
    return (
        columns[0] if len(columns) == 1 else concatenate_p.bind(*columns, dimension=1)
    )


def _dynamic_slice_batch_rule(axis_size, vals, dims, *, slice_sizes):
    (x, *indices), (x_bdim, *index_dims) = vals, dims
    if all(d is None for d in index_dims):
        sizes = (*slice_sizes[:x_bdim], axis_size, *slice_sizes[x_bdim:])
        starts = _shared_starts(indices, x_bdim)
        return dynamic_slice_p.bind(x, *starts, slice_sizes=sizes), x_bdim
    limits = [d - s for d, s in zip(_unbatched_shape(x, x_bdim), slice_sizes)]
    starts = _start_vectors(indices, index_dims, axis_size, limits)
    every_axis = tuple(range(len(indices)))
    dn = GatherDimensionNumbers(
        offset_dims=every_axis, collapsed_slice_dims=(), start_index_map=every_axis
    )
    return _gather_batch_rule(
        axis_size,
        [x, starts],
        [x_bdim, 0],
        dimension_numbers=dn,
        slice_sizes=tuple(slice_sizes),
    )


def _dynamic_update_slice_batch_rule(axis_size, vals, dims):
    (x, update, *indices), (x_bdim, u_bdim, *index_dims) = vals, dims
    if all(d is None for d in index_dims):
        bdim = x_bdim if x_bdim is not None else u_bdim
        x = move_batch_axis(x, axis_size, x_bdim, bdim)
        update = move_batch_axis(update, axis_size, u_bdim, bdim)
        return dynamic_update_slice_p.bind(
            x, update, *_shared_starts(indices, bdim)
        ), bdim
    window = _unbatched_shape(update, u_bdim)
    limits = [d - w for d, w in zip(_unbatched_shape(x, x_bdim), window)]
    starts = _start_vectors(indices, index_dims, axis_size, limits)
    every_axis = tuple(range(len(indices)))
    dn = ScatterDimensionNumbers(
        update_window_dims=every_axis,
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=every_axis,
    )
    return batch_rules[scatter_p](
        axis_size, [x, starts, update], [x_bdim, 0, u_bdim], dimension_numbers=dn
    )


batch_rules[dynamic_slice_p] = _dynamic_slice_batch_rule
batch_rules[dynamic_update_slice_p] = _dynamic_update_slice_batch_rule


# ---- public functions ------------------------------------------------------------
class GatherModeError(ValueError):
    """lax.gather got a `mode` it does not know."""


_GATHER_MODES = (None, "clip", "promise_in_bounds", "fill")


def gather(
    operand,
    start_indices,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes,
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: str | None = None,
    fill_value=None,
):
    """Windows of `operand` of `slice_sizes` starting at each index vector.

    The general indexing primitive behind `x[idx]`, jnp.take and friends:
    each index vector (the last axis of `start_indices`) gives the start of
    one window. mode None, "clip" or "promise_in_bounds": starts clamp so
    windows fit. mode "fill": a window whose start does not fit is
    `fill_value` instead (default: NaN for inexact dtypes, the most negative
    value of signed integers, the largest of unsigned ones, True for bool).

    Args:
      operand: the array to read from.
      start_indices: an integer array whose last axis is an index vector.
      dimension_numbers: a GatherDimensionNumbers: offset_dims (window axes
        in the output), collapsed_slice_dims (size-1 window axes dropped),
        start_index_map (the operand axis each index component addresses).
      slice_sizes: the window size in each operand dimension.
      unique_indices: a hint (JAX's); the result does not depend on it.
      indices_are_sorted: a hint (JAX's); the result does not depend on it.
      mode: None, "clip", "fill" or "promise_in_bounds".
      fill_value: the value of out-of-bounds windows in "fill" mode.

    Returns:
      An array of the batch (index) dimensions and the window dimensions.

    Raises:
      OlympusTypeError: the dimension numbers do not fit the shapes, or the
        indices are not integers.

    Example:
      >>> dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
      ...                             start_index_map=(0,))
      >>> lax.gather(np.float32([5, 6, 7]), np.int32([[2], [0]]), dn, (1,))
      Array([7., 5.], dtype=float32)
      >>> lax.gather(np.float32([5, 6, 7]), np.int32([[3]]), dn, (1,), mode="fill")
      Array([nan], dtype=float32)
    """
    mode = getattr(
        mode, "name", mode
    )  # an enum member spelled like JAX's GatherScatterMode
    mode = mode.lower() if isinstance(mode, str) else mode
    if mode not in _GATHER_MODES:
        raise GatherModeError(
            f"lax.gather: unknown mode {mode!r}; use 'clip', "
            f"'promise_in_bounds' or 'fill'"
        )
    dn = _gather_dn(dimension_numbers)
    slice_sizes = tuple(int(s) for s in slice_sizes)
    out = gather_p.bind(
        operand, start_indices, dimension_numbers=dn, slice_sizes=slice_sizes
    )
    if mode != "fill":
        return out
    fits = _window_fits(
        aval_of(operand).shape, start_indices, dn.start_index_map, slice_sizes
    )
    return _fill_where_not(fits, out, dn.offset_dims, fill_value)


def _window_fits(shape, start_indices, start_index_map, slice_sizes):
    """Per index vector: whether every start component s satisfies
    0 <= s <= size - slice_size on its operand axis (the window fits unclamped)."""
    from olympus.lax import ops

    idx_aval = aval_of(start_indices)
    limits = np.array(
        [shape[d] - slice_sizes[d] for d in start_index_map], idx_aval.dtype
    )
    limits = ops.broadcast_in_dim(limits, idx_aval.shape, (idx_aval.ndim - 1,))
    zero = ops.full(idx_aval.shape, 0, idx_aval.dtype)
    inside = ops.bitwise_and(ops.ge(start_indices, zero), ops.le(start_indices, limits))
    return ops.reduce_and(inside, (idx_aval.ndim - 1,))


def default_fill_value(dtype):
    """What a filled gather reads: NaN, the signed minimum, the unsigned maximum, True."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return np.array(np.nan, dtype)[()]
    if dtype == np.bool_:
        return np.True_
    info = ml_dtypes.iinfo(dtype)
    return np.array(info.min if info.min < 0 else info.max, dtype)[()]


def _fill_where_not(fits, out, offset_dims, fill_value):
    """`out` with each batch position whose window did not fit set to fill_value."""
    from olympus.lax import ops

    out_aval = aval_of(out)
    batch_axes = tuple(d for d in range(out_aval.ndim) if d not in offset_dims)
    fits = ops.broadcast_in_dim(fits, out_aval.shape, batch_axes)
    if fill_value is None:
        fill_value = default_fill_value(out_aval.dtype)
    return ops.select(fits, out, ops.full(out_aval.shape, fill_value, out_aval.dtype))


def _gather_dn(dn) -> GatherDimensionNumbers:
    return GatherDimensionNumbers(*(tuple(int(d) for d in f) for f in dn))


def _scatter_dn(dn) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(*(tuple(int(d) for d in f) for f in dn))


class ScatterModeError(ValueError):
    """A scatter given mode 'clip' (or an unknown mode): olympus's scatters
    drop out-of-range windows, JAX's 'fill_or_drop'."""


def drops_out_of_range(mode) -> bool:
    """Whether a scatter's `mode` (None, a string or a GatherScatterMode-like
    enum) is one olympus implements: all of them drop out-of-range windows,
    as JAX's 'fill' (alias 'drop') and 'promise_in_bounds' do; 'clip' is not."""
    name = str(getattr(mode, "name", mode)).lower()
    return mode is None or name in ("fill", "fill_or_drop", "drop", "promise_in_bounds")


def _check_scatter_mode(api: str, mode) -> None:
    if not drops_out_of_range(mode):
        raise ScatterModeError(
            f"lax.{api}: mode {mode!r} is not supported; olympus drops "
            "out-of-range windows (mode='drop'); clamp the indices yourself "
            "for 'clip'"
        )


def public_scatter(prim, doc: str, name: str | None = None, on_updates=None):
    """The lax function `name` (the primitive's by default) that binds the
    scatter primitive `prim`, with `on_updates` applied to the updates first
    (lax/derived.py: scatter_sub is a scatter_add of the negated updates)."""
    name = name or prim.name

    def scatter_fn(
        operand,
        scatter_indices,
        updates,
        dimension_numbers,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
    ):
        _check_scatter_mode(name, mode)
        return prim.bind(
            operand,
            scatter_indices,
            updates if on_updates is None else on_updates(updates),
            dimension_numbers=_scatter_dn(dimension_numbers),
        )

    scatter_fn.__name__ = scatter_fn.__qualname__ = name
    scatter_fn.__doc__ = OP_DOCS.get(name, doc)
    return scatter_fn


scatter = public_scatter(
    scatter_p,
    "`operand` with windows of `updates` written at the "
    "indices (out-of-range windows are dropped).",
)
scatter_add = public_scatter(
    scatter_add_p,
    "`operand` with `updates` added at the indices; duplicate indices accumulate.",
)
scatter_mul = public_scatter(
    scatter_mul_p, "`operand` multiplied by `updates` at the indices."
)
scatter_min = public_scatter(
    scatter_min_p, "elementwise min of `operand` and `updates` there."
)
scatter_max = public_scatter(
    scatter_max_p, "elementwise max of `operand` and `updates` there."
)


# ---- dynamic slices with negative starts -------------------------------------------
class NegativeStartError(ValueError):
    """A static negative start given to a dynamic slice that may not wrap it."""


class StartIndexTypeError(TypeError):
    """Start indices of a dynamic slice that are not integers of one dtype."""


def _start_dtype(index):
    """The dtype a start index counts in: Python ints take the default int."""
    if isinstance(index, int) and not isinstance(index, bool):
        return np.dtype(dtypes.default_int_dtype())
    if isinstance(index, (np.generic, bool)):
        return np.dtype(dtypes.canonicalize_dtype(np.asarray(index).dtype))
    return np.dtype(aval_of(index).dtype)


def _check_start_dtypes(api: str, start_indices) -> None:
    """As JAX: every start an integer, all of one dtype (Python ints count as
    the default int), so no start is silently converted."""
    found = [_start_dtype(i) for i in start_indices]
    if any(not dtypes.is_integer(d) for d in found) or len(set(found)) > 1:
        raise StartIndexTypeError(
            f"{api}: start indices must be integers of one dtype, got "
            f"{', '.join(d.name for d in found)}; convert them first, e.g. "
            f"with jnp.int32(i)"
        )


def _wrapped_start(index, size: int):
    """A start index with a negative value counted from the end (JAX's
    `allow_negative_indices`): `index + size` where `index < 0`. Out-of-range
    starts still clamp afterwards, in the primitive."""
    from olympus.lax import ops

    if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
        dtype = aval_of(index).dtype
        if dtypes.is_unsigned_int(dtype) or not dtypes.is_integer(dtype):
            return index
        return ops.select(
            ops.lt(index, np.zeros((), dtype)[()]),
            ops.add(index, np.array(size, dtype)[()]),
            index,
        )
    return int(index) + size if index < 0 else int(index)


def _wrapped_starts(shape, start_indices, allow_negative_indices) -> list:
    if len(start_indices) != len(shape):
        raise OlympusTypeError(
            f"lax.dynamic_slice: {len(start_indices)} start indices for an operand "
            f"of rank {len(shape)} (shape {shape}); pass one start per axis"
        )
    _check_start_dtypes("lax.dynamic_slice", start_indices)
    if isinstance(allow_negative_indices, bool):
        allow_negative_indices = [allow_negative_indices] * len(shape)
    for i, n, wrap in zip(start_indices, shape, allow_negative_indices):
        if not wrap and isinstance(i, (int, np.integer)) and i < 0:
            raise NegativeStartError(
                f"lax.dynamic_slice: start {int(i)} is negative on an axis of size "
                f"{n} with allow_negative_indices=False; pass {int(i) + n} or allow "
                f"negative indices"
            )
    return [
        _wrapped_start(i, n) if wrap else i
        for i, n, wrap in zip(start_indices, shape, allow_negative_indices)
    ]


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """The window of `slice_sizes` at `start_indices`, which may be traced.

    For slicing at positions known only at run time (the slice's size must
    be static). As in JAX, a negative start counts from the end of its axis,
    then every start clamps so the window fits: it never reads out of bounds.

    Args:
      operand: the array to slice.
      start_indices: one scalar integer per dimension (a sequence or 1-D
        array).
      slice_sizes: one static int per dimension.
      allow_negative_indices: if True, negative starts count from the end.

    Returns:
      An array of shape `slice_sizes`.

    Raises:
      OlympusTypeError: the numbers of starts or sizes differ from the rank,
        or a size exceeds its dimension.

    Example:
      >>> lax.dynamic_slice(np.arange(5.0), (-2,), (2,))
      Array([3., 4.], dtype=float32)
    """
    from olympus.lax import ops

    shape = aval_of(operand).shape
    starts = _wrapped_starts(shape, start_indices, allow_negative_indices)
    return ops.dynamic_slice(operand, starts, slice_sizes)


@with_sections(RETURNS_NEW_LIKE_OPERAND)
def dynamic_update_slice(
    operand, update, start_indices, *, allow_negative_indices=True
):
    """`operand` with `update` written at `start_indices`, which may be traced.

    The functional form of `x[i:i+n] = update`. Negative starts count from
    the end; then starts clamp so `update` fits entirely.

    Args:
      operand: the array to update.
      update: an array of operand's rank and dtype, no larger.
      start_indices: one scalar integer per dimension.
      allow_negative_indices: if True, negative starts count from the end.

    Raises:
      OlympusTypeError: ranks or dtypes differ, or update is larger than
        operand.

    Example:
      >>> lax.dynamic_update_slice(np.zeros(4, np.float32), np.ones(2, np.float32), (-1,))
      Array([0., 0., 1., 1.], dtype=float32)
    """
    from olympus.lax import ops

    shape = aval_of(operand).shape
    starts = _wrapped_starts(shape, start_indices, allow_negative_indices)
    return ops.dynamic_update_slice(operand, update, starts)


def dynamic_slice_in_dim(
    operand, start_index, slice_size: int, axis: int = 0, *, allow_negative_indices=True
):
    """`dynamic_slice` along one axis, the others taken whole.

    Args:
      operand: the array to slice.
      start_index: a scalar integer (may be traced).
      slice_size: a static int.
      axis: the axis to slice.
      allow_negative_indices: if True, a negative start counts from the end.

    Returns:
      operand with `axis` cut to `slice_size`.

    Raises:
      OlympusTypeError: slice_size exceeds the axis.

    Example:
      >>> lax.dynamic_slice_in_dim(jnp.arange(5.0), 1, 2)
      Array([1., 2.], dtype=float32)
    """
    shape = aval_of(operand).shape
    starts, sizes = [0] * len(shape), list(shape)
    starts[axis], sizes[axis] = start_index, slice_size
    wrap = [False] * len(shape)
    wrap[axis] = allow_negative_indices
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=wrap)


@with_sections(RETURNS_NEW_LIKE_OPERAND)
def dynamic_update_slice_in_dim(
    operand, update, start_index, axis: int, *, allow_negative_indices=True
):
    """`dynamic_update_slice` at `start_index` along one axis.

    Args:
      operand: the array to update.
      update: the values; equal to operand's shape except along `axis`.
      start_index: a scalar integer (may be traced).
      axis: the axis the start refers to.
      allow_negative_indices: if True, a negative start counts from the end.

    Raises:
      OlympusTypeError: update does not fit operand.

    Example:
      >>> lax.dynamic_update_slice_in_dim(jnp.zeros(3), jnp.ones(1), 1, 0)
      Array([0., 1., 0.], dtype=float32)
    """
    shape = aval_of(operand).shape
    starts = [0] * len(shape)
    starts[axis] = start_index
    wrap = [False] * len(shape)
    wrap[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=wrap)
