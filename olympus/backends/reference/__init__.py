"""A reference interpreter: runs any olympuspr with NumPy, independent of XLA.

It is the oracle the tests (and the program fuzzer in tests/fuzz) compare
eager and jit results against. Each primitive's NumPy semantics lives in
`reference_rules` (keyed by primitive *name*, see `rules.py`), kept apart
from the primitives' definitions on purpose: an oracle written beside the
lowering tends to share that lowering's misreadings, and keying by name keeps
this backend free of imports from `olympus.lax`.

    >>> closed = olympus.make_olympuspr(f)(x)
    >>> evaluate(closed, np.asarray(x))        # a list of NumPy arrays
"""

from __future__ import annotations

from olympus.backends.reference.interpreter import (
    MissingReferenceRule,
    eval_olympuspr,
    evaluate,
    reference_call,
)
from olympus.backends.reference.rules import reference_rules

__all__ = ["MissingReferenceRule", "eval_olympuspr", "evaluate", "reference_call",
           "reference_rules"]
