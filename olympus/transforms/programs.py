"""Transforms of sub-programs: the jvp, partial evaluation, transpose and
batched form of a program, each built as a new program.

A primitive that holds programs (pjit, checkpoint, custom_jvp/vjp calls,
cond, while, scan) transforms an equation by transforming its sub-programs
and binding the same primitive on the results, so a call or a loop stays one
equation. Each builder traces a flat function that replays the program
(`eval_program`) under a transform's trace into a `SubProgram`, whose
constants become the equation's leading operands.

Partial evaluation comes in two kinds: `partial_eval_program` runs the
program under linearize's `PartialTrace` (nested calls split by their own
rules), while `known_program` / `unknown_program` split a program equation by
equation, as loop bodies and branches need (they first split nested calls
with `split_nested`).

Call primitives hold the same program object every time they are
transformed, so their builds go through `cached_program`; the rules of
cond, while and scan build fresh programs each time.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence

from olympus import caches
from olympus.ir.analysis import (
    backward_slice,
    dependent_vars,
    is_unknown_eqn,
    reads_any,
    unknown_vars,
)
from olympus.ir.core import ClosedOlympuspr, Olympuspr, ShapedArray, Var
from olympus.tracer import axes as axes_env
from olympus.tracer import core, refs
from olympus.tracer.core import Tracer, aval_of, set_current_trace
from olympus.tracer.evaluation import bind_eqns, eval_program, read_atom
from olympus.tracer.staging import (
    DebugInfo,
    SubProgram,
    consts_as_invars,
    trace_sub_program,
)
from olympus.transforms.ad_util import (
    Zero,
    instantiate,
    is_differentiable,
    is_zero,
    tangent_aval,
    zeros_like_aval,
)
from olympus.transforms.batching import (
    BatchTrace,
    broadcast_forced,
    move_batch_axis,
    not_mapped,
    rule_axis_name,
)
from olympus.transforms.jvp import jvp_flat
from olympus.transforms.linearize import (
    PartialTrace,
    UndefinedPrimal,
    backward_pass,
    is_undefined,
    new_tangent_trace,
    partial_eval_rules,
)

# ---- caching ---------------------------------------------------------------------
_program_cache = caches.register("transformed programs", weakref.WeakKeyDictionary())


def cached_program(closed: ClosedOlympuspr, key: tuple, build: Callable):
    """`build()` once per (program, key): transforming the same sub-program
    again (grad of a jitted function, called repeatedly) gives the same
    program object, so its compiled executable is reused. Results holding
    tracers (constants of an enclosing trace) are not kept, nor those whose
    build read a Ref's value as a constant (a custom rule reading one: the
    next write to the Ref would make them stale; olympus/tracer/refs.py)."""
    per_program = _program_cache.setdefault(closed, {})
    result = per_program.get(key)
    if result is None:
        reads = refs.constant_reads[0]
        result = build()
        if not _holds_tracer(result) and refs.constant_reads[0] == reads:
            per_program[key] = result
    return result


def _holds_tracer(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_holds_tracer(x) for x in value)
    return isinstance(value, Tracer)


# ---- jvp -------------------------------------------------------------------------
def jvp_program(
    closed: ClosedOlympuspr, nonzero: Sequence[bool], name: str, instantiate_out=None
) -> tuple[SubProgram, list[bool]]:
    """The jvp of a program: `(*primals, *nonzero tangents) -> (*outs, *out tangents)`.

    With `instantiate_out` None every output gets a tangent (zeros
    materialised); otherwise a differentiable output gets one where it is
    nonzero or `instantiate_out` asks for it. Returns the program and which
    outputs have a tangent.
    """
    in_avals = closed.in_avals
    has_tangent: list = []

    def fun(*args):
        primals = list(args[: len(in_avals)])
        given = iter(args[len(in_avals) :])
        tangents = [next(given) if nz else Zero(a) for a, nz in zip(in_avals, nonzero)]
        outs, out_tangents, _ = jvp_flat(
            lambda *xs: eval_program(closed.olympuspr, closed.consts, xs),
            primals,
            tangents,
        )
        if instantiate_out is None:
            has_tangent[:] = [True] * len(outs)
        else:
            has_tangent[:] = [
                is_differentiable(aval_of(o)) and (inst or not is_zero(t))
                for o, t, inst in zip(outs, out_tangents, instantiate_out)
            ]
        return outs + [instantiate(t) for t, k in zip(out_tangents, has_tangent) if k]

    tangent_avals = [a for a, nz in zip(in_avals, nonzero) if nz]
    debug = DebugInfo("jvp", name, ())
    return trace_sub_program(fun, [*in_avals, *tangent_avals], debug), has_tangent


def cached_jvp_program(closed: ClosedOlympuspr, nonzero: Sequence[bool], name: str):
    """`jvp_program` (a tangent for every output) of a call's program, cached."""
    key = ("jvp", tuple(nonzero), name)
    return cached_program(closed, key, lambda: jvp_program(closed, nonzero, name)[0])


