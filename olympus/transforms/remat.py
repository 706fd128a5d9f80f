"""The remat slicer: which values a checkpoint's backward pass recomputes, and
the program that recomputes them.

A checkpoint's forward program returns residuals; a policy says which of them
(and which intermediate values on the way to them) the forward pass may save.
This module does the program surgery that follows: `saveable` asks the policy
about each residual, `reading_saved_tags` lets readers of a tagged value read
the saved tag, `with_saved_intermediates` widens the forward program to also
return the saved intermediates, and `recompute_program` slices out the
equations that recompute the rest from the inputs and the saved values,
reaching into jitted calls, cond branches and scan bodies (whose operand
groups it reads through `olympus.ir.structure`). The checkpoint primitive and
its policies are in `olympus/lax/checkpoint.py`.
"""

from __future__ import annotations


from olympus.ir.core import ClosedOlympuspr, Olympuspr, Var
from olympus.ir.structure import structure_of
from olympus.tracer.evaluation import bind_eqns, read_atom
from olympus.tracer.staging import (
    DebugInfo,
    trace_sub_program,
)
from olympus.transforms.ad_util import zeros_like_aval


def saveable_residuals(known: ClosedOlympuspr, num_res: int, policy) -> list[bool]:
    """Per residual: may the forward pass keep it (else the backward recomputes it)?"""
    producers = {v: eqn for eqn in known.olympuspr.eqns for v in eqn.outvars}
    res_vars = known.olympuspr.outvars[len(known.olympuspr.outvars) - num_res :]
    return [_policy_saves(producers, v, policy) for v in res_vars]


def _policy_saves(producers: dict, v, policy) -> bool:
    """Does `policy` save the value `v` of a program (`producers`: variable ->
    the equation making it)? Inputs and literals need no recomputing."""
    eqn = producers.get(v)
    if eqn is None:
        return True
    eqn = _named_inside_jit(eqn, v) or eqn
    return bool(policy) and bool(
        policy(eqn.primitive, *[x.aval for x in eqn.invars], **eqn.params)
    )


def _tags(eqn) -> list[tuple]:
    """(value, tagged) pairs of the enclosing program's variables that `eqn`
    makes equal: `tagged = checkpoint_name(value)`, also inside a jitted call
    that returns both (or takes the value as an argument)."""
    if eqn.primitive.name == "name":
        x = eqn.invars[0]
        return [(x, eqn.outvars[0])] if isinstance(x, Var) else []
    if eqn.primitive.name != "pjit":
        return []
    body = eqn.params["olympuspr"].olympuspr
    outs = {v: o for v, o in zip(body.outvars, eqn.outvars) if isinstance(v, Var)}
    ins = {v: o for v, o in zip(body.invars, eqn.invars) if isinstance(o, Var)}
    return [
        (ins.get(s, outs.get(s)), outs[t])
        for inner in body.eqns
        for s, t in _tags(inner)
        if t in outs and (s in ins or s in outs)
    ]


def reading_saved_tags(known: ClosedOlympuspr, policy) -> ClosedOlympuspr:
    """`known` with every reader of a tagged value, or of the value under the
    tag, reading the one of them that `policy` saves (else the tag).

    `checkpoint_name(v, "e")` is v, but jvp rules read v itself (exp's tangent
    reads exp's output): without this the residual is v, which the policy
    does not save, and the backward pass recomputes v although the tag, the
    same value, is saved. A saved tag's equation moves up to just after v is
    made, so that every reader of v comes after it. Jitted calls' bodies
    are rewritten the same way (their tags are saved too)."""
    program = known.olympuspr
    eqns = [_call_reading_saved_tags(eqn, policy) for eqn in program.eqns]
    if any(a is not b for a, b in zip(eqns, program.eqns)):
        program = Olympuspr(
            program.constvars, program.invars, eqns, program.outvars, program.debug_info
        )
        known = ClosedOlympuspr(program, known.consts)
    plan = _tag_plan(program, policy)
    if not plan[0] and not plan[2]:
        return known
    return ClosedOlympuspr(_with_tag_plan(program, *plan), known.consts)


