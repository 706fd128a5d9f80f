"""`with_sharding_constraint`: asks XLA's partitioner to lay a value out so.

Inside jit it lowers to a Shardy `sdy.sharding_constraint` (the partitioner
moves data as needed); eagerly it is `device_put`. The value is unchanged, so
its derivative is itself on tangents, its transpose constrains the cotangent
the same way, and under vmap the batch dimension is left unsplit.
"""

from __future__ import annotations

import functools
import inspect

from olympus.backends.xla.array import Array, put

from olympus.backends.xla.sharding import (
    AxisType,
    NamedSharding,
    PartitionSpec,
    Sharding,
    arguments_devices_mesh,
    arguments_mesh_in_scope,
    explicit_aval,
    get_abstract_mesh,
    mesh_in_scope,
    named_sharding_of,
    spelled_for_rank,
    typed_spec,
)
from olympus.backends.xla.spmd import sdy_sharding
from olympus.ir.core import AvalSharding
from olympus.lax.base import define_primitive
from olympus.tracer.core import Tracer, user_source_info
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.transforms.batching import batch_rules, register_batch_layout
from olympus.transforms.jvp import defjvp_linear
from olympus.transforms.linearize import transpose_rules
from olympus.lax.sharding_types import (  # noqa: F401  (importers use them from here)
    ScanShardingError,
    ShardingTypeError,
    _install_sharding_rules,
    _result_layout_given,
    _spec_of,
    refuse_ambiguous_contraction,
    refuse_split_axis,
    refuse_split_operand,
    refuse_unlaid_repeat,
    stacked,
    unstacked,
)


def _abstract_eval(x, *, sharding):
    # the rank is checked; a spec that does not divide a dimension is fine
    # inside a program (XLA pads, as in JAX); eagerly device_put refuses it
    sharding._tiling(len(x.shape), "with_sharding_constraint")
    return explicit_aval(x, sharding)  # on Explicit axes the type says it


def _lower(ctx, x, *, sharding):
    if not ctx.emitter.spmd or sharding.num_devices == 1:
        return x  # a program on one device: nothing to lay out
    attr = f"sharding = {sdy_sharding(sharding, ctx.aval_out.ndim)}"
    return ctx.op("sdy.sharding_constraint", [x], attr)


sharding_constraint_p = define_primitive("sharding_constraint", _abstract_eval, _lower)
sharding_constraint_p.def_impl(lambda x, *, sharding: put(x, sharding))
defjvp_linear(sharding_constraint_p)
transpose_rules[sharding_constraint_p] = lambda ct, x, *, sharding: [
    sharding_constraint_p.bind(ct, sharding=sharding)
]


def _batch(axis_size, vals, dims, *, sharding):
    (x,), (dim,) = vals, dims
    if dim is None:
        return sharding_constraint_p.bind(x, sharding=sharding), None
    ndim = len(x.shape) - 1
    parts = [sharding.spec[d] if d < len(sharding.spec) else None for d in range(ndim)]
    parts.insert(dim, None)
    batched = NamedSharding(sharding.mesh, PartitionSpec(*parts))
    return sharding_constraint_p.bind(x, sharding=batched), dim


batch_rules[sharding_constraint_p] = _batch


def with_sharding_constraint(x, shardings):
    """`x` constrained to the layout `shardings` gives.

    `x` (a pytree) laid out as `shardings` (one NamedSharding, or a pytree of
    them matching `x`) says, wherever XLA's partitioner can see it. As in JAX,
    it constrains only Auto axes: inside `set_mesh` of a mesh whose axes are
    all Explicit a value's layout is its type, so the constraint asserts that
    type and returns `x`; elsewhere a spec naming an Explicit axis is refused.
    `olympus.sharding.reshard` moves a value between Explicit layouts.

    Args:
      x: a pytree of arrays.
      shardings: a NamedSharding, or a pytree of them matching x.

    Returns:
      x, laid out as shardings says.

    Raises:
      TypeError: shardings is not a NamedSharding (or a pytree of them).
      ConstraintNotTypeError: under an all-Explicit mesh, x's type has
        another layout (an AssertionError, as JAX's).
      ConstraintOnExplicitAxesError: elsewhere, a spec names an Explicit
        axis (a ValueError, as JAX's).

    Example:
      >>> auto = (olympus.sharding.AxisType.Auto,)
      >>> mesh = olympus.make_mesh((1,), ('x',), axis_types=auto)
      >>> s = olympus.sharding.NamedSharding(mesh, olympus.P('x'))
      >>> olympus.jit(lambda v: lax.with_sharding_constraint(v, s))(jnp.arange(2.0))
      Array([0., 1.], dtype=float32)
    """
    leaves, tree = tree_flatten(x)
    per_leaf = _named_per_leaf(shardings, leaves, "with_sharding_constraint")
    for v, s in zip(leaves, per_leaf):  # the rank first, as JAX checks it
        s._tiling(len(getattr(v, "shape", ())), "with_sharding_constraint")
    context = mesh_in_scope()
    if context is not None and context.abstract_mesh.are_all_axes_explicit:
        for v, s in zip(leaves, per_leaf):
            _assert_typed_as(v, s)
        return x
    for s in per_leaf:
        _refuse_explicit_axes(s)
    outs = [sharding_constraint_p.bind(v, sharding=s) for v, s in zip(leaves, per_leaf)]
    return tree_unflatten(tree, outs)


