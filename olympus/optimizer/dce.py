"""Dead-code elimination: equations whose outputs nobody reads go, and so do
the unused outputs and inputs of calls and loops.

Effectful equations (debug callbacks, at any depth) stay, with everything
they read. `pjit`, `checkpoint`, `cond`, `scan` and `while` get smaller
sub-programs when some of their outputs are unused: unused outputs and the
inputs only they needed are pruned, and a loop carry is dropped when neither
the loop's result nor any live part of the body reads it. Other
higher-order primitives (custom derivatives) keep their signatures; their
sub-programs are cleaned inside.
"""

from __future__ import annotations

from collections.abc import Callable

from olympus.ir.core import ClosedOlympuspr, Eqn, Olympuspr, Var
from olympus.ir.structure import carry_fixpoint, structure_of
from olympus.optimizer.program import is_effectful, map_subprograms, rebuilt, sessions


def _select(mask, items) -> list:
    return [x for x, keep in zip(items, mask) if keep]


def _dce(
    olympuspr: Olympuspr, used_outputs: list[bool]
) -> tuple[Olympuspr, list, list]:
    """The program returning only the used outputs, without dead equations
    (invars and constvars all kept); and which constvars and invars it reads."""
    outvars = _select(used_outputs, olympuspr.outvars)
    live = {x for x in outvars if type(x) is Var}
    kept: list[Eqn] = []
    changed = len(outvars) != len(olympuspr.outvars)
    for eqn in reversed(olympuspr.eqns):
        outs = eqn.outvars
        if len(outs) == 1:
            is_live = outs[0] in live
        else:
            is_live = any(v in live for v in outs)
        if not is_live:
            if not is_effectful(eqn):
                changed = True
                continue
            new = map_subprograms(eqn, _dce_inner)
        else:
            rule = dce_rules.get(eqn.primitive.name)
            if rule is not None and not is_effectful(eqn):
                new = rule(eqn, [v in live for v in outs])
            else:
                new = map_subprograms(eqn, _dce_inner)
        if new is not eqn:
            changed = True
        for x in new.invars:
            if type(x) is Var:
                live.add(x)
        kept.append(new)
    used_consts = [v in live for v in olympuspr.constvars]
    used_inputs = [v in live for v in olympuspr.invars]
    if not changed:
        return olympuspr, used_consts, used_inputs
    return (
        rebuilt(olympuspr, eqns=kept[::-1], outvars=outvars),
        used_consts,
        used_inputs,
    )


def _pruned(closed: ClosedOlympuspr, used_outputs, keep_inputs=None, found=None):
    """(sub-program with only the used outputs and, unless `keep_inputs` says
    otherwise, only the inputs it reads; which inputs it kept). `found`: the
    `_dce` of the program for `used_outputs`, when the caller has it."""
    program, used_consts, used_inputs = found or _dce(closed.olympuspr, used_outputs)
    keep = used_inputs if keep_inputs is None else keep_inputs
    if program is closed.olympuspr and all(used_consts) and all(keep):
        return closed, keep
    program = _with_own_vars(
        rebuilt(
            program,
            constvars=_select(used_consts, program.constvars),
            invars=_select(keep, program.invars),
        )
    )
    return ClosedOlympuspr(program, _select(used_consts, closed.consts)), keep


def _with_own_vars(program: Olympuspr) -> Olympuspr:
    """`program` over new Var objects. One sub-program called from two places
    (a jitted function called twice) is pruned once per call; copies sharing
    Var objects would print with shared names, and the text would not parse
    back to itself."""
    fresh: dict = {}

    # old name -> new (`forwarding`)
    forwards = sessions[-1].forwards if sessions else {}

    def bind(v: Var) -> Var:
        fresh[v] = forwards[v] = Var(v.aval, v.suffix)
        return fresh[v]

    constvars = [bind(v) for v in program.constvars]
    invars = [bind(v) for v in program.invars]
    eqns = [
        Eqn(
            eqn.primitive,
            eqn.params,
            [fresh.get(x, x) for x in eqn.invars],  # literals are never keys
            [bind(v) for v in eqn.outvars],
            eqn.source_info,
        )
        for eqn in program.eqns
    ]
    outvars = [fresh.get(x, x) for x in program.outvars]
    return rebuilt(
        program, constvars=constvars, invars=invars, eqns=eqns, outvars=outvars
    )


def dce(closed: ClosedOlympuspr) -> ClosedOlympuspr:
    """Dead code removed; the signature (invars, outvars) is unchanged and
    unused constvars go with their consts. The program keeps its Vars (it is
    nobody's sub-program: no copy of it can share them)."""
    program, used_consts, _ = _dce(
        closed.olympuspr, [True] * len(closed.olympuspr.outvars)
    )
    if program is closed.olympuspr and all(used_consts):
        return closed
    program = rebuilt(program, constvars=_select(used_consts, program.constvars))
    return ClosedOlympuspr(program, _select(used_consts, closed.consts))


def _dce_inner(closed: ClosedOlympuspr) -> ClosedOlympuspr:
    """`dce` of a sub-program whose signature stays (custom derivatives'):
    a changed one gets its own Vars (`_with_own_vars`)."""
    n = len(closed.olympuspr.invars)
    out, _ = _pruned(closed, [True] * len(closed.olympuspr.outvars), [True] * n)
    return out