def _tag_plan(program: Olympuspr, policy) -> tuple:
    """For each value and its tags, the one read in their place (the saved
    one, else the first tag): (alias: read at once, hoisted: tag equations
    moved to just after their value's producer (by id), after: renamings
    that start after an equation (by id), skip: ids of moved equations)."""
    producers = {v: e for e in program.eqns for v in e.outvars}
    root, members, made_by = {}, {}, {}
    for eqn in program.eqns:
        for s, t in _tags(eqn):
            r = root[t] = root.get(s, s)
            members.setdefault(r, [r]).append(t)
            made_by[t] = eqn
    alias, hoisted, after, skip = {}, {}, {}, set()
    for r, group in members.items():
        # The saved one, else the first tag: then budget and saved-intermediate
        # searches see one value, not two copies of it.
        rep = next((m for m in group if _policy_saves(producers, m, policy)), group[1])
        renamed = {m: rep for m in group if m is not rep}
        if rep is r:  # r is made first: its tags are read as r from the start
            alias.update(renamed)
            continue
        eqn = made_by[rep]
        if eqn.primitive.name == "name":  # `rep = name r`, right after r is made
            skip.add(id(eqn))
            eqn = eqn._replace(invars=[r])
            hoisted.setdefault(id(producers.get(r)), []).append(eqn)
        after.setdefault(id(eqn), []).append(renamed)
    return alias, hoisted, after, skip


def _with_tag_plan(program: Olympuspr, alias, hoisted, after, skip) -> Olympuspr:
    """`program` rewritten as `_tag_plan` says."""

    def read(x):
        return alias.get(x, x) if isinstance(x, Var) else x

    eqns = []

    def emit(eqn):
        eqns.append(eqn._replace(invars=[read(x) for x in eqn.invars]))
        for renamed in after.pop(id(eqn), ()):
            alias.update(renamed)
        for tag in hoisted.pop(id(eqn), ()):
            emit(tag)

    for tag in hoisted.pop(id(None), ()):  # tags of inputs
        emit(tag)
    for eqn in program.eqns:
        if id(eqn) not in skip:
            emit(eqn)
    return Olympuspr(
        program.constvars,
        program.invars,
        eqns,
        [read(x) for x in program.outvars],
        program.debug_info,
    )


def _call_reading_saved_tags(eqn, policy):
    """`eqn`, a jitted call with its body rewritten by `reading_saved_tags`."""
    if eqn.primitive.name != "pjit":
        return eqn
    body = eqn.params["olympuspr"]
    new = reading_saved_tags(body, policy)
    return eqn if new is body else eqn._replace(params={**eqn.params, "olympuspr": new})


def _named_inside_jit(eqn, var):
    """The `checkpoint_name` equation that made `var` inside a jitted call
    (through nested ones), or None: a name policy sees a jitted function's tags."""
    while eqn.primitive.name == "pjit":
        body = eqn.params["olympuspr"].olympuspr
        var = body.outvars[eqn.outvars.index(var)]
        eqn = next((e for e in body.eqns if var in e.outvars), None)
        if eqn is None:
            return None
    return eqn if eqn.primitive.name == "name" else None


def recompute_program(known: ClosedOlympuspr, num_res: int, saveable: list[bool]):
    """The part of the known program that recomputes the residuals that are not
    saved, starting from its inputs and the saved residuals (dead code removed).

    Returns (program, positions of the saved residuals it takes as inputs)."""
    program = known.olympuspr
    res_vars = program.outvars[len(program.outvars) - num_res :]
    saved = {v: i for i, (v, keep) in enumerate(zip(res_vars, saveable)) if keep}
    unsaved = [v for v, keep in zip(res_vars, saveable) if not keep]
    kept, live = recompute_slice(program.eqns, unsaved, saved)
    remade = {v for eqn in kept for v in eqn.outvars}
    # Saved residuals the recomputation reads, latest producer first.
    saved_inputs = [
        v
        for eqn in reversed(program.eqns)
        for v in eqn.outvars
        if v in saved and v in live and v not in remade
    ]
    saved_inputs = list(dict.fromkeys(saved_inputs))
    recompute = _with_fresh_vars(list(program.invars) + saved_inputs, kept, unsaved)
    return ClosedOlympuspr(recompute, []), [saved[v] for v in saved_inputs]


