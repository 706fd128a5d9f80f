"""Forwarding across the boundary of calls and loops, both ways.

Out: where a call or loop returns one of its own inputs unchanged (or a
literal), later equations read that input directly, and dead-code elimination
then drops the output from the call. Which outputs those are, each primitive's
rule in `ir.pruning.forwarding_rules` says (registered beside it in lax):
  pjit / checkpoint: an output that is an input of the sub-program, or a literal.
  cond: an output every branch takes from the same operand, or the same literal.
  scan / while: a carry the body returns unchanged is its initial value.
Before that, a primitive's `hoisting_rules` entry may make it read fewer
values per iteration: a scan over a broadcast scalar takes the scalar as a
constant instead.

In: a literal operand (`checkpoint[...] b 1.0`) is written into the
sub-program in place of its input (pjit, checkpoint, cond branches, and the
constants of scan and while), which then simplifies and folds with it.
"""

from __future__ import annotations

import olympus.lax  # noqa: F401  (registers the per-primitive rules)
from olympus.ir.core import ClosedOlympuspr, Eqn, Literal, Var
from olympus.ir.pruning import forwarding_rules, hoisting_rules
from olympus.ir.structure import structure_of
from olympus.optimizer.program import (
    Walk,
    literal,
    rebuilt,
    rewrite_pass,
    same_type,
    takes,
)


def _read_vars(walk: Walk) -> set:
    """The variables some equation or output of the program reads."""
    read = walk.memo.get("read")
    if read is None:
        program = walk.olympuspr
        atoms = [x for eqn in program.eqns for x in eqn.invars] + list(program.outvars)
        read = walk.memo["read"] = {x for x in atoms if isinstance(x, Var)}
    return read


def _forward(walk: Walk, outer_out: Var, atom) -> None:
    if outer_out in _read_vars(walk) and same_type(atom.aval, outer_out.aval):
        walk.replace(outer_out, atom)


# ---- literal operands into sub-programs ---------------------------------------------
def _with_literals(walk: Walk, closed: ClosedOlympuspr, given: dict) -> ClosedOlympuspr:
    """`closed` with its inputs at the positions `given` (position -> Literal)
    replaced by those literals, and rewritten again by the walk's pass."""
    if not given:
        return closed
    program = closed.olympuspr
    subst = {}
    for i, lit in given.items():
        var = program.invars[i]
        subst[var] = literal(lit.val, var.aval.dtype, var.aval.weak_type)

    def read(x):
        return subst.get(x, x) if type(x) is Var else x

    eqns = [
        e._replace(invars=[read(x) for x in e.invars])
        if any(type(x) is Var and x in subst for x in e.invars)
        else e
        for e in program.eqns
    ]
    program = rebuilt(
        program,
        invars=[v for v in program.invars if v not in subst],
        eqns=eqns,
        outvars=[read(x) for x in program.outvars],
    )
    return walk.run_sub(ClosedOlympuspr(program, closed.consts))


# The operand groups whose literals move into the sub-programs reading them:
# those every iteration or branch reads unchanged.
_INLINED_GROUPS = {
    "call": ("args",),
    "switch": ("operands",),
    "scan": ("consts",),
    "loop": ("cond_consts", "body_consts"),
}


def _inline(walk: Walk, eqn: Eqn) -> Eqn:
    """`eqn` with its literal operands moved into its sub-programs."""
    structure, p = structure_of(eqn), eqn.params
    if structure is None or not any(type(x) is Literal for x in eqn.invars):
        return eqn
    inlined = _INLINED_GROUPS[structure.kind]
    dropped = [
        type(x) is Literal and name in inlined
        for name, group in zip(structure.groups, structure.split(p, eqn.invars))
        for x in group
    ]
    if not any(dropped):
        return eqn
    params = dict(p)
    for body, _ in structure.bodies:
        operands = structure.body_operands(p, eqn.invars, body)
        flags = structure.body_operands(p, dropped, body)
        given = {i: x for i, (x, d) in enumerate(zip(operands, flags)) if d}
        if isinstance(p[body], tuple):
            params[body] = tuple(_with_literals(walk, b, given) for b in p[body])
        else:
            params[body] = _with_literals(walk, p[body], given)
    invars, params = structure.select(params, eqn.invars, [not d for d in dropped])
    return eqn._replace(params=params, invars=invars)


@takes(p.name for p in forwarding_rules)
def forward_step(walk: Walk, eqn: Eqn) -> bool:
    rule = forwarding_rules.get(eqn.primitive)
    if rule is None:
        return False
    inlined = eqn
    hoist = hoisting_rules.get(eqn.primitive)
    if hoist is not None:
        inlined = hoist(inlined, walk.producer.get)
    inlined = _inline(walk, inlined)
    for out, atom in rule(inlined):
        _forward(walk, out, atom)
    if inlined is eqn:
        return False  # the equation stays; its forwarded outputs are now unread
    walk.changed = True
    walk.emit(inlined)
    return True


forward = rewrite_pass(forward_step)
