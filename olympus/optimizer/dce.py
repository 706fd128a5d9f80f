"""Dead-code elimination: equations whose outputs nobody reads go, and so do
the unused outputs and inputs of calls and loops.

Effectful equations (debug callbacks, at any depth) stay, with everything
they read. A higher-order primitive with a rule in `ir.pruning.dce_rules`
(`pjit`, `checkpoint`, `cond`, `scan`, `while`, registered beside each one in
lax) gets smaller sub-programs when some of its outputs are unused: unused
outputs and the inputs only they needed are pruned, and a loop carry is
dropped when neither the loop's result nor any live part of the body reads
it. This module is the engine those rules call back into (`Pruner`). Other
higher-order primitives (custom derivatives) keep their signatures; their
sub-programs are cleaned inside.
"""

from __future__ import annotations

from olympus.ir.core import ClosedOlympuspr, Eqn, Olympuspr, Var
from olympus.ir.pruning import Pruner, dce_rules, rebuilt, select
from olympus.optimizer.program import is_effectful, map_subprograms, sessions


def _dce(
    olympuspr: Olympuspr, used_outputs: list[bool]
) -> tuple[Olympuspr, list, list]:
    """The program returning only the used outputs, without dead equations
    (invars and constvars all kept); and which constvars and invars it reads."""
    outvars = select(used_outputs, olympuspr.outvars)
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
            rule = dce_rules.get(eqn.primitive)
            if rule is not None and not is_effectful(eqn):
                new = rule(_PRUNER, eqn, [v in live for v in outs])
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
            constvars=select(used_consts, program.constvars),
            invars=select(keep, program.invars),
        )
    )
    return ClosedOlympuspr(program, select(used_consts, closed.consts)), keep


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
    program = rebuilt(program, constvars=select(used_consts, program.constvars))
    return ClosedOlympuspr(program, select(used_consts, closed.consts))


def _dce_inner(closed: ClosedOlympuspr) -> ClosedOlympuspr:
    """`dce` of a sub-program whose signature stays (custom derivatives'):
    a changed one gets its own Vars (`_with_own_vars`)."""
    n = len(closed.olympuspr.invars)
    out, _ = _pruned(closed, [True] * len(closed.olympuspr.outvars), [True] * n)
    return out


# What the per-primitive rules (olympus/ir/pruning.py) may ask of this pass.
_PRUNER = Pruner(dce=_dce, pruned=_pruned)
