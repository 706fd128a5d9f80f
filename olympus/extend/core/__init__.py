"""`jax.extend.core` under olympus: the IR's classes under JAX's names.

`Jaxpr` is olympus's `Olympuspr` and `ClosedJaxpr` its `ClosedOlympuspr` (the
same classes, so `isinstance` works both ways); `Primitive` is olympus's with
JAX's `def_effectful_abstract_eval` added.
"""

from __future__ import annotations

from typing import Callable

from olympus.ir import core as ir
from olympus.ir.core import (  # noqa: F401
    Atom,
    ClosedOlympuspr as ClosedJaxpr,
    Eqn as JaxprEqn,
    Literal,
    Olympuspr as Jaxpr,
    ShapedArray,
    Var,
    subolympusprs,
)
from olympus.tracer.core import Tracer, aval_of as get_aval, current_trace  # noqa: F401
from olympus.tracer.evaluation import eval_program

# JAX's table of Python types and their avals (registrations are recorded;
# olympus takes values as arrays by what they are: see interpreters/xla.py).
from olympus.interpreters.xla import pytype_aval_mappings  # noqa: E402,F401
from olympus.extend.core import primitives  # noqa: E402,F401  JAX's `*_p` names


# Every olympus aval is a ShapedArray, so JAX's base class of avals is it too:
# `isinstance(aval, AbstractValue)` holds for exactly the avals olympus makes.
AbstractValue = ShapedArray


class Primitive(ir.Primitive):
    """A primitive made by a library; `bind`, `def_impl` and
    `def_abstract_eval` are olympus's own, so every transformation treats it as
    one of lax's once its rules are registered in `olympus.interpreters`."""

    __slots__ = ()

    def def_effectful_abstract_eval(self, rule: Callable) -> Callable:
        """JAX's form `rule(*avals, **params) -> (aval, effects)`; olympus
        primitives carry no effects of their own, so a rule naming any is refused."""

        def abstract_eval(*avals, **params):
            out, effects = rule(*avals, **params)
            if effects:
                raise UnsupportedEffectError(
                    f"primitive {self.name}: its abstract_eval returned effects "
                    f"{set(effects)}; olympus.extend primitives are pure. Use "
                    f"olympus.experimental.io_callback for side effects."
                )
            return out

        self.abstract_eval = abstract_eval
        return rule


class Effect:
    """JAX's base class of effects. olympus's primitives carry none; libraries
    subclass it at import (flax.nnx's VariableEffect) and olympus never sees an
    instance in a program."""


class UnsupportedEffectError(NotImplementedError):
    """A library primitive declared JAX effects, which olympus's IR cannot carry."""


def raise_to_shaped(aval: ShapedArray, weak_type: bool | None = None) -> ShapedArray:
    """`aval` itself (olympus's avals are all shaped already)."""
    return aval if weak_type is None else aval.update(weak_type=weak_type)


def jaxprs_in_params(params: dict) -> list[Jaxpr]:
    """The programs an equation's params hold (a higher-order primitive's)."""
    return list(subolympusprs(params))


def subjaxprs(jaxpr: Jaxpr) -> list[Jaxpr]:
    """The programs held by `jaxpr`'s equations, one level down."""
    return [sub for eqn in jaxpr.eqns for sub in subolympusprs(eqn.params)]


class OpaqueTraceState:
    """Which trace is current, comparable and nothing else (JAX's): a library
    checks that a value is used under the trace it was made in."""

    __slots__ = ("_trace",)

    def __init__(self, trace):
        self._trace = trace

    def __eq__(self, other) -> bool:
        return isinstance(other, OpaqueTraceState) and other._trace is self._trace

    def __hash__(self) -> int:
        return id(self._trace)


def get_opaque_trace_state(convention: str | None = None) -> OpaqueTraceState:
    """The current trace, opaquely (`convention` names the asking library)."""
    return OpaqueTraceState(current_trace())


def eval_jaxpr(jaxpr: Jaxpr, consts, *args) -> list:
    """Runs `jaxpr` on the current trace (JAX's `core.eval_jaxpr`)."""
    return eval_program(jaxpr, list(consts), list(args))


def jaxpr_as_fn(closed: ClosedJaxpr) -> Callable:
    """The function a closed program computes: `f(*args) -> list of outputs`."""
    return lambda *args: eval_program(closed.olympuspr, closed.consts, list(args))


def mapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """`aval` with its `axis` removed (one example of a batch of `size`)."""
    if axis is None:
        return aval
    shape = aval.shape[:axis] + aval.shape[axis + 1 :]
    return aval.update(shape=shape)


def unmapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """`aval` with a batch axis of `size` inserted at `axis`."""
    if axis is None:
        return aval
    return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def valid_jaxtype(x) -> bool:
    """Whether `x` can be an operand of a primitive (an array, scalar or tracer)."""
    try:
        get_aval(x)
    except (TypeError, ValueError):
        return False
    return True


__all__ = [
    "AbstractValue",
    "Atom",
    "ClosedJaxpr",
    "Effect",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "Primitive",
    "ShapedArray",
    "Tracer",
    "Var",
    "OpaqueTraceState",
    "eval_jaxpr",
    "get_opaque_trace_state",
    "get_aval",
    "jaxpr_as_fn",
    "jaxprs_in_params",
    "mapped_aval",
    "pytype_aval_mappings",
    "raise_to_shaped",
    "subjaxprs",
    "unmapped_aval",
    "valid_jaxtype",
]
