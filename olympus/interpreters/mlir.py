"""`jax.interpreters.mlir` under olympus: registering how a primitive compiles.

olympus writes StableHLO as text from its own rule table, not through MLIR's
Python builders, so the one kind of rule a library can register is the one
JAX libraries mostly use: `lower_fun(impl)`, which compiles the primitive as
the program `impl` traces to.
"""

from __future__ import annotations

from typing import Callable

from olympus.backends.xla import lowering
from olympus.ir.core import Primitive


class LoweringRuleError(TypeError):
    """A lowering rule written against MLIR's Python API (JAX's `ctx, *ir_values`)."""


def lower_fun(fun: Callable, multiple_results: bool = True) -> Callable:
    """A lowering rule that compiles `fun(*operands, **params)` (JAX's default
    is `multiple_results=True`: `fun` returns a sequence)."""
    rule = lowering.lower_fun(fun, multiple_results)
    rule.olympus_lower_fun = True
    return rule


def register_lowering(
    primitive: Primitive, rule: Callable, platform: str | None = None, **kwargs
) -> None:
    """Registers `rule` (from `lower_fun`) as how `primitive` compiles; one rule
    serves every platform olympus compiles for. A rule written against MLIR's
    Python API is kept as a refusal: the library still imports (equinox
    registers one at import), and compiling the primitive raises
    LoweringRuleError."""
    if not getattr(rule, "olympus_lower_fun", False):
        rule = _refusal(primitive, rule)
    lowering.lowering_rules[primitive] = rule


def _refusal(primitive: Primitive, rule: Callable) -> Callable:
    def refuse(ctx, *operands, **params):
        raise LoweringRuleError(
            f"primitive {primitive.name} was registered with mlir.register_lowering("
            f"{primitive.name}, {getattr(rule, '__qualname__', rule)}), a rule that "
            f"builds MLIR ops, which olympus cannot run; register "
            f"mlir.lower_fun(impl) instead, where impl computes the primitive with "
            f"olympus.numpy / olympus.lax (eager calls use its impl meanwhile)."
        )

    return refuse


__all__ = ["LoweringRuleError", "lower_fun", "register_lowering"]
