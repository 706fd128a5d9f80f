"""Ordered effects: equations whose side effects must happen in program order.

An equation has an ordered effect when its primitive is registered in
`ordered_effect_primitives` (olympus.debug registers `debug_callback`) or when
one of its sub-programs (a cond branch, a loop body, a nested jit) holds such
an equation. The XLA lowering threads an ordering token through exactly the
programs that have one, so programs without effects lower as before.

Programs record no effects of their own; the answer is computed by walking
the sub-programs once and cached per program (programs are not changed after
they are built).
"""

from __future__ import annotations

import weakref

from olympus import caches
from olympus.ir.core import ClosedOlympuspr, Eqn, Olympuspr, subolympusprs

ordered_effect_primitives: set = set()

_cache = caches.register("ordered-effect analyses", weakref.WeakKeyDictionary())


def has_ordered_effect(program: Olympuspr | ClosedOlympuspr) -> bool:
    """Whether running `program` performs an ordered effect (at any depth)."""
    olympuspr = program.olympuspr if isinstance(program, ClosedOlympuspr) else program
    known = _cache.get(olympuspr)
    if known is None:
        known = _cache[olympuspr] = any(map(eqn_has_ordered_effect, olympuspr.eqns))
    return known


def eqn_has_ordered_effect(eqn: Eqn) -> bool:
    return eqn.primitive in ordered_effect_primitives or any(
        map(has_ordered_effect, subolympusprs(eqn.params))
    )
