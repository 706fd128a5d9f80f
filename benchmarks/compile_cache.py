"""Persistent compilation cache: first-call time in a fresh process, cold vs warm.

Each round starts a fresh interpreter that imports olympus and times the first
call of `jit(grad(loss))` for a 16-layer tanh MLP (trace + lower + compile or
load + run), and the interpreter's whole wall time. "cold" runs get an empty
cache folder; "warm" runs reuse a folder that one earlier process filled.
Cold and warm rounds are interleaved (the machine is shared and noisy) and each
figure is the median over rounds.

    python benchmarks/compile_cache.py            # 7 rounds
    python benchmarks/compile_cache.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

FIRST_CALL = """
import time
start = time.perf_counter()
import numpy as np
import olympus
import olympus.numpy as jnp
from olympus.backends.xla import compiler
imported = time.perf_counter()

def loss(ws, x):
    for w in ws:
        x = jnp.tanh(x @ w)
    return jnp.sum(x * x)

rng = np.random.default_rng(0)
ws = [rng.normal(size=(64, 64)).astype(np.float32) * 0.1 for _ in range(16)]
x = rng.normal(size=(8, 64)).astype(np.float32)
grads = olympus.block_until_ready(olympus.jit(olympus.grad(loss))(ws, x))
done = time.perf_counter()
import json
print(json.dumps({"first_call": done - imported, "stats": compiler.cache_stats()}))
"""


def run_once(cache_dir: str) -> tuple[float, float, dict]:
    """(first-call seconds, process wall seconds, cache counters) of one fresh process."""
    env = dict(
        os.environ, OLYMPUS_COMPILATION_CACHE_DIR=cache_dir, TF_CPP_MIN_LOG_LEVEL="1"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALL],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["first_call"], wall, result["stats"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    warm_dir = tempfile.mkdtemp(prefix="olympus-bench-warm-")
    run_once(warm_dir)  # fills the warm folder
    cold, warm = [], []
    try:
        for _ in range(rounds):
            cold_dir = tempfile.mkdtemp(prefix="olympus-bench-cold-")
            try:
                cold.append(run_once(cold_dir))
            finally:
                shutil.rmtree(cold_dir, ignore_errors=True)
            warm.append(run_once(warm_dir))
    finally:
        shutil.rmtree(warm_dir, ignore_errors=True)
    assert all(stats["hits"] == 0 for _, _, stats in cold)
    assert all(stats["misses"] == 0 for _, _, stats in warm), "warm runs compiled"
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"{rounds} rounds, load average {load}, nproc {os.cpu_count()}")
    print("| cache | first call (median) | process wall (median) | compiles | loads |")
    print("|---|---:|---:|---:|---:|")
    for name, runs in (("cold", cold), ("warm", warm)):
        first = statistics.median(r[0] for r in runs)
        wall = statistics.median(r[1] for r in runs)
        stats = runs[-1][2]
        print(
            f"| {name} | {first * 1000:.0f} ms | {wall * 1000:.0f} ms | "
            f"{stats['misses']} | {stats['hits']} |"
        )
    ratio = statistics.median(r[0] for r in cold) / statistics.median(
        r[0] for r in warm
    )
    print(f"first call, cold / warm: {ratio:.1f}x")


if __name__ == "__main__":
    main()
