"""The PjRt client, created lazily so that `import olympus` stays fast.

This is the only module that imports jaxlib's runtime (`xla_client`); the rest
of the backend asks it for the client, devices and host-to-device transfers.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import sys
import threading
import time

import numpy as np

from olympus import caches, config
from olympus.ir import dtypes

_lock = threading.Lock()
_client = None
xc = None  # jaxlib.xla_client, once loaded

# jaxlib logs INFO lines when a client starts (`PjRt-IFRT device count ...`);
# users should not see them. Its C++ logging reads this variable once, when the
# first jaxlib library loads, and that can be before the client starts (lowering
# LAPACK calls or `Lowered.compiler_ir` imports jaxlib.mlir), so it is set here,
# while `import olympus` runs, before anything of jaxlib is loaded.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")


def _load_xla_client():
    global xc
    from jaxlib import xla_client

    xc = xla_client
    return xla_client


class DeviceCountError(ValueError):
    """`olympus_num_cpu_devices` is not a positive whole number."""


class UnknownBackendError(ValueError):
    """A `backend=` other than the platform olympus runs on."""


_NUM_DEVICES = "olympus_num_cpu_devices"


# ---- several processes: jaxlib's distributed runtime (olympus/distributed.py) -------
class DistributedError(RuntimeError):
    """The distributed runtime could not start (or was asked to too late)."""


class CoordinatorUnreachableError(DistributedError, ConnectionError):
    """No coordinator answered at the address within the timeout."""


class PeerLostError(DistributedError):
    """Another process of the computation died or stopped answering: work
    that needs it cannot finish (this process should end)."""


_HEARTBEATS = "olympus/heartbeat/"


class _Runtime:
    """This process's place among several: its coordination client (and, in
    process 0, the coordination service the others connect to), and the
    watch on the other processes (`lost` says why one is gone, else None)."""

    def __init__(
        self,
        service,
        runtime_client,
        process_id: int,
        num_processes: int,
        address: str,
        heartbeat_timeout_s: float,
    ):
        self.service, self.client = service, runtime_client
        self.process_id, self.num_processes = process_id, num_processes
        self.address = address
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.lost: str | None = None
        self.stop = threading.Event()
        self.watcher = threading.Thread(
            target=self._watch, name="olympus-heartbeat", daemon=True
        )

    def _watch(self) -> None:
        """Publishes this process's heartbeat in the coordination service's
        key-value store and reads everyone's: a process whose count has not
        moved for `heartbeat_timeout_s` is lost (jaxlib's own heartbeats end
        the process from C++ instead, see `initialize_distributed`)."""
        interval = min(1.0, self.heartbeat_timeout_s / 4)
        now = time.monotonic()
        last = {p: (None, now) for p in range(self.num_processes)}
        del last[self.process_id]
        count = 0
        while not self.stop.wait(interval):
            count += 1
            try:
                self.client.key_value_set(
                    f"{_HEARTBEATS}{self.process_id}", str(count), allow_overwrite=True
                )
                seen = dict(self.client.key_value_dir_get(_HEARTBEATS))
            except Exception as err:  # the coordination service is gone
                self._mark_lost(
                    f"the coordinator at {self.address} stopped answering: "
                    f"{str(err).splitlines()[0][:200]}"
                )
                return
            now = time.monotonic()
            for peer, (value, since) in last.items():
                new = seen.get(f"{_HEARTBEATS}{peer}")
                if new != value:
                    last[peer] = (new, now)
                elif now - since > self.heartbeat_timeout_s:
                    self._mark_lost(
                        f"process {peer} of {self.num_processes} sent no heartbeat "
                        f"for {now - since:.1f} s (heartbeat_timeout_s="
                        f"{self.heartbeat_timeout_s:g}): it died or hangs"
                    )
                    return

    def _mark_lost(self, why: str) -> None:
        if self.stop.is_set():  # shutting down: silence is expected
            return
        self.lost = why
        logging.getLogger("olympus").error("olympus.distributed: %s", why)


_runtime: _Runtime | None = None


def initialize_distributed(
    coordinator_address: str,
    num_processes: int,
    process_id: int,
    timeout_s: int = 60,
    heartbeat_timeout_s: float = 30,
) -> None:
    """Joins this process to `num_processes` processes coordinated at
    `coordinator_address` (host:port; process 0 serves it): the public
    `olympus.distributed.initialize`. Must run before the backend starts;
    afterwards `devices()` lists every process's devices. Without an answer
    from the coordinator within `timeout_s`: CoordinatorUnreachableError.

    A process that dies or hangs is noticed within `heartbeat_timeout_s`: work
    waiting on it raises PeerLostError. jaxlib's own error handling cannot
    raise in Python: its `missed_heartbeat_callback` is called with an
    absl::Status that has no Python form, so a Python callback aborts the
    process with std::bad_cast from jaxlib's thread. Its default (used here)
    ends the process with a log naming the cause: when the coordinator
    (process 0) dies, when a process is missing at the start (after
    `timeout_s`), and, as a backstop later than ours, on missed heartbeats."""
    global _runtime
    if _client is not None:
        raise DistributedError(
            "olympus.distributed.initialize must run before the first computation "
            "(the backend has started with this process's devices only)"
        )
    if _runtime is not None:
        raise DistributedError(
            f"olympus.distributed is already initialized (process {_runtime.process_id} "
            f"of {_runtime.num_processes} at {_runtime.address})"
        )
    if not 0 <= process_id < num_processes:
        raise DistributedError(
            f"process_id {process_id} is not in 0..{num_processes - 1} (num_processes)"
        )
    if not heartbeat_timeout_s > 0:
        raise DistributedError(
            f"heartbeat_timeout_s must be positive, got {heartbeat_timeout_s!r}"
        )
    xla = (xc or _load_xla_client())._xla
    backstop = int(max(4 * heartbeat_timeout_s, heartbeat_timeout_s + 60))
    service = None
    if process_id == 0:
        service = xla.get_distributed_runtime_service(
            coordinator_address,
            num_processes,
            heartbeat_timeout=backstop,
            cluster_register_timeout=timeout_s,
            shutdown_timeout=timeout_s,
        )
    runtime_client = xla.get_distributed_runtime_client(
        coordinator_address,
        process_id,
        init_timeout=timeout_s,
        shutdown_timeout=timeout_s,
        heartbeat_timeout=backstop,
        # shutdown() waits for the others at a barrier; a lost peer never
        # comes, so leaving is ours to decide (shutdown_distributed, atexit).
        shutdown_on_destruction=False,
    )
    if service is None:
        # jaxlib's connect ends the process (a fatal log) when no coordinator
        # answers: ask first, with a plain TCP connection.
        _wait_for_coordinator(coordinator_address, process_id, num_processes, timeout_s)
    runtime_client.connect()
    _runtime = _Runtime(
        service,
        runtime_client,
        process_id,
        num_processes,
        coordinator_address,
        heartbeat_timeout_s,
    )
    _runtime.watcher.start()
    atexit.register(_at_exit)


def _wait_for_coordinator(
    address: str, process_id: int, num_processes: int, timeout_s: float
) -> None:
    """CoordinatorUnreachableError unless something accepts a TCP connection
    at `address` (host:port) within `timeout_s`."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise DistributedError(
            f"coordinator_address must be host:port, got {address!r} "
            f"(olympus.distributed.initialize)"
        )
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        try:
            with socket.create_connection((host, int(port)), timeout=max(left, 0.1)):
                return
        except OSError as err:
            if left <= 0:
                raise CoordinatorUnreachableError(
                    f"process {process_id} of {num_processes}: no coordinator "
                    f"answered at {address} within {timeout_s} s (is process 0 "
                    f"running, and the address reachable?): {err}"
                ) from None
        time.sleep(min(0.2, max(deadline - time.monotonic(), 0)))


