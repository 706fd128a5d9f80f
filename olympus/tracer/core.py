"""Traces and tracers: how Python execution is recorded or evaluated.

There is always a *current trace*. `Primitive.bind` hands the primitive to
it: the `EvalTrace` runs it (eager mode), a staging trace records an equation,
and transforms (jvp, vmap) interpret it and bind on their parent trace.
A trace treats values it did not create (constants, tracers of enclosing
traces) as constants; a tracer whose trace has ended is an escaped tracer.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager

import numpy as np

from olympus.ir import core as ir
from olympus.ir import dtypes
from olympus import config
from olympus.ir.core import ShapedArray, SourceInfo
from olympus.tracer.errors import (
    ConcretizationTypeError,
    OlympusTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_source_info() -> SourceInfo | None:
    """The user's line an equation being created comes from: the source line
    of the equation a transform is replaying (see `replaying`), else the
    innermost stack frame outside the olympus package."""
    replayed = _state.source_info
    if replayed is not None:
        return replayed
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        user = _user_files.get(filename)
        if user is None:
            user = _user_files[filename] = not (
                filename.startswith(_PACKAGE_DIR) or filename.startswith("<frozen")
            )
        if user:
            return SourceInfo(filename, frame.f_lineno, code.co_name, _state.scope)
        frame = frame.f_back
    return None


# file name -> whether it is the user's (outside the package): every equation
# asks, walking several of olympus's frames (a few files, one lookup each)
_user_files: dict = {}


class Trace:
    """Interprets primitives; `parent` is the trace its own bindings go to."""

    parent: Trace | None = None
    alive: bool = True

    def process_primitive(self, primitive, args, params):
        raise TypeError(f"{type(self).__name__} cannot process {primitive}")

    def is_ancestor_of(self, other: Trace) -> bool:
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False

    def describe(self) -> str:
        return type(self).__name__

    def concretization_error(self, tracer, what: str, cls: type) -> Exception:
        """The error for `bool(tracer)` etc.; staging traces say more."""
        return cls(
            concretization_message(tracer, what, f" (traced by {self.describe()})")
        )


class EvalTrace(Trace):
    """Eager evaluation: each primitive runs through its `impl`."""

    def process_primitive(self, primitive, args, params):
        for x in args:
            if isinstance(x, Tracer):
                raise escaped_tracer_error(x)
        outs = primitive.impl(*args, **params)
        if _debug_nans[0]:
            check_nans(primitive, outs if primitive.multiple_results else [outs])
        return outs


_debug_nans = [False]  # mirrors config olympus_debug_nans (read on every eager op)


def _follow_debug_nans(name, value) -> None:
    if name == "olympus_debug_nans":
        _debug_nans[0] = bool(value)


config.on_change(_follow_debug_nans)
_debug_nans[0] = bool(config.read("olympus_debug_nans"))


def check_nans(primitive, outs) -> None:
    """FloatingPointError naming the primitive and the user's line when an
    output holds a NaN (with `olympus_debug_nans` on)."""
    for out in outs:
        value = np.asarray(out)
        if value.dtype.kind in "fc" and np.isnan(value).any():
            where = user_source_info()
            backward = (
                " (in the backward pass of that line)"
                if where and where.backward
                else ""
            )
            raise FloatingPointError(
                f"invalid value (NaN) encountered in {primitive.name}"
                + (f" at {where}{backward}" if where is not None else "")
                + " (olympus_debug_nans is on)"
            )


eval_trace = EvalTrace()


class _State(threading.local):
    def __init__(self) -> None:
        self.trace: Trace = eval_trace
        # source line of the equation a transform is replaying, or None
        self.source_info: SourceInfo | None = None
        # the `named_scope` path of the equations being created ("" outside any)
        self.scope: str = ""


_state = _State()


def current_trace() -> Trace:
    return _state.trace


class set_current_trace:
    """`with set_current_trace(trace):` makes `trace` current inside. A class,
    not a generator context manager: tracing enters one per primitive a
    transform processes, and a generator's costs 4x as much (about a tenth
    of tracing an MLP's gradient)."""

    __slots__ = ("trace", "previous")

    def __init__(self, trace: Trace):
        self.trace = trace

    def __enter__(self) -> Trace:
        self.previous = _state.trace
        _state.trace = self.trace
        return self.trace

    def __exit__(self, *exc) -> None:
        _state.trace = self.previous


