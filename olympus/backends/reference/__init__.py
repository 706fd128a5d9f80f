"""A reference interpreter: runs any olympuspr with NumPy, independent of XLA.

It is the oracle the tests (and the program fuzzer in tests/fuzz) compare
eager and jit results against. Each primitive's NumPy semantics lives in
`reference_rules` (keyed by primitive *name*, see `rules.py`), kept apart
from the primitives' definitions on purpose: an oracle written beside the
lowering tends to share that lowering's misreadings, and keying by name keeps
this backend free of imports from `olympus.lax`.

    >>> from olympus.backends.reference import evaluate
    >>> x = np.float32([0.0, 1.0])
    >>> closed = olympus.make_olympuspr(lambda x: jnp.sin(x) * 2.0)(x)
    >>> evaluate(closed, x)  # a list of NumPy arrays
    [array([0.      , 1.682942], dtype=float32)]
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
