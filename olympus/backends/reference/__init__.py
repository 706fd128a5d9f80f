"""A reference interpreter: runs any olympuspr with NumPy, independent of XLA.

It is the oracle the tests (and the program fuzzer in tests/fuzz) compare
eager and jit results against. Each primitive's NumPy semantics lives in
`reference_rules` (keyed by primitive *name*, see `table.py`), kept apart
from the primitives' definitions on purpose: an oracle written beside the
lowering tends to share that lowering's misreadings, and keying by name keeps
this backend free of imports from `olympus.lax`.

Layers: `table` (the rule table) < `interpreter` (the shared evaluation
loop of olympus/ir/evaluation.py over it; that loop evaluates cond, while,
scan and the calls itself) < the family
modules `rules`, `linalg`, `slicing`, `special`, `windowed` (register into it; imported
here, so any import of this package fills the table).

    >>> from olympus.backends.reference import evaluate
    >>> x = np.float32([0.0, 1.0])
    >>> closed = olympus.make_olympuspr(lambda x: jnp.sin(x) * 2.0)(x)
    >>> evaluate(closed, x)  # a list of NumPy arrays
    [array([0.      , 1.682942], dtype=float32)]

`olympus.test_util.reference_call(f, *args)` traces and evaluates in one step.
"""

from __future__ import annotations

from olympus.backends.reference import (  # noqa: F401
    linalg,
    parallel,
    rules,
    slicing,
    special,
    windowed,
)
from olympus.backends.reference.interpreter import (
    MissingReferenceRule,
    evaluate,
    interpret_with_numpy,
)
from olympus.backends.reference.table import reference_rules

__all__ = [
    "MissingReferenceRule",
    "evaluate",
    "interpret_with_numpy",
    "reference_rules",
]
