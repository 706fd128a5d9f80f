"""How an array is laid out over devices: meshes, partition specs, shardings.

A `Mesh` names the axes of an n-d grid of devices; a `PartitionSpec` says which
mesh axes split each dimension of an array; a `NamedSharding` pairs the two.
Every sharding reduces to one `Tiling` (tiles per dimension, copies of each
tile, and which device holds which tile), from which come the shard of each
device (`devices_indices_map`) and the two forms XLA reads: HLO sharding text
for arrays and Shardy (`sdy`) attributes for the SPMD partitioner.

>>> from olympus.sharding import NamedSharding, PartitionSpec as P
>>> mesh = olympus.make_mesh((1, 1), ("data", "model"))
>>> NamedSharding(mesh, P("data")).shard_shape((8, 4))
(8, 4)
"""

from __future__ import annotations

import contextlib
import contextvars

import dataclasses
import enum
import itertools
import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from olympus.backends.xla import client
from olympus.ir.core import AvalSharding, ShapedArray
from olympus.tracer.core import user_source_info
from olympus.tracer.errors import ShardingTreeError  # noqa: F401  (raised here, exported)
from olympus.tracer.pytree import tree_flatten


class MeshShapeError(ValueError):
    """A mesh whose shape does not match its devices (or the device count)."""


class UnknownMeshAxisError(ValueError):
    """A PartitionSpec naming an axis its mesh does not have, or one twice."""


class ShardingShapeError(ValueError):
    """A sharding that does not fit an array: a PartitionSpec longer than the
    array's rank, or a dimension its mesh axes do not divide."""


def _at_user_line() -> str:
    site = user_source_info()
    return f" (at {site})" if site is not None else ""


