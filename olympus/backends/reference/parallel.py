"""NumPy rules of shard_map and its collectives: one thread per device.

A shard_map runs its body once per device of the mesh, each in a thread
holding that device's block of every argument; a collective hands its value
to the other threads through a barrier and combines what the threads of its
group (the devices that differ only along the named axes) handed in. Outputs
are assembled from the devices' blocks (an output replicated over an axis is
read from any device along it).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from olympus.backends.reference.interpreter import evaluate
from olympus.backends.reference.table import rule

_device = threading.local()  # .coords (axis -> index) and .exchange while in a body


class _Exchange:
    """Where the threads of one shard_map meet at each collective."""

    def __init__(self, count: int):
        self.barrier = threading.Barrier(count)
        self.slots: dict = {}

    def values(self, coords: dict, value) -> dict:
        """Every device's value (keyed by its coordinates) at this collective."""
        self.slots[tuple(sorted(coords.items()))] = value
        self.barrier.wait()
        seen = {k: v for k, v in self.slots.items()}
        self.barrier.wait()  # all have read before the next collective writes
        return seen


def _block(shape, spec, coords: dict, sizes: dict) -> tuple:
    index = []
    for d, size in enumerate(shape):
        part = spec[d] if d < len(spec) else None
        axes = () if part is None else part if isinstance(part, tuple) else (part,)
        tiles, at = 1, 0
        for axis in axes:
            tiles, at = tiles * sizes[axis], at * sizes[axis] + coords[axis]
        step = size // tiles
        index.append(slice(at * step, (at + 1) * step))
    return tuple(index)


@rule("shard_map")
def _shard_map(*args, olympuspr, mesh, in_specs, out_specs, name, manual_axes=None):
    sizes = mesh.shape
    grid = [dict(zip(sizes, at)) for at in np.ndindex(*sizes.values())]
    exchange, results, errors = _Exchange(len(grid)), {}, []

    def run(coords):
        _device.coords, _device.exchange = coords, exchange
        local = [
            np.asarray(a)[_block(np.shape(a), s, coords, sizes)]
            for a, s in zip(args, in_specs)
        ]
        try:
            results[tuple(coords.values())] = evaluate(olympuspr, *local)
        except BaseException as err:  # noqa: BLE001  (re-raised below, in the caller)
            errors.append(err)
            exchange.barrier.abort()

    threads = [threading.Thread(target=run, args=(c,)) for c in grid]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    if real or errors:
        raise (real or errors)[0]
    outs = []
    for j, (aval, spec) in enumerate(zip(olympuspr.out_avals, out_specs)):
        shape = tuple(
            d * math.prod(sizes[a] for a in _axes_of(spec, k))
            for k, d in enumerate(aval.shape)
        )
        out = np.empty(shape, aval.dtype)
        for coords in grid:
            out[_block(shape, spec, coords, sizes)] = results[tuple(coords.values())][j]
        outs.append(out)
    return outs


def _axes_of(spec, d: int) -> tuple:
    part = spec[d] if d < len(spec) else None
    return () if part is None else part if isinstance(part, tuple) else (part,)


def _group(axes: tuple, x) -> list:
    """The values of this device's group along `axes`, in axis order."""
    coords = _device.coords
    seen = _device.exchange.values(coords, np.asarray(x))
    members = []
    for key, value in sorted(seen.items()):
        other = dict(key)
        if all(other[a] == coords[a] for a in coords if a not in axes):
            members.append((tuple(other[a] for a in axes), value))
    return [v for _, v in sorted(members, key=lambda kv: kv[0])]


@rule("psum")
def _psum(x, *, axes):
    return np.sum(_group(axes, x), axis=0).astype(np.asarray(x).dtype)


@rule("pvary")
def _pvary(x, *, axes):
    return x  # lax.pcast(to="varying"): only the replication check sees it


@rule("vary_like")
def _vary_like(x, like):
    return x  # zeros_like/full_like in a shard_map body: only the check sees it


@rule("pmax")
def _pmax(x, *, axes):
    return np.max(_group(axes, x), axis=0)


@rule("pmin")
def _pmin(x, *, axes):
    return np.min(_group(axes, x), axis=0)


@rule("all_gather")
def _all_gather(x, *, axis_name, axis_size, axis, tiled):
    parts = _group((axis_name,), x)
    return np.concatenate(parts, axis) if tiled else np.stack(parts, axis)


@rule("psum_scatter")
def _psum_scatter(x, *, axis_name, axis_size, scatter_dimension, tiled):
    total = np.sum(_group((axis_name,), x), axis=0).astype(np.asarray(x).dtype)
    i = _device.coords[axis_name]
    piece = np.split(total, axis_size, axis=scatter_dimension)[i]
    return piece if tiled else np.squeeze(piece, scatter_dimension)


@rule("ppermute")
def _ppermute(x, *, axis_name, perm):
    parts = _group((axis_name,), x)
    me = _device.coords[axis_name]
    for source, target in perm:
        if target == me:
            return parts[source]
    return np.zeros_like(np.asarray(x))


@rule("all_to_all")
def _all_to_all(x, *, axis_name, axis_size, split_axis, concat_axis):
    me = _device.coords[axis_name]
    pieces = [
        np.split(v, axis_size, axis=split_axis)[me] for v in _group((axis_name,), x)
    ]
    return np.concatenate(pieces, axis=concat_axis)


@rule("axis_index")
def _axis_index(*, axis_name):
    return np.int32(_device.coords[axis_name])
