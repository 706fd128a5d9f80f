"""The reference evaluator: the shared evaluation loop (olympus/ir/evaluation.py)
over `reference_rules`, the NumPy rules looked up by primitive name."""

from __future__ import annotations

import numpy as np

from olympus.backends.reference.table import reference_rules
from olympus.ir.core import ClosedOlympuspr
from olympus.ir.evaluation import Evaluator, MissingRule, run


class MissingReferenceRule(MissingRule):
    """A primitive has no NumPy rule in `reference_rules` (the coverage test lists them)."""


reference_evaluator = Evaluator(
    reference_rules, name="reference", missing=MissingReferenceRule
)


def interpret_with_numpy(olympuspr, consts, args) -> list[np.ndarray]:
    """Runs `olympuspr` on NumPy values; returns its outputs as NumPy arrays."""
    return run(reference_evaluator, olympuspr, consts, args)


def evaluate(closed: ClosedOlympuspr, *args) -> list[np.ndarray]:
    """Runs a ClosedOlympuspr (its consts included) on NumPy-convertible args."""
    consts = [np.asarray(c) for c in closed.consts]
    return interpret_with_numpy(closed.olympuspr, consts, [np.asarray(a) for a in args])
