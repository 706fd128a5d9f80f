"""Compiling and running programs: per-primitive executables for eager mode and
whole-program executables for jit, both through the same lowering."""

from __future__ import annotations

import functools
import math
import os
import threading

import numpy as np

from olympus.tracer.tracebacks import filter_exception
from olympus.caches import EAGER_CACHE_SIZE, BoundedCache
from olympus import caches, config
from olympus.ir.core import Eqn, Olympuspr, ShapedArray, Var
from olympus.ir.dtypes import float0
from olympus.backends.xla import client, compiler, host_callback
from olympus.backends.xla.array import Array, on_default_device, to_device
from olympus.backends.xla.sharding import (
    on_mesh_change,
    onto_mesh_in_scope,
    placement_mesh,
)
from olympus.backends.xla.spmd import apply_sharded, spans_devices
from olympus.backends.xla.lowering import (
    LoweringError,
    build_module,
    returns_ordering_token,
)
from olympus.tracer import core
from olympus.tracer.core import aval_of, set_eager_hit
from olympus.tracer.errors import ArrayTooLargeError
from olympus.tracer.staging import abstract_eval
from olympus.tracer.core import user_source_info


def buffer_of(x):
    """The device buffer to pass to a single-device executable for argument
    `x`; an Array placed on other devices is gathered to the default one."""
    if type(x) is Array:
        buf = x._buf
        if buf is None and x._global is not None:
            return on_default_device(x)
        if buf is None:
            raise RuntimeError(
                f"an Array {x.aval.str_short()} was donated to a jitted computation "
                f"and deleted; it cannot be used again"
            )
        return buf
    return to_device(x)._buf


class FastEntry:
    """A compiled program run on device buffers in the fewest Python steps:
    the one place the execute-and-unpack sequence is written, used by every
    hot call path (`Compiled.run_buffers`, an eager op's cached executable,
    olympus.numpy's direct paths, the C++ dispatcher's first call of a
    signature; a jit cache hit reads its fields and spells `run` out, which
    saves the frame: 0.08 us of a 3.5 us call). `run` is a method, not
    `__call__`: Python 3.11 inlines a method call, not a call through the
    type's slot.

    A deleted argument (buffer None) raises TypeError from jaxlib before
    anything runs: callers take their slow path, which names the error.
    Programs with ordered effects or pure callbacks are not run through one
    (`Executable.waits`)."""

    __slots__ = ("execute", "handlers", "out_avals", "out_aval")

    def __init__(self, execute, handlers: list, out_avals):
        self.execute = execute  # buffers -> jaxlib's ExecuteResults
        self.handlers = handlers
        self.out_avals = list(out_avals)
        self.out_aval = self.out_avals[0] if self.out_avals else None

    def run(self, buffers: list) -> Array:
        """The one output of a one-output program, as an Array."""
        (out,) = self.execute(buffers).consume_with_handlers(self.handlers)
        return Array(out, self.out_aval)

    def outputs(self, buffers: list) -> list:
        """Every output's jaxlib buffer."""
        return self.execute(buffers).consume_with_handlers(self.handlers)

    def arrays(self, buffers: list) -> list[Array]:
        """Every output, as Arrays."""
        return [Array(b, a) for b, a in zip(self.outputs(buffers), self.out_avals)]

    def with_inserted(self, inserts: list) -> FastEntry:
        """The same program with these buffers put among the arguments,
        (position, buffer) pairs by increasing position: a jitted call's
        Python scalars, whose values are part of its cache key."""
        execute = self.execute

        def execute_inserted(buffers):
            buffers = list(buffers)
            for i, buf in inserts:
                buffers.insert(i, buf)
            return execute(buffers)

        return FastEntry(execute_inserted, self.handlers, self.out_avals)

    def with_consts(self, consts: list) -> FastEntry:
        """The same program with these buffers passed before the arguments
        (a jitted function's captured constants)."""
        if not consts:
            return self
        execute, consts = self.execute, list(consts)
        return FastEntry(
            lambda buffers: execute(consts + buffers), self.handlers, self.out_avals
        )


_TOKEN_AVAL = ShapedArray((0,), np.bool_)  # how the runtime hands back a token result


