"""Reverse mode: linearize a function, then transpose its linear program.

`linearize_flat` runs the JVP of a function with its tangent inputs being
arguments of a staging trace. While jvp rules run, a `PartialTrace` is
current: a primitive with any tangent (staged) operand is recorded into the
linear olympuspr; every other primitive is a primal computation and runs on
the parent trace (eagerly, or into an enclosing jit's program). The primal
values the linear program uses become its constants (the residuals).

`backward_pass` transposes a linear olympuspr: it walks the equations
backwards, calling `transpose_rules[prim](ct, *args, **params)` where the
linear operands are `UndefinedPrimal(aval)` markers, and accumulates
cotangents per variable. Equations of the program that do not depend on the
linear inputs are evaluated forward first.
"""

from __future__ import annotations

from typing import Callable

from olympus.ir.analysis import dependent_vars, reads_any
from olympus.ir.core import (
    ClosedOlympuspr,
    Literal,
    Olympuspr,
    Primitive,
    Var,
)
from olympus.ir.pruning import call_forwards, dce_call, dce_rules, forwarding_rules
from olympus.tracer import core
from olympus.tracer.core import Trace, set_current_trace
from olympus.tracer.evaluation import bind_eqns, eval_program
from olympus.tracer.staging import DebugInfo, StagingTrace, StagingTracer
from olympus.transforms.ad_util import (
    AvalMarker,
    Zero,
    add_tangents,
    instantiate,
    is_zero,
)
from olympus.transforms.jvp import (
    JVPTrace,
    JVPTracer,
    MissingRuleError,
    missing_rule,
)

transpose_rules: dict[Primitive, Callable] = {}
# Rules for primitives that hold sub-programs, when some operands are staged
# (unknown) and others known: `rule(trace, args, unknown, **params) -> outs`.
partial_eval_rules: dict[Primitive, Callable] = {}
# Primitives that call their `olympuspr` param once on their operands (pjit,
# checkpoint): a transpose may split them into known and staged calls.
call_primitives: set[Primitive] = set()


def declare_call_primitive(primitive: Primitive) -> None:
    """Marks `primitive` as a call of its `olympuspr` param (see
    `call_primitives`); dead-code elimination and forwarding see through it
    with the rules every call shares."""
    call_primitives.add(primitive)
    dce_rules[primitive] = dce_call
    forwarding_rules[primitive] = call_forwards


class UndefinedPrimal(AvalMarker):
    """Marks a linear operand in a transpose rule: its value is not needed."""

    __slots__ = ()


def is_undefined(x) -> bool:
    return type(x) is UndefinedPrimal


# ---- partial evaluation: known (primal) vs staged (tangent) ---------------------
class PartialTrace(Trace):
    """Current while linearize's jvp rules run: splits primal from tangent work."""

    def __init__(self, parent: Trace, tangent_trace: StagingTrace):
        self.parent = parent
        self.tangent_trace = tangent_trace
        self.alive = True

    def describe(self) -> str:
        return "linearize"

    def is_unknown(self, x) -> bool:
        return isinstance(x, StagingTracer) and x._trace is self.tangent_trace

    def process_primitive(self, primitive, args, params):
        unknown = [self.is_unknown(x) for x in args]
        if not any(unknown):
            with set_current_trace(self.parent):
                return primitive.bind(*args, **params)
        rule = partial_eval_rules.get(primitive)
        if rule is not None and not all(unknown):
            return rule(self, list(args), unknown, **params)
        with set_current_trace(self.tangent_trace):
            return primitive.bind(*args, **params)


def new_tangent_trace(parent: Trace, name: str) -> StagingTrace:
    return StagingTrace(parent, DebugInfo("linearize", name, ()))


