"""`olympus.Array`: an array whose data lives on one device or several.

Most arrays sit whole on the default device: `_buf` holds their PjRt buffer,
which is what single-device executables (eager ops, unsharded jit) take, and
`_sharding` is None (or the one-device sharding they were put with).
An array placed anywhere else (split over a mesh, replicated, or whole on
another device) has `_buf = None` and keeps one jaxlib array spanning its
devices in `_global`, with our `_sharding`; a single-device executable given
it fails fast on the None, and the caller's slow path then gathers it to the
default device (eager ops) or compiles for its sharding (jit).
Operators come from olympus.numpy.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ShapedArray
from olympus.backends.xla import client
from olympus.backends.xla.fastpath import ArrayBase, configure_array
from olympus.backends.xla.sharding import (
    Sharding,
    SingleDeviceSharding,
    explicit_aval,
    same_layout,
)
from olympus.tracer.core import AvalProperties, Tracer, aval_of, user_source_info

_ML_FLOATS = client.ML_FLOATS  # read back through a bitcast (client.host_array)


class ShardMismatchError(ValueError):
    """Single-device arrays that do not make up the array asked for."""


class NotAddressableError(ValueError):
    """Reading on the host an array part of which lives in other processes."""


@dataclasses.dataclass(frozen=True)
class Shard:
    """One device's piece of an Array: `data` is `array[index]` on `device`."""

    device: object
    index: tuple
    data: Array


