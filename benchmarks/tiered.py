"""Tiered execution (issue 15): time to the first result of a new
`jit(value_and_grad(loss))` of a 4-layer MLP (batch 128, width 512, f32).

Columns: olympus's ordinary first call (trace + compile + run), the same with
`jit(..., tiered=True)` (trace + optimize + NumPy interpretation; XLA compiles
in the background), and JAX's first call when jax is importable. Each figure
is the median over fresh interpreters (the backend client started first, the
persistent compilation cache off, as JAX has none by default), both as the
first program of the process ("cold") and after another step (batch 64) was
compiled ("warm": one-time costs of a library's first trace excluded), in
wall-clock time and in CPU time of the process (all its threads: XLA compiles
on threads of its own; on a loaded machine the CPU time is the steadier
measure, the wall-clock time mostly waits for a core). For the
tiered column it also reports when the compiled executable was ready (seconds
after the first call began) and that the interpreted result matches it.

With `--scan`, it times instead the tiered first call of a `lax.scan` of
20 matmuls (256x256, f32) against the same 20 matmuls unrolled (issue 30:
the tier's own BLAS rule runs in the scan body, so the two should cost about
the same; the budget is 1.5x).

    python benchmarks/tiered.py [--quick] [--no-jax] [--fresh N] [--scan]
    PYTHONPATH=$PWD:/tmp/jaxpkg python benchmarks/tiered.py   # JAX column
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from harness import jax_available, load, machine
from mlp_training import make_data, make_loss

MODES = ("olympus", "tiered", "jax")


def first_call(mode: str, warm: bool) -> dict:
    """Seconds to the first result of a new jitted step in this process."""
    lib, jnp, _ = load("jax" if mode == "jax" else "olympus")
    params, x, y = make_data()
    args = lib.device_put((params, x, y))
    lib.block_until_ready(lib.jit(lambda a: a + 1)(args[1]))  # start the client
    kwargs = {"tiered": True} if mode == "tiered" else {}
    if warm:
        other = lib.jit(lib.value_and_grad(make_loss(jnp)), **kwargs)
        lib.block_until_ready(other(params, x[:64], y[:64]))
        for pending in list(getattr(other, "_pending", {}).values()):
            pending.done.wait()  # its compile must not overlap the measured call
    step = lib.jit(lib.value_and_grad(make_loss(jnp)), **kwargs)
    cpu, start = time.process_time(), time.perf_counter()
    first = lib.block_until_ready(step(*args))
    seconds = time.perf_counter() - start
    report = {"first": seconds, "cpu": time.process_time() - cpu}
    if mode == "tiered":
        for pending in list(step._pending.values()):
            pending.done.wait()
        report["ready"] = time.perf_counter() - start
        compiled = step(*args)  # takes the compiled executable now
        assert step._cache, "the second call did not install the compiled step"
        check_close(first, compiled)
    return report


def scan_first_calls(repeats: int) -> dict:
    """Median seconds of a new tiered jit's first call (trace, optimize,
    interpret) of 20 matmuls in a scan and unrolled, and of the
    interpretation alone."""
    os.environ["OLYMPUS_COMPILATION_CACHE"] = "0"  # as `fresh`'s processes
    import olympus
    from olympus import lax
    from olympus.backends.interpreted import interpret

    w = np.random.default_rng(0).normal(size=(256, 256)).astype(np.float32) / 16
    x = np.ones((256, 256), np.float32)

    def scanned(w, x):
        return lax.scan(lambda c, _: (c @ w, None), x, None, length=20)[0]

    def unrolled(w, x):
        for _ in range(20):
            x = x @ w
        return x

    times: dict = {}
    for _ in range(repeats):
        for name, f in (("scan", scanned), ("unrolled", unrolled)):
            olympus.clear_caches()  # no executable of the last round's program
            step = olympus.jit(f, tiered=True)  # new each time: a first call
            start = time.perf_counter()
            out = olympus.block_until_ready(step(w, x))
            times.setdefault(name, []).append(time.perf_counter() - start)
            for pending in list(step._pending.values()):
                pending.done.wait()  # its compile must not overlap the next
            closed = olympus.make_olympuspr(f)(w, x)
            start, cpu = time.perf_counter(), time.process_time()
            interpret(closed, [w, x])
            times.setdefault(name + " interpreted", []).append(
                time.perf_counter() - start
            )
            times.setdefault(name + " interpreted cpu", []).append(
                time.process_time() - cpu
            )
            times.setdefault(name + " out", []).append(np.asarray(out))
    np.testing.assert_allclose(
        times["scan out"][0], times["unrolled out"][0], rtol=1e-3, atol=1e-4
    )
    return {k: statistics.median(v) for k, v in times.items() if "out" not in k}


def print_scan_row(repeats: int) -> None:
    med = scan_first_calls(repeats)
    print(
        f"20 matmuls 256x256 f32, tiered first call; {machine()}; median of {repeats}"
    )
    print("| case | scan | unrolled | scan / unrolled |")
    print("|---|---|---|---|")
    for key, what in (
        ("", "first call"),
        (" interpreted", "interpretation only"),
        (" interpreted cpu", "interpretation only, CPU time (all threads)"),
    ):
        a, b = med["scan" + key], med["unrolled" + key]
        print(f"| {what} | {a * 1e3:.1f} ms | {b * 1e3:.1f} ms | {a / b:.2f}x |")


def check_close(a, b) -> None:
    (va, ga), (vb, gb) = a, b
    np.testing.assert_allclose(np.asarray(va), np.asarray(vb), rtol=1e-4)
    for (wa, ba), (wb, bb) in zip(ga, gb):
        np.testing.assert_allclose(np.asarray(wa), np.asarray(wb), rtol=2e-3, atol=1e-5)
        np.testing.assert_allclose(np.asarray(ba), np.asarray(bb), rtol=2e-3, atol=1e-5)


def fresh(mode: str, warm: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["OLYMPUS_COMPILATION_CACHE"] = "0"  # JAX has no persistent cache by default
    args = [sys.executable, __file__, "--child", mode] + (["--warm"] if warm else [])
    out = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument("--fresh", type=int, help="fresh interpreters per case")
    parser.add_argument("--scan", action="store_true", help="the scan row only")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        print(json.dumps(first_call(opts.child, opts.warm)))
        return
    if opts.scan:
        print_scan_row(opts.fresh or (3 if opts.quick else 7))
        return
    modes = [m for m in MODES if m != "jax" or (not opts.no_jax and jax_available())]
    repeats = opts.fresh or (3 if opts.quick else 7)
    samples = {(m, w): [] for m in modes for w in (False, True)}
    loads = []
    for _ in range(repeats):  # interleaved, so load on the machine hits all alike
        loads.append(os.getloadavg()[0])
        for warm in (False, True):
            for mode in modes:
                samples[mode, warm].append(fresh(mode, warm))
    print("MLP 4x512, batch 128, f32: first call of a new jit(value_and_grad(loss))")
    print(machine() + f"; median of {repeats} fresh interpreters")
    print("load average before each round: " + " ".join(f"{x:.1f}" for x in loads))
    ratios = " | tiered / jax |"
    print("| case | " + " | ".join(modes) + (ratios if "jax" in modes else " |"))
    print("|---" * (len(modes) + 1 + ("jax" in modes)) + "|")
    for key, what in (("first", "time"), ("cpu", "CPU time (all threads)")):
        for warm in (False, True):
            med = {
                m: statistics.median(s[key] for s in samples[m, warm]) for m in modes
            }
            label = "warm" if warm else "cold"
            row = f"| {what} to first result, {label} | " + " | ".join(
                f"{med[m] * 1e3:.1f} ms" for m in modes
            )
            if "jax" in modes:
                row += f" | {med['tiered'] / med['jax']:.3f}x"
            print(row + " |")
    for mode in [m for m in modes if m.startswith("tiered")]:
        for warm in (False, True):
            ready = statistics.median(s["ready"] for s in samples[mode, warm])
            print(
                f"{mode}, {'warm' if warm else 'cold'}: compiled executable ready "
                f"{ready * 1e3:.1f} ms after the first call began"
            )
    for (mode, warm), runs in samples.items():
        print(
            f"{mode}, {'warm' if warm else 'cold'}, each process (ms): "
            + " ".join(f"{s['first'] * 1e3:.1f}" for s in runs)
        )
    assert "jax" in modes or sys.modules.get("jax") is None


if __name__ == "__main__":
    main()