def cached_sparse_jvp_program(closed: ClosedOlympuspr, nonzero, name: str):
    """`jvp_program` whose outputs that depend on no nonzero tangent keep a
    symbolic zero (JAX's instantiate=False), cached: (program, has_tangent).
    A Ref written inside the call takes such an output's value."""
    n = len(closed.out_avals)
    key = ("jvp", tuple(nonzero), name, "sparse")
    return cached_program(
        closed, key, lambda: jvp_program(closed, nonzero, name, [False] * n)
    )


def sparse_tangents(out_tangents, has_tangent, out_avals) -> list:
    """The output tangents of a sparse jvp program's call, Zeros filled in."""
    given = iter(out_tangents)
    return [
        next(given) if k else Zero(tangent_aval(a))
        for k, a in zip(has_tangent, out_avals)
    ]


# ---- partial evaluation ----------------------------------------------------------
def partial_eval_program(closed: ClosedOlympuspr, unknown: list[bool], name: str):
    """Splits a program whose `unknown` inputs are staged (tangents), cached.

    Returns (known, known_consts, staged, out_unknown, num_res): `known` maps
    (known_consts, known inputs) to (known outputs, residuals); `staged` maps
    (residuals, unknown inputs) to the unknown outputs.
    """
    box: dict = {}

    def known_fun(*known_vals):
        known_trace = core.current_trace()
        staged_trace = new_tangent_trace(known_trace, name)
        partial = PartialTrace(known_trace, staged_trace)
        vals, it = [], iter(known_vals)
        for aval, u in zip(closed.in_avals, unknown):
            vals.append(staged_trace.new_arg(aval) if u else next(it))
        try:
            with set_current_trace(partial):
                outs = eval_program(closed.olympuspr, closed.consts, vals)
            out_unknown = [partial.is_unknown(o) for o in outs]
            staged, residuals = staged_trace.to_olympuspr(
                [o for o, u in zip(outs, out_unknown) if u]
            )
        finally:
            partial.alive = staged_trace.alive = False
        box.update(staged=staged, out_unknown=out_unknown, num_res=len(residuals))
        return [o for o, u in zip(outs, out_unknown) if not u] + residuals

    def build():
        known_avals = [a for a, u in zip(closed.in_avals, unknown) if not u]
        known, known_consts, _ = trace_sub_program(
            known_fun, known_avals, DebugInfo("jvp", name, ())
        )
        staged = ClosedOlympuspr(consts_as_invars(box["staged"]), [])
        return known, known_consts, staged, box["out_unknown"], box["num_res"]

    return cached_program(closed, ("partial_eval", tuple(unknown), name), build)


