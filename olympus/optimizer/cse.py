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

from olympus.lax.traits import names_with
from olympus.ir.core import ClosedOlympuspr, Eqn, Literal, Olympuspr, Var
from olympus.optimizer.program import Walk, is_effectful, rewrite_pass, sees_all

COMMUTATIVE = frozenset(names_with("commutative"))


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


def _literal_key(atom: Literal) -> tuple:
    """The literal's type (its fields: hashed in C) and bytes."""
    val, aval = atom.val, atom.aval
    if type(val) is not aval.dtype.type:
        val = np.asarray(val, aval.dtype)
    return (aval.shape, aval.dtype, aval.weak_type, val.tobytes())


def _order(key) -> tuple:
    """A total order on operand keys (variables first, by creation)."""
    return (0, key._id) if type(key) is Var else (1, repr(key[:3]), key[3])


def _operands_key(eqn: Eqn) -> tuple:
    """The primitive and the operands: a variable stands for itself, a literal
    for its type and bytes; commutative operands in a canonical order."""
    operands = eqn.invars
    for x in operands:
        if type(x) is not Var:
            operands = [x if type(x) is Var else _literal_key(x) for x in operands]
            break
    if len(operands) == 2 and "commutative" in eqn.primitive.traits:
        a, b = operands
        if type(a) is Var and type(b) is Var:
            if b._id < a._id:
                return (eqn.primitive, b, a)
        elif _order(b) < _order(a):
            return (eqn.primitive, b, a)
    return (eqn.primitive, *operands)


def _params_key(params: dict) -> tuple:
    """Params in their dict's order: a primitive's params are built by one
    function, and a different order only misses a merge."""
    return tuple((k, _param_key(v)) for k, v in params.items())


@sees_all
def _bucket_key(eqn: Eqn) -> tuple:
    """The primitive and operands, with the common cases (one or two variable
    operands) made without `_operands_key`'s general work."""
    operands = eqn.invars
    if len(operands) == 1 and type(operands[0]) is Var:
        return (eqn.primitive, operands[0])
    if len(operands) == 2 and type(operands[0]) is Var is type(operands[1]):
        a, b = operands
        if b._id < a._id and "commutative" in eqn.primitive.traits:
            a, b = b, a
        return (eqn.primitive, a, b)
    return _operands_key(eqn)


def _earlier_equal(eqn: Eqn, bucket: list):
    """The earlier equation in `bucket` equal to `eqn` (params and output
    types), or None; and `eqn`'s params key if it was made."""
    params, mine = eqn.params, None
    for entry in bucket:  # [equation, its params key or None]
        earlier = entry[0]
        if earlier.params is not params:
            if mine is None:
                mine = _params_key(params)
            if entry[1] is None:
                entry[1] = _params_key(earlier.params)
            if entry[1] != mine:
                continue
        if all(a.aval == b.aval for a, b in zip(eqn.outvars, earlier.outvars)):
            return earlier, mine
    return None, mine


def cse_step(walk: Walk, eqn: Eqn) -> bool:
    """Merges `eqn` into an earlier equal one. Equations are bucketed by
    primitive and operands; params (the costly part) are compared only
    within a bucket, each equation's params key made at most once, and so
    is the effect test."""
    if not eqn.outvars or "never_merged" in eqn.primitive.traits:
        return False
    buckets = walk.memo.get("cse")
    if buckets is None:
        buckets = walk.memo["cse"] = {}
    key = _bucket_key(eqn)
    bucket = buckets.get(key)
    if bucket is None:
        buckets[key] = [[eqn, None]]
        return False
    earlier, mine = _earlier_equal(eqn, bucket)
    if is_effectful(eqn):
        return False
    if earlier is not None:
        for old, new in zip(eqn.outvars, earlier.outvars):
            walk.replace(old, new)
        return True
    bucket.append([eqn, mine])
    return False


cse = rewrite_pass(cse_step)