def recompute_slice(eqns, wanted, saved) -> tuple[list, set]:
    """The equations that recompute `wanted` from the inputs and the `saved`
    values, in program order, and the variables they (and `wanted`) read. An
    equation is not rerun when the outputs read from it are saved (a jitted
    call returning a saved tag and the value under it)."""
    live, kept = set(wanted), []
    for eqn in reversed(eqns):
        read = [v for v in eqn.outvars if v in live]
        if not read or all(v in saved for v in read):
            continue
        if eqn.primitive.name == "pjit" and any(v in saved for v in eqn.outvars):
            eqn = _sliced_call(eqn, [v for v in read if v not in saved], saved)
        elif eqn.primitive.name == "cond" and any(v in saved for v in eqn.outvars):
            eqn = _sliced_cond(eqn, [v for v in read if v not in saved], saved)
        elif eqn.primitive.name == "scan" and any(
            v in saved
            for v in structure_of(eqn).split_outputs(eqn.params, eqn.outvars)[1]
        ):
            eqn = _sliced_scan(eqn, [v for v in read if v not in saved], saved)
        kept.append(eqn)
        live.update(x for x in eqn.invars if isinstance(x, Var))
    return kept[::-1], live


def _sliced_call(eqn, wanted: list, saved) -> object:
    """The jitted call `eqn` recomputing only its `wanted` outputs, from its
    inputs and its outputs that are `saved` (a tag inside it that the policy
    saves, returned by `_saving_intermediates`): rerun whole, it would
    recompute the saved value too."""
    body = eqn.params["olympuspr"]
    program = body.olympuspr
    inner = dict(zip(eqn.outvars, program.outvars))
    inner_saved = {inner[v] for v in eqn.outvars if v in saved}
    inner_wanted = [inner[v] for v in wanted]
    kept, live = recompute_slice(
        program.eqns, [v for v in inner_wanted if isinstance(v, Var)], inner_saved
    )
    remade = {v for e in kept for v in e.outvars}
    args = [(x, v) for x, v in zip(eqn.invars, program.invars) if v in live]
    taken = {v for _, v in args} | set(program.constvars)
    saved_args = {}
    for v in eqn.outvars:
        w = inner[v]
        if v in saved and w in live and w not in remade and w not in taken:
            saved_args.setdefault(w, v)
    sliced = _with_fresh_vars(
        [v for _, v in args] + list(saved_args),
        kept,
        inner_wanted,
        constvars=program.constvars,
    )
    return eqn._replace(
        invars=[x for x, _ in args] + list(saved_args.values()),
        outvars=list(wanted),
        params={**eqn.params, "olympuspr": ClosedOlympuspr(sliced, body.consts)},
    )


def _with_fresh_vars(invars, eqns, outvars, constvars=()) -> Olympuspr:
    """The program over new Var objects: the recomputation is a program of its
    own, and sharing variables with the forward program would print both with
    the same names (so the printed text would not parse back to itself)."""
    fresh: dict = {}

    def bind(v: Var) -> Var:
        fresh[v] = Var(v.aval, v.suffix)
        return fresh[v]

    def read(x):
        return fresh.get(x, x) if isinstance(x, Var) else x

    new_constvars = [bind(v) for v in constvars]
    new_invars = [bind(v) for v in invars]
    new_eqns = [
        eqn._replace(
            invars=[read(x) for x in eqn.invars], outvars=[bind(v) for v in eqn.outvars]
        )
        for eqn in eqns
    ]
    return Olympuspr(new_constvars, new_invars, new_eqns, [read(v) for v in outvars])


def with_saved_intermediates(
    known: ClosedOlympuspr, num_res: int, saveable: list[bool], policy
) -> tuple:
    """`known` also returning the values that `policy` saves (e.g. dots) on the
    way to the residuals it does not save, so the backward pass recomputes from
    them rather than from the inputs. Returns (program, num_res, saveable)."""
    program = known.olympuspr
    res_vars = program.outvars[len(program.outvars) - num_res :]
    wanted = [v for v, keep in zip(res_vars, saveable) if not keep]
    eqns, saved, _ = _saving_intermediates(program.eqns, wanted, policy)
    outputs = set(program.outvars)
    extra = [v for v in dict.fromkeys(saved) if v not in outputs]
    if not extra:
        return known, num_res, saveable
    wider = _returning_too(program, eqns, extra)
    return (
        ClosedOlympuspr(wider, known.consts),
        num_res + len(extra),
        saveable + [True] * len(extra),
    )


