"""Primitives that move data without arithmetic: broadcast_in_dim, reshape,
transpose, squeeze, expand_dims, slice, dynamic_slice, dynamic_update_slice,
concatenate, pad and iota."""

from __future__ import annotations

import math

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ShapedArray
from olympus.lax.base import check_axes, define_primitive, same_dtypes
from olympus.backends.xla.lowering import i64_array
from olympus.lax.elementwise import add_p, select_n_p, sub_p
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.ad_util import (
    Zero,
    ad_ops,
    instantiate,
    is_zero,
    zeros_like_aval,
)
from olympus.transforms.jvp import defjvp_linear, defjvp_zero, jvp_rules
from olympus.transforms.linearize import is_undefined, transpose_rules
from olympus.tracer.core import aval_of
from olympus.transforms.batching import (
    batch_rules,
    batch_to_front,
    move_batch_axis,
    register_batch_ops,
    shift_axes,
    unbatched_rule,
)


def _shape_tuple(name: str, shape) -> tuple:
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise OlympusTypeError(f"{name}: negative dimension in shape {shape}")
    return shape


# ---- broadcast_in_dim --------------------------------------------------------
def _broadcast_in_dim_abstract_eval(x: ShapedArray, *, shape, broadcast_dimensions):
    shape = _shape_tuple("broadcast_in_dim", shape)
    dims = tuple(broadcast_dimensions)
    if len(dims) != x.ndim:
        raise OlympusTypeError(
            f"broadcast_in_dim: broadcast_dimensions {dims} must name one output "
            f"dimension per operand dimension (operand rank {x.ndim})"
        )
    if any(b <= a for a, b in zip(dims, dims[1:])):
        raise OlympusTypeError(
            f"broadcast_in_dim: broadcast_dimensions {dims} must be increasing"
        )
    for d, out_d in zip(x.shape, dims):
        if not 0 <= out_d < len(shape) or d not in (1, shape[out_d]):
            raise OlympusTypeError(
                f"broadcast_in_dim: cannot broadcast shape {x.shape} to {shape} "
                f"with broadcast_dimensions {dims}"
            )
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_lower(ctx, x, *, shape, broadcast_dimensions):
    return ctx.op(
        "stablehlo.broadcast_in_dim",
        [x],
        f"broadcast_dimensions = {i64_array(broadcast_dimensions)}",
    )


broadcast_in_dim_p = define_primitive(
    "broadcast_in_dim",
    _broadcast_in_dim_abstract_eval,
    _broadcast_in_dim_lower,
    traits=("cheap",),
)


def _broadcast_in_dim_batch_rule(axis_size, vals, dims, *, shape, broadcast_dimensions):
    """The batch axis goes to the output position that keeps broadcast_dimensions
    increasing: right after where the operand dimension before it goes."""
    (x,), (bdim,) = vals, dims
    dims_before, dims_after = broadcast_dimensions[:bdim], broadcast_dimensions[bdim:]
    out_bdim = dims_before[-1] + 1 if dims_before else 0
    out_dims = (*dims_before, out_bdim, *(d + 1 for d in dims_after))
    out_shape = (*shape[:out_bdim], axis_size, *shape[out_bdim:])
    return broadcast_in_dim_p.bind(
        x, shape=out_shape, broadcast_dimensions=out_dims
    ), out_bdim


batch_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch_rule


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    """Sums the cotangent over the dimensions the broadcast created or stretched."""
    from olympus.lax.reductions import reduce_sum_p

    in_shape = x.aval.shape
    stretched = [
        od for d, od in zip(in_shape, broadcast_dimensions) if d == 1 and shape[od] != 1
    ]
    new = [i for i in range(len(shape)) if i not in broadcast_dimensions]
    summed = tuple(sorted(new + stretched))
    if summed:
        ct = reduce_sum_p.bind(ct, axes=summed)
    if aval_of(ct).shape != in_shape:
        ct = reshape_p.bind(ct, new_sizes=in_shape, dimensions=None)
    return [ct]


defjvp_linear(broadcast_in_dim_p)
transpose_rules[broadcast_in_dim_p] = _broadcast_in_dim_transpose


