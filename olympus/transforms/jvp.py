"""Forward-mode differentiation: the JVP trace and the `jvp_rules` table.

A `JVPTracer` carries a primal value and its tangent. The tangent may be a
symbolic `Zero(aval)` (ad_util.py), which is never materialised: rules skip
the work it would cause. `JVPTrace.process_primitive` reads each operand's
(primal, tangent) pair (values it did not create are constants with Zero
tangents) and calls `jvp_rules[prim](primals, tangents, **params)` with the *rule
trace* current. For `jvp` the rule trace is the parent trace; for
`linearize` it is a `PartialTrace` that sends tangent computations to a
staging trace and primal computations to the parent (see linearize.py).

Rules are registered beside each primitive in olympus/lax. Symbolic zeros
and adding tangents live in ad_util.py.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from olympus.ir.core import Primitive
from olympus.tracer import core
from olympus.tracer.core import Trace, Tracer, aval_of, set_current_trace
from olympus.transforms.ad_util import (
    Zero,
    add_tangents,
    instantiate,
    is_differentiable,
    is_zero,
    tangent_aval,
)

jvp_rules: dict[Primitive, Callable] = {}


class MissingRuleError(NotImplementedError):
    """A transformation met a primitive that has no rule for it."""


def missing_rule(
    primitive: Primitive, transform: str, source_info=None
) -> MissingRuleError:
    where = source_info if source_info is not None else core.user_source_info()
    at = f"\n  at {where}" if where is not None else ""
    err = MissingRuleError(
        f"no {transform} rule for primitive '{primitive.name}': olympus cannot "
        f"differentiate through it. Register one beside the primitive "
        f"(olympus/lax), or wrap the computation in olympus.custom_jvp / "
        f"custom_vjp, or stop the gradient with lax.stop_gradient.{at}"
    )
    err.source_info = where
    return err


# ---- the trace -------------------------------------------------------------------
class JVPTracer(Tracer):
    __slots__ = ("aval", "primal", "tangent")

    def __init__(self, trace: JVPTrace, primal, tangent):
        self._trace = trace
        self.aval = aval_of(primal)
        self.primal = primal
        self.tangent = tangent


class JVPTrace(Trace):
    """Pushes tangents forward through each primitive with its jvp rule."""

    def __init__(self, parent: Trace, rule_trace: Trace | None = None):
        self.parent = parent
        self.rule_trace = parent if rule_trace is None else rule_trace
        self.alive = True

    def describe(self) -> str:
        return "a jvp trace"

    def primal_tangent(self, x):
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer) and not x._trace.alive:
            raise core.escaped_tracer_error(x)
        return x, Zero(tangent_aval(aval_of(x)))

    def new_tracer(self, primal, tangent):
        return JVPTracer(self, primal, tangent)

    def process_primitive(self, primitive, args, params):
        primals, tangents = zip(*map(self.primal_tangent, args)) if args else ((), ())
        if all(is_zero(t) for t in tangents):
            with set_current_trace(self.rule_trace):
                return primitive.bind(*primals, **params)
        rule = jvp_rules.get(primitive)
        if rule is None:
            raise missing_rule(primitive, "jvp (differentiation)")
        with set_current_trace(self.rule_trace):
            primal_out, tangent_out = rule(list(primals), list(tangents), **params)
        if primitive.multiple_results:
            return [self._wrap(p, t) for p, t in zip(primal_out, tangent_out)]
        return self._wrap(primal_out, tangent_out)

    def _wrap(self, primal, tangent):
        aval = aval_of(primal)
        if not is_differentiable(aval):
            return primal
        if tangent is None:
            tangent = Zero(tangent_aval(aval))
        return JVPTracer(self, primal, tangent)


def jvp_flat(
    fun: Callable, primals: list, tangents: list, rule_trace: Trace | None = None
):
    """Runs flat `fun(*xs) -> list` on (primal, tangent) pairs.

    Returns (primal_outs, tangent_outs, trace); tangent_outs may hold Zeros.
    """
    parent = core.current_trace()
    trace = JVPTrace(parent, rule_trace)
    tracers = [
        JVPTracer(trace, p, t) if not is_zero(t) else p
        for p, t in zip(primals, tangents)
    ]
    try:
        with set_current_trace(trace):
            outs = fun(*tracers)
        pairs = [trace.primal_tangent(x) for x in outs]
    finally:
        trace.alive = False
    return [p for p, _ in pairs], [t for _, t in pairs], trace


# ---- helpers for writing rules ---------------------------------------------------
def defjvp_linear(primitive: Primitive) -> None:
    """A primitive linear in all its operands: its tangent is itself on tangents."""

    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        if all(is_zero(t) for t in tangents):
            return out, _zeros_out(primitive, out)
        return out, primitive.bind(*map(instantiate, tangents), **params)

    jvp_rules[primitive] = rule


def defjvp_zero(primitive: Primitive) -> None:
    """A primitive whose outputs are piecewise constant (comparisons, argmax, ...)."""

    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        return out, _zeros_out(primitive, out)

    jvp_rules[primitive] = rule


def _zeros_out(primitive, out):
    if primitive.multiple_results:
        return [Zero(aval_of(o)) for o in out]
    return Zero(aval_of(out))


def defjvp(primitive: Primitive, *partials: Callable | None) -> None:
    """The tangent is the sum over operands of `partial_i(t_i, ans, *primals)`.

    Like JAX's `defjvp`: `partials[i]` maps operand i's tangent to its
    contribution (None for operands the output does not depend on smoothly).
    """

    def rule(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        out = Zero(aval_of(ans))
        for partial, t in zip(partials, tangents):
            if partial is not None and not is_zero(t):
                out = add_tangents(out, partial(t, ans, *primals, **params))
        return ans, out

    jvp_rules[primitive] = rule


def scalar_like(value, x):
    """`value` as a rank-0 constant of x's dtype (binary primitives broadcast
    it): a Python scalar where x is weakly typed and Python's type has x's
    dtype, so derivative rules keep weak types as JAX's do."""
    aval = aval_of(x)
    constant = np.asarray(value, dtype=aval.dtype)[()]
    if aval.weak_type and aval.dtype.kind in "fc":
        python_value = constant.item()
        if aval_of(python_value).dtype == aval.dtype:
            return python_value
    return constant