def check_peers(what: str) -> None:
    """PeerLostError if another process is known to be gone."""
    runtime = _runtime
    if runtime is not None and runtime.lost is not None:
        raise PeerLostError(f"{what}: {runtime.lost}")


def wait_for_peers(what: str, block):
    """`block()` (a wait that needs the other processes: a cross-process
    program, the start of the backend), run on a helper thread so that this
    one can give up with PeerLostError when a process is lost meanwhile (a
    collective waiting on a dead peer never returns; its thread is left)."""
    runtime = _runtime
    if runtime is None:
        return block()
    check_peers(what)
    box: list = []
    done = threading.Event()

    def run():
        try:
            box.append((True, block()))
        except BaseException as err:  # handed to the waiting thread
            box.append((False, err))
        finally:
            done.set()

    threading.Thread(target=run, name="olympus-wait", daemon=True).start()
    while not done.wait(0.05):
        if runtime.lost is not None:
            _abandoned.append(what)
            check_peers(what)
    ok, value = box[0]
    if not ok:
        raise value
    return value


_abandoned: list = []  # waits given up on a lost process (their threads never end)


def _at_exit() -> None:
    """Leaves the runtime; with a thread still stuck in a collective on a
    lost process, ends the process here, status 1: the interpreter's
    teardown would otherwise abort in that thread (std::terminate)."""
    if _abandoned:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # a closed stream: nothing left to keep
                pass
        os._exit(1)
    shutdown_distributed()