class Executable:
    """A compiled program: call it with device buffers, get Arrays back.

    A program with ordered effects (debug prints) returns its ordering token
    last; a call drops it and waits until the program has run, so its effects
    happen before anything the caller does next (another call's prints, a
    Python print). A program calling pure callbacks (`olympus.pure_callback`)
    is waited for too, so that a callback's error is raised by the call, as
    a HostCallbackError (`waits`: either). float0 outputs (grad's zeros for
    integer inputs) are not in the module (XLA has no float0): the call makes
    them on the host, as JAX does, through the same slower path."""

    __slots__ = (
        "_device_avals", "_handlers", "fast", "host_outputs", "loaded", "ordered",
        "out_avals", "text", "waits",
    )  # fmt: skip

    def __init__(self, text: str, out_avals: list[ShapedArray], eager: bool = False):
        get = client.get_client()
        try:
            self.loaded = compiler.compile_and_load(
                get, text, client.device_list(), client.compile_options(), eager
            )
        except (
            Exception
        ) as err:  # XLA's own errors come as RuntimeError / XlaRuntimeError
            raise LoweringError(
                f"XLA could not compile the program: {err}\n--- StableHLO ---\n{text}"
            ) from None
        self.out_avals = out_avals
        self.text = text
        self.ordered = returns_ordering_token(text)
        self.host_outputs = [i for i, a in enumerate(out_avals) if a.dtype == float0]
        self.waits = (
            self.ordered
            or host_callback.uses_host_callbacks(text)
            or bool(self.host_outputs)
        )
        device_avals = [a for a in out_avals if a.dtype != float0]
        self._device_avals = device_avals
        self._handlers = [client.result_handler(aval) for aval in device_avals]
        if self.ordered:
            self._handlers.append(client.result_handler(_TOKEN_AVAL))
        self.fast = FastEntry(self.loaded.execute_sharded, self._handlers, device_avals)

    def call(self, buffers: list) -> list[Array]:
        if self.waits:
            return self._call_and_wait(buffers)
        return self.fast.arrays(buffers)

    def _call_and_wait(self, buffers: list) -> list[Array]:
        with host_callback.callback_errors():
            results = self.loaded.execute_sharded(buffers, with_tokens=True)
            done = results.consume_token()
            outs = results.consume_with_handlers(self._handlers)
            if self.ordered:
                outs = outs[:-1]  # drops the token
            host_callback.wait_for(done, outs)
        arrays = [Array(buf, aval) for buf, aval in zip(outs, self._device_avals)]
        for i in self.host_outputs:
            arrays.insert(i, np.zeros(self.out_avals[i].shape, float0))
        return arrays

    def call_one(self, buffers: list) -> Array:
        """`call` for a program with exactly one output (saves the list)."""
        if self.waits:
            return self._call_and_wait(buffers)[0]
        return self.fast.run(buffers)


def compile_olympuspr(
    olympuspr: Olympuspr, name: str = "main", donated=(), eager: bool = False
) -> Executable:
    """Compiles a program whose constvars then invars become the arguments
    (`donated` ones may have their buffers reused for outputs); `eager`: one
    primitive of eager mode (persistently cached apart, see compiler.py)."""
    check_array_sizes(olympuspr, name)
    module = (
        build_module(olympuspr, name, donated)
        if donated
        else build_module(olympuspr, name)
    )
    return Executable(module, olympuspr.out_avals, eager)


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 40


def check_array_sizes(olympuspr: Olympuspr, name: str) -> None:
    """ArrayTooLargeError before compiling a program one of whose arrays
    (operand or equation result) is larger than the machine's memory: a clear
    error naming the array and the line that made it, not XLA's failed
    allocation."""
    limit = _memory_bytes()
    sites = [(v, None) for v in olympuspr.invars]
    sites += [(v, eqn) for eqn in olympuspr.eqns for v in eqn.outvars]
    for var, eqn in sites:
        aval = var.aval
        nbytes = math.prod(aval.shape) * aval.dtype.itemsize
        if nbytes > limit:
            made = f" made by {eqn.primitive.name}" if eqn is not None else ""
            site = (eqn.source_info if eqn is not None else None) or user_source_info()
            where = f" at {site}" if site is not None else ""
            raise ArrayTooLargeError(
                f"{name}: the array {aval.str_short()}{made}{where} needs "
                f"{nbytes / 2**30:.1f} GiB, more than this machine's "
                f"{limit / 2**30:.1f} GiB of memory"
            )


# ---- eager mode ------------------------------------------------------------
_eager_cache: dict = caches.register(
    "eager executables", BoundedCache(EAGER_CACHE_SIZE)
)  # (primitive, avals, params) -> Executable
_eager_lock = threading.Lock()


def _eager_executable(primitive, avals: tuple, params: dict):
    out = abstract_eval(primitive, list(avals), params, user_source_info())
    out_avals = out if primitive.multiple_results else [out]
    invars = [Var(a) for a in avals]
    outvars = [Var(a) for a in out_avals]
    olympuspr = Olympuspr(
        [], invars, [Eqn(primitive, params, invars, outvars)], outvars
    )
    return compile_olympuspr(olympuspr, primitive.name, eager=True)