# ---- partition specs and meshes --------------------------------------------
class AxisType(enum.Enum):
    """How a mesh axis is partitioned (JAX's): by the compiler (`Auto`), by
    the types of values (`Explicit`), or by the user's code (`Manual`, inside
    shard_map). olympus partitions `Explicit` axes as `Auto` ones (see
    docs/differences.md)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


def _axis_types(axis_types, count: int) -> tuple:
    if axis_types is None:
        return (AxisType.Auto,) * count
    types = (axis_types,) if isinstance(axis_types, AxisType) else tuple(axis_types)
    if len(types) != count or not all(isinstance(t, AxisType) for t in types):
        raise MeshShapeError(
            f"Mesh: axis_types needs one olympus.sharding.AxisType per axis "
            f"({count}), got {axis_types!r}{_at_user_line()}"
        )
    return types


class PartitionSpec(tuple):
    """Per array dimension: None (not split), a mesh axis name, or a tuple of
    names (split over their product, the first major). Missing trailing
    dimensions are not split.

    >>> olympus.sharding.PartitionSpec("data", None)
    P('data', None)
    """

    def __new__(cls, *parts):
        for part in parts:
            names = part if isinstance(part, tuple) else (part,)
            if part is not None and not all(isinstance(n, str) for n in names):
                raise TypeError(
                    f"PartitionSpec entries are None, an axis name or a tuple of "
                    f"names, got {part!r}{_at_user_line()}"
                )
        return super().__new__(cls, parts)

    def __repr__(self) -> str:
        # JAX 0.10.2's spelling, a tuple's repr after `P`: P('x',), P(), P(None, 'x')
        return f"P{tuple.__repr__(self)}"

    def axes(self, dim: int) -> tuple:
        """The mesh axes splitting dimension `dim` (none past the spec's end)."""
        part = self[dim] if dim < len(self) else None
        return () if part is None else part if isinstance(part, tuple) else (part,)

    def __reduce__(self):
        return (PartitionSpec, tuple(self))


class Mesh:
    """An n-d array of devices whose axes have names.

    >>> grid = np.array(olympus.devices()).reshape(1, -1)
    >>> olympus.sharding.Mesh(grid, ("data", "model")).shape
    {'data': 1, 'model': 1}
    """

    def __init__(self, devices, axis_names: Sequence[str], axis_types=None):
        grid = np.empty(np.shape(devices), dtype=object)
        grid[...] = devices
        names = tuple(axis_names) if not isinstance(axis_names, str) else (axis_names,)
        if grid.ndim != len(names) or len(set(names)) != len(names):
            raise MeshShapeError(
                f"Mesh: devices of shape {grid.shape} need one distinct name per "
                f"axis, got axis_names={names}{_at_user_line()}"
            )
        ids = [getattr(d, "id", d) for d in grid.flat]
        if len(set(ids)) != len(ids):
            raise MeshShapeError(
                f"Mesh: each device may appear once, got device ids "
                f"{np.array(ids).reshape(grid.shape).tolist()}{_at_user_line()}"
            )
        self.devices = grid
        self.axis_names = names
        self.axis_types = _axis_types(axis_types, len(names))

    @property
    def shape(self) -> dict:
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return self.devices.size

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def shape_tuple(self) -> tuple:
        return tuple(self.shape.items())

    @property
    def abstract_mesh(self):
        """The mesh without its devices (what `get_abstract_mesh` returns),
        naming their kind as JAX's does."""
        first = self.devices.flat[0]
        kind = AbstractDevice(
            getattr(first, "device_kind", None),
            getattr(first, "num_cores", None),
            getattr(first, "platform", None),
        )
        return AbstractMesh(
            self.devices.shape, self.axis_names, self.axis_types, abstract_device=kind
        )

    def __enter__(self):
        _meshes_in_scope.append(self)
        _placing.append(False)  # JAX's `with mesh:` places no results
        _mesh_changed()
        return self

    def __exit__(self, *exc):
        _meshes_in_scope.pop()
        _placing.pop()
        _mesh_changed()

    def _key(self) -> tuple:
        return (
            self.axis_names,
            self.devices.shape,
            tuple(self.devices.flat),
            self.axis_types,
        )

    def __eq__(self, other) -> bool:
        return isinstance(other, Mesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        # JAX 0.10.2's spelling; the devices are `mesh.device_ids`
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape.items())
        return f"Mesh({axes}, axis_types={self.axis_types!r})"


class AbstractDevice(NamedTuple):
    """The kind of a mesh's devices, which its AbstractMesh names (JAX's)."""

    device_kind: str | None
    num_cores: int | None
    platform: str | None


class AbstractMesh:
    """A mesh's axis names, sizes and types without its devices (JAX's): what
    code asks of the mesh in scope. `get_abstract_mesh()` outside any mesh
    gives the empty one. `abstract_device` (a concrete mesh's kind of
    device) is printed, as JAX's, but takes no part in comparisons."""

    def __init__(
        self,
        axis_sizes: tuple = (),
        axis_names: tuple = (),
        axis_types=None,
        *,
        abstract_device: AbstractDevice | None = None,
    ):
        self.axis_sizes = tuple(int(n) for n in axis_sizes)
        self.axis_names = tuple(axis_names)
        self.axis_types = _axis_types(axis_types, len(self.axis_names))
        self.abstract_device = abstract_device

    shape = property(lambda self: dict(zip(self.axis_names, self.axis_sizes)))
    shape_tuple = property(lambda self: tuple(zip(self.axis_names, self.axis_sizes)))
    size = property(lambda self: math.prod(self.axis_sizes))
    empty = property(lambda self: not self.axis_names)
    are_all_axes_explicit = property(
        lambda self: all(t is AxisType.Explicit for t in self.axis_types)
    )
    explicit_axes = property(lambda self: self._of_type(AxisType.Explicit))
    auto_axes = property(lambda self: self._of_type(AxisType.Auto))
    manual_axes = property(lambda self: self._of_type(AxisType.Manual))

    def _of_type(self, kind: AxisType) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is kind)

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return self  # as a Mesh's: code asks either for its axes so

    def __eq__(self, other) -> bool:
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        return (self.axis_sizes, self.axis_names, self.axis_types)

    def __repr__(self) -> str:
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape_tuple)
        kind = self.abstract_device
        device = (
            ""
            if kind is None
            else ", " + ", ".join(f"{k}={v}" for k, v in zip(kind._fields, kind))
        )
        return f"AbstractMesh({axes or '()'}, axis_types={self.axis_types!r}{device})"


