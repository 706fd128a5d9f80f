"""Shared timing for the workload benchmarks (mlp_training, per_example_grads, ...).

The machine is shared and noisy, so olympus and JAX are always measured in the
same process, interleaved round by round, and a figure is the median over
rounds. First-call (trace + compile) times are taken in fresh interpreters,
since a process that already compiled the program may have cached parts of it.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")


def jax_available() -> bool:
    return importlib.util.find_spec("jax") is not None


def load(name: str):
    """(library, its numpy, its lax) for "olympus" or "jax" (on CPU)."""
    if name == "olympus":
        import olympus
        import olympus.numpy as jnp
        from olympus import lax

        return olympus, jnp, lax
    import jax
    import jax.numpy as jnp
    from jax import lax

    jax.config.update("jax_platforms", "cpu")
    return jax, jnp, lax


def libraries(with_jax: bool) -> list[str]:
    return ["olympus"] + (["jax"] if with_jax else [])


def time_per_call(lib, fn, number: int) -> float:
    """Mean seconds of `number` back-to-back calls, waiting for the last result."""
    start = time.perf_counter()
    for _ in range(number):
        out = fn()
    lib.block_until_ready(out)
    return (time.perf_counter() - start) / number


def interleaved(calls: dict, number: int, rounds: int) -> dict:
    """{name: [seconds per call, one per round]}; `calls[name] = (lib, fn)`.

    Each fn is called once first (compilation), then rounds alternate between
    the libraries, in alternating order, so that load on the machine hits them alike."""
    for lib, fn in calls.values():
        lib.block_until_ready(fn())
    samples = {name: [] for name in calls}
    order = list(calls)
    for _ in range(rounds):
        for name in order:
            lib, fn = calls[name]
            samples[name].append(time_per_call(lib, fn, number))
        order.reverse()  # neither library always runs right after the other's caches
    return samples


def fresh_process_seconds(script: str, args: list[str], repeats: int) -> list[float]:
    """Runs `python script *args` `repeats` times; each prints seconds on its last line."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, script, *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if out.returncode != 0:
            raise RuntimeError(
                f"{script} {' '.join(args)} failed:\n{out.stderr[-2000:]}"
            )
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return times


def format_table(rows: list[tuple], names: list[str]) -> str:
    """rows: (case, unit, {name: samples}); medians, and olympus/jax ratios of
    medians and of best rounds when jax was measured."""
    scale = {"ms": 1e3, "s": 1.0, "us": 1e6}
    head = (
        "| case | "
        + " | ".join(names)
        + (" | olympus / jax | best-round ratio |" if "jax" in names else " |")
    )
    lines = [head, "|---" * (len(names) + 1 + 2 * ("jax" in names)) + "|"]
    for case, unit, samples in rows:
        k = scale[unit]
        med = {n: statistics.median(samples[n]) for n in names if n in samples}
        cells = [f"{med[n] * k:.2f} {unit}" if n in med else "-" for n in names]
        line = f"| {case} | " + " | ".join(cells) + " |"
        if "jax" in names:
            if "jax" in med and "olympus" in med:
                best = min(samples["olympus"]) / min(samples["jax"])
                line += f" {med['olympus'] / med['jax']:.2f}x | {best:.2f}x |"
            else:
                line += " - | - |"
        lines.append(line)
    return "\n".join(lines)


def machine() -> str:
    """One line naming the machine and its load, for the results table."""
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(
                line.split(":", 1)[1].strip()
                for line in f
                if line.startswith("model name")
            )
    except (OSError, StopIteration):
        pass
    import jaxlib

    load_avg = os.getloadavg()[0]
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores, "
        f"{cpu}; load average {load_avg:.1f}; Python {sys.version.split()[0]}, "
        f"jaxlib {jaxlib.__version__}"
    )
