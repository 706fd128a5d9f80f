"""Per-device code: `shard_map` and the collectives its body may call.

`shard_map(f, mesh, in_specs, out_specs)` runs `f` once per device of `mesh`
on that device's block of each argument (its PartitionSpec says how the
argument is split); the body sees local shapes and may combine values across
a mesh axis with a collective: `psum`, `pmean`, `pmax`, `pmin`, `all_gather`,
`psum_scatter`, `ppermute`, `all_to_all`, `axis_index`. An output's spec says how the
per-device results form the global one; an output not split over a mesh axis
must be equal along it (e.g. the result of a `psum` over that axis), which
`check_rep` verifies when the body is traced (lax/replication.py).

It lowers to Shardy's `sdy.manual_computation` (every mesh axis manual) and
its collectives to StableHLO's (`all_reduce`, `all_gather`, `reduce_scatter`,
`collective_permute`, `all_to_all`, `partition_id`) over the devices of the named axes;
XLA's SPMD partitioner places them.

Derivatives: collectives are linear (psum's transpose is psum, all_gather's
is psum_scatter, ppermute's the inverse permutation). A shard_map's jvp is two
shard_maps (outputs; tangents, recomputing what they need), so linearize
stages only the tangent one; its transpose treats an input replicated over a
mesh axis as broadcast (its cotangent is a psum over that axis) and an output
replicated over one as read from the axis's first device.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from olympus import caches
from olympus.backends.xla.array import Array
from olympus.backends.xla.dispatch import buffer_of, compile_olympuspr
from olympus.backends.xla.lowering import (
    LoweringError,
    build_module,
    lower_closed_inline,
)
from olympus.backends.xla.lowering import lowering_rules
from olympus.backends.xla.sharding import (
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    explicit_aval,
    flat_shardings,
    mesh_in_scope,
)
from olympus.backends.xla.spmd import ShardedExecutable, mesh_symbol, plan_layout
from olympus.ir import dtypes
from olympus.ir.core import Eqn, Olympuspr, Primitive, ShapedArray, Var
from olympus.ir.core import all_primitives
from olympus.lax import ops, replication
from olympus.lax.base import define_primitive
from olympus.tracer import axes as axes_env
from olympus.tracer.core import Tracer, user_source_info
from olympus.tracer.evaluation import eval_program
from olympus.tracer.pytree import tree_flatten, tree_map, tree_paths, tree_unflatten
from olympus.tracer.staging import DebugInfo, function_name, trace_sub_program
from olympus.transforms.ad_util import Zero, is_zero
from olympus.transforms.batching import (
    axis_batch_rules,
    batch_rules,
    batch_to_front,
    shadowing,
)
from olympus.transforms.jvp import defjvp_linear, defjvp_zero, jvp_rules
from olympus.transforms.linearize import backward_pass, transpose_rules
from olympus.transforms.programs import (
    cached_batch_program,
    cached_jvp_program,
    cached_program,
    cached_transpose_program,
    partial_eval_program,
    transpose_call,
)
from olympus.transforms.ad_util import instantiate


class UnboundAxisNameError(NameError):
    """A collective naming an axis no enclosing shard_map binds."""


class CollectiveShapeError(ValueError):
    """A collective's operand or arguments do not fit its axis: a dimension
    that must equal (or be divisible by) the axis size, an axis out of
    range, or a `perm` that is not a partial permutation."""


class ShardMapReplicationError(ValueError):
    """A shard_map output whose out_spec leaves a mesh axis out (declaring it
    equal on every device along that axis) may vary along it: it would come
    back as one device's block (`check_rep`, lax/replication.py)."""


class AxisIndexGroupsError(NotImplementedError):
    """axis_index_groups where JAX takes none either: a collective over vmap's
    own axis."""


class AxisIndexGroupsCoverError(ValueError):
    """axis_index_groups that do not hold each index of the axis exactly once."""


def _bad(message: str) -> CollectiveShapeError:
    site = user_source_info()
    return CollectiveShapeError(message + (f" (at {site})" if site is not None else ""))


def _dimension(api: str, axis: int, ndim: int, what: str, aval) -> int:
    if not -ndim <= axis < ndim:
        raise _bad(f"{api}: {what}={axis} is out of range for {aval.str_short()}")
    return axis % ndim


# ---- the axis environment (olympus/tracer/axes.py) ------------------------------------
def _axis_size(name: str, api: str) -> int:
    size = axes_env.axis_size(name)
    if size is not None:
        return size
    site = user_source_info()
    raise UnboundAxisNameError(
        f"{api}: axis name {name!r} is not bound here (bound: {axes_env.names() or 'none'}); "
        f"collectives name an axis of an enclosing shard_map's mesh or vmap's axis_name"
        + (f" (at {site})" if site is not None else "")
    )


def _axes(axis_name, api: str) -> tuple:
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        _axis_size(n, api)
    return names


def _index_groups(groups, axes: tuple, api: str, even: bool = False):
    """`axis_index_groups` as a tuple of tuples of indices along `axes` (the
    first axis major, as axis_index of them counts; None: one group of all),
    checked to cover them exactly once; `even`: the groups must be of one
    size (the gathering collectives)."""
    if groups is None:
        return None
    groups = tuple(tuple(int(i) for i in g) for g in groups)
    size = math.prod(_axis_size(a, api) for a in axes)
    if sorted(i for g in groups for i in g) != list(range(size)):
        raise AxisIndexGroupsCoverError(
            f"{api}: axis_index_groups must cover all indices exactly once (the "
            f"indices 0..{size - 1} along {axes}); got {groups}"
        )
    if even and len({len(g) for g in groups}) > 1:
        raise _bad(f"{api}: axis_index_groups {groups} must all be of one size")
    return groups


