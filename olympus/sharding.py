"""Laying arrays out over devices: `olympus.sharding.NamedSharding(mesh, P("x"))`.

>>> from olympus.sharding import NamedSharding, PartitionSpec as P
>>> mesh = olympus.make_mesh((1,), ("x",))
>>> olympus.device_put(jnp.arange(4.0), NamedSharding(mesh, P("x"))).sharding.spec
PartitionSpec('x')
"""

import numpy as np

from olympus.backends.xla.array import Shard, ShardMismatchError  # noqa: F401
from olympus.backends.xla.sharding import (  # noqa: F401
    AbstractMesh,
    AxisType,
    GSPMDSharding,
    Mesh,
    MeshNotSetError,
    MeshShapeError,
    NamedSharding,
    PartitionSpec,
    Sharding,
    ShardingShapeError,
    ShardingTreeError,
    SingleDeviceSharding,
    UnknownMeshAxisError,
    flat_shardings,
    get_abstract_mesh,
    mesh_in_scope,
    named_sharding_of,
    set_mesh,
    spelled_for_rank,
)
from olympus.lax.sharding import with_sharding_constraint
from olympus.tracer.pytree import tree_flatten, tree_map, tree_unflatten
from olympus.backends.xla.spmd import MeshMismatchError  # noqa: F401


def _rank(v) -> int:
    return len(v.shape) if hasattr(v, "shape") else np.ndim(v)


def reshard(x, out_shardings):
    """`x` laid out as `out_shardings` says.

    `x` (a pytree) laid out as `out_shardings` says (JAX's `jax.reshard`): a
    PartitionSpec on the mesh in scope, a NamedSharding, or a pytree of them.
    Eagerly it moves the data; under jit it constrains the layout.

    Args:
      x: a pytree of arrays.
      out_shardings: a PartitionSpec (with a mesh in scope), a NamedSharding, or
        a pytree of them matching x.

    Returns:
      x with its leaves laid out as out_shardings says.

    Raises:
      MeshNotSetError: a PartitionSpec names mesh axes but no mesh is in scope
        (a ValueError).
      TypeError: out_shardings is not a PartitionSpec or NamedSharding.

    Example:
      >>> with olympus.set_mesh(olympus.make_mesh((1,), ("x",))):
      ...     olympus.reshard(jnp.arange(2.0), olympus.P("x")).sharding.spec
      PartitionSpec('x')
    """
    is_leaf = lambda s: isinstance(s, (PartitionSpec, NamedSharding))  # noqa: E731
    named = tree_map(
        lambda w: named_sharding_of(w, "reshard"), out_shardings, is_leaf=is_leaf
    )
    leaves, tree = tree_flatten(x)
    per_leaf = flat_shardings(named, x, "reshard")
    shardings = [spelled_for_rank(s, _rank(v)) for s, v in zip(per_leaf, leaves)]
    return tree_unflatten(tree, with_sharding_constraint(leaves, shardings))


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """`f` run with mesh `axes` (all by default) automatic, its results laid
    out as `out_sharding` (JAX's `jax.sharding.auto_axes`). olympus partitions
    every axis automatically already, so this is `reshard` of `f`'s results.

    >>> f = olympus.sharding.auto_axes(lambda v: v * 2, out_sharding=olympus.P("x"))
    >>> with olympus.set_mesh(olympus.make_mesh((1,), ("x",))):
    ...     f(jnp.ones(2)).sharding.spec
    PartitionSpec('x')
    """
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)
    if out_sharding is None:
        raise TypeError(
            "auto_axes needs out_sharding= (a PartitionSpec or NamedSharding, or a "
            "pytree of them) to lay the results out"
        )
    return lambda *args, **kwargs: reshard(f(*args, **kwargs), out_sharding)


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """`f` with its arguments laid out as `in_sharding` (JAX's
    `jax.sharding.explicit_axes`; olympus's axes are all automatic, so the
    arguments are resharded and `f` runs as is)."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)
    if in_sharding is None:
        raise TypeError(
            "explicit_axes needs in_sharding= (a PartitionSpec or NamedSharding per "
            "argument, or a pytree prefix of them)"
        )

    def with_inputs_laid_out(*args):
        single = isinstance(in_sharding, (PartitionSpec, NamedSharding))
        return f(*reshard(args, in_sharding if single else tuple(in_sharding)))

    return with_inputs_laid_out


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
    "ShardingTypeError",
    "SingleDeviceSharding",
    "UnknownMeshAxisError",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "reshard",
    "set_mesh",
    "visualize_array_sharding",
]


from olympus.lax.sharding import ShardingTypeError, _install_sharding_rules  # noqa: E402

_install_sharding_rules()  # every primitive is defined by now