# ---- reshape -----------------------------------------------------------------
def _reshape_abstract_eval(x: ShapedArray, *, new_sizes, dimensions=None):
    new_sizes = _shape_tuple("reshape", new_sizes)
    if math.prod(new_sizes) != x.size:
        raise OlympusTypeError(
            f"reshape: cannot reshape {x.str_short()} ({x.size} elements) to {new_sizes}"
        )
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise OlympusTypeError(f"reshape: dimensions {dimensions} is not a permutation")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _reshape_lower(ctx, x, *, new_sizes, dimensions=None):
    if dimensions is not None and tuple(dimensions) != tuple(range(len(dimensions))):
        src = ctx.avals_in[0]
        permuted = src.update(shape=[src.shape[d] for d in dimensions])
        x = ctx.op(
            "stablehlo.transpose",
            [x],
            f"permutation = {i64_array(dimensions)}",
            result_avals=[permuted],
        )
    return ctx.op("stablehlo.reshape", [x])


reshape_p = define_primitive(
    "reshape", _reshape_abstract_eval, _reshape_lower, traits=("cheap",)
)


def _reshape_batch_rule(axis_size, vals, dims, *, new_sizes, dimensions=None):
    x = batch_to_front(vals[0], axis_size, dims[0])
    dimensions = None if dimensions is None else (0, *(d + 1 for d in dimensions))
    return reshape_p.bind(
        x, new_sizes=(axis_size, *new_sizes), dimensions=dimensions
    ), 0


batch_rules[reshape_p] = _reshape_batch_rule


def _reshape_transpose(ct, x, *, new_sizes, dimensions=None):
    if dimensions is None:
        return [reshape_p.bind(ct, new_sizes=x.aval.shape, dimensions=None)]
    permuted = tuple(x.aval.shape[d] for d in dimensions)
    ct = reshape_p.bind(ct, new_sizes=permuted, dimensions=None)
    return [transpose_p.bind(ct, permutation=tuple(np.argsort(dimensions).tolist()))]


defjvp_linear(reshape_p)
transpose_rules[reshape_p] = _reshape_transpose


