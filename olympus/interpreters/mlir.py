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
    serves every platform olympus compiles for."""
    if not getattr(rule, "olympus_lower_fun", False):
        raise LoweringRuleError(
            f"mlir.register_lowering({primitive.name}, {rule!r}): olympus cannot "
            f"run a rule that builds MLIR ops; pass mlir.lower_fun(impl), where "
            f"impl computes the primitive with olympus.numpy / olympus.lax."
        )
    lowering.lowering_rules[primitive] = rule


__all__ = ["LoweringRuleError", "lower_fun", "register_lowering"]