def apply_primitive(primitive, *args, **params):
    """Runs one primitive on concrete values through a cached executable.

    A plain hit (Array operands, one result) usually comes through `eager_hit`
    from `bind` and never gets here; this handles the rest: NumPy or Python
    operands, a first call, several results, a deleted Array, NaN checking.
    """
    if placement_mesh[0] is not None and not any([spans_devices(x) for x in args]):
        # JAX's result type keeps a lone array operand's (meshless) layout:
        # XLA then lays the result out as `P()`; else the type names the mesh
        lone = len(args) == 1 and type(args[0]) in (Array, np.ndarray)
        out = _apply_general(primitive, args, params)
        return onto_mesh_in_scope(out, per_dimension=not lone)
    try:
        avals = tuple([x.aval for x in args])
        buffers = [x._buf for x in args]
        exe = _eager_cache.get((primitive, avals, tuple(params.items())))
    except (AttributeError, TypeError):  # non-Array operands, unhashable params
        exe = None
    if exe is None:
        return _apply_general(primitive, args, params)
    if not (exe.ordered or primitive.multiple_results):
        _remember_hit(primitive, avals, params, exe)
    try:
        if primitive.multiple_results:
            return exe.call(buffers)
        return exe.call_one(buffers)
    except TypeError:  # a deleted Array's buffer is None: say so plainly
        return _apply_general(primitive, args, params)


# (primitive, *operand avals[, params]) -> (execute, handlers, out aval): the
# single-result executables `eager_hit` runs, in as little Python as possible
# (eager op latency is measured in benchmarks/dispatch.py).
_hits: dict = caches.register("eager fast path", BoundedCache(EAGER_CACHE_SIZE))


def _hit_key(primitive, avals: tuple, params: dict) -> tuple:
    if params:
        return (primitive, *avals, tuple(params.items()))
    return (primitive, *avals)


def _remember_hit(primitive, avals: tuple, params: dict, exe: Executable) -> None:
    if placement_mesh[0] is not None:  # results go onto the mesh: no fast path
        return
    key = _hit_key(primitive, avals, params)
    if key not in _hits:
        _hits[key] = exe.fast


def eager_hit(primitive, args: tuple, params: dict):
    """`bind`'s first try on the eval trace: the output Array when every
    operand is a live Array and a single-result executable for these avals
    is cached, else None (the primitive's `impl` then takes over)."""
    try:
        if len(args) == 1:
            (x,) = args
            key, buffers = (primitive, x.aval), [x._buf]
        elif len(args) == 2:
            x, y = args
            key, buffers = (primitive, x.aval, y.aval), [x._buf, y._buf]
        else:
            key = (primitive, *[x.aval for x in args])
            buffers = [x._buf for x in args]
        if params:
            key = (*key, tuple(params.items()))
        entry = _hits.get(key)
    except (AttributeError, TypeError):  # not Arrays (tracers have no _buf); unhashable
        return None
    if entry is None:
        return None
    try:
        return entry.run(buffers)
    except TypeError:  # a deleted Array (buffer None): impl raises the error
        return None


set_eager_hit(eager_hit)


_state, _eval_trace, _debug_nans = core._state, core.eval_trace, core._debug_nans


class _OpTables:
    """The hit tables of olympus.numpy's direct paths (`unary_op`,
    `binary_op`), one per numpy function; `olympus.clear_caches` empties them."""

    def __init__(self) -> None:
        self.tables: list[dict] = []

    def new(self) -> dict:
        table: dict = {}
        self.tables.append(table)
        return table

    def clear(self) -> None:
        for table in self.tables:
            table.clear()

    def __len__(self) -> int:
        return sum(map(len, self.tables))


_op_tables = caches.register("eager direct paths", _OpTables())
config.on_change(lambda name, value: _op_tables.clear())  # see `pair_op`


def _forget_hits() -> None:
    """Under `set_mesh` eager results go onto the mesh, which the fast paths
    (one device) do not do: they are emptied there and not refilled."""
    if placement_mesh[0] is not None:
        _hits.clear()
        _op_tables.clear()


on_mesh_change(_forget_hits)


def _op_hit(table: dict, key: tuple, aval: ShapedArray, binds_only) -> tuple | None:
    """A numpy function's table entry for operands of `aval` (key: its
    `_hits` key), made from `_hits` on the first call that finds it there:
    (aval, FastEntry), the entry None where the function does more than bind
    its primitive for these operands; None while nothing is cached (the call
    binds, which caches it)."""
    if not binds_only(aval):
        hit = (aval, None)
    else:
        entry = _hits.get(key)
        if entry is None:
            return None
        hit = (aval, entry)
    if len(table) >= EAGER_CACHE_SIZE:
        table.clear()
    table[aval._hash] = hit
    return hit


