"""Fusing a checkpoint's residual producer into its transposed part.

The reverse mode of `checkpoint(f)` splits f over three sub-programs: the
forward (`f`), the recomputation of the residuals the policy does not save
(`remat(f)`, in the backward pass, behind an optimization barrier) and the
transposed linear part (`transpose(lin(f))`). Rewrite rows that take the
gradient of naive code to its stable form (`(1 / (1 + exp(x))) * exp(x) ->
logistic`) match a product whose factors are computed in the recomputation
and used in the transposed part, so across that boundary they cannot see it.

Where the transposed part is the only reader of the producer's outputs (the
recomputation always; the forward part when it only made residuals, as in a
grad with everything saved), the producer's equations move into the
transposed part's sub-program: one checkpoint `remat(transpose(lin(f)))`
that recomputes and then applies the cotangent, in which the rows see the
whole product. Nothing runs twice and nothing moves to the forward pass: the
producer's work only changes sub-program, its inputs still come through the
barrier, and the fused program is still its own scope for CSE, so
rematerialisation is kept. Lowering inlines checkpoints, so the fusion
itself changes no computation.
"""

from __future__ import annotations

from olympus.ir.core import ClosedOlympuspr, Eqn, Olympuspr, Var
from olympus.optimizer.program import Walk, is_effectful, rewrite_pass
from olympus.optimizer.simplify import _use_counts

_DERIVED = (("transpose(lin(", "))"), ("lin(", ")"))


def _base(name: str) -> str | None:
    """f, for the name of a checkpoint's linear part `lin(f)` or its
    transpose `transpose(lin(f))`; else None."""
    for head, tail in _DERIVED:
        if name.startswith(head) and name.endswith(tail):
            return name[len(head) : len(name) - len(tail)]
    return None


def _fusable(walk: Walk, producer: Eqn | None, eqn: Eqn, base: str) -> bool:
    """`producer` is `base`'s forward part or recomputation, made under the
    same policy, and `eqn` reads every output of it that anything reads."""
    if producer is None or producer.primitive.name != "checkpoint":
        return False
    params = producer.params
    if params["name"] not in (base, f"remat({base})"):
        return False
    if params["policy"] is not eqn.params["policy"] or params["olympuspr"].consts:
        return False
    if is_effectful(producer):
        return False
    uses = _use_counts(walk)
    return all(
        v in walk.subst or uses.get(v, 0) == eqn.invars.count(v)
        for v in producer.outvars
    )


def _fused(producer: Eqn, eqn: Eqn) -> Eqn:
    """`eqn` computing the outputs of `producer` it reads itself: the
    producer's equations, then its own. Both over new variables: the producer
    stays in the program until dead-code elimination drops it, and a
    sub-program may be shared by several calls (programs are cached)."""
    first = producer.params["olympuspr"].olympuspr
    second = eqn.params["olympuspr"].olympuspr
    fresh: dict = {}

    def bind(v: Var) -> Var:
        fresh[v] = Var(v.aval, v.suffix)
        return fresh[v]

    def read(x):
        return fresh.get(x, x) if type(x) is Var else x

    def copied(eqns) -> list[Eqn]:
        return [
            e._replace(
                invars=[read(x) for x in e.invars],
                outvars=[bind(v) for v in e.outvars],
            )
            for e in eqns
        ]

    invars = [bind(v) for v in first.invars]
    eqns = copied(first.eqns)
    made = {out: read(inner) for out, inner in zip(producer.outvars, first.outvars)}
    operands = list(producer.invars)
    for outer, inner in zip(eqn.invars, second.invars):
        if type(outer) is Var and outer in made:
            fresh[inner] = made[outer]  # read what the producer's equations made
        else:
            operands.append(outer)
            invars.append(bind(inner))
    eqns += copied(second.eqns)
    program = Olympuspr([], invars, eqns, [read(x) for x in second.outvars])
    name = eqn.params["name"]
    if producer.params["name"].startswith("remat("):
        name = f"remat({name})"
    params = {**eqn.params, "olympuspr": ClosedOlympuspr(program, []), "name": name}
    return eqn._replace(invars=operands, params=params)


def fuse_step(walk: Walk, eqn: Eqn) -> bool:
    """A checkpoint's transposed (or linear) part takes in the checkpoint
    that produces its residuals (see the module docstring)."""
    if eqn.primitive.name != "checkpoint" or eqn.params["olympuspr"].consts:
        return False
    base = _base(eqn.params["name"])
    if base is None or is_effectful(eqn):
        return False
    for x in eqn.invars:
        producer = walk.producer.get(x) if type(x) is Var else None
        if _fusable(walk, producer, eqn, base):
            walk.changed = True
            walk.feed(_fused(producer, eqn))
            return True
    return False


fuse = rewrite_pass(fuse_step)