def _saving_intermediates(eqns, wanted, policy) -> tuple[list, list, set]:
    """The values that `policy` saves on the way to `wanted` (none of which it
    saves) and the variables read on that way. A jitted call on the way
    also returns the values inside it that the policy saves (as JAX's
    policies see inside pjit bodies), so `eqns` comes back with such calls
    widened. Returns (eqns, saved values, live variables)."""
    producers = {v: eqn for eqn in eqns for v in eqn.outvars}
    live, saved, out = {v for v in wanted if isinstance(v, Var)}, [], []
    for eqn in reversed(eqns):
        read = [v for v in eqn.outvars if v in live]
        kept = [v for v in read if not _policy_saves(producers, v, policy)]
        saved += [v for v in read if v not in kept]
        if kept and eqn.primitive.name == "pjit":
            eqn, inner_saved, inputs = _exposing_saved(eqn, kept, policy)
            saved += inner_saved
            live.update(inputs)
        elif kept and eqn.primitive.name == "cond":
            eqn, inner_saved, inputs = _exposing_saved_in_branches(eqn, kept, policy)
            saved += inner_saved
            live.update(inputs)
        elif kept and eqn.primitive.name == "scan":
            eqn, inner_saved, inputs = _exposing_saved_in_scan(eqn, kept, policy)
            saved += inner_saved
            live.update(inputs)
        elif kept:
            live.update(x for x in eqn.invars if isinstance(x, Var))
        out.append(eqn)
    return out[::-1], saved, live


def _returning_too(program, eqns: list, extra: list) -> Olympuspr:
    """`program` with `eqns` in place of its own, also returning `extra` (the
    saved values a policy keeps for the backward)."""
    return Olympuspr(
        program.constvars,
        program.invars,
        eqns,
        program.outvars + extra,
        program.debug_info,
    )


def _operands_read(eqn, program, live: set) -> list:
    """The variables among `eqn`'s operands whose parameters in its body
    `program` are `live` (read on the way to what is kept)."""
    return [
        x
        for x, v in zip(eqn.invars, program.invars)
        if v in live and isinstance(x, Var)
    ]


def _exposing_saved(eqn, wanted: list, policy) -> tuple:
    """The jitted call `eqn` also returning the values inside it that `policy`
    saves on the way to its `wanted` outputs. Returns (the call, the saved
    values as its outputs, its inputs read on the way)."""
    body = eqn.params["olympuspr"]
    program = body.olympuspr
    inner = dict(zip(eqn.outvars, program.outvars))
    eqns, saved, live = _saving_intermediates(
        program.eqns, [inner[v] for v in wanted], policy
    )
    inputs = _operands_read(eqn, program, live)
    outer = {w: v for v, w in inner.items() if isinstance(w, Var)}
    extra = [w for w in dict.fromkeys(saved) if w not in outer]
    if not extra and all(a is b for a, b in zip(eqns, program.eqns)):
        return eqn, [outer[w] for w in saved], inputs
    new_outs = [Var(w.aval) for w in extra]
    outer.update(zip(extra, new_outs))
    wider = _returning_too(program, eqns, extra)
    call = eqn._replace(
        outvars=list(eqn.outvars) + new_outs,
        params={**eqn.params, "olympuspr": ClosedOlympuspr(wider, body.consts)},
    )
    return call, [outer[w] for w in dict.fromkeys(saved)], inputs


def _exposing_saved_in_branches(eqn, wanted: list, policy) -> tuple:
    """The cond `eqn` also returning the values inside its branches that
    `policy` saves on the way to its `wanted` outputs: each branch fills its
    own slots and zeros the other branches' (as cond's partial evaluation
    joins residuals). Returns (the cond, the saved values as its outputs, its
    operands read on the way)."""
    branches = eqn.params["branches"]
    positions = [eqn.outvars.index(v) for v in wanted]
    found = [
        _saving_intermediates(
            b.olympuspr.eqns, [b.olympuspr.outvars[i] for i in positions], policy
        )
        for b in branches
    ]
    (index,), operands = structure_of(eqn).split(eqn.params, eqn.invars)
    read = [
        any(b.olympuspr.invars[j] in live for b, (_, _, live) in zip(branches, found))
        for j in range(len(operands))
    ]
    inputs = [index] + [x for x, r in zip(operands, read) if r]
    inputs = [x for x in inputs if isinstance(x, Var)]
    slots = [v for _, saved, _ in found for v in dict.fromkeys(saved)]
    if not slots or any(b.consts or b.olympuspr.constvars for b in branches):
        return eqn, [], inputs
    wider = []
    for b, (eqns, saved, _) in zip(branches, found):
        program, own = b.olympuspr, set(saved)

        def fun(*args, program=program, eqns=eqns, own=own):
            env = dict(zip(program.invars, args))
            bind_eqns(eqns, env)
            return [read_atom(env, v) for v in program.outvars] + [
                read_atom(env, v) if v in own else zeros_like_aval(v.aval)
                for v in slots
            ]

        traced = trace_sub_program(fun, b.in_avals, DebugInfo("checkpoint", "cond", ()))
        if traced.consts:
            return eqn, [], inputs
        wider.append(traced.closed)
    new_outs = [Var(v.aval) for v in slots]
    cond = eqn._replace(
        outvars=list(eqn.outvars) + new_outs,
        params={**eqn.params, "branches": tuple(wider)},
    )
    return cond, new_outs, inputs


