"""Explicit sharding: on a mesh with Explicit axes a value's layout is part
of its type (`AvalSharding`, `f32[8@x,4]`). Each rule here says the layout of
a primitive's results from its operands', as JAX's explicit mode does, and
raises ShardingTypeError where JAX does (installed over the primitives' shape
rules by `_install_sharding_rules` once all are defined); with the refusals
the jnp functions and loops call (`refuse_split_axis`, `stacked`, ...).
"""

from __future__ import annotations

import contextlib
import contextvars
import math

from olympus.backends.xla.sharding import (
    PartitionSpec,
    mesh_in_scope,
)
from olympus.ir.core import AvalSharding, ShapedArray, all_primitives


_out_sharding_given = contextvars.ContextVar("out_sharding_given", default=False)


@contextlib.contextmanager
def _result_layout_given():
    """While the caller says the result's layout (`out_sharding=`), rules
    that would refuse an ambiguous layout leave it unsplit instead."""
    token = _out_sharding_given.set(True)
    try:
        yield
    finally:
        _out_sharding_given.reset(token)


def refuse_ambiguous_contraction(lhs, rhs, dimension_numbers) -> None:
    """JAX's refusal of a dot_general whose contracting dimensions are split
    alike (a sum over devices: which layout the result takes is the caller's
    choice, through `out_sharding=`); transposes bind the primitive directly."""
    ls = getattr(getattr(lhs, "aval", None), "sharding", None)
    rs = getattr(getattr(rhs, "aval", None), "sharding", None)
    if ls is None or rs is None or _out_sharding_given.get():
        return
    (lc, rc), _ = dimension_numbers
    lcs = tuple(_entry(ls.spec, d) for d in lc)
    rcs = tuple(_entry(rs.spec, d) for d in rc)
    if any(a is not None and a == b for a, b in zip(lcs, rcs)):
        raise ShardingTypeError(
            f"Contracting dimensions are sharded and it is ambiguous how the "
            f"output should be sharded. Please specify the output sharding via "
            f"the `out_sharding` parameter. Got lhs_contracting_spec={lcs} and "
            f"rhs_contracting_spec={rcs}"
        )


# ---- explicit mode: shardings as part of the type -------------------------------
# A value on a mesh with Explicit axes has its layout in its aval
# (`AvalSharding`: `f32[8@x,4]`). Each rule below says the layout of a
# primitive's results from its operands', as JAX's explicit mode does, and
# raises ShardingTypeError where JAX does. A primitive without a rule gives
# results with no sharding (docs/differences.md).
class ShardingTypeError(Exception):
    """Operands whose explicit shardings cannot be combined (JAX's
    `ShardingTypeError`, like it an Exception, not a TypeError): reshard one
    of them (`olympus.reshard`), or say the result's layout."""


def _entry(spec, d: int):
    return spec[d] if d < len(spec) else None


def _spec_of(aval) -> tuple:
    s = aval.sharding
    return (
        tuple(_entry(s.spec, d) for d in range(aval.ndim)) if s else (None,) * aval.ndim
    )


def _as_spec(entries) -> PartitionSpec:
    return PartitionSpec(*entries)


def _elementwise(name, avals, out, params):
    """Operands of the result's rank must agree dimension by dimension (an
    unsplit dimension agrees with any); the result takes their layout."""
    rank = out.ndim
    shaped = [a for a in avals if a.ndim == rank and a.ndim > 0]
    merged = [None] * rank
    for a in shaped:
        for d, e in enumerate(_spec_of(a)):
            if e is not None and merged[d] is not None and e != merged[d]:
                specs = ", ".join(str(_spec_of(b)) for b in shaped)
                raise ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: {specs}. "
                    f"Reshard one operand (olympus.reshard) to match the other."
                )
            merged[d] = merged[d] if e is None else e
    return [merged]


def _reduction(name, avals, out, params):
    axes = set(params["axes"])
    return [[e for d, e in enumerate(_spec_of(avals[0])) if d not in axes]]


def _transpose(name, avals, out, params):
    spec = _spec_of(avals[0])
    return [[spec[p] for p in params["permutation"]]]


def _broadcast_in_dim(name, avals, out, params):
    x, merged = avals[0], [None] * out.ndim
    for i, d in enumerate(params["broadcast_dimensions"]):
        if x.shape[i] == out.shape[d]:
            merged[d] = _spec_of(x)[i]
    return [merged]


