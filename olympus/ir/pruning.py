"""What the optimizer may do at the boundary of a call or loop, per primitive.

Two passes see through higher-order primitives: dead-code elimination prunes
the unused outputs (and the inputs only they needed) of a call or loop, and
forwarding reads an output that merely passes an operand through from that
operand. How a primitive allows either depends on its operand groups, so the
rules are registered beside each primitive's definition in lax, into the
tables here, the way lowering and jvp rules are; the passes
(olympus/optimizer/dce.py, forward.py) are the engines that run them and
supply what the rules need (`Pruner`). A primitive without a rule keeps its
signature; its sub-programs are still cleaned inside.

    dce_rules[prim](pruner, eqn, used_outputs) -> eqn
        the equation computing only the used outputs (every output it keeps
        must stay; dropping inputs is up to the rule)
    forwarding_rules[prim](eqn) -> [(output, atom), ...]
        outputs that equal an operand (or a literal) unchanged
    hoisting_rules[prim](eqn, producer) -> eqn
        the equation reading fewer values per iteration, given `producer`
        (atom -> the equation that made it, or None)

Example:
    >>> from olympus.ir.pruning import dce_rules
    >>> import olympus.lax
    >>> sorted(p.name for p in dce_rules)[:2]
    ['checkpoint', 'cond']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from olympus.ir.core import Eqn, Literal, Olympuspr
from olympus.ir.structure import carry_fixpoint, structure_of


class Pruner(NamedTuple):
    """What a DCE rule may ask of the DCE pass.

    dce(olympuspr, used_outputs) -> (olympuspr, used_consts, used_inputs):
        the program with only the used outputs and no dead equations (its
        constvars and invars all kept), and which of those it reads.
    pruned(closed, used_outputs, keep_inputs=None, found=None) -> (closed, kept):
        a sub-program with only the used outputs and the kept inputs (by
        default, the ones it reads), over Vars of its own; `found` is the
        `dce` of it for `used_outputs`, when the rule has it already.
    """

    dce: Callable
    pruned: Callable


dce_rules: dict = {}
forwarding_rules: dict = {}
hoisting_rules: dict = {}


def select(mask, items) -> list:
    """The items whose flag in `mask` is set."""
    return [x for x, keep in zip(items, mask) if keep]


def rebuilt(olympuspr: Olympuspr, constvars=None, invars=None, eqns=None, outvars=None):
    """A copy of `olympuspr` with some parts replaced (debug_info kept)."""
    return Olympuspr(
        olympuspr.constvars if constvars is None else constvars,
        olympuspr.invars if invars is None else invars,
        olympuspr.eqns if eqns is None else eqns,
        olympuspr.outvars if outvars is None else outvars,
        olympuspr.debug_info,
    )


# ---- rules shared by several primitives ---------------------------------------------
def dce_call(pruner: Pruner, eqn: Eqn, used: list[bool]) -> Eqn:
    """pjit / checkpoint: a sub-program computing only the used outputs."""
    closed = eqn.params["olympuspr"]
    sub, keep = pruner.pruned(closed, used)
    if sub is closed and all(used):
        return eqn
    return eqn._replace(
        params={**eqn.params, "olympuspr": sub},
        invars=select(keep, eqn.invars),
        outvars=select(used, eqn.outvars),
    )


def dce_pass_through(pruner: Pruner, eqn: Eqn, used: list[bool]) -> Eqn:
    """A primitive whose i-th output is its i-th operand (optimization_barrier):
    unused ones go."""
    if all(used):
        return eqn
    return eqn._replace(
        invars=select(used, eqn.invars), outvars=select(used, eqn.outvars)
    )


def live_carry(
    pruner: Pruner,
    body: Olympuspr,
    used_carry: list[bool],
    used_rest: list[bool],
    carry_of: Callable[[list], list],
    also_read=None,
) -> tuple[list[bool], tuple]:
    """The carries a loop must keep: those read after the loop, by `also_read`
    (the while test) or by the body on the way to a kept carry or output; and
    the body's `dce` for them (and `used_rest`). `carry_of` picks the carry
    inputs out of the body's per-input flags."""
    if also_read is not None:
        used_carry = [u or r for u, r in zip(used_carry, also_read)]

    def run(carry):
        found = pruner.dce(body, carry + used_rest)
        return found, carry_of(found[2])

    found, carry = carry_fixpoint(run, used_carry)
    return carry, found


def call_forwards(eqn: Eqn) -> list:
    """pjit / checkpoint: an output that is an input of the sub-program, or a
    literal."""
    program = eqn.params["olympuspr"].olympuspr
    position = {v: i for i, v in enumerate(program.invars)}
    found = []
    for out, inner in zip(eqn.outvars, program.outvars):
        if isinstance(inner, Literal):
            found.append((out, inner))
        elif inner in position:
            found.append((out, eqn.invars[position[inner]]))
    return found


def carry_forwards(body_name: str) -> Callable[[Eqn], list]:
    """scan / while: a carry the body `body_name` passes through unchanged is
    the loop's initial value."""

    def rule(eqn: Eqn) -> list:
        p, structure = eqn.params, structure_of(eqn)
        body = p[body_name].olympuspr
        position = structure.body_groups(body_name).index("carry")
        carry_in = structure.split_body_inputs(p, body.invars, body_name)[position]
        carry_out = structure.split_outputs(p, body.outvars)[0]
        init = structure.group(p, eqn.invars, "carry")
        outs = structure.split_outputs(p, eqn.outvars)[0]
        return [
            (out, x)
            for inner_out, inner_in, out, x in zip(carry_out, carry_in, outs, init)
            if inner_out is inner_in
        ]

    return rule