def split_nested(
    closed: ClosedOlympuspr, known_in: list[bool]
) -> tuple[ClosedOlympuspr, frozenset]:
    """The same program, with each equation that holds a sub-program (cond,
    scan, pjit, ...) and mixes known and unknown operands replaced by its
    partial evaluation: a known equation, then an unknown one reading its
    residuals. Control-flow partial-eval rules split their bodies equation by
    equation; without this, a nested cond or scan taking a tangent would be
    staged whole (primal work included) into the linear program.

    Returns (program, deferred): `deferred` holds the variables of the
    program that partial evaluation staged although they read known values
    only (a checkpoint's recomputation): the equation-by-equation split must
    keep them in the unknown part, or the loop would save what checkpoint
    means to recompute. The program is `closed` itself when there is nothing
    to split or the split would need constants (the bodies are const-free).
    """
    if not any(eqn.primitive in partial_eval_rules for eqn in closed.olympuspr.eqns):
        return closed, frozenset()
    if all(known_in) or not any(known_in):
        return closed, frozenset()
    unknown = [not k for k in known_in]
    known, known_consts, staged, out_unknown, num_res = partial_eval_program(
        closed, unknown, "split"
    )
    if known_consts:
        return closed, frozenset()
    n_known_out = out_unknown.count(False)
    n_staged_out = out_unknown.count(True)

    def build():
        staged_wider = _with_deferred_outputs(staged, num_res)

        def split_fun(*args):
            known_args = [a for a, k in zip(args, known_in) if k]
            unknown_args = [a for a, k in zip(args, known_in) if not k]
            outs = eval_program(known.olympuspr, known.consts, known_args)
            known_outs, residuals = outs[:n_known_out], outs[n_known_out:]
            staged_outs = eval_program(
                staged_wider.olympuspr, staged_wider.consts, residuals + unknown_args
            )
            known_it, staged_it = iter(known_outs), iter(staged_outs[:n_staged_out])
            outs = [next(staged_it) if u else next(known_it) for u in out_unknown]
            return outs + staged_outs[n_staged_out:]  # then the deferred values

        split, consts, _ = trace_sub_program(
            split_fun, list(closed.in_avals), DebugInfo("jvp", "split", ())
        )
        if consts:
            return closed, frozenset()
        program = split.olympuspr
        n_out = len(closed.out_avals)
        produced = {v for eqn in program.eqns for v in eqn.outvars}
        deferred = frozenset(v for v in program.outvars[n_out:] if v in produced)
        trimmed = Olympuspr(
            [],
            program.invars,
            program.eqns,
            program.outvars[:n_out],
            program.debug_info,
        )
        return ClosedOlympuspr(trimmed, []), deferred

    return cached_program(closed, ("split_nested", tuple(known_in)), build)


def _with_deferred_outputs(staged: ClosedOlympuspr, num_res: int) -> ClosedOlympuspr:
    """`staged` (residuals, unknown inputs) -> outputs, also returning the
    values of its equations that read no unknown input (deferred work)."""
    program = staged.olympuspr
    unknown = dependent_vars(program, program.invars[num_res:])
    deferred = [
        v for eqn in program.eqns if not reads_any(eqn, unknown) for v in eqn.outvars
    ]
    if not deferred:
        return staged
    wider = Olympuspr(
        program.constvars,
        program.invars,
        program.eqns,
        program.outvars + deferred,
        program.debug_info,
    )
    return ClosedOlympuspr(wider, staged.consts)


def known_program(
    closed: ClosedOlympuspr, known_in, known_out, residuals, deferred=()
) -> SubProgram:
    """`(*known inputs) -> (*known outputs, *residuals)`: the equations that
    can run now, those reading no unknown input (nor `deferred`, see
    `split_nested`).

    `residuals` holds, per output slot, a Var of this program or an aval (a
    slot owned by another branch, filled with zeros).
    """
    olympuspr = closed.olympuspr
    unknown = unknown_vars(olympuspr, known_in, deferred)
    known_invars = [v for v, k in zip(olympuspr.invars, known_in) if k]

    def fun(*args):
        env = dict(zip(known_invars, args))
        bind_eqns([e for e in olympuspr.eqns if not is_unknown_eqn(e, unknown)], env)
        outs = [read_atom(env, v) for v, k in zip(olympuspr.outvars, known_out) if k]
        return outs + [_residual(env, r) for r in residuals]

    known_avals = [a for a, k in zip(closed.in_avals, known_in) if k]
    return trace_sub_program(
        fun, known_avals, DebugInfo("partial eval", "partial eval", ())
    )


