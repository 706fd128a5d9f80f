"""`jax.interpreters.partial_eval` under olympus: tracing a function to a program.

olympus's partial evaluation lives in `transforms/linearize.py` and has no
JAX-shaped entry; what a library can use is tracing a function of abstract
values into a closed program, as `trace_to_jaxpr_dynamic` does.
"""

from __future__ import annotations

from typing import Callable, Sequence

from olympus.ir.core import ShapedArray
from olympus.tracer.staging import DebugInfo, function_name, trace_to_olympuspr


def trace_to_jaxpr_dynamic(fun: Callable, in_avals: Sequence[ShapedArray]):
    """`(olympuspr, out_avals, consts)` of `fun` (a function or a
    `linear_util.WrappedFun`) traced on `in_avals`; outputs a flat list."""
    call = getattr(fun, "call_wrapped", fun)

    def flat(*args):
        out = call(*args)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    name = function_name(getattr(fun, "f", fun))
    olympuspr, consts, _ = trace_to_olympuspr(
        flat, list(in_avals), DebugInfo("trace_to_jaxpr", name, ())
    )
    return olympuspr, olympuspr.out_avals, consts


__all__ = ["trace_to_jaxpr_dynamic"]