# The meshes of enclosing `with set_mesh(m)` / `with m` blocks, innermost last;
# a global `set_mesh(m)` sets the bottom one. `_placing[i]`: whether entry i
# came from set_mesh, whose mesh JAX puts eager and jit results on.
_meshes_in_scope: list = [None]
_placing: list = [True]
# [the mesh results go onto, or None]: read by the eager and jit slow paths;
# the fast paths never see a mesh, as `on_mesh_change` listeners empty them.
placement_mesh: list = [None]
_mesh_listeners: list = []


def on_mesh_change(listener) -> None:
    """Calls `listener()` whenever the mesh results go onto changes (the
    eager and jit fast-path caches, which run on one device, use it)."""
    _mesh_listeners.append(listener)


def _mesh_changed() -> None:
    mesh = _meshes_in_scope[-1] if _placing[-1] else None
    if mesh is placement_mesh[0]:
        return
    placement_mesh[0] = mesh
    for listener in _mesh_listeners:
        listener()


def mesh_in_scope() -> Mesh | None:
    """The mesh `set_mesh` put in scope, or None."""
    return _meshes_in_scope[-1]


class _MeshScope:
    """What `set_mesh(m)` returns: `m` is already set; leaving the `with`
    block restores the mesh before it."""

    def __init__(self, mesh: Mesh | None, previous):
        self.mesh, self.previous = mesh, previous

    def __enter__(self):
        return self.mesh

    def __exit__(self, *exc):
        _meshes_in_scope[-1], _placing[-1] = self.previous
        _mesh_changed()


def set_mesh(mesh: Mesh | None) -> _MeshScope:
    """Puts `mesh` in scope for shard_map, reshard and `P` shardings.

    Called bare it sets the mesh until the next call; as `with
    set_mesh(mesh):` only inside the block.

    Args:
      mesh: a Mesh, or None to clear it.

    Returns:
      A context manager (also effective without `with`).

    Raises:
      TypeError: mesh is neither a Mesh (olympus.make_mesh) nor None.

    Example:
      >>> with olympus.set_mesh(olympus.make_mesh((1,), ("x",))):
      ...     olympus.sharding.get_abstract_mesh().axis_names
      ('x',)
    """
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(
            f"set_mesh takes a Mesh (olympus.make_mesh) or None, got "
            f"{type(mesh).__name__}{_at_user_line()}"
        )
    previous = (_meshes_in_scope[-1], _placing[-1])
    _meshes_in_scope[-1], _placing[-1] = mesh, True
    _mesh_changed()
    return _MeshScope(mesh, previous)


def onto_mesh_in_scope(out, per_dimension: bool = True):
    """`out` (an eager or jit result, or a list of them, computed on one
    device) where JAX puts it under `set_mesh`: on that mesh, not split. On
    Explicit axes `P(None, ...)` (JAX's result type names the mesh), or
    `P()` without `per_dimension` (jnp.array; a result whose type JAX carries
    over from a meshless operand); on Auto axes always `P()`. Unchanged
    without a `set_mesh` mesh."""
    mesh = placement_mesh[0]
    if mesh is None:
        return out
    if isinstance(out, (list, tuple)):
        return type(out)(onto_mesh_in_scope(v, per_dimension) for v in out)
    from olympus.backends.xla.array import Array, put

    if type(out) is not Array or isinstance(out.sharding, NamedSharding):
        return out
    if out.sharding.num_devices > 1 or not isinstance(out.dtype, np.dtype):
        return out  # float0 stays put
    if per_dimension and mesh.abstract_mesh.explicit_axes:
        return put(out, NamedSharding(mesh, PartitionSpec(*[None] * out.ndim)))
    return put(out, NamedSharding(mesh, PartitionSpec()))


def typed_spec(spec: PartitionSpec, ndim: int, explicit: tuple) -> tuple:
    """`spec` as an explicit-mode type says it: one entry per dimension,
    only the `explicit` mesh axes kept (None, a name, or a tuple of names)."""
    out = []
    for d in range(ndim):
        names = tuple(n for n in spec.axes(d) if n in explicit)
        out.append(None if not names else names[0] if len(names) == 1 else names)
    return PartitionSpec(*out)