def shutdown_distributed() -> None:
    """Leaves the distributed runtime: waits (at most `timeout_s`) for the
    other processes to leave too, unless one is lost."""
    global _runtime
    if _runtime is None:
        return
    runtime, _runtime = _runtime, None
    runtime.stop.set()
    if runtime.lost is not None:
        return  # the barrier would wait for a process that is gone
    runtime.client.shutdown()
    if runtime.service is not None:
        runtime.service.shutdown()


def distributed_initialized() -> bool:
    return _runtime is not None


def get_client():
    """The PjRt client (created on first use): the first platform of
    `olympus_platforms` that starts (the CPU, with `olympus_num_cpu_devices`
    devices, by default); both options are locked from then on."""
    global _client
    if _client is None:
        with _lock:
            if _client is None:
                _client = _make_client()
    return _client


def _make_client():
    platforms = [
        p.strip() for p in (config.read(_PLATFORMS) or "cpu").split(",") if p.strip()
    ]
    missing = []
    for platform in platforms:
        try:
            made = _cpu_client() if platform == "cpu" else _plugin_client(platform)
        except PlatformUnavailableError as err:
            missing.append(str(err))
            continue
        for reason in missing:
            logging.getLogger("olympus").warning("%s; using %s", reason, platform)
        for name in (_NUM_DEVICES, _PLATFORMS):
            config.lock(
                name,
                f"the backend has started on {platform}; set it before the "
                f"first computation (or in the environment: {name.upper()})",
            )
        _init_device_state(made)
        return made
    raise PlatformUnavailableError(
        f"no platform of {_PLATFORMS}={','.join(platforms)} could start:\n  "
        + "\n  ".join(missing)
    )


def _cpu_client():
    count = config.read(_NUM_DEVICES)
    if count < 1:
        raise DeviceCountError(
            f"{_NUM_DEVICES} (env {_NUM_DEVICES.upper()}) must be at least 1, got {count}"
        )
    xla_client = xc or _load_xla_client()
    if _runtime is None:
        made = xla_client.make_cpu_client(num_devices=count)
    else:  # one process of several: devices of all, collectives over TCP (gloo)
        runtime = _runtime
        collectives = xla_client._xla.make_gloo_tcp_collectives(
            distributed_client=runtime.client
        )
        # The devices of all processes are exchanged here: a process that died
        # after initialize would keep this waiting for minutes.
        made = wait_for_peers(
            "starting the backend with the other processes",
            lambda: xla_client.make_cpu_client(
                distributed_client=runtime.client,
                node_id=runtime.process_id,
                num_nodes=runtime.num_processes,
                collectives=collectives,
                num_devices=count,
            ),
        )
    return made


