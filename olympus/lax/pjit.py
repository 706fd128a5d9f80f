"""The `pjit` primitive: a call to a jitted sub-program.

A jitted function used inside another trace appears as one `pjit` equation
holding its olympuspr (constants already turned into leading operands).
Eagerly, it compiles that olympuspr once and runs it.
"""

from __future__ import annotations

import weakref

from olympus.ir.core import ClosedOlympuspr, Primitive
from olympus.backends.xla.dispatch import buffer_of, compile_olympuspr
from olympus.backends.xla.lowering import lower_closed_inline, lowering_rules
from olympus.lax.base import all_primitives
from olympus.transforms.batching import batch_rules, batch_subprogram, batch_to_front

pjit_p = Primitive("pjit", multiple_results=True)
all_primitives["pjit"] = pjit_p

_executables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _pjit_abstract_eval(*avals, olympuspr: ClosedOlympuspr, name: str):
    expected = olympuspr.in_avals
    if len(avals) != len(expected) or any(
        a.shape != b.shape or a.dtype != b.dtype for a, b in zip(avals, expected)
    ):
        got = ", ".join(a.str_short() for a in avals)
        want = ", ".join(a.str_short() for a in expected)
        raise TypeError(f"pjit {name}: called with ({got}), traced for ({want})")
    return olympuspr.out_avals


def executable_for(olympuspr: ClosedOlympuspr, name: str):
    """The compiled program for a closed olympuspr, compiled once."""
    exe = _executables.get(olympuspr)
    if exe is None:
        exe = _executables[olympuspr] = compile_olympuspr(olympuspr.olympuspr, name)
    return exe


def _pjit_impl(*args, olympuspr: ClosedOlympuspr, name: str):
    exe = executable_for(olympuspr, name)
    consts = [buffer_of(c) for c in olympuspr.consts]
    return exe.call(consts + [buffer_of(x) for x in args])


def _pjit_lower(ctx, *args, olympuspr: ClosedOlympuspr, name: str):
    return lower_closed_inline(ctx.emitter, olympuspr, args)


pjit_p.def_abstract_eval(_pjit_abstract_eval)
pjit_p.def_impl(_pjit_impl)
lowering_rules[pjit_p] = _pjit_lower


def _pjit_batch_rule(axis_size, vals, dims, *, olympuspr: ClosedOlympuspr, name: str):
    """The jitted sub-program is batched into a new pjit (still one call)."""
    batched, consts, out_dims = batch_subprogram(olympuspr, axis_size, dims, name)
    vals = [v if d is None else batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)]
    return pjit_p.bind(*consts, *vals, olympuspr=batched, name=name), out_dims


batch_rules[pjit_p] = _pjit_batch_rule
