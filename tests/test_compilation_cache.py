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
