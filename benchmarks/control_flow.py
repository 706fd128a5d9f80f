"""Control flow (issue 5): a scan RNN's gradient and a while-loop Newton iteration.

  - scan RNN: `h = tanh(h @ W + x_t @ U + b)` over T=100 steps, hidden 128,
    batch 16, float32; `jit(grad(loss))` with respect to (W, U, b);
  - Newton: sqrt of 4096 numbers by `fori_loop(0, n, newton_step, x)` with a
    traced trip count `n` (so it is a `while` loop), n = 30, under `jit`;
  - small body: `while_loop` over a scalar (counter, running value), 1000
    steps with a traced bound, under `jit`: the per-iteration cost of XLA's
    loop, where the body itself costs almost nothing (issue 33).
Olympus and (when importable) JAX are interleaved in one process.
Target: <= 1.1x JAX (issue 33: <= 1.0x for the while loops).

    python benchmarks/control_flow.py [--quick] [--no-jax] [--rounds N]
"""

from __future__ import annotations

import argparse

import numpy as np
from harness import format_table, interleaved, jax_available, libraries, load, machine

T, HIDDEN, BATCH, FEATURES = 100, 128, 16, 32
NEWTON_SIZE, NEWTON_STEPS = 4096, 30
SMALL_STEPS = 1000


def rnn_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = (
        rng.standard_normal((HIDDEN, HIDDEN), np.float32) / np.sqrt(HIDDEN),
        rng.standard_normal((FEATURES, HIDDEN), np.float32) / np.sqrt(FEATURES),
        np.zeros(HIDDEN, np.float32),
    )
    xs = rng.standard_normal((T, BATCH, FEATURES), np.float32)
    return params, xs


def make_rnn_loss(jnp, lax):
    def loss(params, xs):
        w, u, b = params

        def step(h, x):
            h = jnp.tanh(h @ w + x @ u + b)
            return h, jnp.sum(h * h)

        h, per_step = lax.scan(step, jnp.zeros((BATCH, HIDDEN), jnp.float32), xs)
        return jnp.sum(per_step) / T + jnp.sum(h)

    return loss


def make_newton_sqrt(lax):
    def newton_sqrt(a, n):
        """sqrt(a) by n Newton steps y <- (y + a / y) / 2 from y = a (a > 0)."""
        return lax.fori_loop(0, n, lambda i, y: 0.5 * (y + a / y), a)

    return newton_sqrt


def make_small_loop(lax):
    def small_loop(n):
        """A scalar recurrence v <- 0.999 v + 1 for n steps (a while loop)."""
        return lax.while_loop(
            lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 0.999 + 1.0), (0, 0.0)
        )[1]

    return small_loop


def workloads(name: str) -> dict:
    lib, jnp, lax = load(name)
    params, xs = lib.device_put(rnn_data())
    rnn_grad = lib.jit(lib.grad(make_rnn_loss(jnp, lax)))
    a = lib.device_put(np.linspace(0.5, 100.0, NEWTON_SIZE, dtype=np.float32))
    newton = lib.jit(make_newton_sqrt(lax))
    n = lib.device_put(np.int32(NEWTON_STEPS))
    small = lib.jit(make_small_loop(lax))
    steps = lib.device_put(np.int32(SMALL_STEPS))
    return {
        "scan RNN jit(grad)": (lib, lambda: rnn_grad(params, xs)),
        "fori_loop Newton (while)": (lib, lambda: newton(a, n)),
        "while_loop small body": (lib, lambda: small(steps)),
    }


def check_same(per_lib: dict) -> None:
    """Both libraries agree; Newton converges to sqrt."""
    results = [
        {case: fn() for case, (lib, fn) in cases.items()} for cases in per_lib.values()
    ]
    for r in results:
        np.testing.assert_allclose(
            np.asarray(r["fori_loop Newton (while)"]),
            np.sqrt(np.linspace(0.5, 100.0, NEWTON_SIZE, dtype=np.float32)),
            rtol=1e-5,
        )
        np.testing.assert_allclose(
            float(r["while_loop small body"]),
            1000 * (1 - 0.999**SMALL_STEPS),
            rtol=1e-3,
        )
        for g, g0 in zip(r["scan RNN jit(grad)"], results[0]["scan RNN jit(grad)"]):
            np.testing.assert_allclose(
                np.asarray(g), np.asarray(g0), rtol=2e-3, atol=1e-4
            )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument(
        "--rounds",
        type=int,
        help="interleaved rounds (21; 5 with --quick): more "
        "give steadier best rounds on a loaded machine",
    )
    opts = parser.parse_args(argv)
    names = libraries(not opts.no_jax and jax_available())
    rounds = opts.rounds or (5 if opts.quick else 21)
    per_lib = {n: workloads(n) for n in names}
    check_same(per_lib)
    rows = []
    cases = (  # (case, calls per round, unit)
        ("scan RNN jit(grad)", 10, "ms"),
        ("fori_loop Newton (while)", 500, "us"),
        ("while_loop small body", 500, "us"),
    )
    for case, number, unit in cases:
        calls = {n: per_lib[n][case] for n in names}
        rows.append((case, unit, interleaved(calls, number, rounds)))
    print(
        f"scan RNN: T={T}, hidden {HIDDEN}, batch {BATCH}, {FEATURES} features, f32; "
        f"Newton sqrt: {NEWTON_SIZE} f32 values, {NEWTON_STEPS} steps (traced trip count); "
        f"small while body: {SMALL_STEPS} scalar steps"
    )
    print(machine())
    print(format_table(rows, names))


if __name__ == "__main__":
    main()
