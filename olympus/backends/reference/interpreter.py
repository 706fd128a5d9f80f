"""The interpreter loop: an environment, read/write, one rule per equation,
looked up by primitive name in `reference_rules`."""

from __future__ import annotations

import numpy as np

from olympus.backends.reference.table import reference_rules
from olympus.ir.core import ClosedOlympuspr, Literal


class MissingReferenceRule(NotImplementedError):
    """A primitive has no NumPy rule in `reference_rules` (the coverage test lists them)."""


def _as_value(x, aval) -> np.ndarray:
    """A NumPy array of exactly the aval's dtype (NumPy's own promotion of
    scalars and mixed operands must not leak into the next equation)."""
    value = np.asarray(x)
    if value.dtype != aval.dtype:
        value = value.astype(aval.dtype)
    if value.shape != tuple(aval.shape):
        raise ValueError(
            f"reference rule gave shape {value.shape}, the program says "
            f"{aval.str_short()}"
        )
    return value


def _apply(eqn, vals) -> list:
    rule = reference_rules.get(eqn.primitive.name)
    if rule is None:
        raise MissingReferenceRule(
            f"no reference rule for the primitive {eqn.primitive.name}"
        )
    outs = rule(*vals, **eqn.params)
    outs = outs if eqn.primitive.multiple_results else [outs]
    return [_as_value(o, v.aval) for o, v in zip(outs, eqn.outvars)]


def interpret_with_numpy(olympuspr, consts, args) -> list[np.ndarray]:
    """Runs `olympuspr` on NumPy values; returns its outputs as NumPy arrays."""
    env: dict = {}

    def read(x):
        return np.asarray(x.val, x.aval.dtype) if isinstance(x, Literal) else env[x]

    for var, val in zip(olympuspr.constvars, consts):
        env[var] = _as_value(val, var.aval)
    for var, val in zip(olympuspr.invars, args):
        env[var] = _as_value(val, var.aval)
    with np.errstate(all="ignore"):  # NaN/inf/overflow are values here, as in XLA
        for eqn in olympuspr.eqns:
            env.update(zip(eqn.outvars, _apply(eqn, [read(x) for x in eqn.invars])))
    return [read(x) for x in olympuspr.outvars]


def evaluate(closed: ClosedOlympuspr, *args) -> list[np.ndarray]:
    """Runs a ClosedOlympuspr (its consts included) on NumPy-convertible args."""
    consts = [np.asarray(c) for c in closed.consts]
    return interpret_with_numpy(closed.olympuspr, consts, [np.asarray(a) for a in args])