class Array(ArrayBase, AvalProperties):
    """A device-resident array, `Array(buf, aval)`; `np.asarray(x)` reads it
    on the host (a read-only array, on the CPU a view of the device buffer,
    as JAX's: through the buffer protocol where fastpath's C type gives it,
    else `__array__`, which keeps the host copy in `_npy`). The fields
    (`aval`, `_buf`, `_npy`, `_global`, `_sharding`) are ArrayBase's."""

    __slots__ = ()
    __array_priority__ = 100

    # ---- properties (shape, dtype, ndim, size, weak_type: AvalProperties) ----
    @property
    def nbytes(self) -> int:
        return self.aval.size * self.aval.dtype.itemsize

    def devices(self) -> set:
        return self.sharding.device_set

    @property
    def sharding(self) -> Sharding:
        return self._sharding or default_sharding()

    @property
    def is_fully_replicated(self) -> bool:
        return self.sharding.is_fully_replicated_for(self.ndim)

    @property
    def is_fully_addressable(self) -> bool:
        """Whether every piece lives on this process's devices."""
        return all(map(client.is_addressable, self.sharding._device_assignment))

    @property
    def addressable_shards(self) -> list[Shard]:
        """The pieces on this process's devices, in the sharding's device order."""
        if self._sharding is None:
            return [Shard(client.default_device(), (slice(None),) * self.ndim, self)]
        indices = self._sharding.devices_indices_map(self.shape)
        shard_aval = self.aval.update(shape=self._sharding.shard_shape(self.shape))
        devices = [
            d for d in self._sharding._device_assignment if client.is_addressable(d)
        ]
        bufs = (
            [self._buf]
            if self._buf is not None
            else client.shards_of(self._live_global())
        )
        return [
            Shard(d, indices[d], _on_device(b, shard_aval, d))
            for d, b in zip(devices, bufs)
        ]

    def _live_global(self):
        if self._global is None:
            raise RuntimeError(
                "this Array was donated to a jitted computation and deleted"
            )
        return self._global

    # ---- host conversion ---------------------------------------------------
    def _value(self) -> np.ndarray:
        """This array on the host, read once and kept, read-only (as JAX's):
        on the CPU a view of the device buffer itself."""
        npy = self._npy
        return npy if npy is not None else self.__array__()

    def _read_back(self) -> np.ndarray:
        """`_value`'s first read where `__array__`'s inline one does not
        apply: bf16/fp8 (client.host_array), placed and deleted arrays."""
        npy = self._host_copy() if self._global is None else self._gathered()
        if npy.flags.writeable:
            npy.flags.writeable = False
        return npy

    def _host_copy(self) -> np.ndarray:
        if self._buf is None:
            raise RuntimeError(
                "this Array was donated to a jitted computation and deleted"
            )
        # client.host_array handles bf16/fp8, which the buffer protocol
        # lacks, without jaxlib's host-copy methods (they import jax).
        return client.host_array(self._buf, self.aval)

    def _gathered(self) -> np.ndarray:
        """The whole array on the host, from one copy of each piece (all of
        which must be on this process's devices)."""
        out = np.empty(self.shape, self.dtype)
        done = set()
        shards = self.addressable_shards
        needed = math.prod(self._sharding._tiling(self.ndim).tiles)
        if len({tuple((s.start, s.stop) for s in sh.index) for sh in shards}) < needed:
            raise NotAddressableError(
                f"an Array {self.aval.str_short()} laid out as {self._sharding} has pieces "
                f"on other processes' devices; read this process's pieces from "
                f"`addressable_shards`, or lay it out replicated (e.g. out_shardings)"
            )
        for shard in shards:
            key = tuple((s.start, s.stop) for s in shard.index)
            if key not in done:
                data = shard.data
                value = (
                    data._host_copy()
                    if data._global is None
                    else client.host_array(data._global, data.aval, shard.device)
                )
                out[shard.index] = value
                done.add(key)
        return out

    def __array__(self, dtype=None, copy=None):
        value = self._npy
        if value is None:  # the first read, inline: np.asarray(result) is hot
            buf, aval = self._buf, self.aval  # (a placed array's _buf is None)
            if buf is not None and aval.dtype not in _ML_FLOATS:
                # jaxlib's buffer protocol waits for the buffer and hands a
                # read-only view of it (client.host_array's common case)
                value = np.asarray(buf)
                if value.dtype.kind == "O":  # not a CPU buffer: no buffer protocol
                    client.raise_unreadable(buf, aval)
                if not aval.shape and value.shape:  # a 0-d shard reads as (1,)
                    value = value.reshape(())
            else:
                value = self._read_back()
            self._npy = value
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        return value.copy() if copy else value

    def block_until_ready(self) -> Array:
        # A ready buffer is not waited on: waiting releases the GIL, which a
        # background compile (tiered execution) then holds for milliseconds.
        buf = self._buf if self._buf is not None else self._live_global()
        if not buf.is_ready():
            buf.block_until_ready()
        return self

    def is_deleted(self) -> bool:
        return self._buf is None and self._global is None

    def delete(self) -> None:
        for buf in (self._buf, self._global):
            if buf is not None:
                buf.delete()
        self._buf = self._global = None
        self._npy = None  # a host copy read before must not outlive the Array

    def item(self, *args):
        return self._value().item(*args)

    def tolist(self):
        return self._value().tolist()

    def copy(self) -> Array:
        """A new Array with its own buffer (as JAX's), so that donating one of
        the two to a jitted call leaves the other alive."""
        copied = to_device(self._value(), self.aval)
        return copied if self._sharding is None else put(copied, self._sharding)

    def __bool__(self) -> bool:
        return bool(self._value())

    def __int__(self) -> int:
        return int(self._value())

    def __float__(self) -> float:
        return float(self._value())

    def __complex__(self) -> complex:
        return complex(self._value())

    def __index__(self) -> int:
        if not dtypes.is_integer(self.dtype):
            raise TypeError(
                f"only integer arrays can be used as an index, got {self.dtype}"
            )
        return int(self._value())

    def __hash__(self):
        raise TypeError("unhashable type: 'Array'")

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self._value()[()], spec)
        return format(str(self), spec)

    def __str__(self) -> str:
        return str(self._value())

    def __repr__(self) -> str:
        value = self._value()
        body = np.array2string(value, prefix="Array(", separator=", ")
        weak = ", weak_type=True" if self.aval.weak_type else ""
        # "[]" alone hides the shape of an empty array, so NumPy (and we) spell it out.
        shape = (
            f", shape={value.shape}" if value.size == 0 and value.shape != (0,) else ""
        )
        return f"Array({body}{shape}, dtype={value.dtype.name}{weak})"

    def _repr_html_(self) -> str:
        """A small table of the values, for notebooks (olympus.ir.html)."""
        from olympus.ir.html import array_html

        return array_html(self._value(), self.aval.str_short())

    # ---- the Array API standard: device and DLPack ------------------------------
    @property
    def device(self):
        """The device holding this array, or its sharding when it spans several."""
        devices = self.sharding._device_assignment
        return devices[0] if len(devices) == 1 else self.sharding

    def to_device(self, device, /, *, stream=None) -> Array:
        """A copy of this array on `device` (a device or a sharding)."""
        if not isinstance(device, Sharding):
            device = SingleDeviceSharding(device)
        return put(self, device)

    def _single_device_buffer(self):
        devices = self.sharding._device_assignment
        if len(devices) != 1:
            raise BufferError(
                f"DLPack exports an array on one device; this one spans "
                f"{len(devices)} ({self.sharding})"
            )
        return self._buf if self._buf is not None else self._live_global()

    def __dlpack_device__(self) -> tuple[int, int]:
        self._single_device_buffer()
        return client.dlpack_device(self.sharding._device_assignment[0])

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this array; it shares the device memory unless
        `copy` is True or `dl_device` asks for the host (a NumPy copy)."""
        buf = self._single_device_buffer()
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            if tuple(dl_device) != (1, 0) or copy is False:
                raise BufferError(
                    f"cannot export to DLPack device {dl_device} "
                    f"without a copy (copy={copy})"
                )
            return self._value().copy().__dlpack__()
        if copy:
            buf = client.host_to(
                self._value(), self.aval, self.sharding._device_assignment[0]
            )
        return client.to_dlpack(buf, stream)

    def __reduce__(self):
        return (to_device, (self._value(),))


configure_array(Array)


def to_device(x, aval: ShapedArray | None = None) -> Array:
    """An Array holding `x` (NumPy array or Python/NumPy scalar) on the device."""
    if isinstance(x, Array):
        return x
    aval = aval or aval_of(x)
    return Array(client.host_to_device(np.asarray(x, dtype=aval.dtype), aval), aval)


_default_sharding = None
# Set once an Array with a `_sharding` exists: until then jit's call signature
# need not look for layouts (olympus/stages.py), keeping one-device calls as fast.
layouts_in_use = False


def default_sharding() -> SingleDeviceSharding:
    """Where arrays live unless placed elsewhere: the whole of each on device 0."""
    global _default_sharding
    if _default_sharding is None:
        _default_sharding = SingleDeviceSharding(client.default_device())
    return _default_sharding


def placed_array(global_buf, aval: ShapedArray, sharding: Sharding) -> Array:
    """An Array over `sharding`'s devices from one jaxlib array spanning them."""
    out = Array(None, aval)
    out._global = global_buf
    return _laid_out(out, sharding)