def linearize_flat(
    fun: Callable,
    primals: list,
    linear_mask: list[bool],
    name: str = "f",
    *,
    reverse: bool = False,
):
    """JVP of flat `fun` with staged tangents for the operands in `linear_mask`.

    Returns (primal_outs, ClosedOlympuspr) where the closed program maps the
    tangents of the masked inputs to the tangents of all outputs; its consts
    are residuals (values of the parent trace). `reverse`: the program will
    only be transposed (vjp, grad), never evaluated forward; a checkpoint
    writing a ref then reruns in the backward pass, as JAX's.
    """
    parent = core.current_trace()
    tangent_trace = new_tangent_trace(parent, name)
    partial = PartialTrace(parent, tangent_trace)
    partial.reverse = reverse
    trace = JVPTrace(parent, rule_trace=partial)
    tracers = []
    for p, linear in zip(primals, linear_mask):
        if linear:
            tangent = tangent_trace.new_arg(core.aval_of(p))
            tracers.append(JVPTracer(trace, p, tangent))
        else:
            tracers.append(p)
    try:
        with set_current_trace(trace):
            outs = fun(*tracers)
        pairs = [trace.primal_tangent(x) for x in outs]
        with set_current_trace(partial):
            tangent_outs = [instantiate(t) for _, t in pairs]
        olympuspr, consts = tangent_trace.to_olympuspr(tangent_outs)
    finally:
        trace.alive = partial.alive = tangent_trace.alive = False
    return [p for p, _ in pairs], ClosedOlympuspr(olympuspr, consts)


# ---- transposition ----------------------------------------------------------------
def backward_pass(
    olympuspr: Olympuspr, consts: list, cts_out: list, primals_in=None
) -> list:
    """Cotangents of the invars of linear `olympuspr`, given those of its outvars.

    `primals_in[i]` is a value for invar i that is *not* linear (None or
    UndefinedPrimal marks a linear one); by default every invar is linear.
    An UndefinedPrimal's aval, where given, types its cotangent in the rules
    (JAX's loops type a carry's cotangent as the cotangent that comes in).
    Returns a list with a cotangent (or Zero) per invar.
    """
    primals_in = primals_in or [None] * len(olympuspr.invars)
    env: dict = dict(zip(olympuspr.constvars, consts))
    linear_invars = []
    for v, p in zip(olympuspr.invars, primals_in):
        if p is None or is_undefined(p):
            linear_invars.append(v)
            if p is not None:
                env[v] = p
        else:
            env[v] = p
    linear = dependent_vars(olympuspr, linear_invars)
    if _has_mixed_call(olympuspr, linear):
        return _split_then_transpose(olympuspr, consts, cts_out, primals_in)
    _eval_nonlinear(olympuspr, env, linear)

    ct_env: dict = {}
    for v, ct in zip(olympuspr.outvars, cts_out):
        if isinstance(v, Var) and v in linear:
            _write_ct(ct_env, v, ct)
    for eqn in reversed(olympuspr.eqns):
        if any(v in linear for v in eqn.outvars):
            _transpose_eqn(eqn, env, ct_env, linear)
    return [
        ct_env.get(v, Zero(v.aval)) if v in set(linear_invars) else Zero(v.aval)
        for v in olympuspr.invars
    ]


def _transpose_eqn(eqn, env: dict, ct_env: dict, linear) -> None:
    """Moves the cotangents of a linear equation's outputs (taken from
    `ct_env`) to its linear operands (added into `ct_env`)."""
    cts = [ct_env.pop(v, None) for v in eqn.outvars]
    if all(ct is None or is_zero(ct) for ct in cts):
        return
    args = [_operand(x, env, linear) for x in eqn.invars]
    rule = transpose_rules.get(eqn.primitive)
    if rule is None:
        raise missing_rule(
            eqn.primitive,
            "transpose (reverse-mode differentiation)",
            eqn.source_info,
        )
    if eqn.primitive.multiple_results:
        ct_arg = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outvars, cts)]
    else:
        ct_arg = instantiate_ct(cts[0], eqn.outvars[0].aval)
    # cotangent sums too get eqn's line, marked as the backward pass
    backward_line = eqn.source_info and eqn.source_info.as_backward()
    with core.replaying(backward_line):
        cts_in = _apply_transpose_rule(rule, eqn, ct_arg, args)
        for x, ct in zip(eqn.invars, cts_in):
            if isinstance(x, Var) and x in linear and ct is not None:
                _write_ct(ct_env, x, ct)