def _squeeze(name, avals, out, params):
    gone = set(params["dimensions"])
    return [[e for d, e in enumerate(_spec_of(avals[0])) if d not in gone]]


def _expand_dims(name, avals, out, params):
    spec = list(_spec_of(avals[0]))
    for d in sorted(params["dimensions"]):
        spec.insert(d, None)
    return [spec]


def _axes_size(mesh, entry) -> int:
    if mesh is None:  # a program read back from text: sizes unknown, 1 divides all
        return 1
    names = (entry,) if isinstance(entry, str) else entry
    return math.prod(mesh.shape[n] for n in names)


def _reshape_groups(old: tuple, new: tuple) -> list:
    """Runs of dimensions of equal product: [(old dims, new dims)], size-1
    dimensions in runs of their own."""
    groups, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        if i < len(old) and old[i] == 1 and (j >= len(new) or new[j] != 1):
            groups.append(([i], []))
            i += 1
            continue
        if j < len(new) and new[j] == 1 and (i >= len(old) or old[i] != 1):
            groups.append(([], [j]))
            j += 1
            continue
        gi, gj = [i], [j]
        a, b = old[i], new[j]
        i, j = i + 1, j + 1
        while a != b:
            if a < b:
                a, i = a * old[i], i + 1
                gi.append(i - 1)
            else:
                b, j = b * new[j], j + 1
                gj.append(j - 1)
        groups.append((gi, gj))
    return groups


def _reshape(name, avals, out, params):
    """Dimensions kept, split (the first piece takes the layout when the
    mesh axes divide it) or merged (when only the first is split), as JAX."""
    x = avals[0]
    spec, mesh = _spec_of(x), x.sharding.mesh
    merged = [None] * out.ndim
    for old, new in _reshape_groups(x.shape, out.shape):
        split = [spec[d] for d in old if spec[d] is not None]
        if not split:
            continue
        if len(new) == 1 and spec[old[0]] is not None and len(split) == 1:
            merged[new[0]] = spec[old[0]]  # kept, or merged into the first
            continue
        if (
            len(old) == 1
            and new
            and out.shape[new[0]] % _axes_size(mesh, split[0]) == 0
        ):
            merged[new[0]] = split[0]  # split: the major piece keeps it
            continue
        return _unless_out_sharding(
            out,
            f"This reshape is not supported. Please specify the sharding of the "
            f"output via the `out_sharding` argument of olympus.lax.reshape (or "
            f"reshard first). Got operand type: {x.str_short()}, new sizes: "
            f"{tuple(out.shape)}",
        )
    return [merged]


def _unless_out_sharding(out, refusal: str) -> list:
    """Where the caller says the result's layout (out_sharding=), an unsplit
    result the constraint then lays out; else JAX's refusal (`refusal`)."""
    if _out_sharding_given.get():
        return [[None] * out.ndim]
    raise ShardingTypeError(refusal)


def _dot_general(name, avals, out, params):
    lhs, rhs = avals
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    ls, rs = _spec_of(lhs), _spec_of(rhs)
    lcs, rcs = tuple(ls[d] for d in lc), tuple(rs[d] for d in rc)
    for a, b in zip(lcs, rcs):
        if a is not None and b is not None and a != b:
            raise ShardingTypeError(
                f"dot_general requires contracting dimensions to have consistent "
                f"sharding, got {lcs} and {rcs}. Reshard one operand "
                f"(olympus.reshard) so they match."
            )
    # Contracting dimensions split alike give a result unsplit there (XLA
    # sums over the devices), as JAX's transpose rules ask for; user code is
    # refused by lax.dot_general (refuse_ambiguous_contraction) without
    # out_sharding=.
    batch = []
    for a, b in zip(lb, rb):
        if ls[a] is not None and rs[b] is not None and ls[a] != rs[b]:
            raise ShardingTypeError(
                f"dot_general requires contracting and batch dimensions to have "
                f"the same sharding, got lhs batch {ls[a]} and rhs batch {rs[b]}"
            )
        batch.append(ls[a] if ls[a] is not None else rs[b])
    free_l = [ls[d] for d in range(lhs.ndim) if d not in lc and d not in lb]
    free_r = [rs[d] for d in range(rhs.ndim) if d not in rc and d not in rb]
    merged = batch + free_l + free_r
    used = [
        n for e in merged if e is not None for n in ((e,) if isinstance(e, str) else e)
    ]
    if len(used) != len(set(used)):
        if _out_sharding_given.get():  # out_sharding= says the layout
            return [[None] * out.ndim]
        mesh = (lhs.sharding or rhs.sharding).mesh
        typed = out.update(sharding=AvalSharding(mesh, _as_spec(merged)))
        raise ShardingTypeError(
            f"dot_general operation with inputs: {lhs.str_short()}, "
            f"{rhs.str_short()} produces an illegally sharded result: "
            f"{typed.str_short()}"
        )
    return [merged]


