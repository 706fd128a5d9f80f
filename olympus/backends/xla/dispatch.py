"""Compiling and running programs: per-primitive executables for eager mode and
whole-program executables for jit, both through the same lowering."""

from __future__ import annotations

import os
import threading

import numpy as np

from olympus.caches import EAGER_CACHE_SIZE, BoundedCache
from olympus import caches
from olympus.ir.core import Eqn, Olympuspr, ShapedArray, Var
from olympus.backends.xla import client, compiler, host_callback
from olympus.backends.xla.array import Array, on_default_device, to_device
from olympus.backends.xla.lowering import LoweringError, build_module, returns_ordering_token
from olympus.tracer.core import aval_of
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


_TOKEN_AVAL = ShapedArray((0,), np.bool_)  # how the runtime hands back a token result


class Executable:
    """A compiled program: call it with device buffers, get Arrays back.

    A program with ordered effects (debug prints) returns its ordering token
    last; a call drops it and waits until the program has run, so its effects
    happen before anything the caller does next (another call's prints, a
    Python print)."""

    __slots__ = ("_handlers", "loaded", "ordered", "out_avals", "text")

    def __init__(self, text: str, out_avals: list[ShapedArray]):
        get = client.get_client()
        try:
            self.loaded = compiler.compile_and_load(
                get, text, client.device_list(), client.compile_options()
            )
        except Exception as err:  # XLA's own errors come as RuntimeError / XlaRuntimeError
            raise LoweringError(
                f"XLA could not compile the program: {err}\n--- StableHLO ---\n{text}"
            ) from None
        self.out_avals = out_avals
        self.text = text
        self.ordered = returns_ordering_token(text)
        self._handlers = [client.result_handler(aval) for aval in out_avals]
        if self.ordered:
            self._handlers.append(client.result_handler(_TOKEN_AVAL))

    def call(self, buffers: list) -> list[Array]:
        if self.ordered:
            return self._call_and_wait(buffers)
        outs = self.loaded.execute_sharded(buffers).consume_with_handlers(self._handlers)
        return [Array(buf, aval) for buf, aval in zip(outs, self.out_avals)]

    def _call_and_wait(self, buffers: list) -> list[Array]:
        try:
            results = self.loaded.execute_sharded(buffers, with_tokens=True)
            done = results.consume_token()
            outs = results.consume_with_handlers(self._handlers)[:-1]  # drops the token
            done.block_until_ready()
        except client.xc.XlaRuntimeError as err:  # how XLA reports a failed Python callback
            host_callback.raise_callback_error(err)
        return [Array(buf, aval) for buf, aval in zip(outs, self.out_avals)]

    def call_one(self, buffers: list) -> Array:
        """`call` for a program with exactly one output (saves the list)."""
        if self.ordered:
            return self._call_and_wait(buffers)[0]
        (out,) = self.loaded.execute_sharded(buffers).consume_with_handlers(self._handlers)
        return Array(out, self.out_avals[0])


def compile_olympuspr(olympuspr: Olympuspr, name: str = "main", donated=()) -> Executable:
    """Compiles a program whose constvars then invars become the arguments
    (`donated` ones may have their buffers reused for outputs)."""
    check_array_sizes(olympuspr, name)
    module = build_module(olympuspr, name, donated) if donated else build_module(olympuspr, name)
    return Executable(module, olympuspr.out_avals)


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
        nbytes = int(np.prod(aval.shape, dtype=np.float64)) * np.dtype(aval.dtype).itemsize
        if nbytes > limit:
            made = f" made by {eqn.primitive.name}" if eqn is not None else ""
            site = (eqn.source_info if eqn is not None else None) or user_source_info()
            where = f" at {site}" if site is not None else ""
            raise ArrayTooLargeError(
                f"{name}: the array {aval.str_short()}{made}{where} needs "
                f"{nbytes / 2**30:.1f} GiB, more than this machine's "
                f"{limit / 2**30:.1f} GiB of memory")


# ---- eager mode ------------------------------------------------------------
_eager_cache: dict = caches.register("eager executables", BoundedCache(EAGER_CACHE_SIZE))  # (primitive, avals, params) -> Executable
_eager_lock = threading.Lock()


def _eager_executable(primitive, avals: tuple, params: dict):
    out = abstract_eval(primitive, list(avals), params, user_source_info())
    out_avals = out if primitive.multiple_results else [out]
    invars = [Var(a) for a in avals]
    outvars = [Var(a) for a in out_avals]
    olympuspr = Olympuspr([], invars, [Eqn(primitive, params, invars, outvars)], outvars)
    return compile_olympuspr(olympuspr, primitive.name)


def apply_primitive(primitive, *args, **params):
    """Runs one primitive on concrete values through a cached executable.

    This is every eager op's path, so the common case (all operands Arrays,
    executable cached) touches as little Python as possible; anything else
    (NumPy or Python operands, a first call, a deleted Array) takes
    `_apply_general`.
    """
    try:
        avals = tuple([x.aval for x in args])
        buffers = [x._buf for x in args]
        exe = _eager_cache.get((primitive, avals, tuple(params.items())))
    except (AttributeError, TypeError):  # non-Array operands, unhashable params
        exe = None
    if exe is None:
        return _apply_general(primitive, args, params)
    try:
        if primitive.multiple_results:
            return exe.call(buffers)
        return exe.call_one(buffers)
    except TypeError:  # a deleted Array's buffer is None: say so plainly
        return _apply_general(primitive, args, params)


def _apply_general(primitive, args: tuple, params: dict):
    avals = tuple(map(aval_of, args))
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
    outs = exe.call([buffer_of(x) for x in args])
    return outs if primitive.multiple_results else outs[0]

