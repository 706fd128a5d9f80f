"""The staging trace: records each primitive as an equation of an olympuspr.

Python control flow and function calls run normally while tracing and leave
only the primitives they bound. Values the trace did not create become
constants: Python/NumPy scalars are inlined as literals, other arrays (and
tracers of enclosing traces) are hoisted into constvars.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from olympus import caches, config
from olympus.caches import BoundedCache
from olympus.ir.analysis import backward_slice
from olympus.ir.core import ClosedOlympuspr, Eqn, Literal, Olympuspr, ShapedArray, Var
from olympus.tracer import core
from olympus.tracer.core import Trace, Tracer, concretization_message, user_source_info
from olympus.tracer.errors import OlympusTypeError


class DebugInfo(NamedTuple):
    """What the user traced, for error messages: `jit of f`, `x['w']`."""

    transform: str
    function: str
    arg_paths: tuple


def function_name(fun: Callable) -> str:
    return getattr(fun, "__qualname__", None) or getattr(fun, "__name__", repr(fun))


class StagingTracer(Tracer):
    __slots__ = ("aval", "ir_var", "source_info")

    def __init__(
        self, trace: StagingTrace, aval: ShapedArray, var: Var, source_info=None
    ):
        self._trace = trace
        self.aval = aval
        self.ir_var = var  # not `var`: that name is the jnp method
        self.source_info = source_info


def _is_scalar_constant(x) -> bool:
    return isinstance(x, (bool, int, float, complex, np.generic)) or (
        getattr(x, "shape", None) == () and not isinstance(x, Tracer)
    )


class StagingTrace(Trace):
    """Builds an olympuspr from the primitives bound while it is current."""

    def __init__(self, parent: Trace, debug_info: DebugInfo | None = None):
        self.parent = parent
        self.debug_info = debug_info
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.consts: list = []
        self._const_ids: dict[int, Var] = {}
        self.alive = True

    def describe(self) -> str:
        if self.debug_info is None:
            return "a staging trace"
        return f"{self.debug_info.transform} of {self.debug_info.function}"

    def new_arg(self, aval: ShapedArray) -> StagingTracer:
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, aval, var)

    def to_atom(self, x):
        """The Var or Literal that stands for `x` in this trace's program."""
        if isinstance(x, StagingTracer) and x._trace is self:
            return x.ir_var
        if isinstance(x, Tracer):
            if not x._trace.alive or not x._trace.is_ancestor_of(self):
                raise core.escaped_tracer_error(x)
            return self._const_var(x)
        if _is_scalar_constant(x):
            aval = core.aval_of(x)
            return Literal(_scalar_value(x, aval), aval)
        return self._const_var(x)

    def _const_var(self, x) -> Var:
        var = self._const_ids.get(id(x))
        if var is None:
            var = Var(core.aval_of(x))
            self._const_ids[id(x)] = var
            self.constvars.append(var)
            self.consts.append(x)
        return var

    def process_primitive(self, primitive, args, params):
        atoms = [self.to_atom(x) for x in args]
        source_info = user_source_info()
        out_avals = abstract_eval(
            primitive, [a.aval for a in atoms], params, source_info
        )
        multiple = primitive.multiple_results
        out_avals = out_avals if multiple else [out_avals]
        outvars = [Var(aval) for aval in out_avals]
        self.eqns.append(Eqn(primitive, params, atoms, outvars, source_info))
        tracers = [StagingTracer(self, v.aval, v, source_info) for v in outvars]
        return tracers if multiple else tracers[0]

    def to_olympuspr(self, outs: Sequence) -> tuple[Olympuspr, list]:
        outvars = [self.to_atom(x) for x in outs]
        olympuspr = Olympuspr(
            self.constvars, self.invars, self.eqns, outvars, self.debug_info
        )
        return olympuspr, list(self.consts)

    def concretization_error(self, tracer, what: str, cls: type) -> Exception:
        context = f" while tracing {self.describe()}"
        where = user_source_info()  # the line that asked for the concrete value
        if where is not None:
            context += f"\n  at {where}"
        if tracer.source_info is not None and tracer.source_info != where:
            context += f"\n  (the value was computed at {tracer.source_info})"
        args = self._arguments_behind(tracer)
        if args:
            context += f"\nThe value depends on argument(s) {', '.join(args)}"
            context += f" of {self.debug_info.function}" if self.debug_info else ""
        return cls(concretization_message(tracer, what, context))

    def _arguments_behind(self, tracer) -> list[str]:
        """The argument paths a traced value depends on (walks eqns backwards)."""
        if self.debug_info is None or tracer._trace is not self:
            return []
        _, needed = backward_slice(self.eqns, [tracer.ir_var])
        paths = self.debug_info.arg_paths
        return [
            paths[i] if i < len(paths) else f"#{i}"
            for i, v in enumerate(self.invars)
            if v in needed
        ]