def _apply_transpose_rule(rule: Callable, eqn, ct_arg, args) -> list:
    """Runs `rule`. A rule may refuse with a `MissingRuleError` of its own (e.g. a
    `while` loop); the refusal is reported at the user's line that made `eqn`."""
    try:
        return rule(ct_arg, *args, **eqn.params)
    except MissingRuleError as err:
        if getattr(err, "source_info", None) is not None or eqn.source_info is None:
            raise
        located = type(err)(f"{err}\n  at {eqn.source_info}")
        located.source_info = eqn.source_info
        raise located from None


def _has_mixed_call(olympuspr: Olympuspr, linear: set) -> bool:
    """Does a call (pjit, checkpoint) take linear inputs yet also return values
    that do not depend on them? (A program staged whole, e.g. a loop body
    under linearize, holds jvp calls that compute primals and tangents.)"""
    for eqn in olympuspr.eqns:
        if eqn.primitive not in call_primitives:
            continue
        sub = eqn.params["olympuspr"]
        lin_in = [isinstance(x, Var) and x in linear for x in eqn.invars]
        if not any(lin_in) or len(lin_in) != len(sub.olympuspr.invars):
            continue
        dep = dependent_vars(
            sub.olympuspr, [v for v, l in zip(sub.olympuspr.invars, lin_in) if l]
        )
        if not all(isinstance(o, Var) and o in dep for o in sub.olympuspr.outvars):
            return True
    return False


def _split_then_transpose(
    olympuspr: Olympuspr, consts: list, cts_out: list, primals_in
):
    """Partially evaluates the program (its non-linear part runs now, on the
    current trace; calls split into known and staged calls), then transposes
    the staged, purely linear rest."""
    parent = core.current_trace()
    staged_trace = new_tangent_trace(parent, "transpose")
    partial = PartialTrace(parent, staged_trace)
    args, linear_positions = [], []
    for i, (v, p) in enumerate(zip(olympuspr.invars, primals_in)):
        if p is None or is_undefined(p):
            args.append(staged_trace.new_arg(v.aval if p is None else p.aval))
            linear_positions.append(i)
        else:
            args.append(p)
    try:
        with set_current_trace(partial):
            outs = eval_program(olympuspr, consts, args)
        staged, residuals = staged_trace.to_olympuspr(outs)
    finally:
        partial.alive = staged_trace.alive = False
    cts = [Zero(v.aval) for v in olympuspr.invars]
    for i, ct in zip(linear_positions, backward_pass(staged, residuals, cts_out)):
        cts[i] = ct
    return cts


def instantiate_ct(ct, aval):
    return instantiate(Zero(aval) if ct is None else ct)


def _operand(x, env, linear):
    if isinstance(x, Literal):
        return x.bind_value()  # a weak literal stays weak, so cotangents do too
    if x in linear:
        given = env.get(x)
        return given if is_undefined(given) else UndefinedPrimal(x.aval)
    return env[x]


def _write_ct(ct_env: dict, v: Var, ct) -> None:
    if ct is None or is_zero(ct):
        return
    previous = ct_env.get(v)
    ct_env[v] = ct if previous is None else add_tangents(previous, ct)


def _eval_nonlinear(olympuspr: Olympuspr, env: dict, linear: set) -> None:
    """Evaluates, on the current trace, the equations not touching linear inputs.

    One reading linear values is skipped even with no outputs to mark linear
    (a staged call whose outputs all turned out known): it is dead code here."""
    bind_eqns([eqn for eqn in olympuspr.eqns if not reads_any(eqn, linear)], env)