class replaying:
    """While a transform (jvp, transpose, vmap, partial evaluation) processes
    an equation, the equations it creates get that equation's user line: the
    Python stack then shows only the transform's caller (or, in a backward
    pass, no user frame of `f` at all). None keeps the enclosing line."""

    __slots__ = ("source_info", "previous")

    def __init__(self, source_info: SourceInfo | None):
        self.source_info = source_info

    def __enter__(self) -> None:
        self.previous = _state.source_info
        if self.source_info is not None:
            _state.source_info = self.source_info

    def __exit__(self, *exc) -> None:
        _state.source_info = self.previous


class CompileTimeEvalTrace(Trace):
    """The trace inside `ensure_compile_time_eval`: a primitive of concrete
    operands runs at once (eagerly, even while a jit traces), one with a
    tracer among them goes to the trace that was current (`parent`), as it
    would without the context."""

    def __init__(self, parent: Trace):
        self.parent = parent

    def process_primitive(self, primitive, args, params):
        trace = eval_trace
        for x in args:
            if isinstance(x, Tracer):
                trace = self.parent
                break
        with set_current_trace(trace):
            return trace.process_primitive(primitive, args, params)


@contextmanager
def ensure_compile_time_eval():
    """A context in which operations on concrete values run while tracing.

    Inside, operations on concrete values (constants, Arrays, NumPy arrays)
    are computed at trace time, so their results are concrete: Python `if`,
    `int()` and shapes may use them. Operations on traced arguments are
    still traced as usual.

    Returns:
      A context manager.

    Raises:
      ConcretizationTypeError: a value computed from a traced argument is
        used where a concrete value is needed, as outside the context.

    Example:
      >>> @olympus.jit
      ... def f(x):
      ...     with olympus.ensure_compile_time_eval():
      ...         n = int(jnp.argmax(jnp.array([1, 5, 2])))  # concrete: 1
      ...     return x[n]
      >>> f(jnp.arange(3.0))
      Array(1., dtype=float32)
    """
    previous = _state.trace
    if previous is eval_trace:
        yield
        return
    _state.trace = CompileTimeEvalTrace(previous)
    try:
        yield
    finally:
        _state.trace = previous


def _no_eager_hit(primitive, args, params):
    return None


# The backend's cached eager executables: (primitive, args, params) -> the
# outputs, or None when this call is not a plain cache hit (see set_eager_hit).
_eager_hit = _no_eager_hit


def set_eager_hit(hit) -> None:
    """The backend installs its eager cache lookup, which `bind` tries first on
    the eval trace: a hit runs the cached executable without the primitive's
    `impl`. It must return None unless every operand is a live device array
    (never a tracer) and the result is what `impl` would give."""
    global _eager_hit
    _eager_hit = hit


@contextmanager
def named_scope(name: str):
    """A context (or decorator) that names the equations created inside it.

    Nested scopes give a path (`outer/inner`). The names are printed by
    `pretty(source_info=True)`, kept by jvp, transpose, vmap and the
    optimizer, and lowered as XLA's `op_name` metadata, so a profile shows
    which layer an op belongs to.

    Args:
      name: the scope name.

    Returns:
      A context manager usable as a decorator.

    Raises:
      TypeError: `name` is not a string.

    Example:
      >>> def f(x):
      ...     with olympus.named_scope("layer1"):
      ...         return jnp.sin(x)
      >>> olympus.make_olympuspr(f)(1.0).olympuspr.eqns[0].source_info.scope
      'layer1'
    """
    if not isinstance(name, str) or not name:
        where = user_source_info()
        at = f" at {where}" if where is not None else ""
        raise TypeError(
            f"olympus.named_scope: the name must be a non-empty str, got {name!r}{at}"
        )
    previous = _state.scope
    _state.scope = f"{previous}/{name}" if previous else name
    try:
        yield
    finally:
        _state.scope = previous


@contextmanager
def new_scope_root():
    """A program traced inside (a jit body, a branch, a loop body) names its
    scopes from its own root, as its equation carries the enclosing scope."""
    previous = _state.scope
    _state.scope = ""
    try:
        yield
    finally:
        _state.scope = previous