def _scalar_value(x, aval: ShapedArray):
    return np.asarray(x, dtype=aval.dtype)[()]


def abstract_eval(primitive, avals, params, source_info):
    """Runs a primitive's shape rule; errors name the primitive, types and line.

    Results are remembered by (primitive, operand types, params) where every
    param is a plain value (a number, string, dtype or tuple of such): a
    trace meets the same few signatures again and again (jvp and transpose
    rules repeat the forward's), and the rules were a quarter of tracing an
    MLP's gradient (benchmarks/README.md). Errors are not remembered, and an
    option change (x64 changes dtypes) forgets them all."""
    key = _shape_key(primitive, avals, params)
    if key is not None:
        try:
            found = _shapes.get(key)
        except TypeError:  # an operand type or a nested param is not hashable
            key = found = None
        if found is not None:
            return found
    try:
        out = primitive.abstract_eval(*avals, **params)
    except OlympusTypeError as err:
        raise OlympusTypeError(_located(primitive, avals, err, source_info)) from None
    except (TypeError, ValueError) as err:
        raise OlympusTypeError(_located(primitive, avals, err, source_info)) from err
    if key is not None:
        out = tuple(out) if primitive.multiple_results else out
        _shapes[key] = out
    return out


# (primitive, *operand types, *param items, *param types) -> the rule's result
_shapes: dict = caches.register("shape rules", BoundedCache(4096))
config.on_change(lambda name, value: _shapes.clear())
_PLAIN = frozenset({type(None), bool, int, float, str})


def _shape_key(primitive, avals, params) -> tuple | None:
    """`abstract_eval`'s cache key, or None where a param is not a plain
    value (a sub-program, a function, an array: not kept alive by a cache,
    and not worth remembering)."""
    for value in params.values():
        kind = type(value)
        if kind in _PLAIN or isinstance(value, np.dtype):
            continue
        if not isinstance(value, tuple):
            return None
        for item in value:
            if type(item) not in _PLAIN and type(item) is not tuple:
                return None
    # the params' types too: 2 == 2.0 == True, but a rule may tell them apart
    return (primitive, *avals, *params.items(), *map(type, params.values()))


def _located(primitive, avals, err, source_info) -> str:
    text = str(err)
    if "\n  at " in text:
        return text  # already located by an inner bind
    if not text.startswith(primitive.name):  # shape rules usually name it already
        text = f"{primitive.name}: {text}"
    types = ", ".join(a.str_short() for a in avals)
    where = f"\n  at {source_info}" if source_info is not None else ""
    return f"{text} (operands: {types}){where}"


def trace_to_olympuspr(
    fun: Callable, in_avals: Sequence[ShapedArray], debug_info: DebugInfo | None = None
) -> tuple[Olympuspr, list, list]:
    """Traces flat `fun(*tracers) -> list` under a new staging trace.

    Returns (olympuspr, consts, out_tracers_or_values); consts may be tracers of
    enclosing traces when `fun` closes over them.
    """
    trace = StagingTrace(core.current_trace(), debug_info)
    args = [trace.new_arg(aval) for aval in in_avals]
    try:
        with core.set_current_trace(trace), core.new_scope_root():
            outs = fun(*args)
        olympuspr, consts = trace.to_olympuspr(outs)
    finally:
        trace.alive = False
    return olympuspr, consts, outs


def consts_as_invars(olympuspr: Olympuspr) -> Olympuspr:
    """The same program with its constvars moved in front of its invars."""
    return Olympuspr(
        [],
        olympuspr.constvars + olympuspr.invars,
        olympuspr.eqns,
        olympuspr.outvars,
        olympuspr.debug_info,
    )


class SubProgram(NamedTuple):
    """A program as a primitive holds it: `closed` takes the constants its
    function closed over as leading invars (and has no consts of its own), so
    `consts` become operands of the equation. `out_tree` is the output pytree
    when the function was traced from pytrees."""

    closed: ClosedOlympuspr
    consts: list
    out_tree: Any = None

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.closed.out_avals


def trace_sub_program(
    fun: Callable, in_avals: Sequence[ShapedArray], debug_info: DebugInfo
) -> SubProgram:
    """Traces flat `fun(*tracers) -> list` into a `SubProgram`."""
    olympuspr, consts, _ = trace_to_olympuspr(fun, in_avals, debug_info)
    return SubProgram(ClosedOlympuspr(consts_as_invars(olympuspr), []), consts)