def constrain(x, shardings):
    """`x` laid out as `shardings` says on any axes, Explicit ones included:
    how reshard, device_put and jit's in/out_shardings lay a traced value
    out (with_sharding_constraint's checks are for its own callers)."""
    leaves, tree = tree_flatten(x)
    per_leaf = _named_per_leaf(shardings, leaves, "with_sharding_constraint")
    outs = [sharding_constraint_p.bind(v, sharding=s) for v, s in zip(leaves, per_leaf)]
    return tree_unflatten(tree, outs)


def _named_per_leaf(shardings, leaves: list, api: str) -> list:
    """One NamedSharding per leaf (a bare PartitionSpec on the set_mesh mesh)."""
    if isinstance(shardings, (NamedSharding, PartitionSpec)):
        per_leaf = [shardings] * len(leaves)
    else:
        per_leaf, _ = tree_flatten(
            shardings, is_leaf=lambda s: isinstance(s, PartitionSpec)
        )
    mesh = mesh_in_scope()
    if mesh is not None:  # a bare PartitionSpec means the mesh set_mesh set
        per_leaf = [
            NamedSharding(mesh, s) if isinstance(s, PartitionSpec) else s
            for s in per_leaf
        ]
    if len(per_leaf) != len(leaves) or not all(
        isinstance(s, NamedSharding) for s in per_leaf
    ):
        raise TypeError(
            f"{api} takes a NamedSharding (a mesh and a "
            f"PartitionSpec; a bare PartitionSpec inside `with set_mesh(mesh)`) "
            f"or a pytree of them matching its {len(leaves)} values, "
            f"got {shardings!r}{_site()}"
        )
    return per_leaf


class ConstraintNotTypeError(AssertionError):
    """with_sharding_constraint inside `set_mesh` of an all-Explicit mesh on a
    value whose type holds another layout: there the constraint is an
    assertion, as in JAX (reshard moves the value)."""


class ConstraintOnExplicitAxesError(ValueError):
    """with_sharding_constraint naming an Explicit (or Manual) mesh axis
    outside an all-Explicit set_mesh: it constrains only Auto axes, as in JAX."""


def _assert_typed_as(x, sharding) -> None:
    aval = getattr(x, "aval", None)
    ndim = len(aval.shape) if aval is not None else len(getattr(x, "shape", ()))
    layout = getattr(aval, "sharding", None)
    have = PartitionSpec(*(layout.spec if layout is not None else (None,) * ndim))
    want = typed_spec(sharding.spec, ndim, sharding.mesh.axis_names)
    if tuple(have) != tuple(want):
        raise ConstraintNotTypeError(
            f"with_sharding_constraint acts as an assertion inside set_mesh of a "
            f"mesh whose axes are all Explicit (a value's layout is its type): the "
            f"value's layout {have} is not the one asked for, {want}; use "
            f"olympus.sharding.reshard(x, {want}) to move it there{_site()}"
        )


def _refuse_explicit_axes(sharding) -> None:
    mesh, spec = sharding.mesh, sharding.spec
    kinds = dict(zip(mesh.axis_names, mesh.axis_types))
    named = [n for d in range(len(spec)) for n in spec.axes(d)]
    typed = [n for n in named if kinds.get(n, AxisType.Auto) is not AxisType.Auto]
    if typed:
        raise ConstraintOnExplicitAxesError(
            f"with_sharding_constraint: {spec} names {typed}, not Auto axes of "
            f"the mesh {mesh.shape} (axis types {tuple(t.name for t in mesh.axis_types)}); "
            f"a constraint may name only Auto axes (a value's layout on Explicit "
            f"axes is its type): use olympus.sharding.reshard(x, {spec}) to move "
            f"it, or a mesh with Auto axes{_site()}"
        )


