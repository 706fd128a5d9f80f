"""Forwarding of pass-through outputs: where a call or loop returns one of its
own inputs unchanged (or a literal), later equations read that input directly,
and dead-code elimination then drops the output from the call.

pjit / checkpoint: an output that is an input of the sub-program, or a literal.
cond: an output every branch takes from the same operand, or the same literal.
scan / while: a carry the body returns unchanged is its initial value.
"""

from __future__ import annotations

import numpy as np

from olympus.ir.core import Eqn, Literal, Var
from olympus.optimizer.program import Walk, rewrite_pass, same_type


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
            _forward(walk, out, eqn.invars[1 + where.pop()])


def _loop_invariant(
    walk: Walk, eqn: Eqn, body, first_carry: int, first_init: int, n_carry: int
) -> None:
    for i in range(n_carry):
        if body.outvars[i] is body.invars[first_carry + i]:
            _forward(walk, eqn.outvars[i], eqn.invars[first_init + i])


def _scan(walk: Walk, eqn: Eqn) -> None:
    p = eqn.params
    nc = p["num_consts"]
    _loop_invariant(walk, eqn, p["olympuspr"].olympuspr, nc, nc, p["num_carry"])


def _while(walk: Walk, eqn: Eqn) -> None:
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    n_carry = len(eqn.outvars)
    _loop_invariant(walk, eqn, p["body_olympuspr"].olympuspr, nb, nc + nb, n_carry)


_rules = {
    "pjit": _call,
    "checkpoint": _call,
    "cond": _cond,
    "scan": _scan,
    "while": _while,
}


def forward_step(walk: Walk, eqn: Eqn) -> bool:
    rule = _rules.get(eqn.primitive.name)
    if rule is not None:
        rule(walk, eqn)
    return False  # the equation stays; its forwarded outputs are now unread


forward = rewrite_pass(forward_step)