def explicit_aval(aval, sharding):
    """`aval` with its layout as part of the type where `sharding` is over a
    mesh with Explicit axes (JAX's explicit mode); `aval` itself otherwise."""
    mesh = getattr(sharding, "mesh", None)
    explicit = () if mesh is None else mesh.abstract_mesh.explicit_axes
    if not explicit or not isinstance(sharding, NamedSharding):
        if aval.sharding is None:
            return aval
        return ShapedArray(aval.shape, aval.dtype, aval.weak_type)
    spec = typed_spec(sharding.spec, aval.ndim, explicit)
    if all(e is None for e in spec):  # unsplit: a type without a layout
        return ShapedArray(aval.shape, aval.dtype, aval.weak_type)
    return aval.update(sharding=AvalSharding(mesh.abstract_mesh, spec))


class MeshNotSetError(ValueError):
    """A PartitionSpec given where a sharding is needed, with no mesh in
    scope to pair it with."""


_arguments_mesh = contextvars.ContextVar("arguments_mesh", default=None)


@contextlib.contextmanager
def arguments_mesh(placed):
    """While jit traces arguments laid out as `placed` (their shardings, or
    None): the first Explicit mesh among them (else the first mesh), which
    `typeof` of a traced value reports as JAX does (its types carry the
    arguments' mesh)."""
    meshes = [s.mesh for s in placed or () if isinstance(s, NamedSharding)]
    meshes.sort(key=lambda m: not m.abstract_mesh.explicit_axes)
    if not meshes:
        yield
        return
    token = _arguments_mesh.set(meshes[0])
    try:
        yield
    finally:
        _arguments_mesh.reset(token)


def arguments_mesh_in_scope():
    """The mesh (abstract) of the arguments jit is tracing, or None."""
    mesh = _arguments_mesh.get()
    return None if mesh is None else mesh.abstract_mesh


def arguments_devices_mesh():
    """The mesh of the arguments jit is tracing as they were placed
    (with its devices where they have them), or None."""
    return _arguments_mesh.get()


def named_sharding_of(where, api: str) -> NamedSharding:
    """A NamedSharding from `where`: itself, or a PartitionSpec on the mesh
    `set_mesh` put in scope (JAX's `out_sharding=` / `reshard` argument)."""
    if isinstance(where, NamedSharding):
        return where
    if isinstance(where, PartitionSpec):
        mesh = mesh_in_scope()
        if mesh is None:
            raise MeshNotSetError(
                f"{api}: {where} names mesh axes but no mesh is in scope; wrap "
                f"the call in `with olympus.set_mesh(mesh):` or pass "
                f"NamedSharding(mesh, {where}){_at_user_line()}"
            )
        return NamedSharding(mesh, where)
    raise TypeError(
        f"{api} takes a PartitionSpec (with a mesh in scope) or a NamedSharding, "
        f"got {type(where).__name__}{_at_user_line()}"
    )


def get_abstract_mesh() -> AbstractMesh:
    """The mesh in scope without its devices; empty outside `set_mesh`."""
    mesh = mesh_in_scope()
    return AbstractMesh() if mesh is None else mesh.abstract_mesh


def make_mesh(
    axis_shapes: Sequence[int],
    axis_names: Sequence[str],
    *,
    devices=None,
    axis_types=None,
) -> Mesh:
    """A device mesh of the given shape and axis names.

    Meshes name the axes that PartitionSpecs, shard_map and collectives
    refer to.

    Args:
      axis_shapes: the size of each mesh axis.
      axis_names: one name per axis.
      devices: the devices to arrange (default: the first
        prod(axis_shapes) devices, as JAX).
      axis_types: an AxisType per axis; by default Explicit, as JAX 0.10.2
        (a value's layout is then part of its type: `typeof(x).sharding`).

    Returns:
      A Mesh.

    Raises:
      MeshShapeError: the shape needs more devices than there are (set
        olympus_num_cpu_devices for more CPU devices).

    Example:
      >>> olympus.make_mesh((1,), ("data",))
      Mesh('data': 1, axis_types=(Explicit,))
    """
    shape = tuple(int(s) for s in axis_shapes)
    if devices is None:
        devices = client.devices()
        devices = (
            devices[: math.prod(shape)] if math.prod(shape) <= len(devices) else devices
        )
    devices = list(devices)
    if math.prod(shape) != len(devices):
        raise MeshShapeError(
            f"make_mesh: a mesh of shape {shape} needs {math.prod(shape)} devices, "
            f"but there are {len(devices)}{_at_user_line()}; "
            f"set olympus_num_cpu_devices (env OLYMPUS_NUM_CPU_DEVICES) for more"
        )
    grid = np.empty(len(devices), dtype=object)
    grid[:] = devices
    if axis_types is None:  # JAX 0.10.2: explicit sharding by default
        axis_types = (AxisType.Explicit,) * len(shape)
    return Mesh(grid.reshape(shape), axis_names, axis_types)