def _site() -> str:
    site = user_source_info()
    return f" (at {site})" if site is not None else ""


def _batch_layout_of(leaves: list, axes: list):
    """(mesh, entry): the Explicit mesh axes vmap's mapped inputs are split over
    along their batch dimension (JAX's `explicit_mesh_axis`), where they all
    agree and some are, with the concrete mesh (an input's, or set_mesh's) a
    constraint needs; else None."""
    entries, meshes = set(), set()
    for x, axis in zip(leaves, axes):
        if axis is None:
            continue
        aval = getattr(x, "aval", None)
        layout = getattr(aval, "sharding", None)
        entries.add(None if layout is None else _spec_of(aval)[axis])
        if layout is not None:
            concrete = x.sharding if isinstance(x, Array) else None
            scope = mesh_in_scope()
            if isinstance(concrete, NamedSharding):
                meshes.add(concrete.mesh)
            elif scope is not None and scope.abstract_mesh == layout.mesh:
                meshes.add(scope)
            else:
                return None  # a traced input outside set_mesh: no devices known
    if len(entries) != 1 or None in entries or len(meshes) != 1:
        return None
    return meshes.pop(), entries.pop()


def _split_alike(avals: list, layout) -> bool:
    """Whether the batched types `avals` (batch at 0) are split as `layout`."""
    return any(
        a.sharding is not None and _spec_of(a)[0] == layout[1] for a in avals if a.ndim
    )


def _split_like_batch(out, val, axis: int, layout, made_by_rule: bool):
    """The broadcast `out` of an unbatched vmap output `val` split along `axis`
    as the batch is, where JAX types `val` on a mesh: a result of a call or
    loop with a batched result (`made_by_rule`), or any array or traced value
    inside `set_mesh` (a Python or NumPy constant has no mesh: unsplit)."""
    on_mesh = mesh_in_scope() is not None and (
        isinstance(val, Tracer)
        or isinstance(val, Array)
        and isinstance(val.sharding, NamedSharding)
    )
    if not (made_by_rule or on_mesh):
        return out
    mesh, entry = layout
    entries = [None] * len(out.shape)
    entries[axis] = entry
    sharding = NamedSharding(mesh, PartitionSpec(*entries))
    return sharding_constraint_p.bind(out, sharding=sharding)


register_batch_layout(_batch_layout_of, _split_like_batch, _split_alike)


def laid_out_as(compute, out_sharding, api: str):
    """`compute()`, its result laid out as `out_sharding` (JAX's keyword on
    dot, einsum, reshape, ...: a PartitionSpec on the `set_mesh` mesh or a
    NamedSharding); on Explicit axes that layout is the result's type."""
    if out_sharding is None:
        return compute()
    with _result_layout_given():
        outs, tree = tree_flatten(compute())
    if isinstance(out_sharding, Sharding) and not isinstance(
        out_sharding, NamedSharding
    ):
        # a device's layout (lax.full's sharding=): placed eagerly, as JAX
        laid = [put(v, out_sharding) if isinstance(v, Array) else v for v in outs]
        return tree_unflatten(tree, laid)
    named = named_sharding_of(out_sharding, api)
    laid = [
        sharding_constraint_p.bind(v, sharding=spelled_for_rank(named, len(v.shape)))
        for v in outs
    ]
    return tree_unflatten(tree, laid)


def placed_if_concrete(x, sharding):
    """`x` laid out as `sharding` where it is a concrete Array (lax.full's
    `sharding=`, which JAX applies eagerly only); a traced `x` unchanged."""
    return put(x, sharding) if isinstance(x, Array) else x


def unsplit_type(x, aval):
    """`aval` of `x` with JAX's unsplit layout (`P(None, ...)`) in its type
    where `x` lies on a mesh, Auto axes included (or, for a traced value, a
    mesh is set, or jit's arguments lie on one): JAX's `typeof(x).sharding`.
    Programs' types keep no unsplit layouts, so their IR is unchanged."""
    if aval.sharding is not None:
        return aval
    named = getattr(x, "_sharding", None)
    mesh = named.mesh.abstract_mesh if isinstance(named, NamedSharding) else None
    if mesh is None and not hasattr(x, "_sharding"):  # traced
        mesh = get_abstract_mesh() if mesh_in_scope() else arguments_mesh_in_scope()
    if mesh is None or not mesh.axis_names:
        return aval
    return aval.update(sharding=AvalSharding(mesh, PartitionSpec(*[None] * aval.ndim)))


