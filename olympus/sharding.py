"""Laying arrays out over devices: `olympus.sharding.NamedSharding(mesh, P("x"))`.

>>> from olympus.sharding import NamedSharding, PartitionSpec as P
>>> mesh = olympus.make_mesh((1,), ("x",))
>>> olympus.device_put(jnp.arange(4.0), NamedSharding(mesh, P("x"))).sharding.spec
PartitionSpec('x')
"""

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

__all__ = [
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
]