def _grouped(groups) -> dict:
    """The `groups` param of a collective's bind: absent for one group of all."""
    return {} if groups is None else {"groups": groups}


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


class PcastError(ValueError):
    """lax.pcast to a state olympus does not have ('reduced', 'unreduced')."""


def pcast(x, axis_name, *, to: str):
    """`x` marked to vary along `axis_name`; the values are unchanged.

    `x` (a pytree) cast to vary along `axis_name` (JAX's `lax.pcast(...,
    to='varying')`, the old `lax.pvary`): the value is unchanged; shard_map's
    replication check then treats it as differing between devices there.

    Args:
      x: a pytree of arrays.
      axis_name: the axis name (or a tuple of names).
      to: 'varying'.

    Returns:
      x, marked as varying along axis_name.

    Raises:
      PcastError: `to` is not 'varying' (a ValueError).
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> mesh = olympus.make_mesh((1,), ('i',))
      >>> f = lambda v: lax.pcast(v, 'i', to='varying')
      >>> olympus.shard_map(f, mesh=mesh, in_specs=olympus.P(), out_specs=olympus.P('i'))(jnp.ones(2))
      Array([1., 1.], dtype=float32)
    """
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"pcast: axis_name must be a str or a tuple, got {axis_name}")
    if not axis_name:
        return x
    if to != "varying":
        raise PcastError(
            f"pcast(to={to!r}): olympus casts only to 'varying' (it has no reduced "
            f"or unreduced types); to sum over {axis_name!r} use lax.psum{_site()}"
        )
    axes = _axes(axis_name, "pcast")
    return tree_map(lambda v: pvary_p.bind(v, axes=axes), x)


def pvary(x, axis_name):
    """`pcast(x, axis_name, to='varying')` (JAX's name before 0.10)."""
    return pcast(x, axis_name, to="varying")


# ---- the public collectives ------------------------------------------------------------
def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of `x` over the devices along `axis_name`, on each of them.

    The all-reduce of data-parallel training: inside shard_map (or vmap
    with axis_name, pmap), every participant gets the total.

    Args:
      x: a pytree of arrays.
      axis_name: a mesh axis name of an enclosing shard_map (or vmap/pmap
        axis name), or a tuple of them.
      axis_index_groups: None (all devices along the axis), or lists of
        indices along the axes named (the first axis major, as axis_index
        counts), each index in exactly one: each group sums over its own
        members (under shard_map and pmap).

    Returns:
      A pytree like x holding the sums.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing map.
      AxisIndexGroupsCoverError: the groups miss or repeat an index.
      AxisIndexGroupsError: groups over vmap's axis (JAX has none there).

    Example:
      >>> P = olympus.sharding.PartitionSpec
      >>> mesh = olympus.make_mesh((1,), ("i",))
      >>> f = olympus.shard_map(lambda v: lax.psum(v, "i"), mesh, P("i"), P())
      >>> f(jnp.ones(2))
      Array([1., 1.], dtype=float32)
    """
    axes = _axes(axis_name, "psum")
    groups = _index_groups(axis_index_groups, axes, "psum")
    leaves = tree_flatten(x)[0]
    if groups is not None and not any(isinstance(v, Tracer) for v in leaves):
        # as JAX: constants are summed statically, by the first group's size
        return tree_map(lambda v: v * _like_constant(v, len(groups[0])), x)
    return tree_map(lambda v: psum_p.bind(v, axes=axes, **_grouped(groups)), x)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of `x` over the devices along `axis_name`, on each of them.

    Args:
      x: a pytree of arrays.
      axis_name: a mapped axis name, or a tuple of them.
      axis_index_groups: as psum's; the sum is divided by the first group's
        size (JAX's convention: give groups of one size).

    Returns:
      A pytree like x holding the means.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing map.

    Example:
      >>> olympus.vmap(lambda v: lax.pmean(v, "b"), axis_name="b")(jnp.arange(4.0))
      Array([1.5, 1.5, 1.5, 1.5], dtype=float32)
    """
    axes = _axes(axis_name, "pmean")
    groups = _index_groups(axis_index_groups, axes, "pmean")
    size = math.prod(_axis_size(a, "pmean") for a in axes)
    size = size if groups is None else len(groups[0])
    total = lambda v: psum_p.bind(v, axes=axes, **_grouped(groups))  # noqa: E731
    return tree_map(lambda v: ops.div(total(v), _like(v, size)), x)


def _like_constant(v, value):
    """`value` of the Python or NumPy type of the constant `v`."""
    return type(v)(value) if isinstance(v, (int, float, complex)) else _like(v, value)


def _like(v, value):
    return np.asarray(value, dtype=np.asarray(0, v.dtype).dtype)[()]


