"""The `pjit` primitive: a call to a jitted sub-program.

A jitted function used inside another trace appears as one `pjit` equation
holding its olympuspr (constants already turned into leading operands).
Eagerly, it compiles that olympuspr once and runs it.
"""

from __future__ import annotations

import weakref

from olympus import caches
from olympus.backends.xla.dispatch import buffer_of, compile_olympuspr
from olympus.backends.xla.lowering import (
    build_module,
    float0_consts_inlined,
    lower_closed_inline,
    lowering_rules,
)
from olympus.backends.xla.spmd import ShardedExecutable, plan_layout, spans_devices
from olympus.ir.core import ClosedOlympuspr, Primitive, all_primitives
from olympus.ir.structure import call_structure, declare
from olympus.tracer import refs
from olympus.tracer.core import aval_of, set_current_trace
from olympus.transforms.ad_util import is_zero
from olympus.transforms.batching import batch_rules, batch_to_front
from olympus.transforms.jvp import jvp_rules
from olympus.transforms.linearize import (
    backward_pass,
    declare_call_primitive,
    is_undefined,
    partial_eval_rules,
    transpose_rules,
)
from olympus.transforms.programs import (
    cached_batch_program,
    cached_sparse_jvp_program,
    partial_eval_program,
    sparse_tangents,
    transpose_call,
)

pjit_p = Primitive("pjit", multiple_results=True)
declare(pjit_p, call_structure("olympuspr"))
all_primitives["pjit"] = pjit_p

_executables = caches.register("pjit executables", weakref.WeakKeyDictionary())


def _pjit_abstract_eval(*avals, olympuspr: ClosedOlympuspr, name: str):
    expected = olympuspr.in_avals
    if len(avals) != len(expected) or any(
        a.shape != b.shape or a.dtype != b.dtype for a, b in zip(avals, expected)
    ):
        got = ", ".join(a.str_short() for a in avals)
        want = ", ".join(a.str_short() for a in expected)
        raise TypeError(f"pjit {name}: called with ({got}), traced for ({want})")
    return olympuspr.out_avals


def executable_for(olympuspr: ClosedOlympuspr, name: str, placed: tuple = ()):
    """The compiled program for a closed olympuspr, compiled once per layout
    of its arguments (`placed`: each one's sharding where it spans devices,
    else None; () for none): it runs over their mesh, as JAX's, or over the
    mesh its sharding constraints name."""
    compiled = _executables.setdefault(olympuspr, {})
    exe = compiled.get(placed)
    if exe is None:
        program = float0_consts_inlined(olympuspr).olympuspr
        ins = [None] * len(program.constvars) + list(
            placed or [None] * len(program.invars)
        )
        layout = plan_layout(program, ins, [None] * len(program.outvars))
        if layout is None:
            exe = compile_olympuspr(program, name)
        else:
            exe = ShardedExecutable(build_module(program, name, layout=layout), layout)
        compiled[placed] = exe
    return exe


def _pjit_impl(*args, olympuspr: ClosedOlympuspr, name: str):
    placed = tuple([x.sharding if spans_devices(x) else None for x in args])
    exe = executable_for(olympuspr, name, placed if any(placed) else ())
    if isinstance(exe, ShardedExecutable):
        return exe.call(list(olympuspr.consts) + list(args))
    consts = [buffer_of(c) for c in float0_consts_inlined(olympuspr).consts]
    return exe.call(consts + [buffer_of(x) for x in args])


def _pjit_lower(ctx, *args, olympuspr: ClosedOlympuspr, name: str):
    return lower_closed_inline(ctx.emitter, olympuspr, args)


pjit_p.def_abstract_eval(_pjit_abstract_eval)
pjit_p.def_impl(_pjit_impl)
lowering_rules[pjit_p] = _pjit_lower