_OUT_SHARDING_ARG = (
    "out_sharding: the result's layout, a PartitionSpec (on the `set_mesh` "
    "mesh) or a NamedSharding (None: what the operands' types say)."
)


def documented_out_sharding(doc: str | None) -> str | None:
    """`doc` with `out_sharding` described at the end of its Args section
    (where it has one and does not describe it yet)."""
    if not doc or "out_sharding:" in doc:
        return doc
    lines = doc.splitlines()
    heads = [i for i, line in enumerate(lines) if line.strip() == "Args:"]
    if not heads:
        return doc
    indent = lines[heads[0]][: len(lines[heads[0]]) - len(lines[heads[0]].lstrip())]
    end = heads[0] + 1
    while end < len(lines) and lines[end].strip():
        end += 1
    lines.insert(end, f"{indent}  {_OUT_SHARDING_ARG}")
    return "\n".join(lines) + ("\n" if doc.endswith("\n") else "")


def accepts_out_sharding(fn, *, namespace: str = "jnp"):
    """`fn` (a jnp function: creation, dot, einsum, reshape; a sampler of
    `namespace` 'random') with JAX's keyword `out_sharding=`: a PartitionSpec
    (on the mesh of `set_mesh`) or NamedSharding the result is laid out as
    (placed eagerly, constrained under jit; see `laid_out_as`)."""

    @functools.wraps(fn)
    def with_out_sharding(*args, out_sharding=None, **kwargs):
        if out_sharding is None:
            return fn(*args, **kwargs)
        compute = lambda: fn(*args, **kwargs)  # noqa: E731
        return laid_out_as(compute, out_sharding, f"{namespace}.{fn.__name__}")

    signature = inspect.signature(fn)
    keyword = inspect.Parameter(
        "out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None
    )
    with_out_sharding.__signature__ = signature.replace(
        parameters=[*signature.parameters.values(), keyword]
    )
    with_out_sharding.__doc__ = documented_out_sharding(fn.__doc__)
    return with_out_sharding


def accepts_unsplit_out_sharding(fn):
    """`accepts_out_sharding(fn)` for a result whose every device holds all
    of it (a histogram's counts, jnp.bincount): a split layout is refused
    with ShardingTypeError, as JAX refuses it."""
    wrapped = accepts_out_sharding(fn)
    api = f"jnp.{fn.__name__}"

    @functools.wraps(wrapped)
    def with_unsplit_out_sharding(*args, out_sharding=None, **kwargs):
        if out_sharding is not None:
            spec = named_sharding_of(out_sharding, api).spec
            if any(e is not None for e in spec):
                raise ShardingTypeError(
                    f"out_sharding passed to `{api}` can only be fully replicated "
                    f"or fully unreduced along all mesh axes; got {spec}. Pass "
                    f"P() and reshard the result (olympus.reshard) if needed."
                )
        return wrapped(*args, out_sharding=out_sharding, **kwargs)

    return with_unsplit_out_sharding


def laid_out_like(x, aval):
    """`x` (a cotangent broadcast back to an operand's shape) laid out as the
    operand's type `aval` says, as JAX's transposes broadcast with the
    operand's sharding: the gradient of `v.sum()` is split like `v`. Left as
    it is where `aval` holds no layout, `x` already has it, or no devices
    for its mesh are known (a concrete `x` outside `set_mesh`)."""
    layout = aval.sharding
    have = getattr(getattr(x, "aval", None), "sharding", None)
    if layout is None or have == layout:
        return x
    mesh = _concrete_mesh(x, layout.mesh)
    if mesh is None:
        return x
    sharding = NamedSharding(mesh, PartitionSpec(*layout.spec))
    return sharding_constraint_p.bind(x, sharding=sharding)


def _concrete_mesh(x, abstract):
    """The mesh with devices whose abstract mesh is `abstract`: set_mesh's,
    `x`'s own, or (for a traced `x`) that of jit's arguments."""
    scope = mesh_in_scope()
    if scope is not None and scope.abstract_mesh == abstract:
        return scope
    placed = getattr(x, "_sharding", None)
    if isinstance(placed, NamedSharding) and placed.mesh.abstract_mesh == abstract:
        return placed.mesh
    arguments = arguments_devices_mesh()
    if arguments is not None and arguments.abstract_mesh == abstract:
        return arguments if isinstance(x, Tracer) else None
    return None