def _unsplit(entries) -> bool:
    return all(e is None for e in entries)


def _gather(name, avals, out, params):
    """JAX's rule: operand dimensions indexed into must be taken whole or be
    unsplit, and the indices unsplit; the result's window dimensions take
    the operand's layout. Anything else is refused (say the layout with
    out_sharding=, or reshard first). olympus has no batching dimensions:
    an indexed dimension split like an index batch dimension, or unsplit
    index dimension of the same size at its position (an iota index,
    take_along_axis), stands for one, as JAX's batched gather allows."""
    operand, indices = avals
    dn, sizes = params["dimension_numbers"], params["slice_sizes"]
    ospec, ispec = _spec_of(operand), _spec_of(indices)
    partial = [d for d in dn.start_index_map if sizes[d] != operand.shape[d]]
    ispec = _batching_stand_ins(operand, indices, ospec, ispec, partial)
    indexed = sorted(str(ospec[d]) for d in partial if ospec[d] is not None)
    batched = sorted(str(e) for e in ispec[:-1] if e is not None)
    if ispec[-1] is not None or indexed != batched:
        return _unless_out_sharding(
            out,
            f"Use `.at[...].get(out_sharding=)` to provide output PartitionSpec "
            f"for the gather indexing as out sharding could not be resolved "
            f"unambiguously (or would require collectives on inputs). Got "
            f"operand={operand.str_short()}, indices={indices.str_short()}; "
            f"reshard the operand or the indices (olympus.reshard) first.",
        )
    window = iter(
        ospec[d] for d in range(operand.ndim) if d not in dn.collapsed_slice_dims
    )
    batch = iter(ispec[:-1])
    merged = [
        next(window) if d in dn.offset_dims else next(batch) for d in range(out.ndim)
    ]
    used = [n for e in merged if e is not None for n in _names(e)]
    if len(used) != len(set(used)):
        raise ShardingTypeError(
            f"gather of operand {operand.str_short()} at indices "
            f"{indices.str_short()} would split two result dimensions over one "
            f"mesh axis ({tuple(merged)}); reshard the operand or the indices "
            f"(olympus.reshard) first."
        )
    return [merged]


def _batching_stand_ins(operand, indices, ospec, ispec, partial) -> tuple:
    """`ispec` with each unsplit index dimension that stands for a batching
    dimension (of the size of the operand dimension at its position, as
    take_along_axis, sorting-based reductions and vmap build them: an iota
    index there) taking that dimension's split, as JAX's batched gather."""
    merged = list(ispec)
    for d in partial:
        if d < indices.ndim - 1 and ospec[d] is not None and merged[d] is None:
            if indices.shape[d] == operand.shape[d]:
                merged[d] = ospec[d]
    return tuple(merged)


def _names(entry) -> tuple:
    return (entry,) if isinstance(entry, str) else tuple(entry)


