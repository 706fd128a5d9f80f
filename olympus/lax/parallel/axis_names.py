"""A collective's axis names and arguments: looking an axis up in the
enclosing shard_map's mesh or vmap's axis_name (olympus/tracer/axes.py),
checking `axis_index_groups`, and the errors the collectives raise."""

from __future__ import annotations

import math

from olympus.tracer import axes as axes_env
from olympus.tracer.core import user_source_info


class UnboundAxisNameError(NameError):
    """A collective naming an axis no enclosing shard_map binds."""


class CollectiveShapeError(ValueError):
    """A collective's operand or arguments do not fit its axis: a dimension
    that must equal (or be divisible by) the axis size, an axis out of
    range, or a `perm` that is not a partial permutation."""


class AxisIndexGroupsError(NotImplementedError):
    """axis_index_groups where JAX takes none either: a collective over vmap's
    own axis."""


class AxisIndexGroupsCoverError(ValueError):
    """axis_index_groups that do not hold each index of the axis exactly once."""


def _bad(message: str) -> CollectiveShapeError:
    site = user_source_info()
    return CollectiveShapeError(message + (f" (at {site})" if site is not None else ""))


def _dimension(api: str, axis: int, ndim: int, what: str, aval) -> int:
    if not -ndim <= axis < ndim:
        raise _bad(f"{api}: {what}={axis} is out of range for {aval.str_short()}")
    return axis % ndim


# ---- the axis environment (olympus/tracer/axes.py) ------------------------------------
def _axis_size(name: str, api: str) -> int:
    size = axes_env.axis_size(name)
    if size is not None:
        return size
    site = user_source_info()
    raise UnboundAxisNameError(
        f"{api}: axis name {name!r} is not bound here (bound: {axes_env.names() or 'none'}); "
        f"collectives name an axis of an enclosing shard_map's mesh or vmap's axis_name"
        + (f" (at {site})" if site is not None else "")
    )


def _axes(axis_name, api: str) -> tuple:
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        _axis_size(n, api)
    return names


def _index_groups(groups, axes: tuple, api: str, even: bool = False):
    """`axis_index_groups` as a tuple of tuples of indices along `axes` (the
    first axis major, as axis_index of them counts; None: one group of all),
    checked to cover them exactly once; `even`: the groups must be of one
    size (the gathering collectives)."""
    if groups is None:
        return None
    groups = tuple(tuple(int(i) for i in g) for g in groups)
    size = math.prod(_axis_size(a, api) for a in axes)
    if sorted(i for g in groups for i in g) != list(range(size)):
        raise AxisIndexGroupsCoverError(
            f"{api}: axis_index_groups must cover all indices exactly once (the "
            f"indices 0..{size - 1} along {axes}); got {groups}"
        )
    if even and len({len(g) for g in groups}) > 1:
        raise _bad(f"{api}: axis_index_groups {groups} must all be of one size")
    return groups


def _grouped(groups) -> dict:
    """The `groups` param of a collective's bind: absent for one group of all."""
    return {} if groups is None else {"groups": groups}


def _site() -> str:
    site = user_source_info()
    return f" (at {site})" if site is not None else ""
