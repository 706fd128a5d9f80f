"""The persistent compilation cache across processes: on by default in the
user's cache folder, redirected by OLYMPUS_COMPILATION_CACHE_DIR, off with
OLYMPUS_COMPILATION_CACHE=0, and a corrupt entry is recompiled with a warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

import olympus
from olympus.backends.xla import compiler

# Each run compiles one jitted program (its input is built with NumPy, so no
# eager primitive compiles) and prints the cache counters and the result.
PROGRAM = """
import json, warnings
import numpy as np
import olympus
from olympus.backends.xla import compiler
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    out = olympus.jit(lambda x: (x * 2.5 + 1.0).sum())(np.arange(4, dtype=np.float32))
print(json.dumps({"stats": compiler.cache_stats(), "out": float(out),
                  "warnings": [str(w.message) for w in caught]}))
"""


def _run(env_updates: dict) -> dict:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("OLYMPUS_COMPILATION")
    }
    env.update({"OLYMPUS_COMPILATION_CACHE_MIN_COMPILE_SECS": "0", **env_updates})
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["out"] == float((np.arange(4) * 2.5 + 1.0).sum())
    return result


def test_second_process_loads_the_program_from_the_cache(tmp_path):
    env = {"OLYMPUS_COMPILATION_CACHE_DIR": str(tmp_path)}
    first = _run(env)["stats"]
    assert (first["hits"], first["misses"], first["stores"]) == (0, 1, 1)
    assert [p.suffix for p in tmp_path.iterdir()] == [".xla"]
    second = _run(env)["stats"]
    assert (second["hits"], second["misses"], second["stores"]) == (1, 0, 0)


def test_corrupt_entry_warns_and_recompiles(tmp_path):
    env = {"OLYMPUS_COMPILATION_CACHE_DIR": str(tmp_path)}
    _run(env)
    (entry,) = tmp_path.iterdir()
    entry.write_bytes(b"\x00 truncated")
    result = _run(env)
    stats = result["stats"]
    assert (stats["hits"], stats["misses"], stats["errors"], stats["stores"]) == (
        0,
        1,
        1,
        1,
    )
    assert any(
        "ignoring unreadable compilation cache entry" in w for w in result["warnings"]
    )
    assert _run(env)["stats"]["hits"] == 1  # rewritten, loads again


def test_on_by_default_in_the_user_cache_folder_and_off_by_flag(tmp_path):
    xdg = tmp_path / "xdg"
    stats = _run({"XDG_CACHE_HOME": str(xdg)})["stats"]
    assert stats["stores"] == 1
    assert [p.suffix for p in (xdg / "olympus").iterdir()] == [".xla"]
    off = tmp_path / "off"
    stats = _run({"XDG_CACHE_HOME": str(off), "OLYMPUS_COMPILATION_CACHE": "0"})[
        "stats"
    ]
    assert stats == dict.fromkeys(stats, 0) and not off.exists()


def test_config_flag_turns_the_cache_off(compilation_cache_dir):
    olympus.config.update("olympus_compilation_cache", False)
    try:
        assert compiler.cache_dir() is None
        out = olympus.jit(lambda x: x * 8.5)(np.ones(2, np.float32))
    finally:
        olympus.config.update("olympus_compilation_cache", True)
    np.testing.assert_array_equal(np.asarray(out), [8.5, 8.5])
    assert list(compilation_cache_dir.iterdir()) == []
    assert compiler.cache_stats()["misses"] == 0


def test_programs_compiling_faster_than_the_minimum_are_not_written(
    compilation_cache_dir,
):
    olympus.config.update("olympus_compilation_cache_min_compile_secs", 1e9)
    out = olympus.jit(lambda x: x * 9.5)(np.ones(2, np.float32))
    np.testing.assert_array_equal(np.asarray(out), [9.5, 9.5])
    assert list(compilation_cache_dir.iterdir()) == []
    assert compiler.cache_stats()["too_fast"] == 1


# ---- size limit: least recently used entries are evicted -----------------------------
def _entry_sizes(folder) -> dict:
    return {p.name: p.stat().st_size for p in folder.iterdir() if p.suffix == ".xla"}


def _compile(scale: float):
    """A fresh jitted function each call: its program is compiled (or loaded)
    again rather than reused from the function's in-memory cache."""
    out = olympus.jit(lambda x: x * scale)(np.ones(2, np.float32))
    np.testing.assert_array_equal(np.asarray(out), [scale, scale])


def _write_old_entries(folder, sizes: dict) -> None:
    """Entries last used long ago, oldest first in `sizes`' order."""
    for i, (name, size) in enumerate(sizes.items()):
        path = folder / name
        path.write_bytes(b"\0" * size)
        os.utime(path, (1000 + i, 1000 + i))


def test_make_room_deletes_least_recently_used_first(tmp_path):
    _write_old_entries(tmp_path, {"a.xla": 40, "b.xla": 30, "c.xla": 20})
    (tmp_path / "other.tmp").write_bytes(b"\0" * 500)  # not an entry: never counted
    os.utime(tmp_path / "a.xla")  # used just now
    assert compiler.make_room(str(tmp_path), 25, limit=100)
    assert sorted(_entry_sizes(tmp_path)) == ["a.xla", "c.xla"]  # b was oldest
    assert compiler.make_room(str(tmp_path), 60, limit=100)
    assert sorted(_entry_sizes(tmp_path)) == ["a.xla"]
    assert not compiler.make_room(str(tmp_path), 101, limit=100)  # never fits
    assert sorted(_entry_sizes(tmp_path)) == ["a.xla"]  # so nothing is deleted for it