# ---- transpose ---------------------------------------------------------------
def _transpose_abstract_eval(x: ShapedArray, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise OlympusTypeError(
            f"transpose: permutation {tuple(permutation)} is not a permutation of "
            f"the {x.ndim} axes of {x.str_short()}"
        )
    return x.update(shape=[x.shape[d] for d in permutation])


transpose_p = define_primitive(
    "transpose",
    _transpose_abstract_eval,
    lambda ctx, x, *, permutation: ctx.op(
        "stablehlo.transpose", [x], f"permutation = {i64_array(permutation)}"
    ),
    traits=("cheap",),
)


def _transpose_batch_rule(axis_size, vals, dims, *, permutation):
    """One transpose that also brings the batch axis to the front."""
    (x,), (bdim,) = vals, dims
    return transpose_p.bind(x, permutation=(bdim, *shift_axes(permutation, bdim))), 0


batch_rules[transpose_p] = _transpose_batch_rule

defjvp_linear(transpose_p)
transpose_rules[transpose_p] = lambda ct, x, *, permutation: [
    transpose_p.bind(ct, permutation=tuple(np.argsort(permutation).tolist()))
]


# ---- squeeze / expand_dims ---------------------------------------------------
def _squeeze_abstract_eval(x: ShapedArray, *, dimensions):
    dims = check_axes("squeeze", dimensions, x.ndim)
    for d in dims:
        if x.shape[d] != 1:
            raise OlympusTypeError(
                f"squeeze: dimension {d} of {x.str_short()} has size {x.shape[d]}, not 1"
            )
    return x.update(shape=[s for i, s in enumerate(x.shape) if i not in dims])


def _define_unit_axes(name: str, abstract_eval, traits: tuple[str, ...]):
    """squeeze and expand_dims only drop or add axes of size 1: each lowers to
    a reshape, is linear, and transposes to a reshape back to its operand."""
    primitive = define_primitive(
        name,
        abstract_eval,
        lambda ctx, x, *, dimensions: ctx.op("stablehlo.reshape", [x]),
        traits=traits,
    )
    defjvp_linear(primitive)
    transpose_rules[primitive] = lambda ct, x, *, dimensions: [
        reshape_p.bind(ct, new_sizes=x.aval.shape, dimensions=None)
    ]
    return primitive


squeeze_p = _define_unit_axes("squeeze", _squeeze_abstract_eval, traits=("cheap",))


def _squeeze_batch_rule(axis_size, vals, dims, *, dimensions):
    (x,), (bdim,) = vals, dims
    dimensions = shift_axes(dimensions, bdim)
    return squeeze_p.bind(x, dimensions=dimensions), bdim - sum(
        d < bdim for d in dimensions
    )


batch_rules[squeeze_p] = _squeeze_batch_rule


def _expand_dims_abstract_eval(x: ShapedArray, *, dimensions):
    out_ndim = x.ndim + len(dimensions)
    dims = check_axes("expand_dims", dimensions, out_ndim)
    shape = list(x.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return x.update(shape=shape)


expand_dims_p = _define_unit_axes(
    "expand_dims", _expand_dims_abstract_eval, traits=("cheap",)
)


def _expand_dims_batch_rule(axis_size, vals, dims, *, dimensions):
    x = batch_to_front(vals[0], axis_size, dims[0])
    return expand_dims_p.bind(x, dimensions=tuple(d + 1 for d in dimensions)), 0


batch_rules[expand_dims_p] = _expand_dims_batch_rule


# ---- slice -------------------------------------------------------------------
def _slice_abstract_eval(x: ShapedArray, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise OlympusTypeError(
            f"slice: start_indices, limit_indices and strides need one entry per "
            f"dimension of {x.str_short()}"
        )
    shape = []
    for d, lo, hi, st in zip(x.shape, start_indices, limit_indices, strides):
        if not (0 <= lo <= hi <= d) or st < 1:
            raise OlympusTypeError(
                f"slice: bounds {tuple(start_indices)}:{tuple(limit_indices)} "
                f"(strides {tuple(strides)}) do not fit {x.str_short()}"
            )
        shape.append((hi - lo + st - 1) // st)
    return x.update(shape=shape)


def _slice_lower(ctx, x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * len(start_indices)
    attrs = (
        f"start_indices = {i64_array(start_indices)}, limit_indices = "
        f"{i64_array(limit_indices)}, strides = {i64_array(strides)}"
    )
    return ctx.op("stablehlo.slice", [x], attrs)


slice_p = define_primitive(
    "slice", _slice_abstract_eval, _slice_lower, traits=("cheap",)
)


def _insert(entries, index: int, value) -> tuple:
    return (*entries[:index], value, *entries[index:])


def _slice_batch_rule(
    axis_size, vals, dims, *, start_indices, limit_indices, strides=None
):
    (x,), (bdim,) = vals, dims
    return slice_p.bind(
        x,
        start_indices=_insert(start_indices, bdim, 0),
        limit_indices=_insert(limit_indices, bdim, axis_size),
        strides=None if strides is None else _insert(strides, bdim, 1),
    ), bdim


batch_rules[slice_p] = _slice_batch_rule


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides=None):
    """The cotangent goes back where the slice came from, zeros elsewhere."""
    shape = x.aval.shape
    strides = strides or (1,) * len(shape)
    config = []
    for d, lo, st, n in zip(shape, start_indices, strides, aval_of(ct).shape):
        covered = lo + n + max(n - 1, 0) * (st - 1)
        config.append((lo, d - covered, st - 1))
    zero = np.zeros((), aval_of(ct).dtype)[()]
    return [pad_p.bind(ct, zero, padding_config=tuple(config))]


defjvp_linear(slice_p)
transpose_rules[slice_p] = _slice_transpose


# ---- dynamic_slice / dynamic_update_slice ------------------------------------
def _check_indices(name: str, operand: ShapedArray, indices) -> None:
    if len(indices) != operand.ndim:
        raise OlympusTypeError(
            f"{name}: needs {operand.ndim} start indices for {operand.str_short()}, "
            f"got {len(indices)}"
        )
    for i in indices:
        if i.shape != () or not dtypes.is_integer(i.dtype):
            raise OlympusTypeError(
                f"{name}: start indices must be integer scalars, got {i.str_short()}"
            )
    if len({i.dtype for i in indices}) > 1:
        raise OlympusTypeError(f"{name}: start indices must share one dtype")


def _dynamic_slice_abstract_eval(x: ShapedArray, *indices, slice_sizes):
    _check_indices("dynamic_slice", x, indices)
    sizes = _shape_tuple("dynamic_slice", slice_sizes)
    if len(sizes) != x.ndim or any(s > d for s, d in zip(sizes, x.shape)):
        raise OlympusTypeError(
            f"dynamic_slice: slice_sizes {sizes} do not fit {x.str_short()}"
        )
    return x.update(shape=sizes)


def _dynamic_slice_lower(ctx, x, *indices, slice_sizes):
    return ctx.op(
        "stablehlo.dynamic_slice",
        [x, *indices],
        f"slice_sizes = {i64_array(slice_sizes)}",
    )


dynamic_slice_p = define_primitive(
    "dynamic_slice", _dynamic_slice_abstract_eval, _dynamic_slice_lower
)


# Batching: in lax/slicing.py (per-example starts make a gather there).


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    """Linear in the operand; the start indices have no derivative."""
    out = dynamic_slice_p.bind(*primals, slice_sizes=slice_sizes)
    if is_zero(tangents[0]):
        return out, Zero(aval_of(out))
    return out, dynamic_slice_p.bind(tangents[0], *primals[1:], slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *indices, slice_sizes):
    zeros = zeros_like_aval(x.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
transpose_rules[dynamic_slice_p] = _dynamic_slice_transpose


def _dynamic_update_slice_abstract_eval(x: ShapedArray, update: ShapedArray, *indices):
    _check_indices("dynamic_update_slice", x, indices)
    same_dtypes("dynamic_update_slice", (x, update))
    if update.ndim != x.ndim or any(u > d for u, d in zip(update.shape, x.shape)):
        raise OlympusTypeError(
            f"dynamic_update_slice: update {update.str_short()} does not fit {x.str_short()}"
        )
    return x.update(weak_type=x.weak_type and update.weak_type)


dynamic_update_slice_p = define_primitive(
    "dynamic_update_slice",
    _dynamic_update_slice_abstract_eval,
    lambda ctx, x, update, *indices: ctx.op(
        "stablehlo.dynamic_update_slice", [x, update, *indices]
    ),
)


# Batching: in lax/slicing.py (per-example starts make a scatter there).


def _dynamic_update_slice_jvp(primals, tangents):
    """Linear in (operand, update) jointly; indices have no derivative."""
    out = dynamic_update_slice_p.bind(*primals)
    t_x, t_update = tangents[:2]
    if is_zero(t_x) and is_zero(t_update):
        return out, Zero(aval_of(out))
    return out, dynamic_update_slice_p.bind(
        instantiate(t_x), instantiate(t_update), *primals[2:]
    )


def _dynamic_update_slice_transpose(ct, x, update, *indices):
    ct_x = ct_update = None
    if is_undefined(x):
        ct_x = dynamic_update_slice_p.bind(ct, zeros_like_aval(update.aval), *indices)
    if is_undefined(update):
        ct_update = dynamic_slice_p.bind(ct, *indices, slice_sizes=update.aval.shape)
    return [ct_x, ct_update] + [None] * len(indices)


jvp_rules[dynamic_update_slice_p] = _dynamic_update_slice_jvp
transpose_rules[dynamic_update_slice_p] = _dynamic_update_slice_transpose


# ---- concatenate -------------------------------------------------------------
def _concatenate_abstract_eval(*xs: ShapedArray, dimension: int):
    if not xs:
        raise OlympusTypeError("concatenate needs at least one operand")
    dtype = same_dtypes("concatenate", xs)
    ndim = xs[0].ndim
    if not 0 <= dimension < max(ndim, 1) or ndim == 0:
        raise OlympusTypeError(
            f"concatenate: dimension {dimension} out of range for rank {ndim}"
        )
    for x in xs:
        if x.ndim != ndim or any(
            a != b
            for i, (a, b) in enumerate(zip(x.shape, xs[0].shape))
            if i != dimension
        ):
            shapes = ", ".join(x.str_short() for x in xs)
            raise OlympusTypeError(
                f"concatenate: operands must agree except along dimension {dimension}, got {shapes}"
            )
    shape = list(xs[0].shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, dtype, all(x.weak_type for x in xs))


concatenate_p = define_primitive(
    "concatenate",
    _concatenate_abstract_eval,
    lambda ctx, *xs, dimension: ctx.op(
        "stablehlo.concatenate", list(xs), f"dimension = {dimension} : i64"
    ),
    traits=("cheap",),
)


def _concatenate_batch_rule(axis_size, vals, dims, *, dimension):
    """Every operand gets its batch axis where the first batched one has it."""
    bdim = next(d for d in dims if d is not None)
    xs = [move_batch_axis(x, axis_size, d, bdim) for x, d in zip(vals, dims)]
    return concatenate_p.bind(*xs, dimension=shift_axes((dimension,), bdim)[0]), bdim


batch_rules[concatenate_p] = _concatenate_batch_rule


def _concatenate_transpose(ct, *xs, dimension):
    """Each operand's cotangent is its slice of the output's."""
    cts, start = [], 0
    shape = aval_of(ct).shape
    for x in xs:
        size = (
            x.aval.shape[dimension] if is_undefined(x) else aval_of(x).shape[dimension]
        )
        if is_undefined(x):
            lo = tuple(start if d == dimension else 0 for d in range(len(shape)))
            hi = tuple(
                start + size if d == dimension else n for d, n in enumerate(shape)
            )
            cts.append(
                slice_p.bind(ct, start_indices=lo, limit_indices=hi, strides=None)
            )
        else:
            cts.append(None)
        start += size
    return cts


defjvp_linear(concatenate_p)
transpose_rules[concatenate_p] = _concatenate_transpose


# ---- pad ---------------------------------------------------------------------
def _pad_abstract_eval(x: ShapedArray, padding_value: ShapedArray, *, padding_config):
    same_dtypes("pad", (x, padding_value))
    if padding_value.shape != ():
        raise OlympusTypeError(
            f"pad: padding value must be a scalar, got {padding_value.str_short()}"
        )
    if len(padding_config) != x.ndim:
        raise OlympusTypeError(
            f"pad: padding_config needs {x.ndim} (low, high, interior) triples"
        )
    shape = []
    for d, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            raise OlympusTypeError("pad: interior padding must be non-negative")
        size = lo + hi + d + max(d - 1, 0) * interior
        if size < 0:
            raise OlympusTypeError(
                f"pad: padding {padding_config} leaves a negative dimension"
            )
        shape.append(size)
    return x.update(shape=shape)


def _pad_lower(ctx, x, padding_value, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    attrs = (
        f"edge_padding_low = {i64_array(lo)}, edge_padding_high = {i64_array(hi)}, "
        f"interior_padding = {i64_array(interior)}"
    )
    return ctx.op("stablehlo.pad", [x, padding_value], attrs)


pad_p = define_primitive("pad", _pad_abstract_eval, _pad_lower)


def _pad_batch_rule(axis_size, vals, dims, *, padding_config):
    """A per-example padding value is written where a padded mask is false."""
    (x, padding_value), (x_bdim, value_bdim) = vals, dims
    if value_bdim is None:
        config = _insert(padding_config, x_bdim, (0, 0, 0))
        return pad_p.bind(x, padding_value, padding_config=config), x_bdim
    x = batch_to_front(x, axis_size, x_bdim)
    config = ((0, 0, 0), *padding_config)
    aval = aval_of(x)
    padded = pad_p.bind(x, np.zeros((), aval.dtype)[()], padding_config=config)
    ones = broadcast_in_dim_p.bind(np.True_, shape=aval.shape, broadcast_dimensions=())
    inside = pad_p.bind(ones, np.False_, padding_config=config)
    out_shape = aval_of(padded).shape
    values = broadcast_in_dim_p.bind(
        batch_to_front(padding_value, axis_size, value_bdim),
        shape=out_shape,
        broadcast_dimensions=(0,),
    )
    return select_n_p.bind(inside, values, padded), 0


batch_rules[pad_p] = _pad_batch_rule


def _pad_transpose(ct, x, padding_value, *, padding_config):
    """Crops the edges (negative padding), then steps over the interior padding;
    the padding value's cotangent is everything that was padding."""
    from olympus.lax.reductions import reduce_sum_p

    zero = np.zeros((), aval_of(ct).dtype)[()]
    crop = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    cropped = pad_p.bind(ct, zero, padding_config=crop)
    shape = aval_of(cropped).shape
    ct_x = slice_p.bind(
        cropped,
        start_indices=(0,) * len(shape),
        limit_indices=shape,
        strides=tuple(i + 1 for _, _, i in padding_config),
    )
    ct_pad = None
    if is_undefined(padding_value):
        all_axes = tuple(range(len(shape)))
        total = reduce_sum_p.bind(ct, axes=all_axes)
        ct_pad = sub_p.bind(total, reduce_sum_p.bind(ct_x, axes=all_axes))
    return [ct_x if is_undefined(x) else None, ct_pad]


defjvp_linear(pad_p)
transpose_rules[pad_p] = _pad_transpose


# ---- iota --------------------------------------------------------------------
def _iota_abstract_eval(*, dtype, shape, dimension):
    shape = _shape_tuple("iota", shape)
    if not 0 <= dimension < len(shape):
        raise OlympusTypeError(
            f"iota: dimension {dimension} out of range for shape {shape}"
        )
    return ShapedArray(shape, dtype)


iota_p = define_primitive(
    "iota",
    _iota_abstract_eval,
    lambda ctx, *, dtype, shape, dimension: ctx.op(
        "stablehlo.iota", [], f"iota_dimension = {dimension} : i64"
    ),
)
batch_rules[iota_p] = unbatched_rule(iota_p)

defjvp_zero(iota_p)


# ---- rev ---------------------------------------------------------------------
def _rev_abstract_eval(x: ShapedArray, *, dimensions):
    check_axes("rev", dimensions, x.ndim)
    return x


rev_p = define_primitive(
    "rev",
    _rev_abstract_eval,
    lambda ctx, x, *, dimensions: ctx.op(
        "stablehlo.reverse", [x], f"dimensions = {i64_array(dimensions)}"
    ),
)


def _rev_batch_rule(axis_size, vals, dims, *, dimensions):
    (x,), (bdim,) = vals, dims
    return rev_p.bind(x, dimensions=shift_axes(dimensions, bdim)), bdim


batch_rules[rev_p] = _rev_batch_rule

defjvp_linear(rev_p)
transpose_rules[rev_p] = lambda ct, x, *, dimensions: [
    rev_p.bind(ct, dimensions=dimensions)
]


# ---- the array operations of autodiff's tangent algebra (transforms/ad_util.py) ----
def _zeros(aval: ShapedArray):
    """Zeros of `aval`: a broadcast scalar (a literal in the IR), weak where
    `aval` is, as JAX's (so a weak primal's cotangent stays weak)."""
    zero = np.zeros((), aval.dtype)[()]
    if aval.weak_type and aval.dtype.kind in "fc":
        python_zero = 0.0 if aval.dtype.kind == "f" else 0j
        if aval_of(python_zero).dtype == aval.dtype:
            zero = python_zero
    return broadcast_in_dim_p.bind(zero, shape=aval.shape, broadcast_dimensions=())


ad_ops["zeros"] = _zeros
ad_ops["add"] = add_p.bind
register_batch_ops(
    broadcast_in_dim=lambda x, shape, dims: broadcast_in_dim_p.bind(
        x,
        shape=tuple(int(d) for d in shape),
        broadcast_dimensions=tuple(int(d) for d in dims),
    ),
    transpose=lambda x, perm: transpose_p.bind(
        x, permutation=tuple(int(d) for d in perm)
    ),
)
