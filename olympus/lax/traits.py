"""The traits of lax's primitives: what the optimizer and checkpoint may assume.

A pass that treats a family of primitives alike (rewrites every elementwise
unary op the same way, folds only what NumPy computes bit-exactly, merges no
checkpoint) asks `eqn.primitive.traits` instead of keeping its own list of
names. Each trait is declared here once, with why it holds:

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

from olympus.ir.core import primitive_traits

_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
_ARITHMETIC = ("add", "sub", "mul", "div", "rem")
_BITWISE = ("and", "or", "xor")

# trait -> the primitives (by name) that have it, in the order passes list them
_TRAITS: dict[str, tuple[str, ...]] = {
    "elementwise_unary": (
        *("neg", "exp", "log", "expm1", "log1p", "sin", "cos", "tan", "tanh"),
        *("logistic", "sqrt", "rsqrt", "abs", "sign", "floor", "ceil", "erf"),
        *("not", "round", "integer_pow", "convert_element_type"),
    ),
    "scalar_broadcasting": (
        *_ARITHMETIC,
        *("max", "min", "pow", "atan2"),
        *_BITWISE,
        *_COMPARISONS,
    ),
    "reduction": (
        *("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"),
        *("reduce_and", "reduce_or"),
    ),
    "commutative": ("add", "mul", "max", "min", *_BITWISE, "eq", "ne"),
    "exact": (
        *_ARITHMETIC,
        *("neg", "abs", "max", "min", "sign", "floor", "ceil", "round"),
        *_COMPARISONS,
        *_BITWISE,
        *("not", "select_n", "clamp", "convert_element_type"),
    ),
    "cheap": (
        *("add", "sub", "mul", "neg", "max", "min", "abs", "sign", "select_n"),
        *("convert_element_type", "broadcast_in_dim", "reshape", "squeeze"),
        *("expand_dims", "transpose", "slice", "concatenate"),
        *("optimization_barrier", "name", "stop_gradient"),
        *_COMPARISONS,
    ),
    "never_merged": ("optimization_barrier", "checkpoint"),
}


def names_with(trait: str) -> tuple[str, ...]:
    """The names of the primitives that have `trait` (for rule tables keyed by
    name); `KeyError` for a trait nobody declares."""
    return _TRAITS[trait]


def _declare_all() -> None:
    found: dict[str, set[str]] = {}
    for trait, names in _TRAITS.items():
        for name in names:
            found.setdefault(name, set()).add(trait)
    primitive_traits.update({n: frozenset(t) for n, t in found.items()})


_declare_all()
