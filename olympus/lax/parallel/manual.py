"""`shard_map`: its primitive (lowered to Shardy's `sdy.manual_computation`),
eager impl, jvp, transpose and batching rules, and the replication check of
its unsplit outputs (`check_vma`)."""

from __future__ import annotations

import weakref

import numpy as np

from olympus import caches
from olympus.backends.xla.array import Array
from olympus.backends.xla.dispatch import buffer_of, compile_olympuspr
from olympus.backends.xla.lowering import (
    build_module,
    lower_closed_inline,
    lowering_rules,
)
from olympus.backends.xla.sharding import (
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    explicit_aval,
    flat_shardings,
    mesh_in_scope,
    typed_spec,
)
from olympus.backends.xla.spmd import ShardedExecutable, mesh_symbol, plan_layout
from olympus.ir import dtypes
from olympus.ir.core import Eqn, Olympuspr, Primitive, ShapedArray, Var, all_primitives
from olympus.lax import ops, replication
from olympus.lax.parallel.axis_names import _site
from olympus.lax.parallel.primitives import axis_index_p, psum_p
from olympus.tracer import axes as axes_env
from olympus.tracer import refs
from olympus.tracer.core import Tracer, user_source_info
from olympus.tracer.evaluation import eval_program
from olympus.tracer.pytree import tree_flatten, tree_map, tree_paths, tree_unflatten
from olympus.tracer.staging import DebugInfo, function_name, trace_sub_program
from olympus.transforms.ad_util import Zero, instantiate, is_zero
from olympus.transforms.batching import (
    batch_rules,
    batch_to_front,
    shadowing,
)
from olympus.transforms.jvp import jvp_rules
from olympus.transforms.linearize import backward_pass, transpose_rules
from olympus.transforms.programs import (
    cached_batch_program,
    cached_jvp_program,
    cached_program,
    cached_transpose_program,
    partial_eval_program,
    transpose_call,
)

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


class ShardMapReplicationError(ValueError):
    """A shard_map output whose out_spec leaves a mesh axis out (declaring it
    equal on every device along that axis) may vary along it: it would come
    back as one device's block (`check_rep`, lax/replication.py)."""


class LoopCarryVaryingError(TypeError):
    """Inside shard_map with check_vma, a loop whose carry varies along other
    mesh axes after an iteration than its initial value does (JAX's types
    refuse it, a TypeError): pcast the initial carry to vary as the body's
    result does."""


def _carry_error(change, name: str) -> LoopCarryVaryingError:
    def spelled(axes) -> str:
        return f"{{V:{','.join(sorted(axes))}}}" if axes else ""

    kind = change.aval.str_short()
    extra = tuple(sorted(change.after - change.before))
    fix = (
        f"This might be fixed by applying `lax.pcast(..., {extra}, to='varying')` "
        f"to the initial carry value of component {change.component}"
        if extra
        else "Revise the function so that all output types match the corresponding "
        "input types (the body makes the carry equal along "
        f"{sorted(change.before - change.after)}: pcast its result back to varying)"
    )
    where = change.source_info
    return LoopCarryVaryingError(
        f"{change.loop} body function carry input and carry output must have equal "
        f"types, but they differ: the input carry component {change.component} has "
        f"type {kind}{spelled(change.before)} but the corresponding output carry "
        f"component has type {kind}{spelled(change.after)}, so the manual axis types "
        f"do not match (shard_map of {name} with check_vma=True"
        + (f"; the loop at {where}" if where is not None else "")
        + f"). {fix}; or pass check_vma=False."
    )


def _check_replication(sub, in_flat, out_flat, out_tree, name: str) -> None:
    """Raises ShardMapReplicationError if an output may vary along a mesh axis
    its out_spec leaves out (JAX's check_rep)."""
    program = sub.closed.olympuspr
    ins = [frozenset()] * len(sub.consts) + [_spec_axes(s) for s in in_flat]
    with replication.carry_changes() as changes:
        outs = replication.varying(program, ins)
    if changes:
        raise _carry_error(changes[0], name)
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


class ShardMapInSpecsError(ValueError):
    """shard_map over a mesh whose axes are all Explicit and all manual, given
    an argument whose type is laid out otherwise than its in_spec (JAX's
    ValueError): reshard it first."""


def _check_typed_inputs(mesh: Mesh, manual: tuple, leaves: list, specs: list):
    """On an all-Explicit mesh every argument's type must already be laid out
    as its in_spec says (JAX's rule: shard_map does not reshard there)."""
    if (
        set(manual) != set(mesh.axis_names)
        or not mesh.abstract_mesh.are_all_axes_explicit
    ):
        return
    for x, spec in zip(leaves, specs):
        aval = getattr(x, "aval", None)
        ndim = len(aval.shape) if aval is not None else np.ndim(x)
        layout = getattr(aval, "sharding", None)
        have = PartitionSpec(*(layout.spec if layout is not None else (None,) * ndim))
        want = typed_spec(spec, ndim, mesh.axis_names)
        if tuple(have) != tuple(want):
            raise ShardMapInSpecsError(
                f"shard_map: in_specs {want} does not match the layout of the input "
                f"{have} (an argument of type {aval.str_short() if aval else ndim}) on a "
                f"mesh whose axes are all Explicit, where shard_map does not move "
                f"data; reshard it first (olympus.sharding.reshard(x, {want})) or "
                f"give the in_spec its layout{_site()}"
            )


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
      ShardMapInSpecsError: on a mesh whose axes are all Explicit (and all
        manual), an argument's type is laid out otherwise than its in_spec
        (reshard it first; a ValueError, as JAX's).

    Example:
      >>> P = olympus.sharding.PartitionSpec
      >>> mesh = olympus.make_mesh((1,), ("i",), axis_types=(olympus.sharding.AxisType.Auto,))
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
        _check_typed_inputs(where, manual, leaves, in_flat)
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
            reads = refs.constant_reads[0]  # a Ref read as a constant: not kept
            entry = _trace_body(f, name, where, manual, in_tree, local, out_specs)
            _check_manual(entry[1], manual, "out_specs")
            if check:
                _check_replication(entry[0], in_flat, entry[1], entry[2], name)
            fresh = refs.constant_reads[0] == reads
            if fresh and not any(isinstance(c, Tracer) for c in entry[0].consts):
                traced[key] = entry  # one body per signature: compiled once
        sub, out_flat, out_tree = entry
        partial = None if set(manual) == set(where.axis_names) else manual
        return tree_unflatten(
            out_tree, _bind(sub, leaves, where, in_flat, out_flat, name, partial)
        )

    wrapped.__name__ = f"shard_map({name})"
    return wrapped
