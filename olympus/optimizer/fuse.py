"""A checkpoint's transposed part, together with what makes its residuals.

The reverse mode of `checkpoint(f)` splits f over three sub-programs: the
forward (`f`), the recomputation of the residuals the policy does not save
(`remat(f)`, in the backward pass, behind an optimization barrier) and the
transposed linear part (`transpose(lin(f))`); each part's `role` parameter
says which it is ("call", "remat", "transpose"), and `checkpoint_base` the
name of the checkpoint it came from. Rewrite rows that take the
gradient of naive code to its stable form (`(1 / (1 + exp(x))) * exp(x) ->
logistic`) match a product whose factors are made in one sub-program and used
in another, so across that boundary they cannot see it. Two moves put them
in one program; neither computes anything twice or moves work between the
forward and the backward pass (lowering inlines checkpoints, so neither
changes what runs):

- The recomputation, which only the transposed part reads, moves into the
  transposed part's sub-program: one checkpoint `remat(transpose(lin(f)))`
  that recomputes and then applies the cotangent. Its inputs still come
  through the barrier and it is still its own scope for CSE, so
  rematerialisation is kept.
- Where the transposed part reads no recomputation (the policy saved every
  residual it needs, e.g. `everything_saveable`), the boundary protects
  nothing: the forward and the transposed part are inlined into the
  enclosing program, as if f had not been checkpointed.

A third move trades a saved residual for the checkpoint's input: where the
policy saved a value the forward makes from one of its inputs by elementwise
steps (`checkpoint_name(exp(x), "e")` under `save_only_these_names("e")`),
the rows cannot see the `exp` behind the saved value (`(1 / (1 + e)) * e` is
NaN at e = inf). The transposed part is tried with those steps redone from
the input, which it holds anyway (a checkpoint's inputs are always kept for
its backward pass); the trial is kept only if the rewrite rows then leave
none of the redone steps read (`logistic(x)`), so nothing is computed twice
and the saved value, now read by nobody, is dropped by dead-code elimination.
"""

from __future__ import annotations

from olympus.ir.core import ClosedOlympuspr, Eqn, Olympuspr, Var
from olympus.lax.checkpoint import checkpoint_base, part_name
from olympus.optimizer.program import (
    Walk,
    is_effectful,
    is_transparent,
    rewrite_pass,
    takes,
)
from olympus.optimizer.simplify import _use_counts


def _role(eqn: Eqn) -> str:
    return eqn.params.get("role", "call")


def _base(eqn: Eqn) -> str | None:
    """f, for a checkpoint's linear part `lin(f)` or its transpose
    `transpose(lin(f))`; else None."""
    if _role(eqn) in ("lin", "transpose"):
        return checkpoint_base(eqn.params)
    return None


def _fusable(walk: Walk, producer: Eqn | None, eqn: Eqn, base: str) -> bool:
    """`producer` is `base`'s recomputation, made under the same policy, and
    `eqn` reads every output of it that anything reads."""
    if producer is None or producer.primitive.name != "checkpoint":
        return False
    params = producer.params
    if _role(producer) != "remat" or checkpoint_base(params) != base:
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
    role = "remat_transpose" if _role(eqn) == "transpose" else "remat"
    params = {
        **eqn.params,
        "olympuspr": ClosedOlympuspr(program, []),
        "name": part_name("remat", eqn.params["name"]),
        "role": role,
    }
    return eqn._replace(invars=operands, params=params)


def _calls(walk: Walk) -> tuple[dict, dict]:
    """The walk's program as it came: variable -> the equation making it, and
    variable -> the equations reading it."""
    calls = walk.memo.get("fuse")
    if calls is None:
        made, readers = {}, {}
        for e in walk.olympuspr.eqns:
            for x in e.invars:
                if type(x) is Var:
                    readers.setdefault(x, []).append(e)
            for v in e.outvars:
                made[v] = e
        calls = walk.memo["fuse"] = (made, readers)
    return calls


def _inlined_pair(walk: Walk, eqn: Eqn) -> Eqn | None:
    """The transposed part that reads only what the forward part `eqn` saved
    (no recomputation of `eqn` is read): the pair is inlined. None if none."""
    name, policy = eqn.params["name"], eqn.params["policy"]
    if _role(eqn) != "call" or is_effectful(eqn):
        return None
    made, readers = _calls(walk)
    for reader in {id(r): r for v in eqn.outvars for r in readers.get(v, ())}.values():
        if (
            reader.primitive.name == "checkpoint"
            and _role(reader) == "transpose"
            and checkpoint_base(reader.params) == name
            and reader.params["policy"] is policy
            and not reader.params["olympuspr"].consts
            and not is_effectful(reader)
            and not any(
                type(x) is Var
                and x in made
                and made[x].primitive.name == "checkpoint"
                and _role(made[x]) == "remat"
                and checkpoint_base(made[x].params) == name
                for x in reader.invars
            )
        ):
            return reader
    return None


def _inline(walk: Walk, eqn: Eqn) -> None:
    """`eqn`'s sub-program's equations in the walk's program, in its place."""
    program = eqn.params["olympuspr"].olympuspr
    env = dict(zip(program.invars, eqn.invars))

    def read(x):
        return env.get(x, x) if type(x) is Var else x

    for e in program.eqns:
        outvars = [Var(v.aval, v.suffix) for v in e.outvars]
        env.update(zip(e.outvars, outvars))
        walk.feed(e._replace(invars=[read(x) for x in e.invars], outvars=outvars))
    for out, inner in zip(eqn.outvars, program.outvars):
        walk.replace(out, walk.read(read(inner)))
    walk.changed = True


