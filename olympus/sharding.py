"""Laying arrays out over devices: `olympus.sharding.NamedSharding(mesh, P("x"))`.

>>> from olympus.sharding import NamedSharding, PartitionSpec as P
>>> mesh = olympus.make_mesh((1,), ("x",))
>>> olympus.device_put(jnp.arange(4.0), NamedSharding(mesh, P("x"))).sharding.spec
P('x',)
"""

import functools

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
    _at_user_line,
    flat_shardings,
    get_abstract_mesh,
    mesh_in_scope,
    named_sharding_of,
    set_mesh,
    spelled_for_rank,
)
from olympus.api import device_put
from olympus.backends.xla import client
from olympus.backends.xla.array import Array, make_array_from_single_device_arrays
from olympus.ir import dtypes
from olympus.lax.sharding import constrain
from olympus.tracer.core import Tracer
from olympus.tracer.errors import UnexpectedTracerError
from olympus.tracer.pytree import tree_flatten, tree_map, tree_unflatten
from olympus.backends.xla.spmd import MeshMismatchError  # noqa: F401


def _rank(v) -> int:
    return len(v.shape) if hasattr(v, "shape") else np.ndim(v)


def reshard(xs, out_shardings):
    """`xs` laid out as `out_shardings` says.

    `xs` (a pytree) laid out as `out_shardings` says (JAX's `jax.reshard`): a
    PartitionSpec on the mesh in scope, a NamedSharding, or a pytree of them.
    Eagerly it moves the data; under jit it constrains the layout.

    Args:
      xs: a pytree of arrays.
      out_shardings: a PartitionSpec (with a mesh in scope), a NamedSharding, or
        a pytree of them matching xs.

    Returns:
      xs with its leaves laid out as out_shardings says.

    Raises:
      MeshNotSetError: a PartitionSpec names mesh axes but no mesh is in scope
        (a ValueError).
      TypeError: out_shardings is not a PartitionSpec or NamedSharding.

    Example:
      >>> with olympus.set_mesh(olympus.make_mesh((1,), ("x",))):
      ...     olympus.reshard(jnp.arange(2.0), olympus.P("x")).sharding.spec
      P('x',)
    """
    is_leaf = lambda s: isinstance(s, (PartitionSpec, NamedSharding))  # noqa: E731
    named = tree_map(
        lambda w: named_sharding_of(w, "reshard"), out_shardings, is_leaf=is_leaf
    )
    leaves, tree = tree_flatten(xs)
    per_leaf = flat_shardings(named, xs, "reshard")
    shardings = [spelled_for_rank(s, _rank(v)) for s, v in zip(per_leaf, leaves)]
    return tree_unflatten(tree, constrain(leaves, shardings))


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """The Array of `shape` laid out as `sharding`, built piece by piece.

    Each device's piece is made by `data_callback(index)` (JAX's
    `jax.make_array_from_callback`).

    For building a large sharded array without holding it whole on one
    host: the callback loads only the slices a device needs.

    Args:
      shape: the global shape.
      sharding: the layout (any Sharding).
      data_callback: maps a device's index (a tuple of slices of the global
        array) to its piece: a NumPy array, Array or scalar.
      dtype: the result's dtype; must be the pieces' (None: theirs).

    Returns:
      An Array of `shape` laid out as `sharding`.

    Raises:
      TypeError: sharding is not a Sharding.
      ValueError: dtype differs from the pieces' dtype, or a piece has the
        wrong shape (ShardMismatchError).

    Example:
      >>> mesh = olympus.make_mesh((1,), ("x",))
      >>> s = olympus.NamedSharding(mesh, olympus.P("x"))
      >>> olympus.make_array_from_callback((3,), s, lambda i: np.arange(3.0)[i])
      Array([0., 1., 2.], dtype=float32)
    """
    api = "make_array_from_callback"
    if not isinstance(sharding, Sharding):
        raise TypeError(
            f"olympus.{api}: sharding should be an instance of olympus.sharding."
            f"Sharding (NamedSharding, SingleDeviceSharding); got "
            f"{type(sharding).__name__}"
        )
    shape = tuple(shape)
    indices = {
        d: i
        for d, i in sharding.devices_indices_map(shape, api).items()
        if client.is_addressable(d)
    }
    if sharding.is_fully_replicated_for(len(shape)):  # one call serves all
        piece = _host_piece(data_callback((slice(None),) * len(shape)), api)
        pieces = {d: piece for d in indices}
    else:
        pieces = {d: _host_piece(data_callback(i), api) for d, i in indices.items()}
    found = next(iter(pieces.values())).dtype if pieces else None
    if dtype is not None and found is not None:
        wanted = dtypes.canonicalize_dtype(dtype)
        if found != wanted:
            raise ValueError(
                f"If `dtype` is provided to `olympus.{api}`, it must match the "
                f"dtype of the addressable shards. Got dtype={wanted} and shard "
                f"dtype={found}; convert the callback's pieces (or drop dtype)."
            )
    arrays = [device_put(p, d) for d, p in pieces.items()]
    return make_array_from_single_device_arrays(shape, sharding, arrays)


