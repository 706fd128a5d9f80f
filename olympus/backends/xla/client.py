"""The PjRt client, created lazily so that `import olympus` stays fast.

This is the only module that imports jaxlib's runtime (`xla_client`); the rest
of the backend asks it for the client, devices and host-to-device transfers.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import types

import numpy as np

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
    _install_sharding_lookup(xla_client)
    return xla_client


def _install_sharding_lookup(xla_client) -> None:
    """Keeps jaxlib from searching sys.path for jax on every execution.

    jaxlib looks up `jax._src.sharding_impls.make_single_device_sharding` each
    time it hands back a result, and falls back to its own sharding when the
    import fails. Without jax installed that failed import walks sys.path on
    every call (~100 us). We register a module with just that function, and
    mark `jax` itself as absent, exactly what an import would find anyway. When
    jax is installed we leave everything alone.
    """
    name = "jax._src.sharding_impls"
    if name in sys.modules or importlib.util.find_spec("jax") is not None:
        return
    shim = types.ModuleType(name)
    shim.make_single_device_sharding = xla_client.SingleDeviceSharding
    sys.modules.setdefault("jax", None)
    sys.modules[name] = shim


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


def _init_device_state(client) -> None:
    global _default_device, _sharding, _device_list
    _default_device = client.devices()[0]
    _sharding = xc.GSPMDSharding((_default_device,), xc.OpSharding())
    _device_list = xc.DeviceList((_default_device,))


def devices() -> list:
    return list(get_client().devices())


def default_device():
    get_client()
    return _default_device


def device_list():
    get_client()
    return _device_list


def host_to_device(value: np.ndarray, aval):
    """Copies a host array (already of aval's dtype) to the default device."""
    get_client()
    return xc.batched_device_put(
        aval, _sharding, [value], [_default_device], True,
        enable_x64=dtypes.x64_enabled(),
    )
