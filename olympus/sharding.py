"""Laying arrays out over devices: `olympus.sharding.NamedSharding(mesh, P("x"))`.

>>> from olympus.sharding import NamedSharding, PartitionSpec as P
>>> mesh = olympus.make_mesh((1,), ("x",))
>>> olympus.device_put(jnp.arange(4.0), NamedSharding(mesh, P("x"))).sharding.spec
PartitionSpec('x')
"""

import enum

import numpy as np

from olympus.backends.xla.array import Shard, ShardMismatchError  # noqa: F401
from olympus.backends.xla.sharding import (  # noqa: F401
    GSPMDSharding,
    Mesh,
    MeshShapeError,
    NamedSharding,
    PartitionSpec,
    Sharding,
    ShardingShapeError,
    ShardingTreeError,
    SingleDeviceSharding,
    UnknownMeshAxisError,
)
from olympus.backends.xla.spmd import MeshMismatchError  # noqa: F401


class AxisType(enum.Enum):
    """How a mesh axis is partitioned (JAX's): by the compiler (`Auto`), by
    the types of values (`Explicit`), or by the user's code (`Manual`, inside
    shard_map). olympus's meshes are all `Auto`."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()


class AbstractMesh:
    """A mesh's axis names and sizes without its devices (JAX's), what code
    asks of the mesh in scope. `get_abstract_mesh()` gives the empty one."""

    def __init__(self, axis_sizes: tuple = (), axis_names: tuple = (), axis_types=None):
        self.axis_sizes = tuple(int(n) for n in axis_sizes)
        self.axis_names = tuple(axis_names)
        self.axis_types = tuple(axis_types or (AxisType.Auto,) * len(self.axis_names))

    shape = property(lambda self: dict(zip(self.axis_names, self.axis_sizes)))
    shape_tuple = property(lambda self: tuple(zip(self.axis_names, self.axis_sizes)))
    size = property(lambda self: int(np.prod(self.axis_sizes, dtype=np.int64)))
    empty = property(lambda self: not self.axis_names)
    are_all_axes_explicit = property(
        lambda self: all(t is AxisType.Explicit for t in self.axis_types)
    )

    def __eq__(self, other) -> bool:
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        return (self.axis_sizes, self.axis_names, self.axis_types)

    def __repr__(self) -> str:
        return f"AbstractMesh({self.shape_tuple!r})"


def get_abstract_mesh() -> AbstractMesh:
    """The mesh in scope, abstractly (JAX's). olympus has no ambient mesh (a
    mesh is passed to shard_map and shardings), so it is the empty one."""
    return AbstractMesh()


__all__ = [
    "AbstractMesh",
    "AxisType",
    "GSPMDSharding",
    "Mesh",
    "MeshMismatchError",
    "MeshShapeError",
    "NamedSharding",
    "PartitionSpec",
    "Shard",
    "ShardMismatchError",
    "Sharding",
    "ShardingShapeError",
    "ShardingTreeError",
    "SingleDeviceSharding",
    "UnknownMeshAxisError",
    "get_abstract_mesh",
]