def pmax(x, axis_name, *, axis_index_groups=None):
    """The elementwise maximum of `x` over the devices along `axis_name`.

    Args:
      x: a pytree of arrays.
      axis_name: the mapped axis' name (or a tuple of names).
      axis_index_groups: as psum's: each group reduces over its own members.

    Returns:
      A pytree of x's structure holding the maxima.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> olympus.vmap(lambda v: lax.pmax(v, 'i'), axis_name='i')(jnp.array([1.0, 3.0]))
      Array([3., 3.], dtype=float32)
    """
    axes = _axes(axis_name, "pmax")
    groups = _grouped(_index_groups(axis_index_groups, axes, "pmax"))
    return tree_map(lambda v: pmax_p.bind(v, axes=axes, **groups), x)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The elementwise minimum of `x` over the devices along `axis_name`.

    Args:
      x: a pytree of arrays.
      axis_name: the mapped axis' name (or a tuple of names).
      axis_index_groups: as psum's: each group reduces over its own members.

    Returns:
      A pytree of x's structure holding the minima.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> olympus.vmap(lambda v: lax.pmin(v, 'i'), axis_name='i')(jnp.array([1.0, 3.0]))
      Array([1., 1.], dtype=float32)
    """
    axes = _axes(axis_name, "pmin")
    groups = _grouped(_index_groups(axis_index_groups, axes, "pmin"))
    return tree_map(lambda v: pmin_p.bind(v, axes=axes, **groups), x)


class AllGatherToError(ValueError):
    """all_gather's `to` not 'varying', 'invarying' or 'reduced'."""


class AllGatherToUnsupportedError(NotImplementedError):
    """all_gather(to='reduced') (olympus has no reduced type), or
    to='invarying' with axis_index_groups (JAX refuses it too)."""


def _check_gather_to(to: str, groups) -> None:
    if to not in ("varying", "invarying", "reduced"):
        raise AllGatherToError(
            f"all_gather: to={to!r}; allowed values are 'varying', 'invarying' "
            f"and 'reduced' (JAX's output types)"
        )
    if to == "reduced" or (to == "invarying" and groups is not None):
        raise AllGatherToUnsupportedError(
            f"all_gather(to={to!r})"
            + (" with axis_index_groups" if groups is not None else "")
            + ": olympus's values carry no reduced type; gather to='varying' "
            "(the default) and psum where a reduction is meant"
        )


def all_gather(
    x,
    axis_name: str,
    *,
    axis_index_groups=None,
    axis: int = 0,
    tiled: bool = False,
    to: str = "varying",
):
    """Every participant's `x` along `axis_name`, gathered on each of them.

    Args:
      x: an array.
      axis_name: a mapped axis name.
      axis: where the gathered axis goes.
      axis_index_groups: None, or lists of indices along the axis, each
        index in exactly one, all of one size: each group gathers its own
        members' `x` (the group's size replaces the axis size).
      tiled: if True, concatenate along `axis` instead of stacking.
      to: JAX's output type, 'varying' or 'invarying' (the same values:
        olympus's shard_map checks replication statically, with no types);
        'reduced' raises AllGatherToError, as there is no reduced type.

    Returns:
      The gathered array.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing map.
      AllGatherToError: `to` is not one of JAX's three.
      AllGatherToUnsupportedError: to='reduced', or 'invarying' with groups.

    Example:
      >>> olympus.vmap(lambda v: lax.all_gather(v, "b"), axis_name="b")(jnp.arange(2.0))
      Array([[0., 1.], [0., 1.]], dtype=float32)
    """
    size = _axis_size(axis_name, "all_gather")
    groups = _index_groups(axis_index_groups, (axis_name,), "all_gather", even=True)
    _check_gather_to(to, groups)
    size = size if groups is None else len(groups[0])
    return tree_map(
        lambda v: all_gather_p.bind(
            v,
            axis_name=axis_name,
            axis_size=size,
            axis=_dimension("all_gather", axis, v.ndim + (not tiled), "axis", v.aval),
            tiled=tiled,
            **_grouped(groups),
        ),
        x,
    )


def psum_scatter(
    x,
    axis_name: str,
    *,
    scatter_dimension: int = 0,
    axis_index_groups=None,
    tiled: bool = False,
):
    """The sum of `x` over devices, each device keeping one piece.

    `psum(x)` split along `scatter_dimension` over the devices along
    `axis_name`: device i keeps piece i (`tiled`: a block; else the dimension,
    whose size must be the axis size, is dropped).

    Args:
      x: an array.
      axis_name: the mapped axis' name.
      scatter_dimension: the axis cut into one piece per device.
      axis_index_groups: None, or lists of indices along the axis, each
        index in exactly one, all of one size: each group sums and scatters
        among its own members (the group's size replaces the axis size).
      tiled: whether to keep the axis (True) or remove it (False).

    Returns:
      Each device's piece of the sum.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> f = lambda v: lax.psum_scatter(v, 'i')
      >>> olympus.vmap(f, axis_name='i')(jnp.ones((2, 2)))
      Array([2., 2.], dtype=float32)
    """
    size = _axis_size(axis_name, "psum_scatter")
    groups = _index_groups(axis_index_groups, (axis_name,), "psum_scatter", True)
    size = size if groups is None else len(groups[0])
    d = _dimension(
        "psum_scatter", scatter_dimension, x.ndim, "scatter_dimension", x.aval
    )
    if x.shape[d] % size if tiled else x.shape[d] != size:
        raise _bad(
            f"psum_scatter: dimension {d} of {x.aval.str_short()} must be "
            f"{'divisible by' if tiled else 'equal to'} the size {size} of axis {axis_name!r}"
        )
    return psum_scatter_p.bind(
        x,
        axis_name=axis_name,
        axis_size=size,
        scatter_dimension=d,
        tiled=tiled,
        **_grouped(groups),
    )