def _host_piece(value, api: str) -> np.ndarray:
    """A callback's piece as a host array of its canonical dtype."""
    if isinstance(value, Tracer):
        raise UnexpectedTracerError(
            f"olympus.{api} cannot be called within a traced context "
            f"(its callback returned a traced value); call it outside jit"
        )
    if not hasattr(value, "dtype"):
        value = np.asarray(value)
    return np.asarray(value, dtype=dtypes.canonicalize_dtype(value.dtype))


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """The global Array laid out as `sharding` from this process's data.

    As in JAX's `jax.make_array_from_process_local_data`, each process
    passes the part of the array its devices hold (in one process: all of
    it); `global_shape` (None: the data's shape) is the
    whole array's, where dimensions larger than the local data's are split
    between processes. `local_data` may be a pytree (with a matching pytree
    of shardings and global shapes, or one for all).

    Args:
      sharding: a Sharding, or a pytree of them matching local_data.
      local_data: this process's data (NumPy arrays), or a pytree of them.
      global_shape: the global shape(s) (None: inferred).

    Returns:
      An Array (or a pytree of them) laid out as sharding.

    Raises:
      ValueError: in one process, global_shape differs from the data's shape.

    Example:
      >>> mesh = olympus.make_mesh((1,), ("x",))
      >>> s = olympus.NamedSharding(mesh, olympus.P("x"))
      >>> olympus.make_array_from_process_local_data(s, np.arange(2.0))
      Array([0., 1.], dtype=float32)
    """
    leaves, tree = tree_flatten(local_data)
    shardings = _per_leaf(sharding, leaves, lambda x: isinstance(x, Sharding))
    shapes = _per_leaf(global_shape, leaves, lambda x: isinstance(x, tuple))
    outs = [
        _from_local(s, x, g) for s, x, g in zip(shardings, leaves, shapes, strict=True)
    ]
    return tree_unflatten(tree, outs)


def _per_leaf(given, leaves, is_leaf) -> list:
    if given is None or is_leaf(given):
        return [given] * len(leaves)
    return tree_flatten(given, is_leaf=is_leaf)[0]


def _from_local(sharding, local, global_shape):
    local = _host_piece(local, "make_array_from_process_local_data")
    global_shape = local.shape if global_shape is None else tuple(global_shape)
    if client.process_count() == 1:
        if global_shape != local.shape:
            raise ValueError(
                f"When calling `make_array_from_process_local_data` on a single "
                f"process, global_shape should be None or equal to "
                f"local_data.shape.Got global_shape={global_shape} and "
                f"local_data.shape={local.shape}."
            )
        return device_put(local, sharding)
    return make_array_from_callback(
        global_shape, sharding, _local_slicer(sharding, local, global_shape)
    )


