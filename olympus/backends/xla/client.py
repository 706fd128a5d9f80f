"""The PjRt client, created lazily so that `import olympus` stays fast.

This is the only module that imports jaxlib's runtime (`xla_client`); the rest
of the backend asks it for the client, devices and host-to-device transfers.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from olympus import caches
from olympus.ir import dtypes

_lock = threading.Lock()
_client = None
xc = None  # jaxlib.xla_client, once loaded


def _load_xla_client():
    global xc
    # jaxlib logs a few INFO lines when a client starts; users should not see them.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    from jaxlib import xla_client

    xc = xla_client
    return xla_client


def get_client():
    """The CPU PjRt client (created on first use)."""
    global _client
    if _client is None:
        with _lock:
            if _client is None:
                xla_client = xc or _load_xla_client()
                _client = xla_client.make_cpu_client()
                _init_device_state(_client)
    return _client


_default_device = None
_sharding = None
_device_list = None
_copy_during_call = None  # xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


def _init_device_state(client) -> None:
    global _default_device, _sharding, _device_list, _copy_during_call
    _default_device = client.devices()[0]
    _sharding = xc.GSPMDSharding((_default_device,), xc.OpSharding())
    _device_list = xc.DeviceList((_default_device,))
    _copy_during_call = xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


def devices() -> list:
    return list(get_client().devices())


def default_device():
    get_client()
    return _default_device


def device_list():
    get_client()
    return _device_list


def result_handler(aval):
    """Turns an executable's output buffer into a jaxlib array of `aval`.

    Executables hand their results back through these handlers
    (`ExecuteResults.consume_with_handlers`) rather than through
    `disassemble_into_single_device_arrays`: the latter asks for
    `jax._src.sharding_impls.make_single_device_sharding` on every call, which
    imports all of jax when it is installed (about a second, and olympus must
    never import jax) and walks sys.path on every call when it is not. A
    handler carries our own sharding, so nothing is looked up, and it is
    cheaper too (measured in benchmarks/README.md).
    """
    get_client()
    return xc._xla.array_result_handler(aval, _sharding, True, True)


def host_to_device(value: np.ndarray, aval):
    """Copies a host array (already of aval's dtype) to the default device.

    The copy is made during the call: jaxlib's default (ZERO_COPY) makes the
    device buffer *alias* a 64-byte-aligned NumPy array on the CPU, so writing
    to the NumPy array later would change an immutable Array (or the input of
    a jitted call still running). x64 canonicalization stays off (True): the
    value already has aval's dtype, so jaxlib must not narrow it.
    """
    if _client is None:
        get_client()
    return xc.batched_device_put(
        aval, _sharding, [value], [_default_device], True, False, _copy_during_call, True
    )


def host_array(buf, aval) -> np.ndarray:
    """A NumPy copy of a device buffer holding an array of `aval`.

    NumPy's own dtypes come through the buffer protocol. jaxlib's host-copy
    methods are avoided: they import jax (see `result_handler`). ml_dtypes
    floats (bf16, fp8), which the buffer protocol cannot describe, are
    bitcast on the device to unsigned integers of their width and viewed as
    their dtype on the host, so every bit (NaN payloads, -0.0) comes back.
    """
    if aval.dtype not in dtypes.ml_dtypes_floats:
        return np.asarray(buf)
    as_bits = _bitcast_executable(aval).execute_sharded([buf])
    (bits,) = as_bits.consume_with_handlers([result_handler(_bits_like(aval))])
    return np.asarray(bits).view(aval.dtype)


_bitcasts: dict = caches.register("bitcast executables", {})
_BITS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16)}  # itemsize -> carrier


def _bits_like(aval):
    return type(aval)(aval.shape, _BITS[aval.dtype.itemsize])


def _bitcast_executable(aval):
    key = (aval.shape, aval.dtype)
    exe = _bitcasts.get(key)
    if exe is None:
        from olympus.backends.xla.lowering import tensor_type

        narrow, bits = tensor_type(aval), tensor_type(_bits_like(aval))
        text = (
            f"func.func public @main(%x: {narrow}) -> {bits} {{\n"
            f"  %0 = stablehlo.bitcast_convert %x : ({narrow}) -> {bits}\n"
            f"  return %0 : {bits}\n}}\n"
        )
        exe = get_client().compile_and_load(text, _device_list, xc.CompileOptions())
        _bitcasts[key] = exe
    return exe
