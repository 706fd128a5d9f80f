"""The public collectives: `psum`, `pmean`, `pmax`, `pmin`, `all_gather`,
`psum_scatter`, `ppermute`, `all_to_all`, `axis_index` and `pcast`/`pvary`,
checking their arguments and binding the primitives of primitives.py."""

from __future__ import annotations

import math

import numpy as np

from olympus.lax import ops
from olympus.lax.parallel.axis_names import (
    _axes,
    _axis_size,
    _bad,
    _dimension,
    _grouped,
    _index_groups,
    _site,
)
from olympus.lax.parallel.primitives import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    psum_p,
    psum_scatter_p,
    pvary_p,
)
from olympus.tracer.core import Tracer
from olympus.tracer.pytree import tree_flatten, tree_map


class PcastError(ValueError):
    """lax.pcast to a state olympus does not have ('reduced', 'unreduced')."""


def pcast(x, axis_name, *, to: str):
    """`x` marked to vary along `axis_name`; the values are unchanged.

    `x` (a pytree) cast to vary along `axis_name` (JAX's `lax.pcast(...,
    to='varying')`, the old `lax.pvary`): the value is unchanged; shard_map's
    replication check then treats it as differing between devices there.

    Args:
      x: a pytree of arrays.
      axis_name: the axis name (or a tuple of names).
      to: 'varying'.

    Returns:
      x, marked as varying along axis_name.

    Raises:
      PcastError: `to` is not 'varying' (a ValueError).
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> mesh = olympus.make_mesh((1,), ('i',), axis_types=(olympus.sharding.AxisType.Auto,))
      >>> f = lambda v: lax.pcast(v, 'i', to='varying')
      >>> olympus.shard_map(f, mesh=mesh, in_specs=olympus.P(), out_specs=olympus.P('i'))(jnp.ones(2))
      Array([1., 1.], dtype=float32)
    """
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"pcast: axis_name must be a str or a tuple, got {axis_name}")
    if not axis_name:
        return x
    if to != "varying":
        raise PcastError(
            f"pcast(to={to!r}): olympus casts only to 'varying' (it has no reduced "
            f"or unreduced types); to sum over {axis_name!r} use lax.psum{_site()}"
        )
    axes = _axes(axis_name, "pcast")
    return tree_map(lambda v: pvary_p.bind(v, axes=axes), x)


def pvary(x, axis_name):
    """`pcast(x, axis_name, to='varying')` (JAX's name before 0.10)."""
    return pcast(x, axis_name, to="varying")


# ---- the public collectives ------------------------------------------------------------
def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of `x` over the devices along `axis_name`, on each of them.

    The all-reduce of data-parallel training: inside shard_map (or vmap
    with axis_name, pmap), every participant gets the total.

    Args:
      x: a pytree of arrays.
      axis_name: a mesh axis name of an enclosing shard_map (or vmap/pmap
        axis name), or a tuple of them.
      axis_index_groups: None (all devices along the axis), or lists of
        indices along the axes named (the first axis major, as axis_index
        counts), each index in exactly one: each group sums over its own
        members (under shard_map and pmap).

    Returns:
      A pytree like x holding the sums.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing map.
      AxisIndexGroupsCoverError: the groups miss or repeat an index.
      AxisIndexGroupsError: groups over vmap's axis (JAX has none there).

    Example:
      >>> P = olympus.sharding.PartitionSpec
      >>> mesh = olympus.make_mesh((1,), ("i",), axis_types=(olympus.sharding.AxisType.Auto,))
      >>> f = olympus.shard_map(lambda v: lax.psum(v, "i"), mesh, P("i"), P())
      >>> f(jnp.ones(2))
      Array([1., 1.], dtype=float32)
    """
    axes = _axes(axis_name, "psum")
    groups = _index_groups(axis_index_groups, axes, "psum")
    leaves = tree_flatten(x)[0]
    if groups is not None and not any(isinstance(v, Tracer) for v in leaves):
        # as JAX: constants are summed statically, by the first group's size
        return tree_map(lambda v: v * _like_constant(v, len(groups[0])), x)
    return tree_map(lambda v: psum_p.bind(v, axes=axes, **_grouped(groups)), x)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of `x` over the devices along `axis_name`, on each of them.

    Args:
      x: a pytree of arrays.
      axis_name: a mapped axis name, or a tuple of them.
      axis_index_groups: as psum's; the sum is divided by the first group's
        size (JAX's convention: give groups of one size).

    Returns:
      A pytree like x holding the means.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing map.

    Example:
      >>> olympus.vmap(lambda v: lax.pmean(v, "b"), axis_name="b")(jnp.arange(4.0))
      Array([1.5, 1.5, 1.5, 1.5], dtype=float32)
    """
    axes = _axes(axis_name, "pmean")
    groups = _index_groups(axis_index_groups, axes, "pmean")
    size = math.prod(_axis_size(a, "pmean") for a in axes)
    size = size if groups is None else len(groups[0])
    total = lambda v: psum_p.bind(v, axes=axes, **_grouped(groups))  # noqa: E731
    return tree_map(lambda v: ops.div(total(v), _like(v, size)), x)