def _laid_out(out: Array, sharding: Sharding | None) -> Array:
    global layouts_in_use
    if sharding is not None:
        layouts_in_use = True
        out.aval = explicit_aval(out.aval, sharding)  # explicit mode: in the type
    out._sharding = sharding
    return out


def _on_device(buf, aval: ShapedArray, device) -> Array:
    if device == client.default_device():
        return Array(buf, aval)
    return placed_array(buf, aval, SingleDeviceSharding(device))


def on_default_device(x: Array):
    """The buffer of `x` on the default device, gathering a placed array there
    (what eager ops do with arrays on other devices)."""
    if x._buf is not None:
        return x._buf
    return client.host_to_device(x._value(), x.aval)


def hlo_text_of(sharding: Sharding, ndim: int) -> str:
    return sharding._tiling(ndim).hlo_text()


def put(x, sharding: Sharding) -> Array:
    """`x` (Array, NumPy array or scalar) laid out as `sharding` says; the
    pieces travel through the host. An Array already laid out so is returned."""
    if isinstance(x, Array) and same_layout(x.sharding, sharding, x.ndim):
        if x.sharding == sharding:
            return x
        if (
            x._global is None
            or x._sharding._device_assignment == sharding._device_assignment
        ):
            return _relabelled(x, sharding)
    value = x._value() if isinstance(x, Array) else x
    aval = x.aval if isinstance(x, Array) else aval_of(x)
    value = np.asarray(value, dtype=aval.dtype)
    if sharding == default_sharding():
        return to_device(value, aval)
    indices = sharding.devices_indices_map(aval.shape, "device_put")
    shard_aval = aval.update(shape=sharding.shard_shape(aval.shape, "device_put"))
    shards = [
        client.host_to(np.ascontiguousarray(value[indices[d]]), shard_aval, d)
        for d in sharding._device_assignment
        if client.is_addressable(d)
    ]
    return assembled(aval, sharding, shards)


def _relabelled(x: Array, sharding: Sharding) -> Array:
    """`x`'s buffers under another name for the same layout."""
    out = Array(x._buf, x.aval)
    out._global = x._global
    return _laid_out(out, None if sharding == default_sharding() else sharding)


def assembled(aval: ShapedArray, sharding: Sharding, shards: list) -> Array:
    """An Array from single-device jaxlib arrays, one per device of
    `sharding` that this process can address (in the sharding's order)."""
    devices = sharding._device_assignment
    if len(devices) == 1 and devices[0] == client.default_device():
        out = Array(shards[0], aval)  # runs everywhere a default array does
        return _laid_out(out, None if sharding == default_sharding() else sharding)
    whole = client.assemble(aval, devices, hlo_text_of(sharding, aval.ndim), shards)
    return placed_array(whole, aval, sharding)