def _scatter(name, avals, out, params):
    """JAX's rule (a gather in reverse): window dimensions of the updates
    taken whole match the operand's layout or both are unsplit; inserted
    dimensions, the indices and the updates' other dimensions are unsplit.
    The result takes the operand's layout (filled in from the updates'). An
    operand without a layout (a transpose's zeros; JAX's carry the layout)
    takes the updates'; dimensions addressed element by element through an
    iota index (`_scatter_batching`) stand for JAX's batching dimensions."""
    operand, indices, updates = avals[:3]
    dn = params["dimension_numbers"]
    ospec, ispec, uspec = _spec_of(operand), _spec_of(indices), _spec_of(updates)
    windows = [d for d in range(operand.ndim) if d not in dn.inserted_window_dims]
    pairs = list(zip(dn.update_window_dims, windows))
    batching = _scatter_batching(operand, indices, updates, dn)
    merged = list(ospec)
    if operand.sharding is None:
        for u, o in pairs:
            if updates.shape[u] == operand.shape[o]:
                merged[o] = uspec[u]
    for o, u in batching.items():
        merged[o] = merged[o] if merged[o] is not None else uspec[u]
    resolvable = (
        all(
            # an unsplit whole window takes the operand's layout (olympus
            # broadcasts updates without one; JAX's carry it)
            (updates.shape[u] == operand.shape[o] and uspec[u] in (merged[o], None))
            or (uspec[u] is None and merged[o] is None)
            for u, o in pairs
        )
        and all(uspec[u] in (None, merged[o]) for o, u in batching.items())
        and all(merged[d] is None for d in dn.inserted_window_dims if d not in batching)
        and all(
            e is None
            for d, e in enumerate(uspec)
            if d not in dn.update_window_dims and d not in batching.values()
        )
        and ispec[-1] is None
        and all(
            e is None or (d in batching and e == merged[d])
            for d, e in enumerate(ispec[:-1])
        )
    )
    if not resolvable:
        return _unless_out_sharding(
            out,
            f"Use `.at[...].set/add/mul/...(out_sharding=)` to provide output "
            f"PartitionSpec for the scatter update as out sharding could not be "
            f"resolved unambiguously (or would require collectives on inputs). "
            f"Got operand={operand.str_short()}, indices={indices.str_short()}, "
            f"updates={updates.str_short()}; reshard them (olympus.reshard) first.",
        )
    for u, o in pairs:
        merged[o] = merged[o] if merged[o] is not None else uspec[u]
    return [merged]


def _scatter_batching(operand, indices, updates, dn) -> dict:
    """{operand dimension: updates dimension} for the leading scatter
    dimensions of the updates that address an inserted operand dimension at
    the same position, of its size (an iota index: take_along_axis's, sort's
    or top_k's transpose, vmap's batch): JAX's batching dimensions."""
    scattered = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    found = {}
    for k, u in enumerate(scattered[: min(operand.ndim, indices.ndim - 1)]):
        if k in dn.inserted_window_dims and updates.shape[u] == operand.shape[k]:
            found[k] = u
    return found


def _varying_shape(label):
    """JAX's rule for slicing, padding, dynamic_slice and windows: the result
    keeps the operand's layout, so a split dimension whose size changes must
    stay divisible by its mesh axes (else ShardingTypeError, as in JAX)."""

    def rule(name, avals, out, params):
        x = avals[0]
        if x.sharding is None:
            return [[None] * out.ndim]
        return [_kept_spec(label, x, out.shape)]

    return rule


def _kept_spec(label: str, x, out_shape) -> list:
    spec, mesh = list(_spec_of(x)), x.sharding.mesh
    for d, e in enumerate(spec):
        if e is None or x.shape[d] == out_shape[d]:
            continue
        size = _axes_size(mesh, e)
        if out_shape[d] % size and _out_sharding_given.get():
            spec[d] = None  # the caller says the layout (out_sharding=)
        elif out_shape[d] % size:
            raise ShardingTypeError(
                f"{label} on sharded dims where out dim ({out_shape[d]}) is not "
                f"divisible by mesh axes ({size}) with spec ({e}) is not "
                f"implemented. Got input type={x.str_short()} and output "
                f"shape={tuple(out_shape)}; reshard dimension {d} unsplit "
                f"(olympus.reshard) first."
            )
    return spec


def _concatenate(name, avals, out, params):
    """Operands with a layout must all have the same one (JAX's rule); the
    result takes it, the joined dimension included."""
    typed = [a for a in avals if a.sharding is not None]
    specs = {_spec_of(a) for a in typed}
    if len(specs) > 1:
        shown = ", ".join(a.str_short() for a in typed)
        raise ShardingTypeError(
            f"All operands should have the same sharding. Got shardings {shown}; "
            f"reshard them (olympus.reshard) to one layout."
        )
    return [list(specs.pop())]


def _dynamic_update_slice(name, avals, out, params):
    operand, update = avals[:2]
    if operand.sharding is None:  # a transpose's zeros: JAX's carry the layout
        return [_spec_of(update)]
    if _spec_of(operand) != _spec_of(update):
        raise ShardingTypeError(
            f"dynamic_update_slice operand sharding must be equal to update "
            f"sharding, got operand sharding {operand.str_short()} and update "
            f"sharding {update.str_short()}; reshard the update (olympus.reshard)."
        )
    return [_spec_of(operand)]