def _like_constant(v, value):
    """`value` of the Python or NumPy type of the constant `v`."""
    return type(v)(value) if isinstance(v, (int, float, complex)) else _like(v, value)


def _like(v, value):
    return np.asarray(value, dtype=np.asarray(0, v.dtype).dtype)[()]


def _extremum(prim, extremum: str, plural: str, example: str):
    """The public all-reduce of `prim` (pmax, pmin): one function, two names."""

    def reduce(x, axis_name, *, axis_index_groups=None):
        axes = _axes(axis_name, prim.name)
        groups = _grouped(_index_groups(axis_index_groups, axes, prim.name))
        return tree_map(lambda v: prim.bind(v, axes=axes, **groups), x)

    reduce.__name__ = reduce.__qualname__ = prim.name
    reduce.__doc__ = f"""The elementwise {extremum} of `x` over the devices along `axis_name`.

    Args:
      x: a pytree of arrays.
      axis_name: the mapped axis' name (or a tuple of names).
      axis_index_groups: as psum's: each group reduces over its own members.

    Returns:
      A pytree of x's structure holding the {plural}.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> olympus.vmap(lambda v: lax.{prim.name}(v, 'i'), axis_name='i')(jnp.array([1.0, 3.0]))
      Array([{example}], dtype=float32)
    """
    return reduce


pmax = _extremum(pmax_p, "maximum", "maxima", "3., 3.")
pmin = _extremum(pmin_p, "minimum", "minima", "1., 1.")


class AllGatherToError(ValueError):
    """all_gather's `to` not 'varying', 'invarying' or 'reduced'."""


class AllGatherToUnsupportedError(NotImplementedError):
    """all_gather(to='reduced') (olympus has no reduced type), or
    to='invarying' with axis_index_groups (JAX refuses it too)."""


def _check_gather_to(to: str, groups) -> None:
    if to not in ("varying", "invarying", "reduced"):
        raise AllGatherToError(
            f"all_gather: to={to!r}; allowed values are 'varying', 'invarying' "
            f"and 'reduced' (JAX's output types)"
        )
    if to == "reduced" or (to == "invarying" and groups is not None):
        raise AllGatherToUnsupportedError(
            f"all_gather(to={to!r})"
            + (" with axis_index_groups" if groups is not None else "")
            + ": olympus's values carry no reduced type; gather to='varying' "
            "(the default) and psum where a reduction is meant"
        )