def _local_slicer(sharding, local, global_shape):
    """Maps a global index to this process's data: along a dimension split
    between processes, the process's pieces lie one after another."""
    indices = [
        i
        for d, i in sharding.devices_indices_map(global_shape).items()
        if client.is_addressable(d)
    ]
    starts = [sorted({(i[d].start or 0) for i in indices}) for d in range(local.ndim)]

    def piece(index):
        local_index = []
        for d, sl in enumerate(index):
            if global_shape[d] == local.shape[d]:
                local_index.append(sl)
                continue
            width = (sl.stop or global_shape[d]) - (sl.start or 0)
            at = starts[d].index(sl.start or 0) * width
            local_index.append(slice(at, at + width))
        return local[tuple(local_index)]

    return piece


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """`f` run with mesh `axes` (all by default) automatic, its results laid
    out as `out_sharding` (JAX's `jax.sharding.auto_axes`). olympus partitions
    every axis automatically already, so this is `reshard` of `f`'s results.

    >>> f = olympus.sharding.auto_axes(lambda v: v * 2, out_sharding=olympus.P("x"))
    >>> with olympus.set_mesh(olympus.make_mesh((1,), ("x",))):
    ...     f(jnp.ones(2)).sharding.spec
    P('x',)
    """
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def with_results_laid_out(*args, **kwargs):
        where = _sharding_argument(out_sharding, kwargs, "auto_axes", "out_sharding")
        return reshard(f(*args, **kwargs), where)

    return with_results_laid_out


def _sharding_argument(given, kwargs: dict, api: str, name: str):
    """The sharding given to the decorator, else the call's `name=` keyword
    (taken out of `kwargs`), as JAX's auto_axes / explicit_axes take it."""
    if given is None and name not in kwargs:
        raise TypeError(
            f"{api}: missing required keyword argument {name!r} (a PartitionSpec "
            f"or NamedSharding, or a pytree of them): pass it to {api}(...) or to "
            f"the call{_at_user_line()}"
        )
    return kwargs.pop(name) if given is None else given


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """`f` run with mesh `axes` (all by default) Explicit, its arguments laid
    out as `in_sharding` (JAX's `jax.sharding.explicit_axes`): inside, their
    types hold those layouts; the results come back on the mesh in scope,
    keeping only the layouts over its own Explicit axes.

    >>> auto = (olympus.sharding.AxisType.Auto,)
    >>> f = olympus.sharding.explicit_axes(lambda v: str(olympus.typeof(v)))
    >>> with olympus.set_mesh(olympus.make_mesh((1,), ("x",), axis_types=auto)):
    ...     f(jnp.ones(2), in_sharding=olympus.P("x"))
    'float32[2@x]'
    """
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def with_inputs_laid_out(*args, **kwargs):
        where = _sharding_argument(in_sharding, kwargs, "explicit_axes", "in_sharding")
        single = isinstance(where, (PartitionSpec, NamedSharding))
        outer = mesh_in_scope()
        if outer is None:
            raise MeshNotSetError(
                "explicit_axes: no mesh is in scope; call it inside `with "
                f"olympus.set_mesh(mesh):` (as JAX asks){_at_user_line()}"
            )
        with set_mesh(_with_explicit_axes(outer, axes)):
            out = f(*reshard(args, where if single else tuple(where)), **kwargs)
        return tree_map(lambda o: _onto(o, outer), out)

    return with_inputs_laid_out


def _with_explicit_axes(mesh: Mesh, axes) -> Mesh:
    """`mesh` with `axes` (a name, names, or None: all) made Explicit."""
    names = (
        mesh.axis_names if axes is None else (axes,) if isinstance(axes, str) else axes
    )
    kinds = tuple(
        AxisType.Explicit if n in names else t
        for n, t in zip(mesh.axis_names, mesh.axis_types)
    )
    return Mesh(mesh.devices, mesh.axis_names, axis_types=kinds)