# ---- other platforms: PjRt plugins (a shared library with the PjRt C API) -----------
class PlatformUnavailableError(RuntimeError):
    """A platform asked for (olympus_platforms) has no plugin, or no hardware."""


_PLATFORMS = "olympus_platforms"
# Python packages that ship a platform's PjRt plugin, newest first, and the
# library inside them (the wheels JAX's plugins come as).
_PLUGIN_PACKAGES = {
    "cuda": (
        ["jax_cuda13_pjrt", "jax_cuda12_pjrt"],
        "xla_cuda_plugin.so",
        "jax-cuda12-pjrt (or jax-cuda13-pjrt)",
    ),
    "rocm": (
        ["jax_rocm7_pjrt", "jax_rocm60_pjrt"],
        "xla_rocm_plugin.so",
        "jax-rocm7-pjrt",
    ),
    "tpu": (["libtpu"], "libtpu.so", "libtpu"),
}
_ALIASES = {"gpu": "cuda"}


def plugin_library(platform: str) -> str | None:
    """The path of `platform`'s PjRt plugin: from PJRT_NAMES_AND_LIBRARY_PATHS
    (`name:path,...`, as JAX reads it), else an installed plugin package."""
    for entry in os.environ.get("PJRT_NAMES_AND_LIBRARY_PATHS", "").split(","):
        name, _, path = entry.partition(":")
        if name.strip() == platform and path:
            return path
    import importlib.util

    packages, library, _ = _PLUGIN_PACKAGES.get(platform, ((), "", ""))
    for package in packages:
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            path = os.path.join(folder, library)
            if os.path.exists(path):
                return path
    return None


def _plugin_client(platform: str):
    platform = _ALIASES.get(platform, platform)
    path = plugin_library(platform)
    if path is None:
        wheel = _PLUGIN_PACKAGES.get(platform, (None, None, None))[2]
        how = (
            f"install the {wheel} wheel matching jaxlib {_jaxlib_version()}"
            if wheel
            else "name its library in PJRT_NAMES_AND_LIBRARY_PATHS=name:/path/plugin.so"
        )
        raise PlatformUnavailableError(
            f"platform {platform!r}: no PjRt plugin found ({how})"
        )
    xla_client = xc or _load_xla_client()
    try:
        if not xla_client.pjrt_plugin_loaded(platform):
            xla_client.load_pjrt_plugin_dynamically(platform, path)
        options = (
            xla_client.generate_pjrt_gpu_plugin_options()
            if platform in ("cuda", "rocm")
            else None
        )
        return xla_client.make_c_api_client(platform, options)
    except Exception as err:  # the plugin's own report: no driver, no device, ...
        raise PlatformUnavailableError(
            f"platform {platform!r}: the PjRt plugin {path} could not start a client "
            f"(is its hardware and driver present?): {str(err).splitlines()[0][:300]}"
        ) from None


def _jaxlib_version() -> str:
    import jaxlib

    return jaxlib.__version__


_default_device = None
_sharding = None
_device_list = None
_copy_during_call = None  # xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


def _init_device_state(client) -> None:
    global _default_device, _sharding, _device_list, _copy_during_call
    _default_device = client.local_devices()[0]
    _sharding = xc.GSPMDSharding((_default_device,), xc.OpSharding())
    _device_list = xc.DeviceList((_default_device,))
    _copy_during_call = xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


def _check_backend(backend) -> None:
    if backend is not None and backend != get_client().platform:
        raise UnknownBackendError(
            f"unknown backend {backend!r}; olympus runs on {get_client().platform!r} "
            f"(olympus_platforms chooses it)"
        )