def all_gather(
    x,
    axis_name: str,
    *,
    axis_index_groups=None,
    axis: int = 0,
    tiled: bool = False,
    to: str = "varying",
):
    """Every participant's `x` along `axis_name`, gathered on each of them.

    Args:
      x: an array.
      axis_name: a mapped axis name.
      axis: where the gathered axis goes.
      axis_index_groups: None, or lists of indices along the axis, each
        index in exactly one, all of one size: each group gathers its own
        members' `x` (the group's size replaces the axis size).
      tiled: if True, concatenate along `axis` instead of stacking.
      to: JAX's output type, 'varying' or 'invarying' (the same values:
        olympus's shard_map checks replication statically, with no types);
        'reduced' raises AllGatherToError, as there is no reduced type.

    Returns:
      The gathered array.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing map.
      AllGatherToError: `to` is not one of JAX's three.
      AllGatherToUnsupportedError: to='reduced', or 'invarying' with groups.

    Example:
      >>> olympus.vmap(lambda v: lax.all_gather(v, "b"), axis_name="b")(jnp.arange(2.0))
      Array([[0., 1.], [0., 1.]], dtype=float32)
    """
    size = _axis_size(axis_name, "all_gather")
    groups = _index_groups(axis_index_groups, (axis_name,), "all_gather", even=True)
    _check_gather_to(to, groups)
    size = size if groups is None else len(groups[0])
    return tree_map(
        lambda v: all_gather_p.bind(
            v,
            axis_name=axis_name,
            axis_size=size,
            axis=_dimension("all_gather", axis, v.ndim + (not tiled), "axis", v.aval),
            tiled=tiled,
            **_grouped(groups),
        ),
        x,
    )


def psum_scatter(
    x,
    axis_name: str,
    *,
    scatter_dimension: int = 0,
    axis_index_groups=None,
    tiled: bool = False,
):
    """The sum of `x` over devices, each device keeping one piece.

    `psum(x)` split along `scatter_dimension` over the devices along
    `axis_name`: device i keeps piece i (`tiled`: a block; else the dimension,
    whose size must be the axis size, is dropped).

    Args:
      x: an array.
      axis_name: the mapped axis' name.
      scatter_dimension: the axis cut into one piece per device.
      axis_index_groups: None, or lists of indices along the axis, each
        index in exactly one, all of one size: each group sums and scatters
        among its own members (the group's size replaces the axis size).
      tiled: whether to keep the axis (True) or remove it (False).

    Returns:
      Each device's piece of the sum.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> f = lambda v: lax.psum_scatter(v, 'i')
      >>> olympus.vmap(f, axis_name='i')(jnp.ones((2, 2)))
      Array([2., 2.], dtype=float32)
    """
    size = _axis_size(axis_name, "psum_scatter")
    groups = _index_groups(axis_index_groups, (axis_name,), "psum_scatter", True)
    size = size if groups is None else len(groups[0])
    d = _dimension(
        "psum_scatter", scatter_dimension, x.ndim, "scatter_dimension", x.aval
    )
    if x.shape[d] % size if tiled else x.shape[d] != size:
        raise _bad(
            f"psum_scatter: dimension {d} of {x.aval.str_short()} must be "
            f"{'divisible by' if tiled else 'equal to'} the size {size} of axis {axis_name!r}"
        )
    return psum_scatter_p.bind(
        x,
        axis_name=axis_name,
        axis_size=size,
        scatter_dimension=d,
        tiled=tiled,
        **_grouped(groups),
    )


