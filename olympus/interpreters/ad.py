"""`jax.interpreters.ad` under olympus: the jvp and transpose rule tables.

Both tables are olympus's own (`transforms.jvp.jvp_rules`,
`transforms.linearize.transpose_rules`) because JAX's rule signatures are
olympus's: `jvp(primals, tangents, **params) -> (primal_out, tangent_out)`
with symbolic zeros as `Zero`, and `transpose(ct, *args, **params)` with the
linear operands as `UndefinedPrimal`.
"""

from __future__ import annotations

from typing import Callable

from olympus.ir.core import Primitive
from olympus.transforms.ad_util import Zero, instantiate, is_zero, zeros_like_aval
from olympus.transforms.jvp import jvp_rules as primitive_jvps
from olympus.transforms.linearize import (
    UndefinedPrimal,
    is_undefined as is_undefined_primal,
    transpose_rules as primitive_transposes,
)


def instantiate_zeros(tangent):
    """A tangent as an array: a symbolic `Zero` becomes an array of zeros."""
    return instantiate(tangent)


def defjvp(primitive: Primitive, *jvp_rules: Callable | None) -> None:
    """One rule per operand, `rule(tangent, *primals, **params)`, summed
    (JAX's `ad.defjvp`); `None` marks an operand with no derivative."""

    def jvp(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        total = None
        for rule, t in zip(jvp_rules, tangents):
            if rule is None or is_zero(t):
                continue
            term = rule(t, *primals, **params)
            total = term if total is None else total + term
        return out, Zero(out.aval) if total is None else total

    primitive_jvps[primitive] = jvp


__all__ = [
    "UndefinedPrimal",
    "Zero",
    "defjvp",
    "instantiate_zeros",
    "is_undefined_primal",
    "primitive_jvps",
    "primitive_transposes",
    "zeros_like_aval",
]