class _DeviceMeta(type):
    """isinstance against jaxlib's Device class, loaded only when asked (so
    `import olympus` does not load jaxlib)."""

    def __instancecheck__(cls, x) -> bool:
        return isinstance(x, _load_xla_client().Device)

    def __subclasscheck__(cls, sub) -> bool:
        return isinstance(sub, type) and issubclass(sub, _load_xla_client().Device)


class Device(metaclass=_DeviceMeta):
    """`olympus.Device`: the type of `olympus.devices()`'s entries (jaxlib's
    device, as jax.Device): `id`, `platform`, `device_kind`, `process_index`,
    `host_id`, `local_hardware_id`, `client`, `memory_stats()`, ..."""

    __slots__ = ()


def devices(backend: str | None = None) -> list:
    """Every device of every process.

    Devices are what `device_put` and shardings place arrays on.

    Args:
      backend: a platform name; None for the default one.

    Returns:
      A list of Device objects ordered by id.

    Raises:
      UnknownBackendError: `backend` names a platform olympus is not running on.

    Example:
      >>> olympus.devices()[0].id
      0
    """
    _check_backend(backend)
    return list(get_client().devices())


def local_devices(
    process_index: int | None = None,
    backend: str | None = None,
    host_id: int | None = None,
) -> list:
    """The devices attached to one process.

    Args:
      process_index: which process (None: this one).
      backend: a platform name; None for the default one.
      host_id: JAX's older name for process_index.

    Returns:
      A list of Device objects.

    Raises:
      UnknownBackendError: `backend` names a platform olympus is not running on.

    Example:
      >>> olympus.local_devices()[0] == olympus.devices()[0]
      True
    """
    _check_backend(backend)
    process_index = host_id if process_index is None else process_index
    index = get_client().process_index() if process_index is None else process_index
    return [d for d in get_client().devices() if d.process_index == index]


def device_count(backend: str | None = None) -> int:
    """How many devices all processes have together.

    Args:
      backend: a platform name; None for the default one.

    Returns:
      The number of devices, an int (>= 1).

    Raises:
      UnknownBackendError: `backend` names a platform olympus is not running on.

    Example:
      >>> olympus.device_count() >= 1
      True
    """
    _check_backend(backend)
    return get_client().device_count()


def local_device_count(backend: str | None = None) -> int:
    """How many devices this process has.

    Args:
      backend: a platform name; None for the default one.

    Returns:
      The number of this process's devices, an int.

    Raises:
      UnknownBackendError: `backend` names a platform olympus is not running on.

    Example:
      >>> olympus.local_device_count() == len(olympus.local_devices())
      True
    """
    _check_backend(backend)
    return get_client().local_device_count()


def process_index(backend: str | None = None) -> int:
    """This process's index among the processes of a computation.

    Args:
      backend: a platform name; None for the default one.

    Returns:
      An int in range(process_count()); 0 when running alone.

    Raises:
      UnknownBackendError: `backend` names a platform olympus is not running on.

    Example:
      >>> olympus.process_index()
      0
    """
    _check_backend(backend)
    return get_client().process_index()


def process_count(backend: str | None = None) -> int:
    """How many processes share the devices.

    Args:
      backend: a platform name; None for the default one.

    Returns:
      1 without a distributed runtime (olympus.distributed), else the count.

    Raises:
      UnknownBackendError: `backend` names a platform olympus is not running on.

    Example:
      >>> olympus.process_count()
      1
    """
    _check_backend(backend)
    return len({d.process_index for d in get_client().devices()})


def is_addressable(device) -> bool:
    """Whether this process can read and write `device`'s memory."""
    return device.process_index == get_client().process_index()


def default_device():
    get_client()
    return _default_device


def device_list():
    get_client()
    return _device_list


