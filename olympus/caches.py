"""`BoundedCache`: the size-bounded dict every olympus compilation cache uses.

Caches keyed by argument signatures or structural program keys grow with
every new shape or closure a long-running program meets; each is bounded so
memory stays flat. Reads are plain `dict.get` (the dispatch fast paths pay
nothing); an insert into a full cache first drops the oldest entries.

Sizes (entries): `EAGER_CACHE_SIZE` per-primitive eager executables,
`JIT_CACHE_SIZE` signatures per jitted function, `STRUCTURE_CACHE_SIZE`
eager control-flow sub-program structures. `olympus.clear_caches()` empties
them all.
"""

from __future__ import annotations

import threading

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