def _onto(value, mesh: Mesh):
    """`value` (a result of explicit_axes' `f`) back on `mesh`, its layout kept
    over `mesh`'s Explicit axes only (the others' are the partitioner's)."""
    from olympus.api import typeof

    if not isinstance(value, (Tracer, Array)):
        return value
    typed = getattr(typeof(value), "sharding", None)
    explicit = mesh.abstract_mesh.explicit_axes
    spec = [
        tuple(n for n in typed.spec.axes(d) if n in explicit) or None
        if typed is not None
        else None
        for d in range(np.ndim(value))
    ]
    spec = [e[0] if e and len(e) == 1 else e for e in spec]
    return reshard(value, NamedSharding(mesh, PartitionSpec(*spec)))


def _cell(sharding, where: tuple, tiling) -> str:
    devices = sharding._device_assignment
    ids = sorted(devices[i].id for i in np.ravel(tiling.holders[where]))
    return f"{devices[0].platform.upper()} " + ",".join(map(str, ids))


def _halves(room: int) -> tuple:
    """Padding before and after a text in `room` spare characters, as JAX's
    rich table splits it (the odd one after; none when there is no room)."""
    before, odd = divmod(room, 2)
    return max(before, 0), max(before + odd, 0)


def _tile_size(shape: tuple, tiles: tuple, max_width: int) -> tuple:
    """(width, height) of one tile's box in characters, by JAX's rule: ten
    lines for the whole first dimension, 2.5 characters a line across,
    scaled to the tile's share of the array."""
    aspect = (shape[1] if len(shape) == 2 else 1) / shape[0]
    share = [-(-size // t) / size for size, t in zip(shape, tiles)]
    width = int(share[-1] * int(10 * aspect) * 2.5)
    height = int(share[0] * 10) if len(shape) == 2 else 1
    return min(max(width, 9), max_width), height


def _boxed(text: str, width: int, height: int) -> list:
    """`text` centred in a box of width - 2 by height - 2 (JAX's padding)."""
    left, right = _halves(width - len(text) - 2)
    top, bottom = _halves(height - 2)
    blank = " " * (left + len(text) + right)
    return [blank] * top + [" " * left + text + " " * right] + [blank] * bottom


def visualize_array_sharding(x, *, max_width: int = 80) -> None:
    """Prints which devices hold which block of a 1-d or 2-d array, as the
    grid JAX's `jax.debug.visualize_array_sharding` draws without colour
    (its box sizes, plain text instead of rich).

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
    size = _tile_size(shape, tuple(tiling.tiles), max_width)
    boxes = [
        [
            _boxed(_cell(sharding, (c,) if len(shape) == 1 else (r, c), tiling), *size)
            for c in range(cols)
        ]
        for r in range(rows)
    ]
    widths = [max(len(row[c][0]) for row in boxes) for c in range(cols)]
    rule = lambda l, m, r: l + m.join("─" * w for w in widths) + r  # noqa: E731
    lines = [rule("┌", "┬", "┐")]
    for i, row in enumerate(boxes):
        for k in range(len(row[0])):
            cells = [_centred(box[k], w) for box, w in zip(row, widths)]
            lines.append("│" + "│".join(cells) + "│")
        lines.append(rule("├", "┼", "┤") if i < rows - 1 else rule("└", "┴", "┘"))
    print("\n".join(lines))


def _centred(line: str, width: int) -> str:
    left, right = _halves(width - len(line))
    return " " * left + line + " " * right


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
    "ScanShardingError",
    "Shard",
    "ShardMismatchError",
    "Sharding",
    "ShardingShapeError",
    "ShardingTreeError",
    "ShardingTypeError",
    "SingleDeviceSharding",
    "UnknownMeshAxisError",
    "auto_axes",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "explicit_axes",
    "get_abstract_mesh",
    "reshard",
    "set_mesh",
    "visualize_array_sharding",
]


from olympus.lax.sharding import (  # noqa: E402
    ScanShardingError,
    ShardingTypeError,
    _install_sharding_rules,
)

_install_sharding_rules()  # every primitive is defined by now