def compile_options():
    """Options for a program on the default device. XLA assigns device id 0
    unless told otherwise, which is another process's device in processes
    after the first (the default options are kept where id 0 is right, so
    persistent-cache keys stay as they were)."""
    options = xc.CompileOptions()
    if default_device().id != 0:
        options.device_assignment = xc.DeviceAssignment.create(
            np.array([[_default_device.id]])
        )
    return options


def host_to_device(value: np.ndarray, aval, *, share: bool = False):
    """Copies a host array (already of aval's dtype) to the default device.

    The copy is made during the call: jaxlib's default (ZERO_COPY) makes the
    device buffer *alias* a 64-byte-aligned NumPy array on the CPU, so writing
    to the NumPy array later would change an immutable Array (or the input of
    a jitted call still running). `share=True` asks for that aliasing, for a
    value no one else holds or writes (the interpreter tier's results). x64
    canonicalization stays off (True): the value already has aval's dtype, so
    jaxlib must not narrow it.
    """
    if _client is None:
        get_client()
    return xc.batched_device_put(
        aval,
        _sharding,
        [value],
        [_default_device],
        True,
        False,
        xc.HostBufferSemantics.ZERO_COPY if share else _copy_during_call,
        True,
    )


def release_dropped_host_arrays() -> None:
    """Lets go of the host arrays of device buffers already deleted: jaxlib
    drops a shared (ZERO_COPY) NumPy array's reference later, at its next
    call, when the buffer died without the GIL; the interpreter tier's memory
    arena (olympus/backends/interpreted.py) asks before it looks for free
    memory."""
    if xc is not None:
        xc._xla.collect_garbage()


# ---- arrays over several devices --------------------------------------------
# jaxlib sharding objects by layout: immutable, a few per mesh, not compiled
# code, so not among the caches olympus.clear_caches() empties.
_jax_shardings: dict = {}


def jax_sharding(devices: tuple, hlo_text: str):
    """jaxlib's sharding object for `devices` laid out as `hlo_text` says
    (what multi-device jaxlib arrays and result handlers carry)."""
    key = (devices, hlo_text)
    found = _jax_shardings.get(key)
    if found is None:
        get_client()
        found = xc.GSPMDSharding(devices, xc.HloSharding.from_string(hlo_text))
        _jax_shardings[key] = found
    return found


def host_to(value: np.ndarray, aval, device):
    """`host_to_device` onto any one device."""
    if device == default_device():
        return host_to_device(value, aval)
    return xc.batched_device_put(
        aval,
        jax_sharding((device,), "{replicated}"),
        [value],
        [device],
        True,
        host_buffer_semantics=_copy_during_call,
        enable_x64=dtypes.x64_enabled(),
    )


def assemble(aval, devices: tuple, hlo_text: str, shards: list):
    """One jaxlib array of `aval` from one single-device array per device of
    `devices` (in that order), laid out as `hlo_text`: what an SPMD
    executable takes as an argument."""
    from jaxlib import _jax

    return _jax.ArrayImpl(aval, jax_sharding(devices, hlo_text), shards, True, True)


def shards_of(buf) -> list:
    """The single-device arrays of a jaxlib array, in its devices' order."""
    return list(buf._arrays)


