"""The traits of lax's primitives: what the optimizer and checkpoint may assume.

A pass that treats a family of primitives alike (rewrites every elementwise
unary op the same way, folds only what NumPy computes bit-exactly, merges no
checkpoint) asks `eqn.primitive.traits` instead of keeping its own list of
names. A primitive declares its traits where it is defined
(`define_primitive(..., traits=(...))`); this module is only the vocabulary,
each trait with why a primitive may claim it:

    elementwise_unary    one operand, applied per element; its params pass
                         through a rewrite that moves it (simplify, fuse)
    scalar_broadcasting  elementwise binary: a rank-0 operand broadcasts by
                         itself (simplify)
    reduction            reduces over `axes` (simplify)
    commutative          f(a, b) == f(b, a) (cse, rewrite-rule matching)
    exact                NumPy computes it bit-exactly as XLA does, so constant
                         folding may run it at compile time (fold)
    cheap                recomputing it costs no real work, so a memory budget
                         is not spent saving it (checkpoint)
    never_merged         common-subexpression elimination keeps each one: it
                         is a barrier or a rematerialisation boundary (cse)

Example:
    >>> from olympus.lax.traits import names_with
    >>> "add" in names_with("commutative")
    True
"""

from __future__ import annotations

from olympus.ir.core import all_primitives

# trait -> the pass that relies on it
TRAITS: dict[str, str] = {
    "elementwise_unary": "simplify, fuse",
    "scalar_broadcasting": "simplify",
    "reduction": "simplify",
    "commutative": "cse, rewrite-rule matching",
    "exact": "fold",
    "cheap": "checkpoint",
    "never_merged": "cse",
}

# The trait sets families of lax's primitives share, named for their definitions.
UNARY = ("elementwise_unary",)
EXACT_UNARY = ("elementwise_unary", "exact")
CHEAP_UNARY = ("elementwise_unary", "exact", "cheap")
EXACT_BINARY = ("scalar_broadcasting", "exact")
COMPARISON = ("scalar_broadcasting", "exact", "cheap")


def names_with(trait: str) -> tuple[str, ...]:
    """The names of the primitives that have `trait` (for rule tables keyed by
    name), in the order lax defines them; `KeyError` for a trait that is not
    in the vocabulary. Reads `all_primitives`, so call it once lax is
    imported (any module above lax)."""
    if trait not in TRAITS:
        raise KeyError(f"{trait!r} is not a trait; the traits are {sorted(TRAITS)}")
    return tuple(name for name, p in all_primitives.items() if trait in p.traits)
