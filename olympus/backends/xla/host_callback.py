"""Python callbacks inside compiled programs (for `olympus.debug.print`).

The CPU client has a typed-FFI custom-call target, `xla_ffi_python_cpu_callback`,
that calls the Python function at position `index` of the `host_callbacks`
list given to `compile_and_load` (BACKEND_NOTES.md). Lowering rules do not
know that list, so `emit_host_callback` writes a process-wide callback id as
the index; `compile_and_load` renumbers the ids of one module to 0..n-1 and
passes the matching functions.

Order: each callback takes the current ordering token and returns the next
(`Emitter.token`, see lowering.py), so XLA runs the callbacks in program order
(without tokens it reorders them; checked on this machine), across `cond`
branches, loop bodies and nested jits too: their lowerings carry the token.
"""

from __future__ import annotations

import contextlib
import re
import threading
from typing import Callable, Sequence

from olympus.backends.xla import client
from olympus.backends.xla.lowering import TOKEN_TYPE, LoweringError, tensor_type

TARGET = "xla_ffi_python_cpu_callback"
_INDEX = re.compile(r"backend_config = \{index = (\d+) : ui64\}")


class HostCallbackError(RuntimeError):
    """A Python callback (`debug.print`, `debug.callback`, `pure_callback`)
    raised while a compiled program ran; the message holds the callback's own
    traceback."""


@contextlib.contextmanager
def callback_errors():
    """Around running an executable (one device's or an SPMD one): XLA's
    report of a failed callback, an XlaRuntimeError, re-raised as a
    HostCallbackError."""
    try:
        yield
    except client.xc.XlaRuntimeError as err:
        if "CpuCallback error" in str(err):
            raise HostCallbackError(
                f"a host callback (olympus.debug.print / debug.callback / "
                f"pure_callback) raised inside a compiled program:\n{err}"
            ) from None
        raise


def wait_for(done, outs) -> None:
    """Waits for an execution's token `done`, then its outputs: the token's
    wait raises a failure on any device (a host callback's error), where one
    device's outputs may not."""
    done.block_until_ready()
    for out in outs:
        out.block_until_ready()


_lock = threading.Lock()
_callbacks: list[Callable] = []  # process-wide id -> function
_ids: dict[int, int] = {}  # id(function) -> process-wide id
_raw_ids: set[int] = set()  # ids of callables that take and return what the call passes
_context = None


def callback_id(function: Callable, raw: bool = False) -> int:
    """A stable id for `function` (kept alive for the life of the process);
    `raw`: it takes and returns exactly what the custom call passes (else it
    takes the operands after the token, returns nothing, and is wrapped)."""
    with _lock:
        key = id(function)
        if key not in _ids:
            _ids[key] = len(_callbacks)
            _callbacks.append(function)
            if raw:
                _raw_ids.add(_ids[key])
        return _ids[key]


def emit_host_callback(emitter, function: Callable, operands: Sequence[str]) -> None:
    """Emits a call of `function(*operand_arrays)` for its side effect, next in
    the chain of the emitter's ordering token."""
    if emitter.token is None:
        raise LoweringError(
            f"debug_callback ({getattr(function, '__name__', function)}): no ordering token "
            f"reaches this region; the lowering of the primitive holding it must carry "
            f"the token (see olympus/ir/effects.py)"
        )
    attrs = (
        f'call_target_name = "{TARGET}", api_version = 4 : i32, '
        f"has_side_effect = true, backend_config = {{index = {callback_id(function)} : ui64}}"
    )
    if emitter.spmd:  # over several devices: the callback runs once, on the first
        attrs += ", sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh, []>]>"
    (emitter.token,) = emitter.op_typed(
        "stablehlo.custom_call", [emitter.token, *operands], [TOKEN_TYPE], attrs
    )


