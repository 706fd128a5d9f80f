"""Laying arrays out over devices: `olympus.sharding.NamedSharding(mesh, P("x"))`.

>>> from olympus.sharding import NamedSharding, PartitionSpec as P
>>> mesh = olympus.make_mesh((1,), ("x",))
>>> olympus.device_put(jnp.arange(4.0), NamedSharding(mesh, P("x"))).sharding.spec
PartitionSpec('x')
"""

from olympus.backends.xla.array import Shard, ShardMismatchError  # noqa: F401
from olympus.backends.xla.sharding import (  # noqa: F401
    AbstractMesh,
    AxisType,
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
    get_abstract_mesh,
    mesh_in_scope,
    set_mesh,
)
from olympus.lax.sharding import with_sharding_constraint
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.backends.xla.spmd import MeshMismatchError  # noqa: F401


class MeshNotSetError(ValueError):
    """A PartitionSpec given where a sharding is needed, with no mesh in
    scope to pair it with."""


def _resolve(where, api: str) -> NamedSharding:
    """A NamedSharding from `where`: itself, or a PartitionSpec on the mesh
    `set_mesh` put in scope."""
    if isinstance(where, NamedSharding):
        return where
    if isinstance(where, PartitionSpec):
        mesh = mesh_in_scope()
        if mesh is None:
            raise MeshNotSetError(
                f"{api}: {where} names mesh axes but no mesh is in scope; "
                f"wrap the call in `with olympus.set_mesh(mesh):` or pass "
                f"NamedSharding(mesh, {where})"
            )
        return NamedSharding(mesh, where)
    raise TypeError(
        f"{api} takes a PartitionSpec (with a mesh in scope) or a NamedSharding, "
        f"got {type(where).__name__}"
    )


def reshard(x, out_shardings):
    """`x` (a pytree) laid out as `out_shardings` says (JAX's `jax.reshard`):
    a PartitionSpec on the mesh in scope, a NamedSharding, or a pytree of
    them. Eagerly it moves the data; under jit it constrains the layout.

    >>> with olympus.set_mesh(olympus.make_mesh((1,), ("x",))):
    ...     olympus.sharding.reshard(jnp.arange(2.0), P("x")).sharding.spec
    PartitionSpec('x')
    """
    leaves, tree = tree_flatten(x)
    if isinstance(out_shardings, (PartitionSpec, NamedSharding)):
        wanted = [out_shardings] * len(leaves)
    else:
        is_leaf = lambda s: isinstance(s, (PartitionSpec, NamedSharding))  # noqa: E731
        wanted = tree_flatten(out_shardings, is_leaf=is_leaf)[0]
    shardings = [_resolve(w, "reshard") for w in wanted]
    return tree_unflatten(tree, with_sharding_constraint(leaves, shardings))


def _cell(sharding, where: tuple, tiling) -> str:
    devices = sharding._device_assignment
    held = sorted(devices[i] for i in tiling.holders[where].flat)
    ids = ",".join(str(d.id) for d in held)
    return f"{held[0].platform.upper()} {ids}"


def visualize_array_sharding(x, *, max_width: int = 80) -> None:
    """Prints which devices hold which block of a 1-d or 2-d array, as a
    plain-text grid (JAX's `jax.debug.visualize_array_sharding`, without rich).

    >>> olympus.debug.visualize_array_sharding(jnp.ones(4))
    ┌───────┐
    │ CPU 0 │
    └───────┘
    """
    shape = tuple(x.shape)
    if len(shape) not in (1, 2):
        raise ValueError(
            f"visualize_array_sharding shows 1-d and 2-d arrays, got shape {shape}; "
            f"reshape it first"
        )
    sharding = x.sharding
    tiling = sharding._tiling(len(shape))
    rows, cols = (1, *tiling.tiles) if len(shape) == 1 else tiling.tiles
    cells = [
        [
            _cell(sharding, (c,) if len(shape) == 1 else (r, c), tiling)
            for c in range(cols)
        ]
        for r in range(rows)
    ]
    width = min(
        max(len(c) for row in cells for c in row) + 2, max(max_width // cols, 5)
    )
    rule = lambda l, m, r: l + m.join("─" * width for _ in range(cols)) + r  # noqa: E731
    lines = [rule("┌", "┬", "┐")]
    for i, row in enumerate(cells):
        lines.append("│" + "│".join(c.center(width) for c in row) + "│")
        lines.append(rule("├", "┼", "┤") if i < rows - 1 else rule("└", "┴", "┘"))
    print("\n".join(lines))


__all__ = [
    "AbstractMesh",
    "AxisType",
    "GSPMDSharding",
    "Mesh",
    "MeshMismatchError",
    "MeshNotSetError",
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
    "reshard",
    "set_mesh",
    "visualize_array_sharding",
]