def make_array_from_single_device_arrays(
    shape, sharding: Sharding, arrays, *, dtype=None
) -> Array:
    """The global Array of `shape` assembled from per-device pieces.

    For building a sharded array from data loaded separately on each device
    (one piece per device of the sharding, in any order).

    Args:
      shape: the global shape.
      sharding: how the pieces tile the global array.
      arrays: one single-device Array per device of the sharding.
      dtype: the result's dtype, checked against the pieces' (None: theirs).

    Returns:
      An Array of `shape` laid out as `sharding`.

    Raises:
      ShardMismatchError: the pieces' shapes, devices or dtype do not match
        the sharding or `dtype` (a ValueError).

    Example:
      >>> mesh = olympus.make_mesh((1,), ("x",))
      >>> s = olympus.sharding.NamedSharding(mesh, olympus.sharding.PartitionSpec("x"))
      >>> olympus.make_array_from_single_device_arrays((2,), s, [jnp.ones(2)])
      Array([1., 1.], dtype=float32)
    """
    shape = tuple(shape)
    if (
        dtype is not None
        and arrays
        and arrays[0].dtype != dtypes.canonicalize_dtype(dtype)
    ):
        raise ShardMismatchError(
            f"make_array_from_single_device_arrays: dtype={np.dtype(dtype).name} "
            f"but the pieces are {arrays[0].dtype}; pass their dtype or cast them"
            f"{_at_user_line()}"
        )
    wanted = sharding.shard_shape(shape, "make_array_from_single_device_arrays")
    by_device = {}
    for a in arrays:
        devices = a.devices()
        if len(devices) != 1 or a.shape != wanted or a.dtype != arrays[0].dtype:
            raise ShardMismatchError(
                f"make_array_from_single_device_arrays: each piece of an array of shape "
                f"{shape} laid out as {sharding} must be one device's {wanted} array of "
                f"one dtype; got {a.aval.str_short()} on {len(devices)} device(s)"
                f"{_at_user_line()}"
            )
        by_device[next(iter(devices))] = a
    needed = [d for d in sharding._device_assignment if client.is_addressable(d)]
    if set(by_device) != set(needed) or len(arrays) != len(needed):
        raise ShardMismatchError(
            f"make_array_from_single_device_arrays: {sharding} needs one array on each "
            f"of devices {[d.id for d in needed]}, got arrays on "
            f"{[next(iter(a.devices())).id for a in arrays]}{_at_user_line()}"
        )
    first = by_device[needed[0]]
    aval = first.aval.update(shape=shape)
    shards = [_single_buffer(by_device[d]) for d in needed]
    return assembled(aval, sharding, shards)


def _single_buffer(a: Array):
    return a._buf if a._buf is not None else a._live_global()


def _at_user_line() -> str:
    site = user_source_info()
    return f" (at {site})" if site is not None else ""


# ---- olympus.Array, the public type -----------------------------------------
class _PublicArrayMeta(type):
    """isinstance(x, olympus.Array) holds for device arrays and for tracers (as
    jax.Array is a virtual base of JAX's tracers), so library code that checks
    `isinstance(x, jax.Array)` works inside jit, grad and vmap. Only that
    public name uses this check; olympus's own code tests the concrete Array,
    so no call path pays for it."""

    def __instancecheck__(cls, x) -> bool:
        return isinstance(x, (Array, Tracer, *_other_array_types))

    def __subclasscheck__(cls, sub) -> bool:
        kinds = (Array, Tracer, *_other_array_types)
        return isinstance(sub, type) and issubclass(sub, kinds)


# Types from the layers above that are olympus.Array instances too: typed PRNG
# key arrays, as JAX's (flax.nnx checks `isinstance(key, jax.Array)`);
# olympus.prng adds its class when imported (see `register_array_type`).
_other_array_types: list[type] = []


def register_array_type(kind: type) -> None:
    """Makes instances of `kind` count as `olympus.Array` instances."""
    if kind not in _other_array_types:
        _other_array_types.append(kind)


class PublicArray(metaclass=_PublicArrayMeta):
    """`olympus.Array`: the type of every olympus array, concrete or traced
    (`isinstance(x, olympus.Array)`); concrete ones are `backends.xla.array.Array`."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise TypeError(
            "olympus.Array cannot be constructed directly; make arrays with "
            "olympus.numpy.asarray(...) or olympus.device_put(...)"
        )


PublicArray.__name__ = PublicArray.__qualname__ = "Array"
PublicArray.__module__ = "olympus"