def ppermute(x, axis_name: str, perm):
    """Sends each device's `x` to the device `perm` pairs it with.

    Sends device s's `x` to device t for each (s, t) in `perm` (indices along
    `axis_name`); a device no pair targets gets zeros.

    Args:
      x: a pytree of arrays.
      axis_name: the mapped axis' name.
      perm: (source, target) index pairs; each index at most once per side.

    Returns:
      A pytree of x's structure; devices that no pair targets get zeros.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> olympus.vmap(lambda v: lax.ppermute(v, 'i', [(0, 1), (1, 0)]), axis_name='i')(jnp.array([1.0, 2.0]))
      Array([2., 1.], dtype=float32)
    """
    size = _axis_size(axis_name, "ppermute")
    perm = tuple((int(s), int(t)) for s, t in perm)
    sources, targets = [s for s, _ in perm], [t for _, t in perm]
    if (
        len(set(sources)) < len(perm)
        or len(set(targets)) < len(perm)
        or not all(0 <= i < size for i in sources + targets)
    ):
        raise _bad(
            f"ppermute: perm={perm} is not a partial permutation of 0..{size - 1} "
            f"(the indices along axis {axis_name!r} of size {size}): each source "
            f"and each target at most once"
        )
    return tree_map(lambda v: ppermute_p.bind(v, axis_name=axis_name, perm=perm), x)


def all_to_all(
    x,
    axis_name: str,
    split_axis: int,
    concat_axis: int,
    *,
    axis_index_groups=None,
    tiled: bool = False,
):
    """Exchanges pieces of `x` between the devices along `axis_name`.

    Cuts `x` along `split_axis` into one piece per device along `axis_name`,
    sends piece i to device i, and joins what arrives along `concat_axis` (in
    device order). Not `tiled` (JAX's convention): `split_axis` has the axis's
    size and goes away, and the pieces stack as axis `concat_axis` of the
    result.

    Args:
      x: an array.
      axis_name: the mapped axis' name.
      split_axis: the axis cut into one piece per device.
      concat_axis: the axis the received pieces are joined along.
      axis_index_groups: None, or lists of indices along the axis, each
        index in exactly one, all of one size: pieces go between the members
        of each group (the group's size replaces the axis size).
      tiled: whether to keep split_axis (True) or to remove it and add a new
        axis (False).

    Returns:
      An array of x's dtype.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> f = lambda v: lax.all_to_all(v, 'i', 0, 0)
      >>> olympus.vmap(f, axis_name='i')(jnp.arange(4.0).reshape(2, 2))
      Array([[0., 2.],
             [1., 3.]], dtype=float32)
    """
    size = _axis_size(axis_name, "all_to_all")
    groups = _index_groups(axis_index_groups, (axis_name,), "all_to_all", True)
    size = size if groups is None else len(groups[0])
    split = _dimension("all_to_all", split_axis, x.ndim, "split_axis", x.aval)
    concat = _dimension("all_to_all", concat_axis, x.ndim, "concat_axis", x.aval)
    if x.shape[split] % size if tiled else x.shape[split] != size:
        raise _bad(
            f"all_to_all: dimension {split} of {x.aval.str_short()} must be "
            f"{'divisible by' if tiled else 'equal to'} the size {size} of axis {axis_name!r}"
        )
    params = dict(axis_name=axis_name, axis_size=size, **_grouped(groups))
    if tiled:
        return all_to_all_p.bind(x, split_axis=split, concat_axis=concat, **params)
    # As JAX does: the pieces stack as a new axis at `concat_axis` of the result
    # (made room for with size 1), and the cut axis goes; equal axes swap in place.
    if split == concat:
        return all_to_all_p.bind(x, split_axis=split, concat_axis=concat, **params)
    if split < concat:
        concat += 1
    x = ops.expand_dims(x, (concat,))
    split += concat < split
    out = all_to_all_p.bind(x, split_axis=split, concat_axis=concat, **params)
    return ops.squeeze(out, (split,))


def axis_index(axis_name: str):
    """This device's index along `axis_name` (an int32 scalar).

    Args:
      axis_name: the mapped axis' name.

    Returns:
      An int32 scalar.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> olympus.vmap(lambda v: lax.axis_index('i'), axis_name='i')(jnp.zeros(3))
      Array([0, 1, 2], dtype=int32)
    """
    _axis_size(axis_name, "axis_index")
    return axis_index_p.bind(axis_name=axis_name)


# ---- shard_map -------------------------------------------------------------------------
shard_map_p = Primitive("shard_map", multiple_results=True)
all_primitives["shard_map"] = shard_map_p


def _global_shape(shape: tuple, mesh: Mesh, spec: PartitionSpec) -> tuple:
    tiles = NamedSharding(mesh, spec)._tiling(len(shape), "shard_map").tiles
    return tuple(d * t for d, t in zip(shape, tiles))


def _shard_map_abstract_eval(
    *avals, olympuspr, mesh, in_specs, out_specs, name, manual_axes=None
):
    # on Explicit axes the results' types say their layout (out_specs), as JAX
    return [
        explicit_aval(
            a.update(shape=_global_shape(a.shape, mesh, s)), NamedSharding(mesh, s)
        )
        for a, s in zip(olympuspr.out_avals, out_specs)
    ]