def _sort(name, avals, out, params):
    """Operands unsplit along the sorted dimension and laid out alike."""
    dim = params["dimension"]
    typed = [a for a in avals if a.sharding is not None]
    for a in typed:
        if _spec_of(a)[dim] is not None:
            raise ShardingTypeError(
                f"Arguments to sort must be unsharded over the sorting dimension. "
                f"Got arg sharding={a.str_short()} and sorting dimension={dim}; "
                f"reshard it unsplit there (olympus.reshard) first."
            )
    if len({_spec_of(a) for a in typed}) > 1:
        shown = " ".join(a.str_short() for a in typed)
        raise ShardingTypeError(
            f"Arguments to sort must have equal shardings, got: {shown}"
        )
    return [_spec_of(typed[0])] * len(avals)


def _top_k(name, avals, out, params):
    x, axis = avals[0], params.get("axis", avals[0].ndim - 1)
    return _selected_along(
        x,
        axis,
        f"The input should be unsharded over the axis along which to compute "
        f"the top_k values. Got input type={x.str_short()} and axis={axis}",
    )


def _approx_top_k(name, avals, out, params):
    """approx_max_k/approx_min_k: as top_k, along `reduction_dimension`."""
    x = avals[0]
    axis = params["reduction_dimension"] % max(x.ndim, 1)
    return _selected_along(
        x,
        axis,
        f"reduction dimension {axis} in operand {x.str_short()} should be "
        f"unsharded i.e. the spec of that dim should be `None`",
    )


def _selected_along(x, axis: int, refusal: str) -> list:
    """A top-k's two results (values, indices) keep `x`'s layout; `x` split
    along `axis` is refused with JAX's words (`refusal`) and the fix."""
    if _spec_of(x)[axis] is not None:
        raise ShardingTypeError(
            f"{refusal}; reshard it unsplit there (olympus.reshard) first."
        )
    return [_spec_of(x)] * 2


def _conv(name, avals, out, params):
    """An unsplit kernel and input features: the result takes the input's
    layout (JAX's rule); otherwise the caller says it with out_sharding=."""
    lhs, rhs = avals
    features = params["dimension_numbers"].lhs_spec[1]
    if _unsplit(_spec_of(rhs)) and _spec_of(lhs)[features] is None:
        if lhs.sharding is None:
            return [[None] * out.ndim]
        return [_kept_spec("conv_general_dilated", lhs, out.shape)]
    return _unless_out_sharding(
        out,
        f"Please specify the output sharding via `out_sharding` parameter of "
        f"`conv_general_dilated` (got lhs {lhs.str_short()}, rhs "
        f"{rhs.str_short()}: a split kernel or split input features).",
    )


def _same_as_operand(name, avals, out, params):
    """Results laid out as the operand (fft, where JAX keeps the type's
    sharding as it is)."""
    return [_spec_of(avals[0])[: out.ndim] + (None,) * (out.ndim - avals[0].ndim)]


def _linalg(*ranks: int):
    """JAX's rule for matrix decompositions (cholesky, lu, qr, eigh, svd,
    ...): each operand's last `rank` dimensions (the matrix) unsplit, the
    batch dimensions split alike; every result keeps that batch layout."""

    def rule(name, avals, out, params):
        batches = []
        for i, (rank, aval) in enumerate(zip(ranks, avals)):
            spec = _spec_of(aval)
            if not _unsplit(spec[aval.ndim - rank :]):
                raise ShardingTypeError(
                    f"Input {i} to {name} must be unsharded on non-batch "
                    f"dimensions, but got {_as_spec(spec)}; reshard its last "
                    f"{rank} dimensions unsplit (olympus.reshard) first."
                )
            batches.append(spec[: aval.ndim - rank])
        return [_same_batches(name, avals, batches)] * 4  # the rest unsplit

    return rule


def _same_batches(name, avals, batches) -> tuple:
    """The operands' common batch layout. An operand whose type holds no
    layout (unsplit: a transpose's cotangent made without a mesh) takes the
    others' (JAX's would carry it)."""
    typed = [b for a, b in zip(avals, batches) if a.sharding is not None]
    if any(b != typed[0] for b in typed[1:]):
        shown = ", ".join(str(_as_spec(b)) for b in batches)
        raise ShardingTypeError(
            f"All inputs to {name} must have the same batch sharding, but got "
            f"{shown}; reshard them alike (olympus.reshard) first."
        )
    return typed[0]


