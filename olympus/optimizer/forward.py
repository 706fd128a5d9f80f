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


def _literal_positions(operands, start: int, stop: int) -> dict:
    return {
        i - start: x
        for i, x in enumerate(operands)
        if start <= i < stop and type(x) is Literal
    }


def _drop(items, start: int, given: dict) -> list:
    return [x for i, x in enumerate(items) if i - start not in given]


def _inline(walk: Walk, eqn: Eqn) -> Eqn:
    """`eqn` with its literal operands moved into its sub-programs."""
    name, p, ops = eqn.primitive.name, eqn.params, eqn.invars
    if not any(type(x) is Literal for x in ops):
        return eqn
    if name in ("pjit", "checkpoint"):
        given = _literal_positions(ops, 0, len(ops))
        params = {**p, "olympuspr": _with_literals(walk, p["olympuspr"], given)}
        return eqn._replace(params=params, invars=_drop(ops, 0, given))
    if name == "cond":
        given = _literal_positions(ops, 1, len(ops))
        if not given:
            return eqn
        branches = tuple(_with_literals(walk, b, given) for b in p["branches"])
        linear = tuple(_drop(p["linear"], 0, given))
        params = {**p, "branches": branches, "linear": linear}
        return eqn._replace(params=params, invars=[ops[0], *_drop(ops[1:], 0, given)])
    if name == "scan":
        given = _literal_positions(ops, 0, p["num_consts"])
        if not given:
            return eqn
        params = {
            **p,
            "olympuspr": _with_literals(walk, p["olympuspr"], given),
            "num_consts": p["num_consts"] - len(given),
            "linear": tuple(_drop(p["linear"], 0, given)),
        }
        return eqn._replace(params=params, invars=_drop(ops, 0, given))
    if name == "while":
        nc, nb = p["cond_nconsts"], p["body_nconsts"]
        test_given = _literal_positions(ops, 0, nc)
        body_given = _literal_positions(ops, nc, nc + nb)
        if not test_given and not body_given:
            return eqn
        params = {
            **p,
            "cond_olympuspr": _with_literals(walk, p["cond_olympuspr"], test_given),
            "body_olympuspr": _with_literals(walk, p["body_olympuspr"], body_given),
            "cond_nconsts": nc - len(test_given),
            "body_nconsts": nb - len(body_given),
        }
        invars = (
            _drop(ops[:nc], 0, test_given)
            + _drop(ops[nc : nc + nb], 0, body_given)
            + list(ops[nc + nb :])
        )
        return eqn._replace(params=params, invars=invars)
    return eqn


def _scalar_spread(walk: Walk, atom):
    """s, where `atom` is broadcast_in_dim(s) of a scalar s; else None."""
    eqn = walk.producer.get(atom) if type(atom) is Var else None
    if eqn is None or eqn.primitive.name != "broadcast_in_dim":
        return None
    s = eqn.invars[0]
    return s if s.aval.shape == () and s.aval.dtype == atom.aval.dtype else None


def _invariant_xs(walk: Walk, eqn: Eqn) -> Eqn:
    """A scan over broadcast_in_dim(s) of a scalar s (a cotangent of ones, say)
    reads s in every step: s becomes a constant of the scan instead."""
    p, ops = eqn.params, list(eqn.invars)
    first_x = p["num_consts"] + p["num_carry"]
    for j in range(first_x, len(ops)):
        s = _scalar_spread(walk, ops[j]) if ops[j].aval.ndim == 1 else None
        if s is None:
            continue
        body = p["olympuspr"]
        program = body.olympuspr
        invars, linear = list(program.invars), list(p["linear"])
        nc = p["num_consts"]
        invars.insert(nc, invars.pop(j))
        linear.insert(nc, linear.pop(j))
        ops.insert(nc, s)
        del ops[j + 1]
        moved = ClosedOlympuspr(rebuilt(program, invars=invars), body.consts)
        params = {
            **p,
            "olympuspr": moved,
            "num_consts": nc + 1,
            "linear": tuple(linear),
        }
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