def ppermute(x, axis_name: str, perm):
    """Sends each device's `x` to the device `perm` pairs it with.

    Sends device s's `x` to device t for each (s, t) in `perm` (indices along
    `axis_name`); a device no pair targets gets zeros.

    Args:
      x: a pytree of arrays.
      axis_name: the mapped axis' name.
      perm: (source, target) index pairs; each index at most once per side.

    Returns:
      A pytree of x's structure; devices that no pair targets get zeros.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> olympus.vmap(lambda v: lax.ppermute(v, 'i', [(0, 1), (1, 0)]), axis_name='i')(jnp.array([1.0, 2.0]))
      Array([2., 1.], dtype=float32)
    """
    size = _axis_size(axis_name, "ppermute")
    perm = tuple((int(s), int(t)) for s, t in perm)
    sources, targets = [s for s, _ in perm], [t for _, t in perm]
    if (
        len(set(sources)) < len(perm)
        or len(set(targets)) < len(perm)
        or not all(0 <= i < size for i in sources + targets)
    ):
        raise _bad(
            f"ppermute: perm={perm} is not a partial permutation of 0..{size - 1} "
            f"(the indices along axis {axis_name!r} of size {size}): each source "
            f"and each target at most once"
        )
    return tree_map(lambda v: ppermute_p.bind(v, axis_name=axis_name, perm=perm), x)


def all_to_all(
    x,
    axis_name: str,
    split_axis: int,
    concat_axis: int,
    *,
    axis_index_groups=None,
    tiled: bool = False,
):
    """Exchanges pieces of `x` between the devices along `axis_name`.

    Cuts `x` along `split_axis` into one piece per device along `axis_name`,
    sends piece i to device i, and joins what arrives along `concat_axis` (in
    device order). Not `tiled` (JAX's convention): `split_axis` has the axis's
    size and goes away, and the pieces stack as axis `concat_axis` of the
    result.

    Args:
      x: an array.
      axis_name: the mapped axis' name.
      split_axis: the axis cut into one piece per device.
      concat_axis: the axis the received pieces are joined along.
      axis_index_groups: None, or lists of indices along the axis, each
        index in exactly one, all of one size: pieces go between the members
        of each group (the group's size replaces the axis size).
      tiled: whether to keep split_axis (True) or to remove it and add a new
        axis (False).

    Returns:
      An array of x's dtype.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> f = lambda v: lax.all_to_all(v, 'i', 0, 0)
      >>> olympus.vmap(f, axis_name='i')(jnp.arange(4.0).reshape(2, 2))
      Array([[0., 2.],
             [1., 3.]], dtype=float32)
    """
    size = _axis_size(axis_name, "all_to_all")
    groups = _index_groups(axis_index_groups, (axis_name,), "all_to_all", True)
    size = size if groups is None else len(groups[0])
    split = _dimension("all_to_all", split_axis, x.ndim, "split_axis", x.aval)
    concat = _dimension("all_to_all", concat_axis, x.ndim, "concat_axis", x.aval)
    if x.shape[split] % size if tiled else x.shape[split] != size:
        raise _bad(
            f"all_to_all: dimension {split} of {x.aval.str_short()} must be "
            f"{'divisible by' if tiled else 'equal to'} the size {size} of axis {axis_name!r}"
        )
    params = dict(axis_name=axis_name, axis_size=size, **_grouped(groups))
    if tiled:
        return all_to_all_p.bind(x, split_axis=split, concat_axis=concat, **params)
    # As JAX does: the pieces stack as a new axis at `concat_axis` of the result
    # (made room for with size 1), and the cut axis goes; equal axes swap in place.
    if split == concat:
        return all_to_all_p.bind(x, split_axis=split, concat_axis=concat, **params)
    if split < concat:
        concat += 1
    x = ops.expand_dims(x, (concat,))
    split += concat < split
    out = all_to_all_p.bind(x, split_axis=split, concat_axis=concat, **params)
    return ops.squeeze(out, (split,))


def axis_index(axis_name: str):
    """This device's index along `axis_name` (an int32 scalar).

    Args:
      axis_name: the mapped axis' name.

    Returns:
      An int32 scalar.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> olympus.vmap(lambda v: lax.axis_index('i'), axis_name='i')(jnp.zeros(3))
      Array([0, 1, 2], dtype=int32)
    """
    _axis_size(axis_name, "axis_index")
    return axis_index_p.bind(axis_name=axis_name)