def _residual(env: dict, slot):
    if isinstance(slot, Var):
        return read_atom(env, slot)
    return zeros_like_aval(slot)


def unknown_program(
    closed: ClosedOlympuspr, known_in, known_out, residual_invars, deferred=()
) -> ClosedOlympuspr:
    """`(*residuals, *unknown inputs) -> (*unknown outputs)`: the equations
    left to stage, those reading an unknown input (or `deferred`)."""
    olympuspr = closed.olympuspr
    unknown = unknown_vars(olympuspr, known_in, deferred)
    eqns = [eqn for eqn in olympuspr.eqns if is_unknown_eqn(eqn, unknown)]
    invars = residual_invars + [v for v, k in zip(olympuspr.invars, known_in) if not k]
    outvars = [v for v, k in zip(olympuspr.outvars, known_out) if not k]
    return ClosedOlympuspr(
        Olympuspr([], invars, eqns, outvars, olympuspr.debug_info), []
    )


# ---- transposition ---------------------------------------------------------------
def transpose_program(
    closed: ClosedOlympuspr,
    undefined: Sequence[bool],
    ct_nonzero: Sequence[bool],
    name: str,
    arg_avals: Sequence[ShapedArray] | None = None,
) -> SubProgram:
    """The transpose of a program linear in its `undefined` inputs:
    `(*defined inputs, *nonzero cotangents) -> (*cotangents of the undefined
    inputs)`, zeros materialised. `arg_avals` gives the types of those
    arguments when they differ from the program's (in weak types)."""
    in_avals, out_avals = closed.in_avals, closed.out_avals
    n_defined = list(undefined).count(False)

    def transposed(*vals):
        defined, cts = iter(vals[:n_defined]), iter(vals[n_defined:])
        primals = [
            UndefinedPrimal(a) if u else next(defined)
            for a, u in zip(in_avals, undefined)
        ]
        cts_out = [next(cts) if nz else Zero(a) for a, nz in zip(out_avals, ct_nonzero)]
        cts_in = backward_pass(closed.olympuspr, closed.consts, cts_out, primals)
        return [instantiate(ct) for ct, u in zip(cts_in, undefined) if u]

    if arg_avals is None:
        arg_avals = [a for a, u in zip(in_avals, undefined) if not u]
        arg_avals += [a for a, nz in zip(out_avals, ct_nonzero) if nz]
    return trace_sub_program(
        transposed, list(arg_avals), DebugInfo("transpose", name, ())
    )


def cached_transpose_program(closed: ClosedOlympuspr, undefined, ct_nonzero, name: str):
    """`transpose_program` of a call's program, cached."""
    key = ("transpose", tuple(undefined), tuple(ct_nonzero), name)
    return cached_program(
        closed, key, lambda: transpose_program(closed, undefined, ct_nonzero, name)
    )