def _per_value(mesh: Mesh, specs, avals, manual_axes=None) -> str:
    symbol = mesh_symbol(mesh)
    if manual_axes is None:  # every axis manual: closed dimensions
        values = [
            NamedSharding(mesh, s)
            .sdy_text(a.ndim, symbol)
            .removeprefix("#sdy.sharding")
            for s, a in zip(specs, avals)
        ]
    else:  # open along Auto axes, closed where the rest are Explicit (as JAX)
        automatic = set(mesh.abstract_mesh.auto_axes) - set(manual_axes)
        values = [
            _open_sdy(s, a.ndim, symbol, bool(automatic)) for s, a in zip(specs, avals)
        ]
    return f"#sdy.sharding_per_value<[{', '.join(values)}]>"


def _marked_manual(mesh: Mesh, manual_axes) -> Mesh:
    """`mesh` with `manual_axes` typed Manual: how a partly manual body's
    lowering tells its manual axes from the automatic ones."""
    kinds = [
        AxisType.Manual if n in manual_axes else t
        for n, t in zip(mesh.axis_names, mesh.axis_types)
    ]
    return Mesh(mesh.devices, mesh.axis_names, kinds)


def _open_sdy(spec: PartitionSpec, ndim: int, symbol: str, open_: bool) -> str:
    """A partly manual shard_map's operand sharding, as JAX writes it: each
    dimension split over its manual axes and, where the other axes are Auto,
    open (`?`) to XLA's propagation along them (`[{"i", ?}, {?}]`)."""
    dims = []
    for d in range(ndim):
        named = [f'"{n}"' for n in spec.axes(d)]
        dims.append("{" + ", ".join(named + ["?"] * open_) + "}")
    return f"<@{symbol}, [{', '.join(dims)}]>"


def _shard_map_lower(
    ctx, *args, olympuspr, mesh, in_specs, out_specs, name, manual_axes=None
):
    em = ctx.emitter
    if not em.spmd:  # one device: the body is the program
        outer, em.manual_mesh = em.manual_mesh, mesh
        try:
            return lower_closed_inline(em, olympuspr, args)
        finally:
            em.manual_mesh = outer

    body_mesh = _marked_manual(
        mesh, mesh.axis_names if manual_axes is None else manual_axes
    )

    def body(inner, *local):
        inner.manual_mesh = body_mesh
        return lower_closed_inline(inner, olympuspr, local)

    region = em.region(olympuspr.in_avals, body, terminator="sdy.return")
    manual = mesh.axis_names if manual_axes is None else manual_axes
    axes = ", ".join(f'"{n}"' for n in manual)
    ins = _per_value(mesh, in_specs, olympuspr.in_avals, manual_axes)
    outs = _per_value(mesh, out_specs, olympuspr.out_avals, manual_axes)
    attrs = (
        f"in_shardings = {ins}, out_shardings = {outs}, "
        f"manual_axes = #sdy<manual_axes{{{axes}}}>"
    )
    return em.op("sdy.manual_computation", list(args), ctx.avals_out, attrs, [region])


_executables = caches.register("shard_map executables", weakref.WeakKeyDictionary())


def _shard_map_impl(
    *args, olympuspr, mesh, in_specs, out_specs, name, manual_axes=None
):
    """Eagerly: one program holding just this shard_map, compiled once."""
    params = dict(
        olympuspr=olympuspr,
        mesh=mesh,
        in_specs=in_specs,
        out_specs=out_specs,
        name=name,
        **_partial(manual_axes),
    )
    avals = tuple(
        a.aval
        if isinstance(a, Array)
        else ShapedArray(np.shape(a), dtypes.canonicalize_dtype(np.result_type(a)))
        for a in args
    )
    per_body = _executables.setdefault(olympuspr, {})
    key = (mesh, in_specs, out_specs, avals, manual_axes)
    exe = per_body.get(key)
    if exe is None:
        invars = [Var(a) for a in avals]
        outvars = [Var(a) for a in _shard_map_abstract_eval(*avals, **params)]
        program = Olympuspr(
            [], invars, [Eqn(shard_map_p, params, invars, outvars)], outvars
        )
        layout = plan_layout(
            program,
            [NamedSharding(mesh, s) for s in in_specs],
            [NamedSharding(mesh, s) for s in out_specs],
        )
        exe = (
            compile_olympuspr(program, name)
            if layout is None
            else ShardedExecutable(build_module(program, name, layout=layout), layout)
        )
        per_body[key] = exe
    if isinstance(exe, ShardedExecutable):
        return exe.call(list(args))
    return exe.call([buffer_of(x) for x in args])


shard_map_p.def_abstract_eval(_shard_map_abstract_eval)
shard_map_p.def_impl(_shard_map_impl)
lowering_rules[shard_map_p] = _shard_map_lower


class Specs(tuple):
    """A shard_map's PartitionSpecs, one per operand or result; printed as
    one word (`Specs(PartitionSpec('x'), ...)`) so programs read back."""

    def __str__(self) -> str:
        return f"Specs({', '.join(map(repr, self))})"


def _partial(manual_axes) -> dict:
    """The `manual_axes` param of a partly manual shard_map (the manual axes,
    in mesh order); a wholly manual one has none, so its IR reads as before."""
    return {} if manual_axes is None else {"manual_axes": tuple(manual_axes)}


def _bind(sub, args, mesh, in_specs, out_specs, name, manual_axes=None):
    specs = Specs((PartitionSpec(),) * len(sub.consts) + tuple(in_specs))
    return shard_map_p.bind(
        *sub.consts,
        *args,
        olympuspr=sub.closed,
        mesh=mesh,
        in_specs=specs,
        out_specs=Specs(out_specs),
        name=name,
        **_partial(manual_axes),
    )


