"""Common-subexpression elimination: an equation that repeats an earlier one
(same primitive, params and operands) is dropped and its outputs read the
earlier outputs.

Keys compare literals by their bytes (so 0.0 and -0.0 differ), sub-programs
and Python callables in params by identity, and the operands of commutative
primitives in a canonical order (`mul k d` repeats `mul d k`). Never merged:
effectful equations, optimization barriers and checkpoints. Each program is
its own scope: an equation inside a checkpoint's sub-program is never merged
with one outside it, so rematerialisation is kept.
"""

from __future__ import annotations

import numpy as np

from olympus.ir.core import ClosedOlympuspr, Eqn, Literal, Olympuspr
from olympus.optimizer.program import Walk, is_effectful, rewrite_pass

COMMUTATIVE = frozenset({"add", "mul", "max", "min", "and", "or", "xor", "eq", "ne"})
NEVER_MERGED = frozenset({"optimization_barrier", "checkpoint"})


def _first(pair):
    return pair[0]


def _param_key(value):
    if isinstance(value, (ClosedOlympuspr, Olympuspr)):
        return ("program", id(value))
    if isinstance(value, (float, np.floating)):
        return ("float", type(value).__name__, repr(value))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, *map(_param_key, value))
    if isinstance(value, dict):
        return (
            "dict",
            *((k, _param_key(v)) for k, v in sorted(value.items(), key=_first)),
        )
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return value


def _atom_key(atom):
    if isinstance(atom, Literal):
        val = np.asarray(atom.val, atom.aval.dtype)
        return (1, atom.aval, val.tobytes())
    return (0, atom)


def _order(key) -> tuple:
    return (0, key[1]._id) if key[0] == 0 else (1, repr(key[1]), key[2])


def eqn_key(eqn: Eqn):
    """What two equations computing the same values share (None: never merged)."""
    if eqn.primitive.name in NEVER_MERGED or not eqn.outvars or is_effectful(eqn):
        return None
    operands = [_atom_key(x) for x in eqn.invars]
    if eqn.primitive.name in COMMUTATIVE:
        operands.sort(key=_order)
    params = tuple(
        sorted(((k, _param_key(v)) for k, v in eqn.params.items()), key=_first)
    )
    return (eqn.primitive, params, tuple(operands))


def cse_step(walk: Walk, eqn: Eqn) -> bool:
    seen = walk.memo.setdefault("cse", {})
    key = eqn_key(eqn)
    if key is None:
        return False
    earlier = seen.get(key)
    if earlier is None:
        seen[key] = eqn
        return False
    if any(a.aval != b.aval for a, b in zip(eqn.outvars, earlier.outvars)):
        return False
    for old, new in zip(eqn.outvars, earlier.outvars):
        walk.replace(old, new)
    return True


cse = rewrite_pass(cse_step)
