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


_PLAIN = (int, bool, str, type(None), np.dtype)


def _param_key(value):
    """A hashable stand-in for a param value: programs and other unhashable
    objects by identity, floats by their text (0.0 and -0.0 differ)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is tuple:
        if all(type(v) is int for v in value):
            return value
        return ("tuple", *map(_param_key, value))
    if isinstance(value, (ClosedOlympuspr, Olympuspr)):
        return ("program", id(value))
    if isinstance(value, (float, np.floating)):
        return ("float", kind.__name__, repr(value))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (tuple, list)):
        return (kind.__name__, *map(_param_key, value))
    if isinstance(value, dict):
        return ("dict", *((k, _param_key(value[k])) for k in sorted(value)))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return value


def _atom_key(atom):
    if type(atom) is Literal:
        val = atom.val
        if type(val) is not np.dtype(atom.aval.dtype).type:
            val = np.asarray(val, atom.aval.dtype)
        return (1, atom.aval, val.tobytes())
    return (0, atom)


def _order(key) -> tuple:
    return (0, key[1]._id) if key[0] == 0 else (1, repr(key[1]), key[2])


def _operands_key(eqn: Eqn) -> tuple:
    operands = [_atom_key(x) for x in eqn.invars]
    if len(operands) == 2 and eqn.primitive.name in COMMUTATIVE:
        operands.sort(key=_order)
    return (eqn.primitive, *operands)


def _params_key(params: dict) -> tuple:
    """Params in their dict's order: a primitive's params are built by one
    function, and a different order only misses a merge."""
    return tuple((k, _param_key(v)) for k, v in params.items())


def _same_params(a: dict, b: dict) -> bool:
    return a is b or _params_key(a) == _params_key(b)


def cse_step(walk: Walk, eqn: Eqn) -> bool:
    """Merges `eqn` into an earlier equal one. Equations are bucketed by
    primitive and operands; params (the costly part) are compared only
    within a bucket, and so is the effect test."""
    if not eqn.outvars or eqn.primitive.name in NEVER_MERGED:
        return False
    buckets = walk.memo.setdefault("cse", {})
    bucket = buckets.setdefault(_operands_key(eqn), [])
    for earlier in bucket:
        if (
            _same_params(eqn.params, earlier.params)
            and all(a.aval == b.aval for a, b in zip(eqn.outvars, earlier.outvars))
            and not is_effectful(eqn)
        ):
            for old, new in zip(eqn.outvars, earlier.outvars):
                walk.replace(old, new)
            return True
    if not bucket or not is_effectful(eqn):
        bucket.append(eqn)
    return False


cse = rewrite_pass(cse_step)
