"""The collective primitives (psum, pmax, pmin, all_gather, psum_scatter,
ppermute, all_to_all, axis_index, pvary), each with all its rules beside it:
shape, lowering to StableHLO's collectives over the devices of the named
axes, jvp, transpose, batching (over another vmap's axis, and over vmap's own
`axis_name`, where the batch dimension is the axis) and which axes its result
varies along (lax/replication.py)."""

from __future__ import annotations

import math

import numpy as np

from olympus.backends.xla.lowering import (
    LoweringError,
)
from olympus.backends.xla.sharding import (
    AxisType,
    Mesh,
    mesh_in_scope,
)
from olympus.backends.xla.spmd import mesh_symbol
from olympus.ir.core import ShapedArray
from olympus.lax import ops, replication
from olympus.lax.base import define_primitive
from olympus.lax.parallel.axis_names import AxisIndexGroupsError, _grouped
from olympus.tracer.core import Tracer
from olympus.transforms.ad_util import is_zero
from olympus.transforms.batching import (
    axis_batch_rules,
    batch_rules,
    batch_to_front,
)
from olympus.transforms.jvp import defjvp_linear, defjvp_zero, jvp_rules
from olympus.transforms.linearize import transpose_rules


# ---- lowering helpers ------------------------------------------------------------------
def _manual_mesh(ctx) -> Mesh:
    mesh = ctx.emitter.manual_mesh
    if mesh is None:
        raise LoweringError(f"{ctx.primitive.name} outside a shard_map body")
    return mesh


def _groups(mesh: Mesh, axes: tuple) -> list[list[int]]:
    """Device positions (in the mesh's flat order) grouped along `axes`."""
    names = mesh.axis_names
    positions = np.arange(mesh.size).reshape(mesh.devices.shape)
    order = [i for i, n in enumerate(names) if n not in axes] + [
        names.index(a) for a in axes
    ]
    size = math.prod(mesh.shape[a] for a in axes)
    return positions.transpose(order).reshape(-1, size).tolist()


def _group_attrs(ctx, mesh: Mesh, axes: tuple, index_groups=None) -> str:
    groups = _groups(mesh, axes)
    if index_groups is not None:  # each row split by the indices along the axis
        groups = [[row[i] for i in g] for row in groups for g in index_groups]
        width = max(map(len, groups))  # uneven groups padded with -1, as XLA reads
        groups = [g + [-1] * (width - len(g)) for g in groups]
    channel = next(ctx.emitter.counter) + 1
    return (
        f"replica_groups = dense<{groups}> : tensor<{len(groups)}x{len(groups[0])}xi64>, "
        f"channel_handle = #stablehlo.channel_handle<handle = {channel}, type = 1>, "
        f"use_global_device_ids"
    )


def _group_size(ctx, axes: tuple) -> int:
    mesh = _manual_mesh(ctx)
    return math.prod(mesh.shape[a] for a in axes)


def _reshape(ctx, x: str, aval: ShapedArray) -> str:
    return ctx.emitter.op("stablehlo.reshape", [x], [aval])[0]


def _reduction_region(ctx, op: str) -> str:
    scalar = ShapedArray((), ctx.avals_in[0].dtype)
    return ctx.emitter.region(
        [scalar, scalar], lambda em, a, b: em.op(op, [a, b], [scalar])
    )


# ---- psum, pmax, pmin ------------------------------------------------------------------
def _all_reduce(op: str):
    def lower(ctx, x, *, axes, groups=None):
        if _group_size(ctx, axes) == 1:
            return x
        attrs = _group_attrs(ctx, _manual_mesh(ctx), axes, groups)
        return ctx.op(
            "stablehlo.all_reduce", [x], attrs, regions=[_reduction_region(ctx, op)]
        )

    return lower


def _same_aval(x, *, axes, groups=None):
    return x


psum_p = define_primitive("psum", _same_aval, _all_reduce("stablehlo.add"))
pmax_p = define_primitive("pmax", _same_aval, _all_reduce("stablehlo.maximum"))
pmin_p = define_primitive("pmin", _same_aval, _all_reduce("stablehlo.minimum"))
defjvp_linear(psum_p)
transpose_rules[psum_p] = lambda ct, x, *, axes, groups=None: [
    psum_p.bind(ct, axes=axes, **_grouped(groups))
]


