"""Small conv net SGD step (issue 6): `jit` of value_and_grad plus the update.

Batch 32 of 28x28x1 images (NHWC, HWIO kernels), float32:
conv 3x3 1->16 SAME, relu, max pool 2x2 (reduce_window max) -> 14x14x16;
conv 3x3 16->32 SAME, relu, average pool 2x2 (reduce_window sum / 4) -> 7x7x32;
dense 1568->10; softmax cross-entropy against 10 classes. One step computes
the loss and its gradient and applies SGD (lr 0.01), all in one jitted program.

Reports the steady-state step (median over interleaved rounds, olympus and JAX
in one process, same initial data) and the first call (trace + compile + run)
in fresh interpreters with olympus's persistent compile cache off. Prints, does
not assert: the losses of a few steps (they should decrease) and the largest
difference between the libraries' first losses and gradients.

    python benchmarks/conv_net.py [--quick] [--no-jax]
"""

from __future__ import annotations

import argparse
import os
import statistics
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

BATCH, SIZE, CLASSES, LR = 32, 28, 10, 0.01


def make_data(seed: int = 0):
    """Parameters [(w, b)] x 3, images and integer labels, as NumPy arrays."""
    rng = np.random.default_rng(seed)

    def he(*shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    params = [
        (he(3, 3, 1, 16, fan_in=9), np.zeros(16, np.float32)),
        (he(3, 3, 16, 32, fan_in=144), np.zeros(32, np.float32)),
        (he(7 * 7 * 32, CLASSES, fan_in=7 * 7 * 32), np.zeros(CLASSES, np.float32)),
    ]
    x = rng.standard_normal((BATCH, SIZE, SIZE, 1)).astype(np.float32)
    y = rng.integers(0, CLASSES, BATCH).astype(np.int32)
    return params, x, y


def pooling(name: str):
    """(max_pool, avg_pool) over 2x2 windows of NHWC, from each library's lax."""
    _, jnp, lax = load(name)
    window, strides = (1, 2, 2, 1), (1, 2, 2, 1)
    if name == "olympus":
        return (
            lambda h: lax.reduce_window_max(h, window, strides, "VALID"),
            lambda h: lax.reduce_window_sum(h, window, strides, "VALID") / 4.0,
        )
    return (
        lambda h: lax.reduce_window(h, -jnp.inf, lax.max, window, strides, "VALID"),
        lambda h: lax.reduce_window(h, 0.0, lax.add, window, strides, "VALID") / 4.0,
    )


def make_loss(name: str):
    _, jnp, lax = load(name)
    max_pool, avg_pool = pooling(name)
    dn = lax.ConvDimensionNumbers(
        (0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)
    )  # NHWC, HWIO

    def conv_relu(h, w, b):
        h = lax.conv_general_dilated(h, w, (1, 1), "SAME", dimension_numbers=dn)
        return jnp.maximum(h + b, 0.0)

    def loss(params, x, y):
        (w1, b1), (w2, b2), (w3, b3) = params
        h = max_pool(conv_relu(x, w1, b1))
        h = avg_pool(conv_relu(h, w2, b2))
        logits = h.reshape(h.shape[0], -1) @ w3 + b3
        z = logits - jnp.max(logits, axis=1, keepdims=True)
        log_p = z - jnp.log(jnp.sum(jnp.exp(z), axis=1, keepdims=True))
        one_hot = (y[:, None] == jnp.arange(CLASSES)).astype(log_p.dtype)
        return -jnp.mean(jnp.sum(one_hot * log_p, axis=1))

    return loss


def make_step(name: str):
    """jit(value_and_grad(loss) + SGD update): (params, x, y) -> (loss, grads, params)."""
    lib = load(name)[0]
    value_and_grad = lib.value_and_grad(make_loss(name))

    def step(params, x, y):
        value, grads = value_and_grad(params, x, y)
        new = [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, grads)]
        return value, grads, new

    return lib, lib.jit(step)


def device_args(name: str):
    lib = load(name)[0]
    return lib.device_put(make_data())


def first_call(name: str) -> float:
    """Seconds of the first call of the step (trace + compile + run), backend up."""
    lib, step = make_step(name)
    args = device_args(name)
    lib.block_until_ready(lib.jit(lambda a: a + 1)(args[1]))  # start the client
    start = time.perf_counter()
    lib.block_until_ready(step(*args))
    return time.perf_counter() - start


def sanity(steps: dict, n_steps: int) -> dict:
    """Losses over n_steps of SGD per library (should decrease), and the
    largest difference of the first loss/gradient from olympus's."""
    report, first = {}, {}
    for name, (lib, step) in steps.items():
        params, x, y = device_args(name)
        losses = []
        for i in range(n_steps):
            value, grads, params = step(params, x, y)
            losses.append(float(value))
            if i == 0:
                first[name] = [np.asarray(value)] + [
                    np.asarray(g) for pair in grads for g in pair
                ]
        report[name] = losses
    if "jax" in first:
        report["max |olympus - jax| (loss, grads)"] = max(
            float(np.max(np.abs(a - b))) for a, b in zip(first["olympus"], first["jax"])
        )
    return report


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument(
        "--first-call", choices=["olympus", "jax"], help=argparse.SUPPRESS
    )
    parser.add_argument("--fresh", type=int, help="fresh interpreters per library")
    opts = parser.parse_args(argv)
    if opts.first_call:
        # olympus keeps compiled programs on disk by default; JAX does not: compare compiles
        os.environ["OLYMPUS_COMPILATION_CACHE"] = "0"
        print(first_call(opts.first_call))
        return
    names = libraries(not opts.no_jax and jax_available())
    rounds, number, fresh = (5, 5, 1) if opts.quick else (9, 10, 3)
    steps = {n: make_step(n) for n in names}
    report = sanity(steps, 5)
    calls = {}
    for n, (lib, step) in steps.items():
        args = device_args(n)
        calls[n] = (lib, lambda step=step, args=args: step(*args))
    steady = interleaved(calls, number, rounds)
    firsts = {n: [] for n in names}
    for _ in range(opts.fresh or fresh):  # interleaved fresh interpreters
        for n in names:
            firsts[n] += fresh_process_seconds(__file__, ["--first-call", n], 1)
    print(
        f"conv net (2 conv 3x3 + pools + dense), batch {BATCH} of {SIZE}x{SIZE}x1, f32: "
        "jit(value_and_grad + SGD)"
    )
    print(machine())
    print(
        format_table(
            [
                ("steady-state step", "ms", steady),
                ("first call (trace+compile+run)", "s", firsts),
            ],
            names,
        )
    )
    for key, value in report.items():
        shown = (
            " ".join(f"{v:.4f}" for v in value)
            if isinstance(value, list)
            else f"{value:.2e}"
        )
        print(f"sanity: {key}: {shown}")
    med = {n: statistics.median(steady[n]) for n in names}
    line = f"SUMMARY conv_net: olympus step {med['olympus'] * 1e3:.2f} ms"
    if "jax" in med:
        line += (
            f", jax {med['jax'] * 1e3:.2f} ms ({med['olympus'] / med['jax']:.2f}x); "
            f"first call {statistics.median(firsts['olympus']):.2f} s vs "
            f"{statistics.median(firsts['jax']):.2f} s"
        )
    losses = report["olympus"]
    print(
        line
        + f"; olympus loss {losses[0]:.3f} -> {losses[-1]:.3f} in {len(losses)} steps"
    )
    assert "jax" in names or sys.modules.get("jax") is None


if __name__ == "__main__":
    main()