def _pjit_batch_rule(axis_size, vals, dims, *, olympuspr: ClosedOlympuspr, name: str):
    """The jitted sub-program is batched into a new pjit (still one call)."""
    in_batched = [d is not None for d in dims]
    force_out = [False] * len(olympuspr.out_avals)
    vals = [
        v if d is None else batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)
    ]
    batched, out_batched = cached_batch_program(
        olympuspr, axis_size, in_batched, force_out, name, _split_batch_avals(vals)
    )
    outs = pjit_p.bind(*batched.consts, *vals, olympuspr=batched.closed, name=name)
    return outs, [0 if b else None for b in out_batched]


def _split_batch_avals(vals) -> list | None:
    """The batched operands' types where one holds a sharding (a batch split
    between devices in explicit mode: the batched body keeps it, as JAX's);
    None otherwise, and the body is typed from the per-example program."""
    avals = [aval_of(v) for v in vals]
    if all(getattr(a, "sharding", None) is None for a in avals):
        return None
    return avals


batch_rules[pjit_p] = _pjit_batch_rule


# ---- differentiation: a pjit stays one pjit (primal), or splits in two (linearize) --
def _pjit_jvp(primals, tangents, *, olympuspr: ClosedOlympuspr, name: str):
    """One pjit computing primal and tangent outputs together."""
    nonzero = [not is_zero(t) for t in tangents]
    jvp, has_tangent = cached_sparse_jvp_program(olympuspr, nonzero, f"jvp({name})")
    nonzero_tangents = [t for t in tangents if not is_zero(t)]
    outs = pjit_p.bind(
        *jvp.consts,
        *primals,
        *nonzero_tangents,
        olympuspr=jvp.closed,
        name=f"jvp({name})",
    )
    n = len(olympuspr.out_avals)
    return outs[:n], sparse_tangents(outs[n:], has_tangent, olympuspr.out_avals)


def _pjit_partial_eval(trace, args, unknown, *, olympuspr: ClosedOlympuspr, name: str):
    """Known inputs run in a pjit on the parent trace; the staged (tangent)
    part is a second pjit, fed the residuals the first one returns."""
    known, known_consts, staged, out_unknown, num_res = partial_eval_program(
        olympuspr, unknown, name
    )
    known_args = [a for a, u in zip(args, unknown) if not u]
    with set_current_trace(trace.parent):
        known_outs = pjit_p.bind(*known_consts, *known_args, olympuspr=known, name=name)
    residuals = known_outs[len(known_outs) - num_res :]
    known_outs = iter(known_outs[: len(known_outs) - num_res])
    if not any(out_unknown):
        # Every output is known (e.g. a tangent that is a constant zero): a
        # staged call would have no outputs, dead code the transpose cannot
        # evaluate (its inputs are the linear ones).
        return list(known_outs)
    unknown_args = [a for a, u in zip(args, unknown) if u]
    with set_current_trace(trace.tangent_trace):
        staged_outs = iter(
            pjit_p.bind(
                *residuals, *unknown_args, olympuspr=staged, name=f"lin({name})"
            )
        )
    return [next(staged_outs) if u else next(known_outs) for u in out_unknown]


def _pjit_transpose(cts, *args, olympuspr: ClosedOlympuspr, name: str):
    """One pjit of the transposed program; inline where a custom_vjp's bwd
    writes a ref it cannot thread (olympus/tracer/refs.py)."""

    def inline():
        cts_in = backward_pass(olympuspr.olympuspr, olympuspr.consts, cts, list(args))
        return [
            ct if is_undefined(a) and not is_zero(ct) else None
            for ct, a in zip(cts_in, args)
        ]

    return refs.inline_on_discovery(
        lambda: transpose_call(pjit_p, cts, args, olympuspr, f"transpose({name})"),
        inline,
    )


jvp_rules[pjit_p] = _pjit_jvp
partial_eval_rules[pjit_p] = _pjit_partial_eval
transpose_rules[pjit_p] = _pjit_transpose
declare_call_primitive(pjit_p)
