"""1024x1024 matmul (issue 6): `jit(jnp.dot)` against NumPy's BLAS on the same data.

GFLOP/s = 2 n^3 / t, t the median over interleaved rounds of the mean of a few
back-to-back calls. Target: olympus at least 0.9x NumPy's GFLOP/s.

What is timed, per library (all on the same two NumPy matrices):
- numpy: `np.dot(a, b)`, a fresh host result per call (as XLA allocates one);
- olympus / jax "call": `f(a_dev, b_dev).block_until_ready()` with the inputs
  already on the (CPU) device: dispatch + execute, the result left in its device
  buffer. On the CPU backend that buffer is host memory NumPy can read without a
  copy, so no transfer is charged to either side;
- "to host": `np.asarray(f(a_dev, b_dev))`, the same plus reading the result
  back as a NumPy array (olympus returns a view where it can);
- "execute only": the AOT-compiled executable (`jit(f).lower(...).compile()`)
  called directly: no jit cache lookup, pytree flattening or signature hashing.

OpenBLAS's worker threads busy-wait for a while (about 0.1 s by default)
after each call: on 2 cores whichever case ran right after `np.dot` lost a
third of its speed to them (measured: olympus or JAX, whichever came second,
16-17 GFLOP/s median against 25 for the other). The script therefore sets
`OPENBLAS_THREAD_TIMEOUT=4` (the shortest spin; override it by setting the
variable yourself) before NumPy loads OpenBLAS; NumPy's own time did not change.

    python benchmarks/matmul.py [--quick] [--no-jax] [--n 1024] [--no-f64]
"""

from __future__ import annotations

import os

# before numpy loads OpenBLAS, which reads it once (see the docstring)
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import argparse
import statistics
import sys

import numpy as np
from harness import interleaved, jax_available, libraries, load, machine


class _NumPyLib:
    """numpy has nothing to wait for; this lets harness.interleaved time it."""

    @staticmethod
    def block_until_ready(x):
        return x


def make_data(n: int, dtype, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((n, n)).astype(dtype),
        rng.standard_normal((n, n)).astype(dtype),
    )


def enable_x64(names) -> None:
    """float64 needs x64 in both libraries (float32 programs are unaffected)."""
    for name in names:
        lib = load(name)[0]
        lib.config.update(f"{name}_enable_x64", True)


def calls_for(name: str, a, b) -> dict:
    """{case: (lib, fn)} for one library on the matrices a, b."""
    if name == "numpy":
        return {"numpy": (_NumPyLib, lambda: np.dot(a, b))}
    lib, jnp, _ = load(name)
    dot = lib.jit(jnp.dot)
    a_dev, b_dev = lib.device_put(a), lib.device_put(b)
    compiled = lib.jit(jnp.dot).lower(a_dev, b_dev).compile()
    return {
        f"{name} call": (lib, lambda: dot(a_dev, b_dev)),
        f"{name} to host": (_NumPyLib, lambda: np.asarray(dot(a_dev, b_dev))),
        f"{name} execute only": (lib, lambda: compiled(a_dev, b_dev)),
    }


def max_relative_error(calls: dict, want: np.ndarray) -> dict:
    """Each case's result against NumPy's, relative to NumPy's largest entry."""
    scale = float(np.max(np.abs(want)))
    return {
        case: float(np.max(np.abs(np.asarray(fn(), np.float64) - want))) / scale
        for case, (lib, fn) in calls.items()
        if case != "numpy"
    }


def run_dtype(n: int, dtype, names, number: int, rounds: int):
    """(median seconds per case, best seconds per case, errors) for one dtype."""
    a, b = make_data(n, dtype)
    calls = {}
    for name in ["numpy", *names]:
        calls.update(calls_for(name, a, b))
    errors = max_relative_error(
        calls, np.dot(a.astype(np.float64), b.astype(np.float64))
    )
    samples = interleaved(calls, number, rounds)
    medians = {case: statistics.median(s) for case, s in samples.items()}
    best = {case: min(s) for case, s in samples.items()}
    return medians, best, errors


def format_rows(
    n: int, dtype_name: str, medians: dict, best: dict, errors: dict
) -> list:
    flop = 2.0 * n**3
    rows = []
    for case, t in medians.items():
        ratio = medians["numpy"] / t
        best_ratio = best["numpy"] / best[case]
        err = "-" if case == "numpy" else f"{errors[case]:.1e}"
        rows.append(
            f"| {dtype_name} {case} | {t * 1e3:.2f} ms | {flop / t / 1e9:.1f} | "
            f"{ratio:.2f}x | {best_ratio:.2f}x | {err} |"
        )
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument("--no-f64", action="store_true")
    parser.add_argument("--n", type=int, default=1024)
    opts = parser.parse_args(argv)
    names = libraries(not opts.no_jax and jax_available())
    number, rounds = (3, 7) if opts.quick else (3, 11)
    dtypes = [("f32", np.float32)] + ([] if opts.no_f64 else [("f64", np.float64)])
    if not opts.no_f64:
        enable_x64(names)
    print(
        f"matmul {opts.n}x{opts.n} @ {opts.n}x{opts.n}: jit(jnp.dot) vs np.dot "
        f"({number} calls per round, {rounds} interleaved rounds)"
    )
    print(
        machine() + f"; OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']}"
    )
    print(
        "| case | median time | GFLOP/s | vs numpy (median) | vs numpy (best round) "
        "| max rel. error vs f64 |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    summary = []
    for dtype_name, dtype in dtypes:
        medians, best, errors = run_dtype(opts.n, dtype, names, number, rounds)
        print(
            "\n".join(format_rows(opts.n, dtype_name, medians, best, errors)),
            flush=True,
        )
        summary.append(
            f"{dtype_name} olympus/numpy {medians['numpy'] / medians['olympus call']:.2f}x"
            f" ({2.0 * opts.n**3 / medians['olympus call'] / 1e9:.1f} GFLOP/s)"
        )
    print("SUMMARY matmul: " + ", ".join(summary) + " (target >= 0.90x)")
    assert "jax" in names or sys.modules.get("jax") is None


if __name__ == "__main__":
    main()
