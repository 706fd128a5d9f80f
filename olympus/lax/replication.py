"""Which mesh axes each value of a shard_map body may vary along (JAX's
`check_rep`): the static check that an output declared replicated over an
axis (its out_spec leaves the axis out) is equal on every device along it.

A body's inputs vary along the axes their in_specs split them over; literals
and closed-over constants along none. `axis_index(a)`, `ppermute`,
`psum_scatter` and `all_to_all` over `a` make a value vary along `a`;
`psum`/`pmax`/`pmin` (so `pmean`) and `all_gather` over `a` make it equal
along `a`. Any other primitive's results vary along the union of its operands'
axes; `cond`, `while`, `scan` and the call-like primitives (pjit, checkpoint,
custom_jvp/vjp) are followed into their bodies, loop carries to a fixpoint.
The analysis is conservative: a value it calls varying may happen to be
equal, never the other way round. `carry_changes` also lists the loops whose
carry varies along other axes after an iteration than before (JAX's types
refuse them: the initial carry must say how the body's result varies). Rules are keyed by primitive name so this
module needs none of the primitives; the collectives register theirs in
`parallel/primitives.py`.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Sequence
from typing import NamedTuple

from olympus.ir.core import ClosedOlympuspr, Literal, Olympuspr, subolympusprs
from olympus.ir.structure import carry_fixpoint, structure_of

Axes = frozenset
NONE: Axes = frozenset()

# primitive name -> (params, operands' axes) -> results' axes
Rule = Callable[[dict, list], list]
rules: dict[str, Rule] = {}
# primitive name -> the axes its results vary along whatever its operands do
# (axis_index, ppermute, ...): what a body held by an unknown primitive adds
introduced: dict[str, Callable[[dict], Axes]] = {}


class CarryChange(NamedTuple):
    """A loop whose carry `component` varies along `before` going in and
    `after` coming out of one iteration (`loop`: 'scan' or 'while_loop')."""

    loop: str
    component: int
    aval: object
    before: Axes
    after: Axes
    source_info: object = None


# While `carry_changes` runs: the CarryChanges found, in program order.
_changes: contextvars.ContextVar = contextvars.ContextVar("carry_changes", default=None)


@contextlib.contextmanager
def carry_changes():
    """Collects the CarryChanges of the loops `varying` meets meanwhile (a
    loop met again in a later fixpoint round of an enclosing one is listed
    after the first change, which is the one to report)."""
    found: list = []
    token = _changes.set(found)
    try:
        yield found
    finally:
        _changes.reset(token)


def _note_changes(loop: str, before: list, after: list, avals: list) -> None:
    found = _changes.get()
    if found is None:
        return
    for j, (b, a, aval) in enumerate(zip(before, after, avals)):
        if b != a:
            found.append(CarryChange(loop, j, aval, b, a))
            return  # as JAX, the first differing component


def varying(program: Olympuspr, ins: Sequence[Axes]) -> list[Axes]:
    """The axes each output of `program` may vary along, given its inputs'."""
    env: dict = dict(zip(program.invars, ins))
    found = _changes.get()

    def read(atom) -> Axes:
        return NONE if isinstance(atom, Literal) else env.get(atom, NONE)

    for eqn in program.eqns:
        operands = [read(a) for a in eqn.invars]
        rule = rules.get(eqn.primitive.name)
        known = 0 if found is None else len(found)
        outs = (
            rule(eqn.params, operands)
            if rule is not None
            else _union_rule(eqn.params, operands, len(eqn.outvars))
        )
        if found is not None and len(found) > known and found[-1].source_info is None:
            found[-1] = found[-1]._replace(source_info=eqn.source_info)
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in program.outvars]


def _union(sets) -> Axes:
    return frozenset().union(*sets)


def _introduced_in(program: Olympuspr) -> Axes:
    found = set()
    for eqn in program.eqns:
        adds = introduced.get(eqn.primitive.name)
        if adds is not None:
            found |= adds(eqn.params)
        for sub in subolympusprs(eqn.params):
            found |= _introduced_in(sub)
    return frozenset(found)