# ---- tilings ----------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Tiling:
    """Dimension d is cut into `tiles[d]` equal pieces; each tile is held by
    `copies` devices; `holders[t0, ..., tn, c]` is the position (in the
    sharding's device assignment) of copy c of tile (t0, ..., tn)."""

    tiles: tuple
    copies: int
    holders: np.ndarray = dataclasses.field(compare=False)

    def hlo_text(self) -> str:
        """XLA's HLO sharding text: `{devices=[2,1]0,1}` or `{replicated}`."""
        if all(t == 1 for t in self.tiles):
            return "{replicated}"
        dims = list(self.tiles) + ([self.copies] if self.copies > 1 else [])
        ids = ",".join(str(int(i)) for i in self.holders.flat)
        last = " last_tile_dim_replicate" if self.copies > 1 else ""
        return f"{{devices=[{','.join(map(str, dims))}]{ids}{last}}}"


def whole_tiling(ndim: int) -> Tiling:
    """One tile, the whole array, held by one device."""
    return Tiling((1,) * ndim, 1, np.zeros((1,) * ndim + (1,), dtype=int))


class Sharding:
    """Where each piece of an array lives; subclasses give `_tiling(ndim)`."""

    _device_assignment: tuple  # devices, in the order tilings refer to them

    @property
    def device_set(self) -> set:
        return set(self._device_assignment)

    @property
    def num_devices(self) -> int:
        return len(self._device_assignment)

    def _tiling(self, ndim: int, api: str = "") -> Tiling:
        raise TypeError(f"{type(self).__name__} does not describe a tiling")

    def is_fully_replicated_for(self, ndim: int) -> bool:
        return all(t == 1 for t in self._tiling(ndim).tiles)

    def shard_shape(self, shape: Sequence[int], api: str = "shard_shape") -> tuple:
        """The shape of each device's piece of an array of `shape`."""
        tiling = self._checked_tiling(tuple(shape), api)
        return tuple(s // t for s, t in zip(shape, tiling.tiles))

    def devices_indices_map(
        self, shape: Sequence[int], api: str = "devices_indices_map"
    ) -> dict:
        """Each device's piece of an array of `shape`, as a tuple of slices
        (`api` names the caller in errors)."""
        shape = tuple(shape)
        tiling = self._checked_tiling(shape, api)
        found = {}
        for where in np.ndindex(tiling.holders.shape):
            device = self._device_assignment[tiling.holders[where]]
            found[device] = tuple(
                _piece(size, tiles, at)
                for size, tiles, at in zip(shape, tiling.tiles, where)
            )
        return found

    def _checked_tiling(self, shape: tuple, api: str) -> Tiling:
        tiling = self._tiling(len(shape), api)
        for dim, (size, tiles) in enumerate(zip(shape, tiling.tiles)):
            if size % tiles:
                raise ShardingShapeError(
                    f"{api}: {self} splits dimension {dim} of an array of shape "
                    f"{shape} into {tiles} pieces, but {size} is not divisible "
                    f"by {tiles}{_at_user_line()}"
                )
        return tiling


def _piece(size: int, tiles: int, at: int) -> slice:
    if tiles == 1:
        return slice(None)
    step = size // tiles
    return slice(at * step, (at + 1) * step)


class NamedSharding(Sharding):
    """An array split over `mesh` as `spec` says.

    >>> mesh = olympus.make_mesh((1,), ("data",))
    >>> olympus.sharding.NamedSharding(mesh, olympus.sharding.PartitionSpec("data"))
    NamedSharding(mesh=Mesh('data': 1, axis_types=(Explicit,)), spec=P('data',), memory_kind=device)
    """

    def __init__(self, mesh: Mesh | AbstractMesh, spec: PartitionSpec):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(
                f"NamedSharding takes a Mesh or an AbstractMesh, got {type(mesh).__name__}"
            )
        spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)
        used = [name for dim in range(len(spec)) for name in spec.axes(dim)]
        unknown = [n for n in used if n not in mesh.axis_names]
        if unknown or len(set(used)) != len(used):
            what = f"unknown axes {unknown}" if unknown else "an axis used twice"
            raise UnknownMeshAxisError(
                f"NamedSharding: {spec} names {what}; the mesh has axes "
                f"{mesh.axis_names} of sizes {tuple(mesh.shape.values())}{_at_user_line()}"
            )
        self.mesh = mesh
        self.spec = spec
        # on an AbstractMesh (a traced layout, as out_info says it): no devices
        self._device_assignment = tuple(getattr(mesh, "devices", np.empty(0)).flat)

    def _tiling(self, ndim: int, api: str = "NamedSharding") -> Tiling:
        if len(self.spec) > ndim:
            raise ShardingShapeError(
                f"{api}: {self.spec} has {len(self.spec)} entries, more than "
                f"the {ndim} dimensions of the array{_at_user_line()}"
            )
        names = self.mesh.axis_names
        split = [self.spec.axes(d) for d in range(ndim)]
        used = [n for axes in split for n in axes]
        unused = [n for n in names if n not in used]
        sizes = self.mesh.shape
        tiles = tuple(math.prod(sizes[n] for n in axes) for axes in split)
        copies = math.prod(sizes[n] for n in unused)
        positions = np.arange(self.mesh.size).reshape(tuple(sizes.values()))
        order = [names.index(n) for n in used + unused]
        holders = positions.transpose(order).reshape(tiles + (copies,))
        return Tiling(tiles, copies, holders)

    def sdy_text(self, ndim: int, mesh_name: str = "mesh") -> str:
        """The Shardy attribute for an array of rank `ndim` on this mesh."""
        self._tiling(ndim)  # checks the rank
        dims = ", ".join(
            "{" + ", ".join(f'"{n}"' for n in self.spec.axes(d)) + "}"
            for d in range(ndim)
        )
        return f"#sdy.sharding<@{mesh_name}, [{dims}]>"

    @property
    def is_fully_replicated(self) -> bool:
        used = [n for d in range(len(self.spec)) for n in self.spec.axes(d)]
        return all(self.mesh.shape[n] == 1 for n in used)

    def _key(self) -> tuple:
        spec = tuple(self.spec)
        while spec and spec[-1] is None:  # P("x") and P("x", None) are one layout
            spec = spec[:-1]
        return (self.mesh, spec)

    def __eq__(self, other) -> bool:
        return isinstance(other, NamedSharding) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        if isinstance(self.mesh, AbstractMesh):  # no devices, no memory (JAX's)
            return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"
        return (
            f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r}, memory_kind=device)"
        )


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device):
        self.device = device
        self._device_assignment = (device,)

    def _tiling(self, ndim: int, api: str = "") -> Tiling:
        return whole_tiling(ndim)

    is_fully_replicated = True

    def __eq__(self, other) -> bool:
        return isinstance(other, SingleDeviceSharding) and self.device == other.device

    def __hash__(self) -> int:
        return hash(self.device)

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self.device!r}, memory_kind=device)"