MAX_REDONE = 8  # elementwise steps from an input to a saved value, at most


def _redoable(walk: Walk, atom, base: str, policy):
    """(the forward checkpoint's operand, the elementwise equations from it)
    when `atom`, read by `base`'s transposed part (through a barrier or not),
    is a value `base`'s forward saved and made from one of its inputs by
    elementwise steps (hints included); else None."""
    made = walk.producer.get(atom) if type(atom) is Var else None
    if made is not None and made.primitive.name == "optimization_barrier":
        atom = made.invars[made.outvars.index(atom)]
        made = walk.producer.get(atom) if type(atom) is Var else None
    if made is None or made.primitive.name != "checkpoint":
        return None
    params = made.params
    if (
        params["name"] != base
        or params["policy"] is not policy
        or params["olympuspr"].consts
    ):
        return None
    body = params["olympuspr"].olympuspr
    value = body.outvars[made.outvars.index(atom)]
    makers = {v: e for e in body.eqns for v in e.outvars}
    steps = []
    while type(value) is Var and value in makers and len(steps) < MAX_REDONE:
        e = makers[value]
        if len(e.invars) != 1 or not (
            "elementwise_unary" in e.primitive.traits or is_transparent(e)
        ):
            return None
        steps.append(e)
        value = e.invars[0]
    if not steps or type(value) is not Var or value not in body.invars:
        return None
    operand = made.invars[body.invars.index(value)]
    return (operand, steps[::-1]) if type(operand) is Var else None


def _live(program: Olympuspr) -> set:
    """The variables a program's outputs depend on."""
    live = {x for x in program.outvars if type(x) is Var}
    for e in reversed(program.eqns):
        if any(v in live for v in e.outvars) or is_effectful(e):
            live.update(x for x in e.invars if type(x) is Var)
    return live


def _redone(walk: Walk, eqn: Eqn, base: str) -> Eqn | None:
    """`eqn` (`base`'s transposed part) with the saved values it reads that are
    elementwise steps from a forward input redone from that input, if the
    rewrite rows then read none of the redone steps; else None."""
    program = eqn.params["olympuspr"].olympuspr
    inputs: dict = {}  # forward operand -> the trial's input for it
    redone: dict = {}  # (operand, steps) -> the redone value
    new_vars: list = []
    eqns: list = []
    env: dict = {}
    for outer, inner in zip(eqn.invars, program.invars):
        found = _redoable(walk, outer, base, eqn.params["policy"])
        if found is None:
            continue
        operand, steps = found
        key = (operand, *map(id, steps))
        if key not in redone:
            if operand not in inputs:
                inputs[operand] = Var(operand.aval)
            x = inputs[operand]
            for step in steps:
                out = Var(step.outvars[0].aval)
                eqns.append(step._replace(invars=[x], outvars=[out]))
                new_vars.append(out)
                x = out
            redone[key] = x
        env[inner] = redone[key]
    if not env:
        return None
    trial = Olympuspr(
        [],
        [*program.invars, *inputs.values()],
        eqns
        + [e._replace(invars=[env.get(x, x) for x in e.invars]) for e in program.eqns],
        [env.get(x, x) for x in program.outvars],
    )
    rewritten = walk.run_sub(ClosedOlympuspr(trial, [])).olympuspr
    if _live(rewritten).intersection(new_vars):
        return None
    params = {**eqn.params, "olympuspr": ClosedOlympuspr(rewritten, [])}
    return eqn._replace(invars=[*eqn.invars, *inputs], params=params)


def _transposed_base(eqn: Eqn) -> str | None:
    """f, for `transpose(lin(f))` or `remat(transpose(lin(f)))`; else None."""
    if _role(eqn) in ("transpose", "remat_transpose"):
        return checkpoint_base(eqn.params)
    return None


@takes(("checkpoint",))
def fuse_step(walk: Walk, eqn: Eqn) -> bool:
    """A checkpoint's transposed part takes in the recomputation of its
    residuals, or, where it reads none, the forward and transposed parts are
    inlined (see the module docstring)."""
    if eqn.primitive.name != "checkpoint" or eqn.params["olympuspr"].consts:
        return False
    inlined = walk.memo.setdefault("inlined", set())
    if eqn.outvars and eqn.outvars[0] in inlined:
        _inline(walk, eqn)
        return True
    base = _base(eqn)
    if base is None:
        pair = _inlined_pair(walk, eqn)
        if pair is not None and pair.outvars:
            inlined.add(pair.outvars[0])
            _inline(walk, eqn)
            return True
    if is_effectful(eqn):
        return False
    for x in eqn.invars if base is not None else ():
        producer = walk.producer.get(x) if type(x) is Var else None
        if _fusable(walk, producer, eqn, base):
            walk.changed = True
            walk.feed(_fused(producer, eqn))
            return True
    base = _transposed_base(eqn)
    tried = walk.memo.setdefault("redone", set())
    if base is None or id(eqn) in tried:
        return False
    tried.add(id(eqn))
    new = _redone(walk, eqn, base)
    if new is None:
        return False
    walk.changed = True
    walk.emit(new)
    return True


fuse = rewrite_pass(fuse_step)
