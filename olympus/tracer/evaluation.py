"""Program evaluation: replaying an olympuspr on the current trace.

Each equation's primitive is bound again with its params, so whatever trace
is current interprets the program as if the user's function ran again: the
eval trace computes it, a staging trace copies it, jvp, vmap and partial
evaluation transform it. Equations created meanwhile get the replayed
equation's source line (`core.replaying`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from olympus.ir.core import Eqn, Literal, Olympuspr
from olympus.tracer import core


def read_atom(env: dict, x):
    """The value of a Var in `env`, or a Literal's value to bind."""
    return x.bind_value() if isinstance(x, Literal) else env[x]


def bind_eqns(eqns: Iterable[Eqn], env: dict) -> None:
    """Binds each equation on the current trace, reading its operands from
    `env` and writing its results there."""
    for eqn in eqns:
        args = [read_atom(env, x) for x in eqn.invars]
        with core.replaying(eqn.source_info):
            outs = eqn.primitive.bind(*args, **eqn.params)
        env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))


def eval_program(olympuspr: Olympuspr, consts: Sequence, args: Sequence) -> list:
    """Runs `olympuspr` on `args` (its constvars bound to `consts`) by binding
    each equation on the current trace; returns its outputs."""
    env = dict(zip(olympuspr.constvars, consts))
    env.update(zip(olympuspr.invars, args))
    bind_eqns(olympuspr.eqns, env)
    return [read_atom(env, v) for v in olympuspr.outvars]
