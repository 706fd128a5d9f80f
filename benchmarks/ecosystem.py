"""The JAX ecosystem's programs (tests/test_ecosystem.py) timed under JAX and
under olympus.compat, each in a fresh process.

For each library: the import time, the first run of its program (tracing and
compiling included) and a second run of the same program text in the same
process (compiled code cached: the steady state). A program olympus cannot run
yet is reported with the error that stops it.

    python benchmarks/ecosystem.py            # all libraries
    python benchmarks/ecosystem.py optax chex
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
from test_ecosystem import PROGRAMS  # noqa: E402

TIMER = r"""
import contextlib, io, json, sys, time
start = time.perf_counter()
if sys.argv[3] == "olympus":
    import olympus.compat; olympus.compat.install()
import importlib; importlib.import_module(sys.argv[1])
imported = time.perf_counter() - start
source = sys.argv[2]
times = []
for _ in range(2):
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(source, "<program>", "exec"), {"__name__": "__main__"})
    times.append(time.perf_counter() - start)
print(json.dumps([imported] + times))
"""


def time_program(module: str, source: str, under_olympus: bool) -> list | str:
    """[import, first run, second run] seconds, or the error's last line.
    The import column includes importing jax (or olympus and installing
    olympus.compat); olympus's persistent compilation cache is off, as JAX's
    is by default, so the first run compiles."""
    system = "olympus" if under_olympus else "jax"
    done = subprocess.run(
        [sys.executable, "-c", TIMER, module, source, system],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, JAX_PLATFORMS="cpu", OLYMPUS_COMPILATION_CACHE="0"),
    )
    if done.returncode != 0:
        return done.stderr.strip().splitlines()[-1][:90]
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(names: list[str]) -> None:
    print(
        "| library | JAX import / first / second run (s) | olympus import / first / second run (s) |"
    )
    print("|---|---|---|")
    for name in names or PROGRAMS:
        module, source, _, _ = PROGRAMS[name]
        row = []
        for under_olympus in (False, True):
            got = time_program(module, source, under_olympus)
            row.append(
                " / ".join(f"{t:.2f}" for t in got) if isinstance(got, list) else got
            )
        print(f"| {name} | {row[0]} | {row[1]} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