def emit_pure_host_callback(
    emitter, function: Callable, operands: Sequence[str], result_avals
) -> list[str]:
    """Emits a call of `function(*operand_arrays)`, which returns the arrays
    of `result_avals`; no token and no side effect, so XLA may drop an unused
    call or merge equal ones (`olympus.pure_callback`)."""
    attrs = (
        f'call_target_name = "{TARGET}", api_version = 4 : i32, '
        f"has_side_effect = false, "
        f"backend_config = {{index = {callback_id(function, raw=True)} : ui64}}"
    )
    if emitter.spmd:  # over several devices: called once, on the first
        on_first = ", ".join(["<@maximal_mesh, []>"] * len(result_avals))
        attrs += f", sdy.sharding = #sdy.sharding_per_value<[{on_first}]>"
    return emitter.op_typed(
        "stablehlo.custom_call",
        list(operands),
        [tensor_type(a) for a in result_avals],
        attrs,
    )


def emit_io_host_callback(
    emitter, function: Callable, operands: Sequence[str], result_avals
) -> list[str]:
    """Emits a call of `function(*operand_arrays)` for its side effect and its
    results (`olympus.experimental.io_callback`), next in the chain of the
    emitter's ordering token, so it runs once per execution, in order."""
    if emitter.token is None:
        raise LoweringError(
            f"io_callback ({getattr(function, '__name__', function)}): no ordering token "
            f"reaches this region; the lowering of the primitive holding it must carry "
            f"the token (see olympus/ir/effects.py)"
        )

    def with_token(token, *arrays):
        return (token, *function(*arrays))

    key = _io_wrappers.setdefault(id(function), (function, with_token))[1]
    attrs = (
        f'call_target_name = "{TARGET}", api_version = 4 : i32, '
        f"has_side_effect = true, "
        f"backend_config = {{index = {callback_id(key, raw=True)} : ui64}}"
    )
    if emitter.spmd:
        on_first = ", ".join(["<@maximal_mesh, []>"] * (1 + len(result_avals)))
        attrs += f", sdy.sharding = #sdy.sharding_per_value<[{on_first}]>"
    emitter.token, *outs = emitter.op_typed(
        "stablehlo.custom_call",
        [emitter.token, *operands],
        [TOKEN_TYPE, *(tensor_type(a) for a in result_avals)],
        attrs,
    )
    return outs


_io_wrappers: dict = {}  # id(function) -> (function, its token-passing wrapper)


def uses_host_callbacks(text: str) -> bool:
    return TARGET in text


def _token_passing(function: Callable) -> Callable:
    """The FFI passes the token as None first and wants one back."""

    def call(token, *arrays):
        function(*arrays)
        return (token,)

    return call


def _renumber(text: str) -> tuple[str, list[Callable]]:
    local: dict[int, int] = {}

    def local_index(m: re.Match) -> str:
        global_id = int(m.group(1))
        local.setdefault(global_id, len(local))
        return f"backend_config = {{index = {local[global_id]} : ui64}}"

    lines = [
        _INDEX.sub(local_index, line) if TARGET in line else line
        for line in text.split("\n")
    ]
    functions = [
        _callbacks[g] if g in _raw_ids else _token_passing(_callbacks[g])
        for g in sorted(local, key=local.get)
    ]
    return "\n".join(lines), functions


def mlir_context():
    """An MLIR context that parses StableHLO (created once)."""
    global _context
    if _context is None:
        from jaxlib.mlir import ir
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext
        from jaxlib.mlir.dialects import chlo, sdy, stablehlo

        context = ir.Context()
        registry = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(registry)
        context.append_dialect_registry(registry)
        context.load_all_available_dialects()
        stablehlo.register_dialect(context)
        chlo.register_dialect(context)
        sdy.register_dialect(context)  # Shardy: meshes, shardings (spmd.py)
        _context = context
    return _context


def compile_and_load(client, text: str, devices, options):
    """Compiles a module that calls host callbacks (the overload wants ir.Module)."""
    from jaxlib.mlir import ir

    text, functions = _renumber(text)
    with mlir_context():
        module = ir.Module.parse(text)
        return client.compile_and_load(
            module, devices, options, host_callbacks=functions
        )