def _triangular_solve(name, avals, out, params):
    """JAX's triangular_solve rule: the dimension `a` contracts with `b`
    unsplit in both; the result takes a's other matrix dimension's layout
    and b's free one."""
    a, b = (_spec_of(v) for v in avals)
    left, trans = params["left_side"], params["transpose_a"]
    batch = _same_batches(name, avals, [a[:-2], b[:-2]])
    if a[-2:][left ^ trans] is not None or b[-2:][not left] is not None:
        raise ShardingTypeError(
            f"triangular solve inputs must be unsharded on the contracting "
            f"axis, but got a: {_as_spec(a)}, b: {_as_spec(b)} with "
            f"left_side={left} and transpose_a={trans}; reshard it unsplit "
            f"(olympus.reshard) first."
        )
    mat = [a[-2:][trans], b[-1]] if left else [b[-2], a[-2:][not trans]]
    return [(*batch, *mat)]


class RepeatShardingError(ValueError):
    """jnp.repeat along a split axis inside `set_mesh` without out_sharding=
    (JAX's ValueError): the repeated pieces' layout is the caller's choice."""


def refuse_unlaid_repeat(a, axis: int) -> None:
    """JAX's refusal of jnp.repeat along a split axis on an Explicit mesh in
    scope unless `out_sharding=` says the result's layout."""
    aval = getattr(a, "aval", None)
    mesh = mesh_in_scope()
    if mesh is None or not mesh.abstract_mesh.explicit_axes or aval is None:
        return
    if _out_sharding_given.get() or _spec_of(aval)[axis] is None:
        return
    raise RepeatShardingError(
        f"Please pass sharding to `jnp.repeat` via `out_sharding` parameter "
        f"(repeating {aval.str_short()} along its split axis {axis})."
    )


def refuse_split_axis(api: str, operand, axis: int) -> None:
    """JAX's refusal of a running reduction (cumsum, cummax, ...) along a
    split axis: each device would need the others' partial results."""
    aval = getattr(operand, "aval", None)
    if aval is None or aval.sharding is None or _spec_of(aval)[axis] is None:
        return
    raise ShardingTypeError(
        f"Input should be unsharded over the axis being reduced. Got input "
        f"type={aval.str_short()} and axis={axis} ({api}); reshard it unsplit "
        f"there (olympus.reshard) first."
    )


def refuse_split_operand(api: str, operand) -> None:
    """JAX's refusal of a split operand where every element's result depends
    on all the elements before it in flat order (jnp.nonzero's running count
    of the nonzero elements)."""
    aval = getattr(operand, "aval", None)
    if aval is None or aval.sharding is None or _unsplit(_spec_of(aval)):
        return
    raise ShardingTypeError(
        f"The input should be fully replicated when axis is not specified to "
        f"cumsum. Got input type={aval.str_short()} ({api}); reshard it "
        f"unsplit (olympus.reshard(x, P())) first."
    )


_UNARY = (
    "abs acos acosh asin asinh atan atanh bessel_i0e bessel_i1e cbrt ceil clz "
    "convert_element_type cos cosh digamma erf erf_inv erfc exp expm1 floor imag "
    "integer_pow is_finite lgamma log log1p logistic neg not population_count real "
    "reduce_precision round rsqrt sign sin sinh sqrt stop_gradient tan tanh"
).split()
_NARY = (
    "add and atan2 clamp complex div eq ge gt igamma igammac le lt max min mul ne "
    "nextafter or pow rem select_n shift_left shift_right_arithmetic "
    "shift_right_logical sub xor zeta polygamma"
).split()
_SCATTERS = "scatter scatter_add scatter_mul scatter_min scatter_max".split()
_REDUCTIONS = "reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or reduce_xor argmax argmin".split()

sharding_rules: dict = {
    **{n: _elementwise for n in _UNARY + _NARY},
    **{n: _reduction for n in _REDUCTIONS},
    "transpose": _transpose,
    "broadcast_in_dim": _broadcast_in_dim,
    "squeeze": _squeeze,
    "expand_dims": _expand_dims,
    "reshape": _reshape,
    "dot_general": _dot_general,
    "gather": _gather,
    **{n: _scatter for n in _SCATTERS},
    "slice": _varying_shape("slicing"),
    "pad": _varying_shape("padding"),
    "dynamic_slice": _varying_shape("dynamic_slice"),
    "reduce_window_sum": _varying_shape("reduce_window"),
    "reduce_window_max": _varying_shape("reduce_window"),
    "rev": _varying_shape("rev"),
    "concatenate": _concatenate,
    "dynamic_update_slice": _dynamic_update_slice,
    "sort": _sort,
    "top_k": _top_k,
    "approx_top_k": _approx_top_k,
    "conv_general_dilated": _conv,
    "fft": _same_as_operand,
    "bitcast_convert_type": _same_as_operand,
    **{n: _linalg(2) for n in "cholesky lu eigh geqrf svd eig qr".split()},
    "householder_product": _linalg(2, 1),
    "triangular_solve": _triangular_solve,
}


