"""XLA's classic CPU emitter against its MLIR fusion emitters
(`olympus_cpu_classic_emitter`, olympus/backends/xla/compiler.py).

For each program: the first call (trace, lower, compile, run; no persistent
cache) and the steady-state call (best of rounds), compiled each way in the
same process, alternately. The one-op programs are what eager mode compiles
(the default compiles those with the classic emitter); the rest are jit
programs (the default keeps the fusion emitters). The notebook-like first
cell (20 eager ops in a fresh interpreter, empty cache) is in dispatch.py.

    python benchmarks/codegen.py            # under a minute
    python benchmarks/codegen.py --quick    # fewer rounds
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
os.environ["OLYMPUS_COMPILATION_CACHE"] = "0"  # every first call compiles

import olympus  # noqa: E402
import olympus.numpy as jnp  # noqa: E402
from olympus import nn  # noqa: E402


def programs() -> dict:
    """name -> (function, arguments)."""
    rng = np.random.default_rng(0)
    small = olympus.device_put(np.linspace(0.1, 1.0, 12, dtype=np.float32))
    big = olympus.device_put(rng.normal(size=(1024, 1024)).astype(np.float32))
    vec = olympus.device_put(rng.normal(size=(1 << 20,)).astype(np.float32))
    w = olympus.device_put(rng.normal(size=(512, 512)).astype(np.float32) / 20)
    xb = olympus.device_put(rng.normal(size=(256, 512)).astype(np.float32))
    return {
        "one op: sin f32[12]": (jnp.sin, (small,)),
        "one op: add f32[12]": (lambda a: a + a, (small,)),
        "one op: tanh f32[1024,1024]": (jnp.tanh, (big,)),
        "one op: transpose f32[1024,1024]": (lambda a: a.T, (big,)),
        "one op: argmax rows f32[1024,1024]": (lambda a: jnp.argmax(a, 1), (big,)),
        "transcendentals f32[1M]": (
            lambda v: jnp.tanh(jnp.exp(jnp.sin(v)) + jnp.log1p(v * v)),
            (vec,),
        ),
        "softmax f32[1024,1024]": (lambda a: nn.softmax(a, axis=-1), (big,)),
        "normalize columns": (lambda a: (a - a.mean(0)) / (a.std(0) + 1e-5), (big,)),
        "a + a.T": (lambda a: a + a.T, (big,)),
        "pad and slice (stencil)": (
            lambda a: jnp.pad(a, 1)[:-2, 1:-1] + jnp.pad(a, 1)[2:, 1:-1],
            (big,),
        ),
        "tanh layer, grad": (
            lambda w, x: olympus.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w),
            (w, xb),
        ),
        "Newton sqrt, fori_loop": (
            lambda v: olympus.lax.fori_loop(
                0, 30, lambda i, y: 0.5 * (y + jnp.abs(v[:4096]) / y), jnp.ones(4096)
            ),
            (vec,),
        ),
    }


MODES = {"classic": "all", "fusion": "none"}


def first_call(fun, args, mode: str) -> tuple:
    """(seconds of the first call, the jitted function), compiled in `mode`."""
    with olympus.config.override("olympus_cpu_classic_emitter", MODES[mode]):
        jitted = olympus.jit(fun)
        start = time.perf_counter()
        olympus.block_until_ready(jitted(*args))
    return time.perf_counter() - start, jitted


def steady(jitted, args, rounds: int) -> float:
    """Best over rounds of the mean seconds per call (5 calls a round)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(5):
            out = jitted(*args)
        olympus.block_until_ready(out)
        best = min(best, (time.perf_counter() - start) / 5)
    return best


def run(rounds: int, compiles: int) -> list[str]:
    lines = [
        "| program | first call, classic | first call, fusion | steady, classic"
        " | steady, fusion | steady classic / fusion |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, (fun, args) in programs().items():
        firsts = {mode: [] for mode in MODES}
        for i in range(compiles):  # alternate which mode compiles first
            for mode in MODES if i % 2 == 0 else reversed(list(MODES)):
                seconds, jitted = first_call(fun, args, mode)
                firsts[mode].append(seconds)
        runs = {}
        for mode in MODES:
            _, jitted = first_call(fun, args, mode)
            runs[mode] = steady(jitted, args, rounds)
        first = {mode: statistics.median(v) * 1e3 for mode, v in firsts.items()}
        ratio = runs["classic"] / runs["fusion"]
        lines.append(
            f"| {name} | {first['classic']:.1f} ms | {first['fusion']:.1f} ms | "
            f"{runs['classic'] * 1e3:.3f} ms | {runs['fusion'] * 1e3:.3f} ms | "
            f"{ratio:.2f}x |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    opts = parser.parse_args()
    rounds, compiles = (10, 3) if opts.quick else (30, 5)
    print("\n".join(run(rounds, compiles)))


if __name__ == "__main__":
    main()