class GSPMDSharding(Sharding):
    """A layout XLA chose (an output the partitioner laid out), as HLO tiles."""

    def __init__(self, devices: Sequence, tiling: Tiling):
        self._device_assignment = tuple(devices)
        self.tiling = tiling

    def _tiling(self, ndim: int, api: str = "") -> Tiling:
        return self.tiling

    @property
    def is_fully_replicated(self) -> bool:
        return all(t == 1 for t in self.tiling.tiles)

    def _key(self) -> tuple:
        return (self._device_assignment, self.tiling.hlo_text())

    def __eq__(self, other) -> bool:
        return isinstance(other, GSPMDSharding) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"GSPMDSharding({self.tiling.hlo_text()}, memory_kind=device)"  # JAX's


def tiling_of_hlo(hlo, ndim: int, count: int) -> Tiling:
    """The Tiling of one of XLA's HloSharding objects for a rank-`ndim` array
    over `count` devices."""
    if hlo.is_replicated() or not hlo.is_tiled():
        return Tiling(
            (1,) * ndim, count, np.arange(count).reshape((1,) * ndim + (count,))
        )
    dims = tuple(hlo.tile_assignment_dimensions())
    holders = np.asarray(hlo.tile_assignment_devices()).reshape(dims)
    if not hlo.replicate_on_last_tile_dim():
        holders = holders.reshape(dims + (1,))
    return Tiling(tuple(holders.shape[:ndim]), holders.shape[-1], holders)