# ---- rules for higher-order primitives: (eqn, used outputs) -> eqn --------------------
def _dce_call(eqn: Eqn, used: list[bool]) -> Eqn:
    """pjit / checkpoint: a sub-program computing only the used outputs."""
    closed = eqn.params["olympuspr"]
    sub, keep = _pruned(closed, used)
    if sub is closed and all(used):
        return eqn
    return eqn._replace(
        params={**eqn.params, "olympuspr": sub},
        invars=_select(keep, eqn.invars),
        outvars=_select(used, eqn.outvars),
    )


def _dce_barrier(eqn: Eqn, used: list[bool]) -> Eqn:
    """optimization_barrier passes each operand through: unused ones go."""
    if all(used):
        return eqn
    return eqn._replace(
        invars=_select(used, eqn.invars), outvars=_select(used, eqn.outvars)
    )


def _dce_cond(eqn: Eqn, used: list[bool]) -> Eqn:
    branches = eqn.params["branches"]
    results = [_dce(b.olympuspr, used) for b in branches]
    keep = [any(flags) for flags in zip(*(r[2] for r in results))]
    new_branches = []
    for b, (program, used_consts, _) in zip(branches, results):
        if program is b.olympuspr and all(used_consts) and all(keep):
            new_branches.append(b)
            continue
        program = _with_own_vars(
            rebuilt(
                program,
                constvars=_select(used_consts, program.constvars),
                invars=_select(keep, program.invars),
            )
        )
        new_branches.append(ClosedOlympuspr(program, _select(used_consts, b.consts)))
    if all(a is b for a, b in zip(new_branches, branches)) and all(used):
        return eqn
    params = {
        **eqn.params,
        "branches": tuple(new_branches),
        "linear": tuple(_select(keep, eqn.params["linear"])),
    }
    (index,), operands = structure_of(eqn).split(eqn.params, eqn.invars)
    return eqn._replace(
        params=params,
        invars=[index, *_select(keep, operands)],
        outvars=_select(used, eqn.outvars),
    )


def _live_carry(
    body: Olympuspr,
    used_carry: list[bool],
    used_rest: list[bool],
    carry_of: Callable[[list], list],
    also_read=None,
) -> tuple[list[bool], tuple]:
    """The carries a loop must keep: those read after the loop, by `also_read`
    (the while test) or by the body on the way to a kept carry or output; and
    the body's `_dce` for them (and `used_rest`). `carry_of` picks the carry
    inputs out of the body's per-input flags."""
    if also_read is not None:
        used_carry = [u or r for u, r in zip(used_carry, also_read)]

    def run(carry):
        found = _dce(body, carry + used_rest)
        return found, carry_of(found[2])

    found, carry = carry_fixpoint(run, used_carry)
    return carry, found


def _dce_scan(eqn: Eqn, used: list[bool]) -> Eqn:
    p, structure = eqn.params, structure_of(eqn)
    closed = p["olympuspr"]
    used_carry, used_ys = structure.split_outputs(p, used)
    carry, found = _live_carry(
        closed.olympuspr, used_carry, used_ys, lambda u: structure.split(p, u)[1]
    )
    used_consts, _, used_xs = structure.split(p, found[2])
    keep = used_consts + carry + used_xs
    sub, _ = _pruned(closed, carry + used_ys, keep, found)
    outs = carry + used_ys
    if sub is closed and all(outs):
        return eqn
    groups = structure.split(p, eqn.invars)
    invars, counts = structure.pack(
        *(_select(k, g) for k, g in zip((used_consts, carry, used_xs), groups))
    )
    params = {
        **p,
        "olympuspr": sub,
        **counts,
        "linear": tuple(_select(keep, p["linear"])),
    }
    return eqn._replace(
        params=params, invars=invars, outvars=_select(outs, eqn.outvars)
    )


def _dce_while(eqn: Eqn, used: list[bool]) -> Eqn:
    p, structure = eqn.params, structure_of(eqn)
    test, body = p["cond_olympuspr"], p["body_olympuspr"]
    test_found = _dce(test.olympuspr, [True])
    test_consts, test_carry = structure.split_body_inputs(
        p, test_found[2], "cond_olympuspr"
    )
    carry, body_found = _live_carry(
        body.olympuspr,
        used,
        [],
        lambda u: structure.split_body_inputs(p, u, "body_olympuspr")[1],
        test_carry,
    )
    body_consts = structure.split_body_inputs(p, body_found[2], "body_olympuspr")[0]
    new_test, _ = _pruned(test, [True], test_consts + carry, test_found)
    new_body, _ = _pruned(body, carry, body_consts + carry, body_found)
    if new_test is test and new_body is body and all(carry):
        return eqn
    groups = structure.split(p, eqn.invars)
    invars, counts = structure.pack(
        *(_select(k, g) for k, g in zip((test_consts, body_consts, carry), groups))
    )
    params = {**p, "cond_olympuspr": new_test, "body_olympuspr": new_body, **counts}
    return eqn._replace(
        params=params, invars=invars, outvars=_select(carry, eqn.outvars)
    )


dce_rules = {
    "pjit": _dce_call,
    "checkpoint": _dce_call,
    "optimization_barrier": _dce_barrier,
    "cond": _dce_cond,
    "scan": _dce_scan,
    "while": _dce_while,
}