def _sliced_cond(eqn, wanted: list, saved) -> object:
    """The cond `eqn` recomputing only its `wanted` outputs, each branch from
    the operands and the cond's `saved` outputs (taken as operands too)."""
    kept_at = [i for i, v in enumerate(eqn.outvars) if v in saved]
    wanted_at = [eqn.outvars.index(v) for v in wanted]
    branches = [
        ClosedOlympuspr(_sliced_body(b.olympuspr, wanted_at, kept_at), b.consts)
        for b in eqn.params["branches"]
    ]
    return eqn._replace(
        invars=list(eqn.invars) + [eqn.outvars[i] for i in kept_at],
        outvars=list(wanted),
        params={
            **eqn.params,
            "branches": tuple(branches),
            "linear": tuple(eqn.params["linear"]) + (False,) * len(kept_at),
        },
    )


def _exposing_saved_in_scan(eqn, wanted: list, policy) -> tuple:
    """The scan `eqn` also returning, stacked as extra outputs, the values
    inside its body that `policy` saves on the way to its `wanted` outputs
    and its carries (the recomputation reruns the carries' chain). Returns
    (the scan, the saved values as its outputs, its operands read)."""
    body, structure = eqn.params["olympuspr"], structure_of(eqn)
    program = body.olympuspr
    carry_at = structure.split_outputs(eqn.params, range(len(eqn.outvars)))[0]
    positions = carry_at + [eqn.outvars.index(v) for v in wanted]
    eqns, saved, live = _saving_intermediates(
        program.eqns, [program.outvars[i] for i in positions], policy
    )
    inputs = _operands_read(eqn, program, live)
    extra = list(dict.fromkeys(saved))
    if not extra:
        return eqn, [], inputs
    wider = _returning_too(program, eqns, extra)
    length = eqn.params["length"]
    new_outs = [Var(v.aval.update(shape=(length, *v.aval.shape))) for v in extra]
    scan = eqn._replace(
        outvars=list(eqn.outvars) + new_outs,
        params={**eqn.params, "olympuspr": ClosedOlympuspr(wider, body.consts)},
    )
    return scan, new_outs, inputs


def _sliced_body(program, wanted_at: list, kept_at: list) -> Olympuspr:
    """A cond branch's or scan body's `program` computing only its outputs at
    `wanted_at`, taking those at `kept_at` (saved by the forward) as extra
    inputs after its own."""
    outs = program.outvars
    eqns, _ = recompute_slice(
        program.eqns,
        [outs[i] for i in wanted_at if isinstance(outs[i], Var)],
        {outs[i] for i in kept_at},
    )
    taken = [
        outs[i] if isinstance(outs[i], Var) else Var(outs[i].aval) for i in kept_at
    ]
    return _with_fresh_vars(
        list(program.invars) + taken,
        eqns,
        [outs[i] for i in wanted_at],
        constvars=program.constvars,
    )


def _sliced_scan(eqn, wanted: list, saved) -> object:
    """The scan `eqn` recomputing its carries and its `wanted` outputs, each
    iteration from its operands and its row of the scan's `saved` stacked
    outputs (taken as extra scanned operands)."""
    body, structure = eqn.params["olympuspr"], structure_of(eqn)
    carry_at, ys_at = structure.split_outputs(eqn.params, range(len(eqn.outvars)))
    kept_at = [i for i in ys_at if eqn.outvars[i] in saved]
    wanted_ys_at = [i for i in map(eqn.outvars.index, wanted) if i in ys_at]
    sliced = _sliced_body(body.olympuspr, carry_at + wanted_ys_at, kept_at)
    carries = [eqn.outvars[i] for i in carry_at]
    return eqn._replace(
        invars=list(eqn.invars) + [eqn.outvars[i] for i in kept_at],
        outvars=[v if v in wanted else Var(v.aval) for v in carries]
        + [eqn.outvars[i] for i in wanted_ys_at],
        params={
            **eqn.params,
            "olympuspr": ClosedOlympuspr(sliced, body.consts),
            "linear": tuple(eqn.params["linear"]) + (False,) * len(kept_at),
        },
    )