def _shard_map_jvp(
    primals, tangents, *, olympuspr, mesh, in_specs, out_specs, name, manual_axes=None
):
    outs = shard_map_p.bind(
        *primals,
        olympuspr=olympuspr,
        mesh=mesh,
        in_specs=in_specs,
        out_specs=out_specs,
        name=name,
        **_partial(manual_axes),
    )
    nonzero = [not is_zero(t) for t in tangents]
    jvp = cached_jvp_program(olympuspr, nonzero, f"jvp({name})")
    n_consts, n_out = len(jvp.consts), len(olympuspr.out_avals)
    tangent_part = trace_sub_program(
        lambda *a: eval_program(jvp.closed.olympuspr, [], a)[n_out:],
        jvp.closed.in_avals,
        DebugInfo("jvp", name, ()),
    )
    specs = (
        (PartitionSpec(),) * n_consts
        + tuple(in_specs)
        + tuple(s for s, nz in zip(in_specs, nonzero) if nz)
    )
    t_outs = _bind(
        tangent_part,
        [*jvp.consts, *primals, *[t for t in tangents if not is_zero(t)]],
        mesh,
        specs,
        out_specs,
        f"jvp({name})",
        manual_axes,
    )
    return outs, t_outs


def _unsplit_axes(mesh: Mesh, spec: PartitionSpec, ndim: int, manual_axes) -> tuple:
    """The manual axes (of size > 1) a value of this spec is not split over."""
    used = {n for d in range(ndim) for n in spec.axes(d)}
    manual = mesh.axis_names if manual_axes is None else manual_axes
    return tuple(
        n
        for n, size in mesh.shape.items()
        if size > 1 and n not in used and n in manual
    )


def _shard_map_transpose(
    cts, *args, olympuspr, mesh, in_specs, out_specs, name, manual_axes=None
):
    """The shared call transpose (`transpose_call`), with the body split before
    it is transposed (`_body_transpose`) and bound as a shard_map whose specs
    follow the operands that remain."""

    def unsplit(spec, aval) -> tuple:
        return _unsplit_axes(mesh, spec, aval.ndim, manual_axes)

    def bind(transposed, undefined, ct_nonzero, operands):
        out_avals, in_avals = olympuspr.out_avals, olympuspr.in_avals
        out_axes = [
            unsplit(s, a) for s, a, nz in zip(out_specs, out_avals, ct_nonzero) if nz
        ]
        in_axes = [unsplit(s, a) for s, a, u in zip(in_specs, in_avals, undefined) if u]
        n_defined = undefined.count(False)
        local = _replicated_transpose(transposed, n_defined, out_axes, in_axes, name)
        specs = (
            (PartitionSpec(),) * len(transposed.consts)
            + tuple(s for s, u in zip(in_specs, undefined) if not u)
            + tuple(s for s, nz in zip(out_specs, ct_nonzero) if nz)
        )
        ct_specs = [s for s, u in zip(in_specs, undefined) if u]
        transposed_name = f"transpose({name})"
        return _bind(
            local, operands, mesh, specs, ct_specs, transposed_name, manual_axes
        )

    return transpose_call(
        shard_map_p,
        cts,
        args,
        olympuspr,
        f"transpose({name})",
        transpose=_body_transpose,
        bind=bind,
    )


def _replicated_transpose(transposed, n_defined: int, out_axes, in_axes, name: str):
    """The per-device transposed body: the cotangent of an output replicated
    over manual axes (`out_axes`) counts once, on the first device along them,
    and the cotangent of an input replicated over some (`in_axes`) is summed
    over them."""
    n_consts = len(transposed.consts)

    def body(*vals):
        consts, rest = vals[:n_consts], list(vals[n_consts:])
        cts_local = [
            _first_device_only(ct, axes) for ct, axes in zip(rest[n_defined:], out_axes)
        ]
        outs = eval_program(
            transposed.closed.olympuspr, [], [*consts, *rest[:n_defined], *cts_local]
        )
        return [
            psum_p.bind(o, axes=axes) if axes else o for o, axes in zip(outs, in_axes)
        ]

    return trace_sub_program(
        body, transposed.closed.in_avals, DebugInfo("transpose", name, ())
    )


def _body_transpose(closed, undefined: list, ct_nonzero: list, name: str):
    """The transpose of a shard_map body linear in its `undefined` inputs.

    The body is a jvp program staged whole, so a loop in it carries primals
    beside tangents; the body is first split (partial evaluation: the primal
    work runs forward, a loop splits into a known and a linear one) and the
    linear rest transposed, as linearize does outside shard_map."""
    known, known_consts, staged, out_unknown, num_res = partial_eval_program(
        closed, list(undefined), name
    )
    if known_consts:  # the known part closes over tracers: transpose whole
        return cached_transpose_program(closed, undefined, ct_nonzero, name)
    n_defined = undefined.count(False)
    undefined_avals = [a for a, u in zip(closed.in_avals, undefined) if u]

    def transposed(*vals):
        defined, cts = vals[:n_defined], iter(vals[n_defined:])
        residuals = eval_program(known.olympuspr, known.consts, list(defined))
        residuals = residuals[len(residuals) - num_res :]
        cts_out = [
            next(cts) if nz else Zero(a) for a, nz in zip(closed.out_avals, ct_nonzero)
        ]
        cts_staged = [ct for ct, u in zip(cts_out, out_unknown) if u]
        primals = list(residuals) + [None] * len(undefined_avals)
        cts_in = backward_pass(staged.olympuspr, staged.consts, cts_staged, primals)
        return [instantiate(ct) for ct in cts_in[num_res:]]

    def build():
        avals = [a for a, u in zip(closed.in_avals, undefined) if not u]
        avals += [a for a, nz in zip(closed.out_avals, ct_nonzero) if nz]
        return trace_sub_program(transposed, avals, DebugInfo("transpose", name, ()))

    key = ("shard_map transpose", tuple(undefined), tuple(ct_nonzero), name)
    return cached_program(closed, key, build)