def _union_rule(params: dict, operands: list, n_out: int) -> list[Axes]:
    axes = _union(operands).union(*map(_introduced_in, subolympusprs(params)))
    return [axes] * n_out


def _program(value) -> Olympuspr:
    return value.olympuspr if isinstance(value, ClosedOlympuspr) else value


def _forwarded(program: Olympuspr, out: int) -> int | None:
    """The input position output `out` returns unchanged, if it does."""
    var = program.outvars[out]
    for i, v in enumerate(program.invars):
        if v is var:
            return i
    return None


# ---- call-like primitives: the body's invars are the equation's operands ----------
def _call_rule(key: str) -> Rule:
    def rule(params, operands):
        body = _program(params[key])
        if len(body.invars) != len(operands):
            return _union_rule(params, operands, len(body.outvars))
        return varying(body, operands)

    return rule


for _name, _key in [
    ("pjit", "olympuspr"),
    ("checkpoint", "olympuspr"),
    ("custom_jvp_call", "call"),
    ("custom_vjp_call", "call"),
    ("custom_vmap_call", "call"),
]:
    rules[_name] = _call_rule(_key)
rules["optimization_barrier"] = lambda params, operands: list(operands)


# ---- control flow ----------------------------------------------------------------
def _cond_rule(params, operands):
    """Outputs vary as any branch's do, and along the index's axes too (devices
    may take different branches) unless every branch forwards the same input."""
    (index,), args = structure_of("cond").split(params, operands)
    branches = [_program(b) for b in params["branches"]]
    per_branch = [varying(b, args) for b in branches]
    outs = []
    for j, sets in enumerate(zip(*per_branch)):
        same = {_forwarded(b, j) for b in branches}
        if len(same) == 1 and None not in same:
            outs.append(args[same.pop()])
        else:
            outs.append(_union(sets) | index)
    return outs


def _fixpoint(carry: list, step: Callable[[list], list]) -> list:
    """Grows the carries' axes until a loop iteration adds none (finite: the
    mesh has finitely many axes)."""
    return carry_fixpoint(lambda c: (None, step(c)), carry)[1]


def _while_rule(params, operands):
    """A carry the body changes also varies along the predicate's axes (the
    trip count may differ between devices)."""
    structure = structure_of("while")
    cond, body = _program(params["cond_olympuspr"]), _program(params["body_olympuspr"])
    cconsts, bconsts, init = structure.split(params, operands)
    carry_in = structure.split_body_inputs(params, body.invars, "body_olympuspr")[1]
    kept = [out is v for out, v in zip(body.outvars, carry_in)]

    rounds = []

    def step(carry):
        (pred,) = varying(cond, [*cconsts, *carry])
        outs = varying(body, [*bconsts, *carry])
        if not rounds:  # the body's first iteration, on the initial carry
            _note_changes("while_loop", carry, outs, [v.aval for v in carry_in])
        rounds.append(carry)
        return [o if k else o | pred for o, k in zip(outs, kept)]

    return _fixpoint(list(init), step)


def _scan_rule(params, operands):
    structure, body = structure_of("scan"), _program(params["olympuspr"])
    consts, init, xs = structure.split(params, operands)

    rounds = []

    def step(carry):
        outs = structure.split_outputs(params, varying(body, [*consts, *carry, *xs]))[0]
        if not rounds:  # the body's first iteration, on the initial carry
            avals = [v.aval for v in body.outvars[: len(outs)]]
            _note_changes("scan", carry, outs, avals)
        rounds.append(carry)
        return outs

    carry = _fixpoint(list(init), step)
    return [
        *carry,
        *structure.split_outputs(params, varying(body, [*consts, *carry, *xs]))[1],
    ]


rules["cond"] = _cond_rule
rules["while"] = _while_rule
rules["scan"] = _scan_rule