def unary_op(primitive, general, binds_only):
    """olympus.numpy's elementwise function of one operand whose `general`
    form only binds `primitive` (no parameters) where `binds_only(aval)`:
    on an eager Array whose executable is cached it runs that executable
    directly, skipping `general`, lax and bind (one eager op's latency is
    measured in benchmarks/dispatch.py); otherwise it calls `general`. The
    table is keyed by the aval's hash (an int: no Python `__hash__` call)
    and the aval is checked on a hit. Not under a trace or with
    olympus_debug_nans on (reported per primitive by bind)."""
    table = _op_tables.new()
    get = table.get

    def op(x):
        if type(x) is Array and _state.trace is _eval_trace and not _debug_nans[0]:
            aval = x.aval
            hit = get(aval._hash)
            if hit is None:
                hit = _op_hit(table, (primitive, aval), aval, binds_only)
            if hit is not None and hit[1] is not None:
                if hit[0] is aval or hit[0] == aval:
                    try:
                        return hit[1].run([x._buf])
                    except TypeError:  # a deleted Array: bind raises the error
                        return general(x)
        return general(x)

    return op


def binary_op(primitive, general, binds_only):
    """`unary_op` for two operands: the direct route takes two Arrays of one
    aval."""
    table = _op_tables.new()
    get = table.get

    def op(x1, x2):
        if (
            type(x1) is Array
            and type(x2) is Array
            and _state.trace is _eval_trace
            and not _debug_nans[0]
        ):
            aval = x1.aval
            other = x2.aval
            if other is aval or other == aval:
                hit = get(aval._hash)
                if hit is None:
                    hit = _op_hit(table, (primitive, aval, aval), aval, binds_only)
                if hit is not None and hit[1] is not None:
                    if hit[0] is aval or hit[0] == aval:
                        try:
                            return hit[1].run([x1._buf, x2._buf])
                        except TypeError:  # a deleted Array: bind raises the error
                            return general(x1, x2)
        try:
            return general(x1, x2)
        except Exception as error:  # the user's frames only (tracer/tracebacks.py)
            filter_exception(error)
            raise

    return op


def pair_op(primitive, general, params_for):
    """`binary_op` for two Arrays of different avals (`a @ b`): where
    `params_for(aval1, aval2)` gives the params with which `general` would
    only bind `primitive` (None: it does more), a cached executable runs
    directly. Keyed by both avals' hashes, checked on a hit. The params may
    read options (the default matmul precision), so every option change
    empties the table (`_op_tables.clear` on config changes)."""
    table = _op_tables.new()
    get = table.get

    @functools.wraps(general)  # its name, docstring and signature
    def op(*args, **options):
        if len(args) == 2 and not options:
            x1, x2 = args
            if (
                type(x1) is Array
                and type(x2) is Array
                and _state.trace is _eval_trace
                and not _debug_nans[0]
            ):
                a1, a2 = x1.aval, x2.aval
                key = (a1._hash, a2._hash)
                hit = get(key)
                if hit is None:
                    hit = _pair_hit(table, key, primitive, a1, a2, params_for)
                if (
                    hit is not None
                    and (hit[0] is a1 or hit[0] == a1)
                    and (hit[1] is a2 or hit[1] == a2)
                ):
                    try:
                        return hit[2].run([x1._buf, x2._buf])
                    except TypeError:  # a deleted Array: bind raises the error
                        return general(x1, x2)
        return general(*args, **options)

    return op


def _pair_hit(table, key, primitive, a1, a2, params_for) -> tuple | None:
    params = params_for(a1, a2)
    if params is None:
        return None
    entry = _hits.get(_hit_key(primitive, (a1, a2), params))
    if entry is None:
        return None  # the call binds, which caches it
    if len(table) >= EAGER_CACHE_SIZE:
        table.clear()
    hit = table[key] = (a1, a2, entry)
    return hit


def _apply_general(primitive, args: tuple, params: dict):
    avals = tuple(map(aval_of, args))
    if any([spans_devices(x) for x in args]):  # stays on its devices, as JAX
        out = abstract_eval(primitive, list(avals), params, user_source_info())
        outs = out if primitive.multiple_results else [out]
        done = apply_sharded(primitive, args, avals, outs, params)
        if done is not None:
            return done
    try:
        key = (primitive, avals, tuple(params.items()))
        exe = _eager_cache.get(key)
    except TypeError:  # unhashable params: compile without caching
        key, exe = None, None
    if exe is None:
        exe = _eager_executable(primitive, avals, params)
        if key is not None:
            with _eager_lock:
                _eager_cache[key] = exe
    if (
        key is not None
        and not (exe.ordered or primitive.multiple_results)
        and args  # an operand-free one (iota) may go onto a `set_mesh` mesh
        and all([type(x) is Array for x in args])
    ):
        _remember_hit(primitive, avals, params, exe)
    outs = exe.call([buffer_of(x) for x in args])
    return outs if primitive.multiple_results else outs[0]