def _first_device_only(ct, axes: tuple):
    """The cotangent of an output replicated over `axes` belongs to the
    first device along them (the output is read from there); zeros elsewhere."""
    for axis in axes:
        first = ops.eq(axis_index_p.bind(axis_name=axis), np.int32(0))
        ct = ops.mul(ct, ops.convert_element_type(first, ct.dtype))
    return ct


def _shard_map_batch(
    axis_size, vals, dims, *, olympuspr, mesh, in_specs, out_specs, name,
    manual_axes=None,
):  # fmt: skip
    in_batched = [d is not None for d in dims]
    force_out = [False] * len(olympuspr.out_avals)
    with shadowing(mesh.axis_names):  # the body's "i" is the mesh's, not a vmap's
        batched, out_batched = cached_batch_program(
            olympuspr, axis_size, in_batched, force_out, name
        )
    vals = [
        v if d is None else batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)
    ]
    front = lambda s, b: PartitionSpec(None, *s) if b else s  # noqa: E731
    outs = _bind(
        batched,
        vals,
        mesh,
        [front(s, b) for s, b in zip(in_specs, in_batched)],
        [front(s, b) for s, b in zip(out_specs, out_batched)],
        name,
        manual_axes,
    )
    return outs, [0 if b else None for b in out_batched]


jvp_rules[shard_map_p] = _shard_map_jvp
transpose_rules[shard_map_p] = _shard_map_transpose
batch_rules[shard_map_p] = _shard_map_batch


def _flat_specs(specs, tree, mesh: Mesh, api: str) -> list[PartitionSpec]:
    named = tree_map(
        lambda s: NamedSharding(mesh, PartitionSpec() if s is None else s),
        specs,
        is_leaf=lambda s: s is None or isinstance(s, PartitionSpec),
    )
    return [s.spec for s in flat_shardings(named, tree, api)]


def _trace_body(f, name: str, mesh: Mesh, manual, in_tree, local: list, out_specs):
    """f traced on per-device avals with the mesh's manual axes bound."""
    box = {}

    def flat_fun(*xs):
        out_leaves, box["tree"] = tree_flatten(f(*tree_unflatten(in_tree, xs)))
        return out_leaves

    bound = {n: size for n, size in mesh.shape.items() if n in manual}
    kinds = [
        AxisType.Manual if n in manual else t
        for n, t in zip(mesh.axis_names, mesh.axis_types)
    ]
    inside = Mesh(mesh.devices, mesh.axis_names, kinds)  # get_abstract_mesh's view
    with axes_env.bound(bound), inside:
        sub = trace_sub_program(flat_fun, local, DebugInfo("shard_map", name, ()))
    outs_like = tree_unflatten(box["tree"], [0] * len(sub.out_avals))
    out_flat = _flat_specs(out_specs, outs_like, mesh, "shard_map out_specs")
    return sub, out_flat, box["tree"]


def _spec_axes(spec: PartitionSpec) -> frozenset:
    return frozenset(n for d in range(len(spec)) for n in spec.axes(d))


def _check_replication(sub, in_flat, out_flat, out_tree, name: str) -> None:
    """Raises ShardMapReplicationError if an output may vary along a mesh axis
    its out_spec leaves out (JAX's check_rep)."""
    program = sub.closed.olympuspr
    ins = [frozenset()] * len(sub.consts) + [_spec_axes(s) for s in in_flat]
    outs = replication.varying(program, ins)
    paths = tree_paths(tree_unflatten(out_tree, [0] * len(outs)), "output")
    made_by = {v: e for e in program.eqns for v in e.outvars}
    problems, missing = [], set()
    for path, var, axes, spec in zip(paths, program.outvars, outs, out_flat):
        extra = sorted(axes - _spec_axes(spec))
        if not extra:
            continue
        missing.update(extra)
        eqn = made_by.get(var) if isinstance(var, Var) else None
        where = (
            f"computed at {eqn.source_info}"
            if eqn is not None and eqn.source_info is not None
            else "an input of the body"
        )
        problems.append(
            f"  {path or 'output'} ({var.aval.str_short()}) may vary along "
            f"{', '.join(map(repr, extra))} but its out_spec {spec} declares it "
            f"equal on every device there; it is {where}"
        )
    if not problems:
        return
    site = user_source_info()
    axes = ", ".join(map(repr, sorted(missing)))
    raise ShardMapReplicationError(
        f"shard_map of {name}: outputs declared replicated may differ between "
        f"devices (only one device's value would come back):\n"
        + "\n".join(problems)
        + f"\nMake each equal along {axes} (lax.psum, lax.pmean, lax.pmax or "
        f"lax.all_gather over the axis), name the axis in its out_spec "
        f"(e.g. PartitionSpec({sorted(missing)[0]!r})), or pass check_rep=False "
        f"if it is equal for a reason the check cannot see"
        + (f" (shard_map called at {site})" if site is not None else "")
    )


