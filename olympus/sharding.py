"""Laying arrays out over devices: `olympus.sharding.NamedSharding(mesh, P("x"))`.

>>> from olympus.sharding import Mesh, NamedSharding, PartitionSpec as P
>>> mesh = olympus.make_mesh((1,), ("x",))
>>> olympus.device_put(jnp.arange(4.0), NamedSharding(mesh, P("x"))).sharding.spec
PartitionSpec('x')
"""

from olympus.backends.xla.array import Shard  # noqa: F401
from olympus.backends.xla.sharding import (  # noqa: F401
    GSPMDSharding,
    Mesh,
    MeshShapeError,
    NamedSharding,
    PartitionSpec,
    Sharding,
    ShardingShapeError,
    SingleDeviceSharding,
    UnknownMeshAxisError,
)

__all__ = [
    "GSPMDSharding", "Mesh", "MeshShapeError", "NamedSharding", "PartitionSpec", "Shard",
    "Sharding", "ShardingShapeError", "SingleDeviceSharding", "UnknownMeshAxisError",
]
