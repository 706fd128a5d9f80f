"""Named axes in scope while tracing: a shard_map's mesh axes and a vmap's
`axis_name`. Collectives (olympus/lax/parallel/) look their axis up here,
so naming an axis no enclosing shard_map or vmap binds is caught where the
user wrote it."""

from __future__ import annotations

import threading
from contextlib import contextmanager

_state = threading.local()


def _frames() -> list:
    if not hasattr(_state, "frames"):
        _state.frames = []
    return _state.frames


@contextmanager
def bound(sizes: dict):
    """Binds the axis names of `sizes` (name -> size) inside the block."""
    _frames().append(dict(sizes))
    try:
        yield
    finally:
        _frames().pop()


def axis_size(name: str) -> int | None:
    """The size of the innermost axis called `name`, or None if none is bound."""
    for frame in reversed(_frames()):
        if name in frame:
            return frame[name]
    return None


def names() -> list[str]:
    """Every bound axis name, outermost first."""
    return [n for frame in _frames() for n in frame]


def signature() -> tuple:
    """The bound axes as (name, size) pairs, innermost binding of a name
    winning: part of the key of anything traced with collectives (a jitted
    function traced inside `vmap(axis_name="i")` bakes in the size of "i")."""
    sizes: dict = {}
    for frame in _frames():
        sizes.update(frame)
    return tuple(sizes.items())