def test_make_room_ignores_entries_another_process_removed(tmp_path, monkeypatch):
    _write_old_entries(tmp_path, {"a.xla": 40, "b.xla": 30})
    real_remove = os.remove

    def raced(path):
        real_remove(path)
        raise FileNotFoundError(path)  # as if a second process got there first

    monkeypatch.setattr(os, "remove", raced)
    assert compiler.make_room(str(tmp_path), 50, limit=60)
    assert _entry_sizes(tmp_path) == {}


def test_hits_keep_entries_and_writes_evict_the_least_recently_used(
    compilation_cache_dir,
):
    _compile(10.5)
    (first,) = _entry_sizes(compilation_cache_dir)
    _compile(11.5)
    (second,) = set(_entry_sizes(compilation_cache_dir)) - {first}
    sizes = _entry_sizes(compilation_cache_dir)
    os.utime(compilation_cache_dir / first, (1000, 1000))  # both long unused,
    os.utime(compilation_cache_dir / second, (2000, 2000))  # the first the longest
    _compile(10.5)  # a hit: the first entry becomes the most recently used
    assert compiler.cache_stats()["hits"] == 1
    assert (compilation_cache_dir / first).stat().st_mtime > 2000
    limit = sizes[first] + sizes[second] + sizes[second] // 2
    with olympus.config.override("olympus_compilation_cache_max_size", limit):
        _compile(12.5)  # a third entry does not fit beside both
    left = _entry_sizes(compilation_cache_dir)
    assert first in left and second not in left and len(left) == 2
    assert sum(left.values()) <= limit
    assert compiler.cache_stats()["evictions"] == 1


def test_an_entry_larger_than_the_limit_is_not_written(compilation_cache_dir):
    with olympus.config.override("olympus_compilation_cache_max_size", 10):
        _compile(13.5)
    assert _entry_sizes(compilation_cache_dir) == {}
    assert compiler.cache_stats()["stores"] == 0


def test_no_limit_with_none_or_a_negative_size(compilation_cache_dir, monkeypatch):
    calls = []
    monkeypatch.setattr(compiler, "make_room", lambda *args: calls.append(args))
    for unlimited, scale in ((None, 14.5), (-1, 15.5)):
        with olympus.config.override("olympus_compilation_cache_max_size", unlimited):
            _compile(scale)
    assert len(_entry_sizes(compilation_cache_dir)) == 2 and calls == []


class _BytesClient:
    """Stands in for the XLA client: an executable serialises to 5 bytes."""

    @staticmethod
    def serialize_executable(executable) -> bytes:
        return b"entry"


def test_eager_folder_is_scanned_once_per_tenth_of_its_cap(tmp_path, monkeypatch):
    """Eager stores keep the folder at most EAGER_ENTRIES entries (one process)
    and evict least recently used first, but scan the folder once every tenth
    of the cap, not on every store (a full folder's scan costs a compile)."""
    monkeypatch.setattr(compiler, "EAGER_ENTRIES", 50)
    scans, entries = [], compiler._entries
    monkeypatch.setattr(compiler, "_entries", lambda d: scans.append(d) or entries(d))
    folder = tmp_path / "eager"
    for i in range(200):
        compiler._store_eager(_BytesClient, str(folder / f"{i:03d}.xla"), None)
        os.utime(folder / f"{i:03d}.xla", (i, i))  # i is its last use
        assert len(os.listdir(folder)) <= 50
    assert len(scans) <= 200 // 5 + 1  # a scan every 5 stores (50 // 10), not 200
    kept = sorted(os.listdir(folder))
    assert kept == [f"{i:03d}.xla" for i in range(200 - len(kept), 200)]
    assert len(kept) >= 45  # cut to the cap less a tenth at most


def test_writes_under_a_limit_rescan_the_folder_only_when_room_may_run_out(
    tmp_path, monkeypatch
):
    """A store scans the folder (make_room) only when the room its last scan
    found may be used up: once for 50 small entries under a large limit, and
    the limit is still kept when entries fill it (one process)."""
    scans, make_room = [], compiler.make_room
    monkeypatch.setattr(
        compiler, "make_room", lambda *a: scans.append(a) or make_room(*a)
    )
    for limit, count in ((10**9, 50), (100, 60)):
        folder = tmp_path / str(limit)
        scans.clear()
        with olympus.config.override("olympus_compilation_cache_max_size", limit):
            for i in range(count):
                compiler._store(_BytesClient, str(folder / f"{i:03d}.xla"), None)
                os.utime(folder / f"{i:03d}.xla", (i, i))
        total = sum(p.stat().st_size for p in folder.iterdir())
        assert total <= limit and (limit < 10**9 or len(scans) == 1), (total, scans)
    kept = sorted(os.listdir(tmp_path / "100"))
    assert kept == [f"{i:03d}.xla" for i in range(60 - len(kept), 60)]