def spelled_for_rank(sharding, ndim: int):
    """On a mesh with Explicit axes, a NamedSharding's spec padded with None
    to the array's rank, as JAX spells an explicitly sharded array's layout."""
    if not isinstance(sharding, NamedSharding) or len(sharding.spec) >= ndim:
        return sharding
    if AxisType.Explicit not in sharding.mesh.axis_types:
        return sharding
    padding = (None,) * (ndim - len(sharding.spec))
    return NamedSharding(sharding.mesh, PartitionSpec(*sharding.spec, *padding))


def same_layout(a: Sharding, b: Sharding, ndim: int) -> bool:
    """Whether two shardings put the same piece on the same device."""
    if a == b:
        return True
    ta, tb = a._tiling(ndim), b._tiling(ndim)
    return (
        ta.tiles == tb.tiles
        and ta.copies == tb.copies
        and _holder_devices(a, ta) == _holder_devices(b, tb)
    )


def _holder_devices(sharding: Sharding, tiling: Tiling) -> list:
    devices = sharding._device_assignment
    held = [
        sorted(devices[i].id for i in tiling.holders[t])
        for t in np.ndindex(tiling.tiles)
    ]
    return held


def as_named(sharding: Sharding, mesh: Mesh, ndim: int) -> NamedSharding | None:
    """`sharding` spelled as a NamedSharding over `mesh`, or None if no
    PartitionSpec on that mesh lays an array out the same way."""
    if isinstance(sharding, NamedSharding) and sharding.mesh == mesh:
        return sharding
    if set(sharding._device_assignment) != set(mesh.devices.flat):
        return None
    for spec in _specs(mesh, ndim):
        candidate = NamedSharding(mesh, spec)
        if same_layout(candidate, sharding, ndim):
            return candidate
    return None


def _specs(mesh: Mesh, ndim: int):
    """Every PartitionSpec of rank `ndim` over the mesh's axes longer than 1."""
    axes = [n for n, size in mesh.shape.items() if size > 1]
    for slots in itertools.product(range(ndim + 1), repeat=len(axes)):
        groups = [[a for a, s in zip(axes, slots) if s == d] for d in range(ndim)]
        for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
            parts = [o[0] if len(o) == 1 else (o or None) for o in orders]
            while parts and parts[-1] is None:
                parts.pop()
            yield PartitionSpec(*parts)


def flat_shardings(prefix, tree, api: str) -> list:
    """One sharding (or None) per leaf of `tree`: `prefix` is a Sharding or
    None standing for a whole subtree, or a container of them shaped like the
    top of `tree` (JAX's pytree-prefix convention for `in_shardings`)."""
    out: list = []
    _broadcast(prefix, tree, out, api)
    return out


def _broadcast(prefix, tree, out: list, api: str) -> None:
    if isinstance(prefix, PartitionSpec):  # on the mesh of set_mesh, as JAX
        prefix = named_sharding_of(prefix, api)
    if prefix is None or isinstance(prefix, Sharding):
        out.extend([prefix] * len(tree_flatten(tree)[0]))
        return
    wanted, wanted_def = tree_flatten(prefix, is_leaf=lambda v: v is not prefix)
    found, found_def = tree_flatten(tree, is_leaf=lambda v: v is not tree)
    if wanted_def != found_def:
        raise ShardingTreeError(
            f"{api}: the shardings {prefix!r} do not match the structure of the "
            f"values (a pytree prefix is needed: one sharding per value, or one "
            f"for a whole subtree){_at_user_line()}"
        )
    for p, t in zip(wanted, found):
        _broadcast(p, t, out, api)
