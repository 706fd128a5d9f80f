"""The optimizer: passes over programs, ClosedOlympuspr -> ClosedOlympuspr.

    >>> from olympus.optimizer import optimize
    >>> closed = olympus.make_olympuspr(lambda x: jnp.sin(x) * jnp.sin(x) + 0 * x)(1.0)
    >>> len(closed.eqns), len(optimize(closed).eqns)  # default pipeline; 0 * x stays (IEEE)
    (5, 4)
    >>> print(optimize(closed, passes=["cse", "dce"]))  # chosen passes (names or functions)
    { lambda ; a:f32[]. let
        b:f32[] = sin a
        c:f32[] = mul b b
        d:f32[] = mul 0.0:f32[] a
        e:f32[] = add c d
      in (e,) }

Each pass is a module of its own and recurses into sub-programs (cond
branches, loop bodies, pjit, checkpoint and custom-derivative programs):

fuse      a checkpoint's recomputation moves into its transposed part; with
          nothing recomputed, forward and transposed part are inlined
forward   pass-through outputs of calls and loops are read from their inputs
stable    numerically stable rewrites (a table of rules: stable.py)
simplify  algebraic simplification (a table of rules: simplify.py)
fold      constant folding of small, exactly computed constants
cse       common-subexpression elimination (not across checkpoint boundaries)
dce       dead-code elimination, pruning unused outputs and inputs of calls

The default pipeline runs the first six fused in one walk, then dce, round
after round until a round changes nothing (at most MAX_ROUNDS). A pass
returns its input object when it changes nothing, which is how the fixed
point is seen. Effectful equations (debug callbacks) are never removed or
merged, so a value `debug.print` shows is the one the user's code computes.

Provenance: an equation a table rule made carries the user's line with a
`rules.Rewrite` record (`source_info.rewrite`: the rule, the equations it
replaced), shown by `pretty(source_info=True)` (`# f.py:3 (f) [stable:
log(1 + exp(x)) -> softplus]`), the HTML view and `inspect --source`.
`forwarding(original, optimized)` says under which name the optimized program
holds each value of the original one (ngraph's forwarding).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

from olympus.ir.core import ClosedOlympuspr, Literal, subolympusprs
from olympus.ir.printer import VarNames, pp_literal, pp_olympuspr
from olympus.optimizer import cse, dce, fold, forward, fuse, simplify, stable
from olympus.optimizer.program import Pass, Session, deferred, rewrite_pass, sessions
from olympus.optimizer.rules import fused

MAX_ROUNDS = 8

PASSES: dict[str, Pass] = {
    "fuse": fuse.fuse,
    "forward": forward.forward,
    "stable": stable.stable,
    "simplify": simplify.simplify,
    "fold": fold.fold,
    "cse": cse.cse,
    "dce": dce.dce,
    # The six rewriting passes in one walk (a rule's result is folded and
    # CSE'd in the same round): what the default pipeline runs.
    "rewrite": rewrite_pass(
        fuse.fuse_step,
        forward.forward_step,
        fused(stable.step, simplify.step),
        fold.fold_step,
        cse.cse_step,
    ),
    "rewrite_algebraic": rewrite_pass(
        fuse.fuse_step,
        forward.forward_step,
        simplify.step,
        fold.fold_step,
        cse.cse_step,
    ),
}
DEFAULT_PASSES = ("rewrite", "dce")
_REWRITE = PASSES["rewrite"]
ALGEBRAIC_PASSES = ("rewrite_algebraic", "dce")  # without the stable rewrites


def optimize(
    closed: ClosedOlympuspr,
    passes: Sequence[str | Pass] | None = None,
    max_rounds: int = MAX_ROUNDS,
    verify: bool = False,
) -> ClosedOlympuspr:
    """`closed` after `passes` (names in PASSES or functions; default:
    DEFAULT_PASSES), run in order, round after round, until a round changes
    nothing. Inputs and outputs keep their types.

    The default pipeline stops after one round unless its walk deferred work
    (`program.defer`): the walk sees every rewrite's effect on later
    equations, and dead-code elimination uncovers no new rewrite. A later
    round revisits only the equations work was deferred on and what reads a
    value it changes (`rewrite_pass`). `verify=True` runs whole rounds until
    nothing changes anyway (the tests check the default result is a fixed
    point of those).
    """
    one_round = passes is None and not verify
    passes = [
        PASSES[p] if isinstance(p, str) else p
        for p in (DEFAULT_PASSES if passes is None else passes)
    ]
    original, session = closed, Session()
    sites = session.deferred_at
    sessions.append(session)
    revisit = None  # later default rounds: what the last one deferred work on
    try:
        for _ in range(max_rounds):
            start, cuts, first = closed, deferred[0], len(sites)
            for run in passes:
                if revisit is not None and run is _REWRITE:
                    closed = run(closed, revisit)
                else:
                    closed = run(closed)
            if closed is start or (one_round and deferred[0] == cuts):
                break
            if one_round:
                revisit = {id(eqn) for eqn in sites[first:]}
    finally:
        sessions.pop()
    if closed is not original:
        _forwards[closed] = session.forwards
    return closed


# An optimized program -> what its optimization replaced (old var -> atom).
_forwards: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def forwarding(original, optimized) -> dict[str, str]:
    """Where a value of `original` is in `optimized` (ngraph's forwarding): each
    printed name of `original` whose value `optimized` still computes -> its
    printed name there (or the literal it became). A value only a rewritten
    pattern computed (the `1 + exp(x)` of a softplus) has no entry; the new
    equations' `source_info.rewrite.eqns` hold how to recompute it."""
    forwards = _forwards.get(optimized, {})
    old_names, new_names = VarNames(), VarNames()
    pp_olympuspr(original, names=old_names)
    pp_olympuspr(optimized, names=new_names)
    new = new_names.as_dict()
    found = {}
    for var, name in old_names.as_dict().items():
        atom, hops = var, 0
        while atom not in new and atom in forwards and hops < 64:
            atom, hops = forwards[atom], hops + 1
            if type(atom) is Literal:
                break
        if type(atom) is Literal:
            found[name] = pp_literal(atom)
        elif atom in new:
            found[name] = new[atom]
    return found


def count_eqns(closed) -> int:
    """Equations in a program, those of its sub-programs included."""
    program = closed.olympuspr if isinstance(closed, ClosedOlympuspr) else closed
    return sum(
        1 + sum(count_eqns(sub) for sub in subolympusprs(eqn.params))
        for eqn in program.eqns
    )


__all__ = [
    "ALGEBRAIC_PASSES",
    "DEFAULT_PASSES",
    "MAX_ROUNDS",
    "PASSES",
    "count_eqns",
    "forwarding",
    "optimize",
]
