"""MLP training step (issue 3): `jit(value_and_grad(loss))` of a 4-layer MLP.

Batch 128, width 512, float32, tanh hidden layers, mean squared error. Reports
the steady-state step time (median over interleaved rounds, olympus and JAX in
one process) and the first call (trace + compile + run) in fresh interpreters,
both as the first program of the process and after another step was compiled
(olympus's persistent compilation cache is turned off there: JAX has none by default).
Targets: steady state <= 1.1x JAX, first call <= 1.0x JAX.

    python benchmarks/mlp_training.py [--quick] [--no-jax]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from harness import (
    format_table,
    fresh_process_seconds,
    interleaved,
    jax_available,
    libraries,
    load,
    machine,
)

BATCH, WIDTH, LAYERS = 128, 512, 4


def make_data(seed: int = 0):
    """Weights (LAYERS of (W, b)), inputs and targets as NumPy float32 arrays."""
    rng = np.random.default_rng(seed)
    params = [
        (
            rng.standard_normal((WIDTH, WIDTH), np.float32) / np.sqrt(WIDTH),
            np.zeros(WIDTH, np.float32),
        )
        for _ in range(LAYERS)
    ]
    x = rng.standard_normal((BATCH, WIDTH), np.float32)
    y = rng.standard_normal((BATCH, WIDTH), np.float32)
    return params, x, y


def make_loss(jnp):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        return jnp.mean((h @ w + b - y) ** 2)

    return loss


def training_step(name: str):
    """(lib, step, args): the jitted value_and_grad and device-resident arguments."""
    lib, jnp, _ = load(name)
    params, x, y = make_data()
    args = lib.device_put((params, x, y))
    return lib, lib.jit(lib.value_and_grad(make_loss(jnp))), args


def first_call(name: str, warm: bool) -> float:
    """Seconds of the first call of a new jitted step, after the backend is up.

    With `warm`, another training step (batch 64, so nothing compiled can be
    reused) is traced and compiled first: this excludes the library's one-time
    costs of its first trace (lazy imports, rule tables, ...)."""
    lib, step, args = training_step(name)
    lib.block_until_ready(lib.jit(lambda a: a + 1)(args[1]))  # start the client
    if warm:
        params, x, y = args
        lib.block_until_ready(
            lib.jit(lib.value_and_grad(make_loss(load(name)[1])))(
                params, x[:64], y[:64]
            )
        )
    start = time.perf_counter()
    lib.block_until_ready(step(*args))
    return time.perf_counter() - start


def check_same(results: dict) -> None:
    """Both libraries compute the same loss and gradients."""
    (v0, g0), *others = results.values()
    for v, g in others:
        np.testing.assert_allclose(np.asarray(v), np.asarray(v0), rtol=1e-4)
        for a, b in zip(
            np.asarray(g[0][0]).ravel()[:1000], np.asarray(g0[0][0]).ravel()[:1000]
        ):
            assert abs(a - b) <= 1e-4 + 1e-3 * abs(b)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument(
        "--first-call", choices=["olympus", "jax"], help=argparse.SUPPRESS
    )
    parser.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--fresh", type=int, help="fresh interpreters per first-call case"
    )
    opts = parser.parse_args(argv)
    if opts.first_call:
        # olympus keeps compiled programs on disk by default; JAX does not: compare compiles
        os.environ["OLYMPUS_COMPILATION_CACHE"] = "0"
        print(first_call(opts.first_call, opts.warm))
        return
    names = libraries(not opts.no_jax and jax_available())
    rounds, number, fresh = (5, 5, 2) if opts.quick else (11, 10, 5)
    steps = {n: training_step(n) for n in names}
    check_same({n: step(*args) for n, (lib, step, args) in steps.items()})
    calls = {
        n: (lib, lambda step=step, args=args: step(*args))
        for n, (lib, step, args) in steps.items()
    }
    steady = interleaved(calls, number, rounds)
    fresh = opts.fresh or fresh
    firsts = {n: [] for n in names}
    seconds = {n: [] for n in names}
    for _ in range(fresh):  # interleaved fresh interpreters
        for n in names:
            firsts[n] += fresh_process_seconds(__file__, ["--first-call", n], 1)
            seconds[n] += fresh_process_seconds(
                __file__, ["--first-call", n, "--warm"], 1
            )
    print(f"MLP {LAYERS}x{WIDTH}, batch {BATCH}, f32: jit(value_and_grad(loss))")
    print(machine())
    print(
        format_table(
            [
                ("steady-state step", "ms", steady),
                ("first call (trace+compile+run)", "s", firsts),
                ("first call, after another step compiled", "s", seconds),
            ],
            names,
        )
    )
    for label, samples in (("first call", firsts), ("after another step", seconds)):
        for n in names:
            print(
                f"{label}, {n}, each process: "
                + " ".join(f"{t:.2f}" for t in samples[n])
            )
    assert "jax" in names or sys.modules.get("jax") is None


if __name__ == "__main__":
    main()