class ShardMapAxisNamesError(ValueError):
    """shard_map's axis_names naming an axis the mesh lacks, or a spec
    naming an axis left out of axis_names (an automatic one)."""


def _manual_axes(mesh: Mesh, axis_names) -> tuple:
    if axis_names is None:
        return mesh.axis_names
    names = tuple(axis_names)
    unknown = [n for n in names if n not in mesh.axis_names]
    if unknown:
        raise ShardMapAxisNamesError(
            f"shard_map: axis_names {sorted(names)} names {unknown}, not an axis of "
            f"the mesh {mesh.shape}{_site()}"
        )
    return tuple(n for n in mesh.axis_names if n in names)


def _site() -> str:
    site = user_source_info()
    return f" (at {site})" if site is not None else ""


def _check_manual(specs: list, manual: tuple, what: str) -> None:
    for spec in specs:
        extra = sorted(_spec_axes(spec) - set(manual))
        if extra:
            raise ShardMapAxisNamesError(
                f"shard_map: {what} {spec} names {extra}, which axis_names="
                f"{set(manual)} leaves automatic; a spec may name only manual "
                f"axes: add {extra[0]!r} to axis_names or drop it from the spec"
                f"{_site()}"
            )


def _mesh_for(mesh, api: str) -> Mesh:
    mesh = mesh_in_scope() if mesh is None else mesh
    if mesh is None:
        raise MeshNotInScopeError(
            f"{api}: no mesh given and none in scope; pass mesh=... or call it "
            f"inside `with olympus.set_mesh(mesh):`{_site()}"
        )
    if not isinstance(mesh, Mesh):
        raise TypeError(f"{api}: mesh must be a Mesh, got {type(mesh).__name__}")
    return mesh


class MeshNotInScopeError(ValueError):
    """shard_map called without mesh= outside `set_mesh`."""


def shard_map(
    f=None,
    /,
    mesh: Mesh | None = None,
    in_specs=None,
    out_specs=None,
    check_rep: bool = True,
    *,
    axis_names=None,
    check_vma: bool | None = None,
):
    """Runs `f` on each device of `mesh` with that device's block of every argument.

    Per-device programming: inside, `f` sees local blocks and talks to other
    devices through collectives (`lax.psum`, `lax.all_gather`, ...) naming
    the mesh's axes. With `check_vma` (JAX's `check_rep` is the old name) an
    output whose out_spec leaves a mesh axis out must be provably equal
    along it (e.g. a psum over it). `axis_names` makes only those axes
    manual: specs name only them, and the body is unsplit along the rest.

    Args:
      f: the per-device function; without it, shard_map returns a decorator.
      mesh: the device mesh (None: the mesh of `set_mesh`).
      in_specs: a PartitionSpec per argument, or a pytree prefix of them.
      out_specs: PartitionSpecs assembling the outputs from the blocks.
      check_rep: JAX's older name for check_vma.
      axis_names: the mesh axes made manual (None: all).
      check_vma: whether to check that unsplit outputs are replicated.

    Returns:
      A function taking the global arrays and returning global arrays.

    Raises:
      ShardMapReplicationError: an output is not provably equal along a
        mesh axis its out_spec leaves out (psum it, or split it).
      ValueError: a spec does not divide an argument's shape, or names an
        axis the mesh lacks.

    Example:
      >>> P = olympus.sharding.PartitionSpec
      >>> mesh = olympus.make_mesh((1,), ("i",))
      >>> olympus.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(jnp.arange(2.0))
      Array([0., 2.], dtype=float32)
    """
    if f is None:
        return lambda g: shard_map(
            g, mesh, in_specs, out_specs, check_rep,
            axis_names=axis_names, check_vma=check_vma,
        )  # fmt: skip
    name = function_name(f)
    check = check_rep if check_vma is None else check_vma
    traced: dict = {}  # (mesh, tree, local avals, specs) -> (body, out specs, tree)

    def wrapped(*args):
        where = _mesh_for(mesh, "shard_map")
        manual = _manual_axes(where, axis_names)
        leaves, in_tree = tree_flatten(args)
        in_flat = _flat_specs(in_specs, args, where, "shard_map in_specs")
        _check_manual(in_flat, manual, "in_specs")
        local = []
        for x, spec in zip(leaves, in_flat):
            aval = (
                x.aval
                if hasattr(x, "aval")
                else ShapedArray(
                    np.shape(x), dtypes.canonicalize_dtype(np.result_type(x))
                )
            )
            shape = NamedSharding(where, spec).shard_shape(aval.shape, "shard_map")
            local.append(aval.update(shape=shape))
        key = (where, manual, in_tree, tuple(local), tuple(in_flat))
        entry = traced.get(key)
        if entry is None:
            entry = _trace_body(f, name, where, manual, in_tree, local, out_specs)
            _check_manual(entry[1], manual, "out_specs")
            if check:
                _check_replication(entry[0], in_flat, entry[1], entry[2], name)
            if not any(isinstance(c, Tracer) for c in entry[0].consts):
                traced[key] = entry  # one body per signature: compiled once
        sub, out_flat, out_tree = entry
        partial = None if set(manual) == set(where.axis_names) else manual
        return tree_unflatten(
            out_tree, _bind(sub, leaves, where, in_flat, out_flat, name, partial)
        )

    wrapped.__name__ = f"shard_map({name})"
    return wrapped