def _bind(primitive, args, params):
    trace = _state.trace
    if trace is eval_trace and not _debug_nans[0]:
        out = _eager_hit(primitive, args, params)
        if out is not None:
            return out
    return trace.process_primitive(primitive, args, params)


ir.set_binder(_bind)


class AvalProperties:
    """The array attributes read off `self.aval`, shared by concrete arrays
    (backends.xla.array.Array) and tracers, so both answer alike."""

    __slots__ = ()
    aval: ShapedArray

    @property
    def shape(self) -> tuple:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type


class Tracer(AvalProperties):
    """A stand-in for an array while a trace records or transforms a program.

    Array operators (`+`, `@`, indexing, ...) are installed by olympus.numpy.
    """

    __slots__ = ("_trace",)
    __array_priority__ = 1000
    aval: ShapedArray  # each trace's tracer class provides it

    def __bool__(self):
        raise self._trace.concretization_error(self, "bool", TracerBoolConversionError)

    def __int__(self):
        raise self._trace.concretization_error(
            self, "int", TracerIntegerConversionError
        )

    def __index__(self):
        raise self._trace.concretization_error(
            self, "index", TracerIntegerConversionError
        )

    def __float__(self):
        raise self._trace.concretization_error(self, "float", ConcretizationTypeError)

    def __complex__(self):
        raise self._trace.concretization_error(self, "complex", ConcretizationTypeError)

    def __array__(self, dtype=None, copy=None):
        raise TracerArrayConversionError(
            f"np.asarray() of a traced array {self.aval.str_short()} created by "
            f"{self._trace.describe()}: NumPy functions need concrete values. Use "
            f"olympus.numpy functions on traced values instead."
            + (f"\n  at {where}" if (where := user_source_info()) is not None else "")
        )

    def __hash__(self):
        raise TypeError(f"unhashable type: traced array {self.aval.str_short()}")

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short()}> with {self._trace.describe()}"


def concretization_message(tracer: Tracer, what: str, context: str) -> str:
    fixes = {
        "bool": "use lax.cond / lax.select / jnp.where for value-dependent choices",
        "index": "use lax.dynamic_slice or mark the argument static",
        "int": "mark the argument static or keep the value as an array",
    }.get(what, "keep the computation in olympus.numpy / lax")
    return (
        f"Attempted {what}() conversion of a traced array {tracer.aval.str_short()}"
        f"{context}.\nThe value is not known while tracing, so Python cannot "
        f"branch on it or convert it. Fixes: pass the argument with "
        f"static_argnums / static_argnames if it is really a constant, or "
        f"{fixes}."
    )


def escaped_tracer_error(tracer: Tracer) -> UnexpectedTracerError:
    where = getattr(tracer, "source_info", None)
    made = f", created at {where}," if where is not None else ""
    used = user_source_info()
    used_at = f"\n  used at {used}" if used is not None else ""
    return UnexpectedTracerError(
        f"a tracer {tracer.aval.str_short()} from {tracer._trace.describe()}"
        f"{made} was used after its trace ended (it escaped, e.g. via a global "
        f"or a closure). Return the value from the traced function instead.{used_at}"
    )


# ---- abstract values of concrete Python / NumPy values ----------------------
def aval_of(x) -> ShapedArray:
    """The abstract value of an array-like (tracers and Arrays carry theirs)."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    # NumPy scalars first: np.float64 subclasses float, yet it is strong in JAX
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))
    if isinstance(x, (bool, int, float, complex)):
        if isinstance(x, int) and not isinstance(x, bool):
            check_int_range(x)
        return ShapedArray(
            (), dtypes.python_scalar_dtype(x), weak_type=not isinstance(x, bool)
        )
    raise OlympusTypeError(
        f"{type(x).__name__} object {x!r:.60} is not a valid olympus array type; "
        f"use arrays, NumPy arrays or Python scalars"
    )


def check_int_range(x: int) -> None:
    dtype = dtypes.default_int_dtype()
    info = np.iinfo(dtype)
    if not info.min <= x <= info.max:
        raise OverflowError(
            f"Python int {x} does not fit in {dtype.name}"
            f"{'' if dtypes.x64_enabled() else ' (enable x64 for int64)'}"
        )
