"""`jax.interpreters.partial_eval` under olympus: tracing a function to a program.

olympus's partial evaluation lives in `transforms/linearize.py` and has no
JAX-shaped entry; what a library can use is tracing a function of abstract
values into a closed program, as `trace_to_jaxpr_dynamic` does.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from olympus.ir.core import ShapedArray
from olympus.tracer.staging import DebugInfo, function_name, trace_to_olympuspr


class PartialVal(NamedTuple):
    """A value known now (`pv` None, `const` the value) or only by its aval
    (`pv` the aval), as JAX's partial evaluation takes its inputs."""

    pv: ShapedArray | None
    const: Any

    @classmethod
    def known(cls, value) -> PartialVal:
        return cls(None, value)

    @classmethod
    def unknown(cls, aval: ShapedArray) -> PartialVal:
        return cls(aval, None)

    def is_known(self) -> bool:
        return self.pv is None


class UnknownInputsError(NotImplementedError):
    """`trace_to_jaxpr_nounits` given unknown inputs: olympus's partial
    evaluation is internal to linearize and has no JAX-shaped entry."""


def trace_to_jaxpr_nounits(
    fun: Callable, pvals: Sequence[PartialVal], instantiate=False
):
    """JAX's partial evaluation where every input is known: runs `fun` and
    returns `(jaxpr, out_pvals, consts)` with every output known (the program
    empty). Unknown inputs raise UnknownInputsError."""
    if not all(p.is_known() for p in pvals):
        raise UnknownInputsError(
            "trace_to_jaxpr_nounits: olympus evaluates only programs whose inputs "
            "are all known (PartialVal.known); to get the shapes of a function of "
            "abstract inputs use olympus.eval_shape, for its program "
            "olympus.make_olympuspr."
        )
    call = getattr(fun, "call_wrapped", fun)
    outs = call(*[p.const for p in pvals])
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return None, [PartialVal.known(o) for o in outs], []


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


__all__ = [
    "PartialVal",
    "UnknownInputsError",
    "trace_to_jaxpr_dynamic",
    "trace_to_jaxpr_nounits",
]