def _extremum_jvp(prim):
    """Ties share the derivative equally: d pmax = psum(t * hit) / psum(hit)."""

    def rule(primals, tangents, *, axes, groups=None):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes, **_grouped(groups))
        if is_zero(t):
            return out, t
        hit = ops.convert_element_type(ops.eq(x, out), x.dtype)
        total = lambda v: psum_p.bind(v, axes=axes, **_grouped(groups))  # noqa: E731
        share = ops.div(total(ops.mul(t, hit)), total(hit))
        return out, share

    return rule


jvp_rules[pmax_p] = _extremum_jvp(pmax_p)
jvp_rules[pmin_p] = _extremum_jvp(pmin_p)
for _prim in (psum_p, pmax_p, pmin_p):
    batch_rules[_prim] = (
        lambda prim: (
            lambda axis_size, vals, dims, **params: (
                prim.bind(vals[0], **params),
                dims[0],
            )
        )
    )(_prim)


# ---- all_gather and psum_scatter -------------------------------------------------------
def _gathered_shape(shape: tuple, size: int, axis: int, tiled: bool) -> tuple:
    if tiled:
        return shape[:axis] + (shape[axis] * size,) + shape[axis + 1 :]
    return shape[:axis] + (size,) + shape[axis:]


def _all_gather_abstract_eval(x, *, axis_name, axis_size, axis, tiled, groups=None):
    return x.update(shape=_gathered_shape(x.shape, axis_size, axis, tiled))


def _all_gather_lower(ctx, x, *, axis_name, axis_size, axis, tiled, groups=None):
    aval = ctx.avals_in[0]
    if not tiled:
        aval = aval.update(shape=aval.shape[:axis] + (1,) + aval.shape[axis:])
        x = _reshape(ctx, x, aval)
    if axis_size == 1:
        return x
    attrs = f"all_gather_dim = {axis} : i64, " + _group_attrs(
        ctx, _manual_mesh(ctx), (axis_name,), groups
    )
    return ctx.op("stablehlo.all_gather", [x], attrs)


all_gather_p = define_primitive(
    "all_gather", _all_gather_abstract_eval, _all_gather_lower
)


