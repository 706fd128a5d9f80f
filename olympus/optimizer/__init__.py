"""The optimizer: passes over programs, ClosedOlympuspr -> ClosedOlympuspr.

    >>> closed = olympus.make_olympuspr(olympus.grad(loss))(w, x)
    >>> optimize(closed)                       # the default pipeline
    >>> optimize(closed, passes=[cse, dce])    # chosen passes

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
from olympus.optimizer.cse import cse
from olympus.optimizer.dce import dce
from olympus.optimizer.fold import fold
from olympus.optimizer.forward import forward
from olympus.optimizer.program import Pass
from olympus.optimizer.simplify import simplify
from olympus.optimizer.stable import stable

MAX_ROUNDS = 8

DEFAULT_PASSES: tuple[Pass, ...] = (forward, stable, simplify, fold, cse, dce)
ALGEBRAIC_PASSES: tuple[Pass, ...] = (forward, simplify, fold, cse, dce)  # no stable rewrites


def optimize(closed: ClosedOlympuspr, passes: Sequence[Pass] | None = None,
             max_rounds: int = MAX_ROUNDS) -> ClosedOlympuspr:
    """`closed` after `passes` (default: DEFAULT_PASSES), run in order, round
    after round, until a round changes nothing; same inputs and outputs."""
    passes = DEFAULT_PASSES if passes is None else tuple(passes)
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


__all__ = ["ALGEBRAIC_PASSES", "DEFAULT_PASSES", "MAX_ROUNDS", "count_eqns", "cse", "dce",
           "fold", "forward", "optimize", "simplify", "stable"]
