"""The optimizer: passes over programs, ClosedOlympuspr -> ClosedOlympuspr.

    >>> closed = olympus.make_olympuspr(olympus.grad(loss))(w, x)
    >>> optimize(closed)                       # the default pipeline
    >>> optimize(closed, passes=["cse", "dce"])  # chosen passes (names or functions)

Each pass is a module of its own and recurses into sub-programs (cond
branches, loop bodies, pjit, checkpoint and custom-derivative programs):

forward   pass-through outputs of calls and loops read their inputs directly
stable    numerically stable rewrites (a table of rules: stable.py)
simplify  algebraic simplification (a table of rules: simplify.py)
fold      constant folding of small, exactly computed constants
cse       common-subexpression elimination (not across checkpoint boundaries)
dce       dead-code elimination, pruning unused outputs and inputs of calls

The pipeline runs until a round changes nothing (at most MAX_ROUNDS). A pass
returns its input object when it changes nothing, which is how the fixed
point is seen. Effectful equations (debug callbacks) are never removed or
merged.
"""

from __future__ import annotations

from typing import Sequence

from olympus.ir.core import ClosedOlympuspr, subolympusprs
from olympus.optimizer import cse, dce, fold, forward, simplify, stable
from olympus.optimizer.program import Pass

MAX_ROUNDS = 8

PASSES: dict[str, Pass] = {
    "forward": forward.forward, "stable": stable.stable, "simplify": simplify.simplify,
    "fold": fold.fold, "cse": cse.cse, "dce": dce.dce,
}
DEFAULT_PASSES = ("forward", "stable", "simplify", "fold", "cse", "dce")
ALGEBRAIC_PASSES = ("forward", "simplify", "fold", "cse", "dce")  # no stable rewrites


def optimize(closed: ClosedOlympuspr, passes: Sequence[str | Pass] | None = None,
             max_rounds: int = MAX_ROUNDS) -> ClosedOlympuspr:
    """`closed` after `passes` (names in PASSES or functions; default:
    DEFAULT_PASSES), run in order, round after round, until a round changes
    nothing. Inputs and outputs keep their types."""
    passes = [PASSES[p] if isinstance(p, str) else p
              for p in (DEFAULT_PASSES if passes is None else passes)]
    for _ in range(max_rounds):
        start = closed
        for run in passes:
            closed = run(closed)
        if closed is start:
            break
    return closed


def count_eqns(closed) -> int:
    """Equations in a program, those of its sub-programs included."""
    program = closed.olympuspr if isinstance(closed, ClosedOlympuspr) else closed
    return sum(1 + sum(count_eqns(sub) for sub in subolympusprs(eqn.params))
               for eqn in program.eqns)


__all__ = ["ALGEBRAIC_PASSES", "DEFAULT_PASSES", "MAX_ROUNDS", "PASSES", "count_eqns",
           "optimize"]