def result_handler(aval, devices: tuple | None = None, hlo_text: str | None = None):
    """Turns an executable's output buffer into a jaxlib array of `aval`, on
    the default device or, given them, over `devices` as `hlo_text` lays it out.

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
    sharding = _sharding if devices is None else jax_sharding(devices, hlo_text)
    return xc._xla.array_result_handler(aval, sharding, True, True)


# dtypes the buffer protocol cannot describe (a set: a tuple's == tests cost 0.6 us)
ML_FLOATS = frozenset(dtypes.ml_dtypes_floats)


class HostReadError(RuntimeError):
    """An Array whose buffer NumPy cannot read: jaxlib gives the buffer
    protocol only for CPU buffers, and NumPy would otherwise make a 0-d
    object array of it (a silent wrong answer)."""


def raise_unreadable(buf, aval):
    """Raises HostReadError for `buf`, an array of `aval` NumPy read as an
    object (its buffer is on a device other than the CPU)."""
    raise HostReadError(
        f"np.asarray of an Array {aval.str_short()} on {getattr(buf, 'devices', lambda: '?')()}: "
        f"olympus reads arrays back through the buffer protocol, which jaxlib gives only "
        f"for CPU buffers; olympus cannot yet read an array on another device back "
        f"(its GPU/TPU path is untested)"
    )


def host_array(buf, aval, device=None) -> np.ndarray:
    """A NumPy copy of a single-device buffer holding an array of `aval`
    (on `device`, the default device if None).

    NumPy's own dtypes come through the buffer protocol. jaxlib's host-copy
    methods are avoided: they import jax (see `result_handler`). ml_dtypes
    floats (bf16, fp8), which the buffer protocol cannot describe, are
    bitcast on the device to unsigned integers of their width and viewed as
    their dtype on the host, so every bit (NaN payloads, -0.0) comes back.
    """
    if aval.dtype not in ML_FLOATS:
        value = np.asarray(buf)
        if value.dtype.kind == "O":
            raise_unreadable(buf, aval)
        # a 0-d piece on a non-default device reads back as shape (1,)
        return value if value.shape == aval.shape else value.reshape(aval.shape)
    device = default_device() if device is None else device
    as_bits = _bitcast_executable(aval, device).execute_sharded([buf])
    bits_aval = _bits_like(aval)
    handler = (
        result_handler(bits_aval)
        if device == default_device()
        else (
            xc._xla.array_result_handler(
                bits_aval, jax_sharding((device,), "{replicated}"), True, True
            )
        )
    )
    (bits,) = as_bits.consume_with_handlers([handler])
    return np.asarray(bits).view(aval.dtype)


_bitcasts: dict = caches.register("bitcast executables", {})
_BITS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16)}  # itemsize -> carrier


def _bits_like(aval):
    return type(aval)(aval.shape, _BITS[aval.dtype.itemsize])


def _bitcast_executable(aval, device):
    key = (aval.shape, aval.dtype, device)
    exe = _bitcasts.get(key)
    if exe is None:
        from olympus.backends.xla.lowering import tensor_type

        narrow, bits = tensor_type(aval), tensor_type(_bits_like(aval))
        text = (
            f"func.func public @main(%x: {narrow}) -> {bits} {{\n"
            f"  %0 = stablehlo.bitcast_convert %x : ({narrow}) -> {bits}\n"
            f"  return %0 : {bits}\n}}\n"
        )
        options = xc.CompileOptions()
        options.device_assignment = xc.DeviceAssignment.create(np.array([[device.id]]))
        exe = get_client().compile_and_load(text, xc.DeviceList((device,)), options)
        _bitcasts[key] = exe
    return exe


# ---- DLPack -------------------------------------------------------------------
_DLPACK_DEVICE_TYPES = {"cpu": 1, "cuda": 2, "gpu": 2, "rocm": 10}


def dlpack_device(device) -> tuple[int, int]:
    """DLPack's (device type, device id) of a jaxlib device."""
    kind = _DLPACK_DEVICE_TYPES.get(device.platform)
    if kind is None:
        raise BufferError(f"DLPack has no device type for platform {device.platform!r}")
    return kind, device.local_hardware_id if kind != 1 else 0


def to_dlpack(buf, stream: int | None = None):
    """A DLPack capsule sharing a single-device buffer's memory (no copy)."""
    from jaxlib import _jax

    return _jax.buffer_to_dlpack_managed_tensor(buf, stream=stream)


def from_dlpack(capsule, device=None, copy: bool | None = None):
    """A single-device buffer on `device` (the default one) from a DLPack
    capsule; with `copy` not True, it shares the producer's memory when it can."""
    from jaxlib import _jax

    device = default_device() if device is None else device
    return _jax.dlpack_managed_tensor_to_buffer(capsule, device, None, copy)
