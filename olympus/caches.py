"""Every olympus cache, in one registry that `olympus.clear_caches()` empties.

Module-level caches register where they are defined (`register(name, cache)`
returns the cache, so it is one line); objects with caches of their own
(each `jit` function) register with `register_owner`, weakly, so a dropped
function is not kept alive. `clear_all()` then needs to know nobody's
internals.

`BoundedCache` is the size-bounded dict the compilation caches use.

Caches keyed by argument signatures or structural program keys grow with
every new shape or closure a long-running program meets; each is bounded so
memory stays flat. Reads are plain `dict.get` (the dispatch fast paths pay
nothing); an insert into a full cache first drops the oldest entries.

Sizes (entries): `EAGER_CACHE_SIZE` per-primitive eager executables,
`JIT_CACHE_SIZE` signatures per jitted function, `STRUCTURE_CACHE_SIZE`
eager control-flow sub-program structures.
"""

from __future__ import annotations

import threading
import weakref

EAGER_CACHE_SIZE = 4096
JIT_CACHE_SIZE = 512
STRUCTURE_CACHE_SIZE = 1024


class BoundedCache(dict):
    """A dict holding at most `maxsize` entries; the oldest-inserted go first."""

    def __init__(self, maxsize: int):
        super().__init__()
        self.maxsize = maxsize
        self._lock = threading.Lock()

    def _make_room(self) -> None:
        while len(self) >= self.maxsize:
            try:
                dict.__delitem__(self, next(iter(self)))
            except (StopIteration, KeyError, RuntimeError):
                return

    def __setitem__(self, key, value) -> None:
        with self._lock:
            if key not in self:
                self._make_room()
            dict.__setitem__(self, key, value)

    def setdefault(self, key, default=None):
        with self._lock:
            if key in self:
                return dict.__getitem__(self, key)
            self._make_room()
            dict.__setitem__(self, key, default)
            return default


_caches: dict[str, object] = {}  # name -> a module-level cache (anything with clear())
_owners: weakref.WeakSet = weakref.WeakSet()  # objects with clear_cache()
_owners_lock = threading.Lock()


def register(name: str, cache):
    """Adds a module-level cache (e.g. "pjit executables") to those `clear_all`
    empties, and returns it: `_executables = caches.register("...", {})`."""
    _caches[name] = cache
    return cache


def register_owner(owner) -> None:
    """Adds an object whose `clear_cache()` empties its own caches; held weakly."""
    with _owners_lock:
        _owners.add(owner)


def registered() -> dict:
    """The registered module-level caches, by name."""
    return dict(_caches)


def clear_all() -> None:
    """Empties every registered cache and every live owner's caches."""
    for cache in list(_caches.values()):
        cache.clear()
    with _owners_lock:
        owners = list(_owners)
    for owner in owners:
        owner.clear_cache()