def _psum_scatter_abstract_eval(
    x, *, axis_name, axis_size, scatter_dimension, tiled, groups=None
):
    d, shape = scatter_dimension, x.shape
    if tiled:
        return x.update(shape=shape[:d] + (shape[d] // axis_size,) + shape[d + 1 :])
    return x.update(shape=shape[:d] + shape[d + 1 :])


def _psum_scatter_lower(
    ctx, x, *, axis_name, axis_size, scatter_dimension, tiled, groups=None
):
    d, aval = scatter_dimension, ctx.avals_in[0]
    piece = aval.update(
        shape=aval.shape[:d] + (aval.shape[d] // axis_size,) + aval.shape[d + 1 :]
    )
    if axis_size > 1:
        attrs = f"scatter_dimension = {d} : i64, " + _group_attrs(
            ctx, _manual_mesh(ctx), (axis_name,), groups
        )
        region = _reduction_region(ctx, "stablehlo.add")
        (x,) = ctx.emitter.op("stablehlo.reduce_scatter", [x], [piece], attrs, [region])
    return x if tiled else _reshape(ctx, x, ctx.aval_out)


psum_scatter_p = define_primitive(
    "psum_scatter", _psum_scatter_abstract_eval, _psum_scatter_lower
)
defjvp_linear(all_gather_p)
defjvp_linear(psum_scatter_p)
transpose_rules[all_gather_p] = lambda ct, x, *, axis, **params: [
    psum_scatter_p.bind(ct, scatter_dimension=axis, **params)
]
transpose_rules[psum_scatter_p] = lambda ct, x, *, scatter_dimension, **params: [
    all_gather_p.bind(ct, axis=scatter_dimension, **params)
]


def _batch_front(prim, dim_param: str):
    """Batch rules of gather/scatter collectives: the batch goes in front."""

    def rule(batch_size, vals, dims, **params):
        x = batch_to_front(vals[0], batch_size, dims[0])
        params = dict(params, **{dim_param: params[dim_param] + 1})
        return prim.bind(x, **params), 0

    return rule


batch_rules[all_gather_p] = _batch_front(all_gather_p, "axis")
batch_rules[psum_scatter_p] = _batch_front(psum_scatter_p, "scatter_dimension")


# ---- ppermute and axis_index -----------------------------------------------------------
def _ppermute_lower(ctx, x, *, axis_name, perm):
    mesh = _manual_mesh(ctx)
    pairs = [[g[s], g[t]] for g in _groups(mesh, (axis_name,)) for s, t in perm]
    channel = next(ctx.emitter.counter) + 1
    attrs = (
        f"source_target_pairs = dense<{pairs}> : tensor<{len(pairs)}x2xi64>, "
        f"channel_handle = #stablehlo.channel_handle<handle = {channel}, type = 1>"
    )
    return ctx.op("stablehlo.collective_permute", [x], attrs)


ppermute_p = define_primitive(
    "ppermute", lambda x, *, axis_name, perm: x, _ppermute_lower
)
defjvp_linear(ppermute_p)
transpose_rules[ppermute_p] = lambda ct, x, *, axis_name, perm: [
    ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((t, s) for s, t in perm))
]
batch_rules[ppermute_p] = lambda axis_size, vals, dims, *, axis_name, perm: (
    ppermute_p.bind(vals[0], axis_name=axis_name, perm=perm),
    dims[0],
)


def _axis_index_lower(ctx, *, axis_name):
    mesh = _manual_mesh(ctx)
    i32 = ShapedArray((), np.dtype(np.int32))
    if mesh.shape[axis_name] == 1:
        return ctx.emitter.constant(np.int32(0), i32)
    automatic = [
        n for n, t in zip(mesh.axis_names, mesh.axis_types) if t is not AxisType.Manual
    ]
    if automatic and ctx.emitter.spmd:
        # XLA refuses partition_id where some axes are automatic (is it
        # replicated along them?); as JAX, it goes in a computation manual
        # over those axes too
        region = ctx.emitter.region(
            [], lambda em: [_device_axis_index(em, mesh, axis_name)], "sdy.return"
        )
        axes = ", ".join(f'"{n}"' for n in automatic)
        attrs = (
            f"in_shardings = #sdy.sharding_per_value<[]>, out_shardings = "
            f"#sdy.sharding_per_value<[<@{mesh_symbol(mesh)}, []>]>, "
            f"manual_axes = #sdy<manual_axes{{{axes}}}>"
        )
        return ctx.emitter.op("sdy.manual_computation", [], [i32], attrs, [region])[0]
    return _device_axis_index(ctx.emitter, mesh, axis_name)


def _device_axis_index(em, mesh: Mesh, axis_name: str) -> str:
    """This device's index along `axis_name`, from its partition id."""
    i32 = ShapedArray((), np.dtype(np.int32))
    (pid,) = em.op_typed("stablehlo.partition_id", [], ["tensor<ui32>"])
    (index,) = em.op("stablehlo.convert", [pid], [i32])
    names = mesh.axis_names
    stride = math.prod(mesh.shape[n] for n in names[names.index(axis_name) + 1 :])
    if stride > 1:
        (index,) = em.op(
            "stablehlo.divide", [index, em.constant(np.int32(stride), i32)], [i32]
        )
    size = em.constant(np.int32(mesh.shape[axis_name]), i32)
    return em.op("stablehlo.remainder", [index, size], [i32])[0]


axis_index_p = define_primitive(
    "axis_index",
    lambda *, axis_name: ShapedArray((), np.dtype(np.int32)),
    _axis_index_lower,
)
defjvp_zero(axis_index_p)
batch_rules[axis_index_p] = lambda axis_size, vals, dims, *, axis_name: (
    axis_index_p.bind(axis_name=axis_name),
    None,
)


# ---- all_to_all (tiled: split_axis is cut in axis_size pieces, concat_axis grows) ------
def _all_to_all_abstract_eval(
    x, *, axis_name, axis_size, split_axis, concat_axis, groups=None
):
    shape = list(x.shape)
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return x.update(shape=tuple(shape))


def _all_to_all_lower(
    ctx, x, *, axis_name, axis_size, split_axis, concat_axis, groups=None
):
    if axis_size == 1:
        return x
    attrs = (
        f"split_dimension = {split_axis} : i64, concat_dimension = {concat_axis} : i64, "
        f"split_count = {axis_size} : i64, "
        + _group_attrs(ctx, _manual_mesh(ctx), (axis_name,), groups)
    )
    return ctx.op("stablehlo.all_to_all", [x], attrs)


all_to_all_p = define_primitive(
    "all_to_all", _all_to_all_abstract_eval, _all_to_all_lower
)
defjvp_linear(all_to_all_p)
transpose_rules[all_to_all_p] = lambda ct, x, *, split_axis, concat_axis, **params: [
    all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis, **params)
]


def _all_to_all_batch(batch_size, vals, dims, **params):
    x = batch_to_front(vals[0], batch_size, dims[0])
    params = dict(
        params,
        split_axis=params["split_axis"] + 1,
        concat_axis=params["concat_axis"] + 1,
    )
    return all_to_all_p.bind(x, **params), 0


batch_rules[all_to_all_p] = _all_to_all_batch


# ---- collectives over a vmap's own axis: the batch dimension is the axis -------------
def _front(x, size: int, dim):
    """`x` with the vmapped axis in front (broadcast if `x` does not vary over it)."""
    return batch_to_front(x, size, dim)


def _reduce_over_batch(reduce, prim):
    def rule(axis_name, size, vals, dims, *, axes, groups=None):
        x = reduce(_front(vals[0], size, dims[0]), (0,))
        rest = tuple(a for a in axes if a != axis_name)
        return (prim.bind(x, axes=rest) if rest else x), None

    return rule


axis_batch_rules[psum_p] = _reduce_over_batch(ops.reduce_sum, psum_p)
axis_batch_rules[pmax_p] = _reduce_over_batch(ops.reduce_max, pmax_p)
axis_batch_rules[pmin_p] = _reduce_over_batch(ops.reduce_min, pmin_p)


def _vmap_all_gather(name, size, vals, dims, *, axis_size, axis, tiled, **_):
    x = _move_axis(_front(vals[0], size, dims[0]), 0, axis)
    if tiled:  # merge the stacked axis into the next one
        shape = (
            x.shape[:axis] + (x.shape[axis] * x.shape[axis + 1],) + x.shape[axis + 2 :]
        )
        x = ops.reshape(x, shape)
    return x, None


def _vmap_psum_scatter(
    name, size, vals, dims, *, axis_size, scatter_dimension, tiled, **_
):
    total = ops.reduce_sum(_front(vals[0], size, dims[0]), (0,))
    d = scatter_dimension
    if tiled:  # cut dimension d into `size` blocks, the block index in front
        shape = total.shape[:d] + (size, total.shape[d] // size) + total.shape[d + 1 :]
        total = ops.reshape(total, shape)
    return _move_axis(total, d, 0), 0


def _vmap_all_to_all(
    name, size, vals, dims, *, axis_size, split_axis, concat_axis, **_
):
    x = _front(vals[0], size, dims[0])  # [source, per-example dims]
    s = split_axis + 1
    shape = x.shape[:s] + (size, x.shape[s] // size) + x.shape[s + 1 :]
    x = _move_axis(ops.reshape(x, shape), s, 0)  # [target, source, per-example dims]
    c = concat_axis + 1
    x = _move_axis(x, 1, c)  # the sources just before the concatenated dimension
    merged = x.shape[:c] + (x.shape[c] * x.shape[c + 1],) + x.shape[c + 2 :]
    return ops.reshape(x, merged), 0


def _vmap_ppermute(name, size, vals, dims, *, perm, **_):
    x = _front(vals[0], size, dims[0])
    rows = [ops.full(x.shape[1:], 0, x.dtype)] * size
    for source, target in perm:
        rows[target] = ops.squeeze(
            ops.slice(x, (source,) + (0,) * (x.ndim - 1), (source + 1,) + x.shape[1:]),
            (0,),
        )
    return ops.concatenate([ops.expand_dims(r, (0,)) for r in rows], 0), 0


def _vmap_axis_index(name, size, vals, dims, **_):
    return ops.iota(np.int32, size), 0


axis_batch_rules[all_gather_p] = _vmap_all_gather
axis_batch_rules[psum_scatter_p] = _vmap_psum_scatter
axis_batch_rules[all_to_all_p] = _vmap_all_to_all
axis_batch_rules[ppermute_p] = _vmap_ppermute
axis_batch_rules[axis_index_p] = _vmap_axis_index


def _ungrouped(rule, api: str):
    """`rule` (over vmap's own axis), refusing axis_index_groups as JAX does."""

    def checked(name, size, vals, dims, **params):
        if params.get("groups") is not None:
            raise AxisIndexGroupsError(
                f"{api}: axis_index_groups are not supported over vmap's axis "
                f"{name!r} (nor in JAX); use shard_map or pmap for groups"
            )
        return rule(name, size, vals, dims, **params)

    return checked


for _prim in (psum_p, pmax_p, pmin_p, all_gather_p, psum_scatter_p, all_to_all_p):
    axis_batch_rules[_prim] = _ungrouped(axis_batch_rules[_prim], _prim.name)


def _move_axis(x, source: int, destination: int):
    ndim = len(x.shape)
    order = [d for d in range(ndim) if d != source]
    order.insert(destination, source)
    return x if order == list(range(ndim)) else ops.transpose(x, tuple(order))


# ---- which axes a collective's result varies along (lax/replication.py) ------------
def _equal_along(key: str):
    def rule(params, operands):
        names = frozenset(params[key] if key == "axes" else (params[key],))
        if params.get("groups") is not None:  # equal within each group only
            return [operands[0] | names]
        return [operands[0] - names]

    return rule


def _varies_along(params, operands):
    return [frozenset().union(*operands) | {params["axis_name"]}]


for _prim, _key in [(psum_p, "axes"), (pmax_p, "axes"), (pmin_p, "axes")]:
    replication.rules[_prim.name] = _equal_along(_key)
replication.rules[all_gather_p.name] = _equal_along("axis_name")
for _prim in (psum_scatter_p, ppermute_p, all_to_all_p, axis_index_p):
    replication.rules[_prim.name] = _varies_along
    replication.introduced[_prim.name] = lambda params: frozenset([params["axis_name"]])


# ---- pvary: a value declared varying along axes (only the replication check sees it) --
pvary_p = define_primitive("pvary", lambda x, *, axes: x, lambda ctx, x, *, axes: x)
pvary_p.def_impl(lambda x, *, axes: x)
defjvp_linear(pvary_p)
# olympus's values carry no varying-axes type: an invariant input's cotangent
# is already summed at the shard_map boundary, so pvary transposes to itself.
transpose_rules[pvary_p] = lambda ct, x, *, axes: [ct]
batch_rules[pvary_p] = lambda axis_size, vals, dims, *, axes: (vals[0], dims[0])


def _vmap_pvary(axis_name, size, vals, dims, *, axes):
    rest = tuple(a for a in axes if a != axis_name)
    return (pvary_p.bind(vals[0], axes=rest) if rest else vals[0]), dims[0]


axis_batch_rules[pvary_p] = _vmap_pvary
replication.rules[pvary_p.name] = lambda params, operands: [
    operands[0] | frozenset(params["axes"])
]


# ---- vary_like: a value varying as another does (JAX's full_like keeps x's vma) ----
vary_like_p = define_primitive("vary_like", lambda x, like: x, lambda ctx, x, like: x)
vary_like_p.def_impl(lambda x, like: x)
jvp_rules[vary_like_p] = lambda primals, tangents: (
    vary_like_p.bind(*primals),
    tangents[0] if is_zero(tangents[0]) else vary_like_p.bind(tangents[0], primals[1]),
)
transpose_rules[vary_like_p] = lambda ct, x, like: [ct, None]
batch_rules[vary_like_p] = lambda axis_size, vals, dims: (vals[0], dims[0])
replication.rules[vary_like_p.name] = lambda params, operands: [
    operands[0] | operands[1]
]


def varying_like(out, like):
    """`out`, varying along the mesh axes `like` does inside a shard_map body
    (zeros_like's and full_like's result, as JAX types them), so a loop
    carry made from them varies as the body's result does."""
    mesh = mesh_in_scope()
    if mesh is None or not isinstance(like, Tracer):
        return out
    if not mesh.abstract_mesh.manual_axes:
        return out
    return vary_like_p.bind(out, like)