def unstacked(aval):
    """`aval` of a scanned operand without its leading (scanned) dimension:
    one step's type, keeping the other dimensions' layout."""
    if aval.sharding is None:
        return aval.update(shape=aval.shape[1:])
    if _spec_of(aval)[0] is not None:
        raise ScanShardingError(
            f"0th dimension of all xs should be replicated. Got "
            f"{PartitionSpec(*_spec_of(aval))} (scan over {aval.str_short()}); "
            f"reshard xs unsplit along the scanned axis (olympus.reshard) first."
        )
    rest = _spec_of(aval)[1:]
    return _typed(aval.update(shape=aval.shape[1:]), rest, aval.sharding.mesh)


class ScanShardingError(ValueError):
    """A scan over an axis split between devices (JAX's ValueError): each
    step would need another device's slice."""


def stacked(aval, length: int):
    """`aval` of one step's output stacked `length` times (a scan's ys):
    unsplit along the new leading dimension, as JAX's scan."""
    if aval.sharding is None:
        return aval.update(shape=(length, *aval.shape))
    entries = (None, *_spec_of(aval))
    return _typed(aval.update(shape=(length, *aval.shape)), entries, aval.sharding.mesh)


def _typed(aval, entries, mesh):
    """`aval` with the layout `entries` (the leading dimensions' where fewer:
    the rest unsplit); an unsplit value's type holds none (so it equals the
    type of the same value made without a mesh)."""
    entries = (*entries[: aval.ndim], *(None,) * (aval.ndim - len(entries)))
    if all(e is None for e in entries):
        if aval.sharding is None:
            return aval
        return ShapedArray(aval.shape, aval.dtype, aval.weak_type)
    return aval.update(sharding=AvalSharding(mesh, _as_spec(entries)))


def _with_sharding_rule(primitive, shape_rule, sharding_rule):
    """`shape_rule`, then, where an operand's type holds a sharding, the
    results' shardings from `sharding_rule`."""
    name = primitive.name

    def abstract_eval(*avals, **params):
        out = shape_rule(*avals, **params)
        for a in avals:
            if getattr(a, "sharding", None) is not None:
                break
        else:
            return out
        outs = list(out) if primitive.multiple_results else [out]
        mesh = next(a.sharding.mesh for a in avals if getattr(a, "sharding", None))
        specs = sharding_rule(name, avals, outs[0], params)
        for o, spec in zip(outs, specs):
            _check_divisible(name, avals, o, spec, mesh)
        typed = [_typed(o, s, mesh) for o, s in zip(outs, specs)]
        return typed if primitive.multiple_results else typed[0]

    abstract_eval.__wrapped__ = shape_rule
    return abstract_eval


def _check_divisible(name, avals, out, spec, mesh) -> None:
    """JAX has no uneven layouts in types: a result dimension split over
    mesh axes whose size they do not divide is refused."""
    for d, e in enumerate(spec):
        if e is not None and out.shape[d] % _axes_size(mesh, e):
            shown = ", ".join(a.str_short() for a in avals if hasattr(a, "str_short"))
            raise ShardingTypeError(
                f"{name} on sharded dims where out dim ({out.shape[d]}) is not "
                f"divisible by mesh axes ({_axes_size(mesh, e)}) with spec ({e}) "
                f"is not implemented. Got inputs {shown} and output shape "
                f"{tuple(out.shape)}; reshard dimension {d} unsplit "
                f"(olympus.reshard) first."
            )


def _install_sharding_rules() -> None:
    for name, rule in sharding_rules.items():
        primitive = all_primitives.get(name)
        if primitive is None or primitive.abstract_eval is None:
            continue
        if getattr(primitive.abstract_eval, "__wrapped__", None) is not None:
            continue
        primitive.abstract_eval = _with_sharding_rule(
            primitive, primitive.abstract_eval, rule
        )
