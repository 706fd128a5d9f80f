"""Per-device code: `shard_map` and the collectives its body may call.

`shard_map(f, mesh, in_specs, out_specs)` runs `f` once per device of `mesh`
on that device's block of each argument (its PartitionSpec says how the
argument is split); the body sees local shapes and may combine values across
a mesh axis with a collective: `psum`, `pmean`, `pmax`, `pmin`, `all_gather`,
`psum_scatter`, `ppermute`, `all_to_all`, `axis_index`. An output's spec says how the
per-device results form the global one; an output not split over a mesh axis
must be equal along it (e.g. the result of a `psum` over that axis), which
`check_rep` verifies when the body is traced (lax/replication.py).

It lowers to Shardy's `sdy.manual_computation` (every mesh axis manual) and
its collectives to StableHLO's (`all_reduce`, `all_gather`, `reduce_scatter`,
`collective_permute`, `all_to_all`, `partition_id`) over the devices of the named axes;
XLA's SPMD partitioner places them.

The package: axis_names.py (looking axes up, the errors), primitives.py (the
collective primitives and their rules), collectives.py (the public
collectives), manual.py (shard_map).

Derivatives: collectives are linear (psum's transpose is psum, all_gather's
is psum_scatter, ppermute's the inverse permutation). A shard_map's jvp is two
shard_maps (outputs; tangents, recomputing what they need), so linearize
stages only the tangent one; its transpose treats an input replicated over a
mesh axis as broadcast (its cotangent is a psum over that axis) and an output
replicated over one as read from the axis's first device.
"""

from olympus.lax.parallel.axis_names import (  # noqa: F401  (errors users catch)
    AxisIndexGroupsCoverError,
    AxisIndexGroupsError,
    CollectiveShapeError,
    UnboundAxisNameError,
)
from olympus.lax.parallel.collectives import PcastError  # noqa: F401
from olympus.lax.parallel.manual import (  # noqa: F401
    LoopCarryVaryingError,
    MeshNotInScopeError,
    ShardMapAxisNamesError,
    ShardMapInSpecsError,
    ShardMapReplicationError,
    shard_map,
)