def transpose_call(
    primitive,
    cts,
    args,
    olympuspr,
    name: str,
    *,
    transpose: Callable = cached_transpose_program,
    bind: Callable | None = None,
    **params,
) -> list:
    """The transpose rule of a call-like primitive (pjit, checkpoint,
    shard_map): one call of its transposed body, named `name`, on the defined
    operands and the nonzero cotangents; the cotangents of the undefined
    (linear) operands, None for the others. `params` are the call's other
    parameters. `transpose(olympuspr, undefined, ct_nonzero, name)` makes the
    transposed body (a `SubProgram`); `bind(transposed, undefined, ct_nonzero,
    operands)` calls it, where a primitive's call is more than `bind` with the
    program and `params` (shard_map's specs follow which operands remain)."""
    undefined = [is_undefined(a) for a in args]
    ct_nonzero = [not is_zero(ct) for ct in cts]
    transposed = transpose(olympuspr, undefined, ct_nonzero, name)
    defined = [a for a, u in zip(args, undefined) if not u]
    operands = [*transposed.consts, *defined, *[ct for ct in cts if not is_zero(ct)]]
    if bind is None:
        outs = primitive.bind(
            *operands, olympuspr=transposed.closed, name=name, **params
        )
    else:
        outs = bind(transposed, undefined, ct_nonzero, operands)
    # An operand none of whose uses reaches a nonzero cotangent gets a
    # symbolic zero (None), as JAX's: its transposed output is a zero array,
    # which the operand's own transpose would multiply through (cos(inf) * 0).
    body = getattr(olympuspr, "olympuspr", olympuspr)
    wanted = [v for v, nz in zip(body.outvars, ct_nonzero) if nz and isinstance(v, Var)]
    live = backward_slice(body.eqns, wanted)[1]
    outs = iter(outs)
    cts_in = [next(outs) if u else None for u in undefined]
    return [ct if v in live else None for ct, v in zip(cts_in, body.invars)]


# ---- batching --------------------------------------------------------------------
def batch_program(
    closed: ClosedOlympuspr,
    axis_size: int,
    in_batched,
    force_out,
    name: str,
    batched_avals=None,
    *,
    cached: bool = False,
) -> tuple[SubProgram, list[bool]]:
    """The per-example program run on a batch, with the batch at axis 0 of
    the batched inputs and outputs. Outputs in `force_out` are batched even
    when they do not vary over the batch; returns the program and which
    outputs are batched. `batched_avals` (where given) are the batched
    inputs' types, so a batch split between devices keeps its layout.
    `cached` builds it once per batch layout of `closed` (an eager vmap of a
    jitted function compiles its batched program once)."""
    if cached:
        key = ("vmap", axis_size, tuple(in_batched), tuple(force_out), rule_axis_name())
        key += (tuple(batched_avals),) if batched_avals else ()
        args = (closed, axis_size, in_batched, force_out, name, batched_avals)
        return cached_program(closed, key, lambda: batch_program(*args))
    in_avals = batched_avals or [
        a.update(shape=(axis_size, *a.shape)) if b else a
        for a, b in zip(closed.in_avals, in_batched)
    ]
    out_batched: list = []
    # Inside a named vmap's rule the body's collectives over that axis are
    # batched here (olympus/transforms/batching.py: rule_axis_name).
    axis_name = rule_axis_name()
    named = {} if axis_name is None else {axis_name: axis_size}
    batched_in = [a for a, b in zip(in_avals, in_batched) if b]

    def fun(*args):
        trace = BatchTrace(core.current_trace(), axis_size, axis_name=axis_name)
        tracers = [
            trace.pack(x, 0 if b else not_mapped) for x, b in zip(args, in_batched)
        ]
        try:
            with set_current_trace(trace), axes_env.bound(named):
                outs = eval_program(closed.olympuspr, closed.consts, tracers)
            unpacked = [trace.unpack(x) for x in outs]
        finally:
            trace.alive = False
        batched = [d is not not_mapped for _, d in unpacked]
        outs = [
            move_batch_axis(v, axis_size, d, 0) if b else v
            for (v, d), b in zip(unpacked, batched)
        ]
        out_batched[:] = [b or f for b, f in zip(batched, force_out)]
        return [
            broadcast_forced(v, axis_size, batched_in) if f and not b else v
            for v, b, f in zip(outs, batched, force_out)
        ]

    return trace_sub_program(fun, in_avals, DebugInfo("vmap", name, ())), out_batched


# What the batch rules of call primitives (pjit, checkpoint, custom_jvp, shard_map) use.
cached_batch_program = functools.partial(batch_program, cached=True)
