"""Forwarding across the boundary of calls and loops, both ways.

Out: where a call or loop returns one of its own inputs unchanged (or a
literal), later equations read that input directly, and dead-code elimination
then drops the output from the call.
  pjit / checkpoint: an output that is an input of the sub-program, or a literal.
  cond: an output every branch takes from the same operand, or the same literal.
  scan / while: a carry the body returns unchanged is its initial value.
A scan over a broadcast scalar takes the scalar as a constant instead.

In: a literal operand (`checkpoint[...] b 1.0`) is written into the
sub-program in place of its input (pjit, checkpoint, cond branches, and the
constants of scan and while), which then simplifies and folds with it.
"""

from __future__ import annotations

import numpy as np

from olympus.ir.core import ClosedOlympuspr, Eqn, Literal, Var
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


def _literal_key(x):
    return (x.aval, np.asarray(x.val, x.aval.dtype).tobytes())


def _call(walk: Walk, eqn: Eqn) -> None:
    program = eqn.params["olympuspr"].olympuspr
    position = {v: i for i, v in enumerate(program.invars)}
    for out, inner in zip(eqn.outvars, program.outvars):
        if isinstance(inner, Literal):
            _forward(walk, out, inner)
        elif inner in position:
            _forward(walk, out, eqn.invars[position[inner]])


def _cond(walk: Walk, eqn: Eqn) -> None:
    programs = [b.olympuspr for b in eqn.params["branches"]]
    positions = [{v: i for i, v in enumerate(p.invars)} for p in programs]
    _, operands = structure_of(eqn).split(eqn.params, eqn.invars)
    for k, out in enumerate(eqn.outvars):
        inners = [p.outvars[k] for p in programs]
        if all(isinstance(x, Literal) for x in inners):
            if len({_literal_key(x) for x in inners}) == 1:
                _forward(walk, out, inners[0])
            continue
        where = {
            pos.get(x) if isinstance(x, Var) else None
            for x, pos in zip(inners, positions)
        }
        if len(where) == 1 and None not in where:
            _forward(walk, out, operands[where.pop()])


def _loop_invariant(walk: Walk, eqn: Eqn, body_name: str) -> None:
    """A carry the body passes through unchanged is the loop's initial value."""
    p, structure = eqn.params, structure_of(eqn)
    body = p[body_name].olympuspr
    body_groups = structure.body_groups(body_name)
    carry_in = structure.split_body_inputs(p, body.invars, body_name)[
        body_groups.index("carry")
    ]
    carry_out = structure.split_outputs(p, body.outvars)[0]
    init = structure.group(p, eqn.invars, "carry")
    outs = structure.split_outputs(p, eqn.outvars)[0]
    for inner_out, inner_in, out, x in zip(carry_out, carry_in, outs, init):
        if inner_out is inner_in:
            _forward(walk, out, x)


def _scan(walk: Walk, eqn: Eqn) -> None:
    _loop_invariant(walk, eqn, "olympuspr")


def _while(walk: Walk, eqn: Eqn) -> None:
    _loop_invariant(walk, eqn, "body_olympuspr")


_rules = {
    "pjit": _call,
    "checkpoint": _call,
    "cond": _cond,
    "scan": _scan,
    "while": _while,
}


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


def _scalar_spread(walk: Walk, atom):
    """s, where `atom` is broadcast_in_dim(s) of a scalar s; else None."""
    eqn = walk.producer.get(atom) if type(atom) is Var else None
    if eqn is None or eqn.primitive.name != "broadcast_in_dim":
        return None
    s = eqn.invars[0]
    return s if s.aval.shape == () and s.aval.dtype == atom.aval.dtype else None


def _x_to_consts(groups, j: int, value=None):
    """(consts, carry, xs) with xs[j] (or `value` for it) moved to the end of consts."""
    consts, carry, xs = groups
    moved = xs[j] if value is None else value
    return [*consts, moved], carry, [*xs[:j], *xs[j + 1 :]]


def _invariant_xs(walk: Walk, eqn: Eqn) -> Eqn:
    """A scan over broadcast_in_dim(s) of a scalar s (a cotangent of ones, say)
    reads s in every step: s becomes a constant of the scan instead."""
    p, structure = eqn.params, structure_of(eqn)
    groups = structure.split(p, eqn.invars)
    for j, x in enumerate(groups[2]):
        s = _scalar_spread(walk, x) if x.aval.ndim == 1 else None
        if s is None:
            continue
        body = p["olympuspr"]
        program = body.olympuspr
        body_in = structure.split_body_inputs(p, program.invars, "olympuspr")
        invars = structure.pack(*_x_to_consts(body_in, j))[0]
        linear = structure.pack(*_x_to_consts(structure.split(p, p["linear"]), j))[0]
        ops, counts = structure.pack(*_x_to_consts(groups, j, s))
        moved = ClosedOlympuspr(rebuilt(program, invars=invars), body.consts)
        params = {**p, "olympuspr": moved, **counts, "linear": tuple(linear)}
        return _invariant_xs(walk, eqn._replace(params=params, invars=ops))
    return eqn


@takes(_rules)
def forward_step(walk: Walk, eqn: Eqn) -> bool:
    rule = _rules.get(eqn.primitive.name)
    if rule is None:
        return False
    inlined = eqn
    if eqn.primitive.name == "scan":
        inlined = _invariant_xs(walk, inlined)
    inlined = _inline(walk, inlined)
    rule(walk, inlined)
    if inlined is eqn:
        return False  # the equation stays; its forwarded outputs are now unread
    walk.changed = True
    walk.emit(inlined)
    return True


forward = rewrite_pass(forward_step)
