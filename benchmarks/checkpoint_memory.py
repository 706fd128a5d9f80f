"""Checkpoint memory (issues 3, 16): what a deep chain saves for its backward pass.

Scan chain (issue 16): `lax.scan` over 32 blocks of 4 layers `h = tanh(h @ W)`
(batch 512, width 256, f32), each block plain, checkpointed (whole block,
each layer, both nested; save nothing, save dots, or olympus's
`memory_budget` of 1-4 activations per block). Per variant: XLA's
compiled memory stats of `jit(grad(loss))` (temp bytes: the buffers the
program needs beyond its arguments and outputs, i.e. the saved residuals and
work space), XLA's flop count (the recomputation), the residual bytes of the
linearized program, and the time per call (median over rounds).

Python chain (issue 3): a chain of 64 layers `x = tanh(x @ W_i)` (batch 64, width 256, float32) is
differentiated without checkpoint and with each layer wrapped in `checkpoint`
under two policies (save nothing; save dots only), and with the whole chain in
one `checkpoint`. Two measures, for olympus and (when importable) JAX:

  - residual bytes: the values the forward pass keeps for the backward pass,
    i.e. the constants of the linearized program (olympus `linearize_flat`,
    JAX `saved_residuals`, behind `ad_checkpoint.print_saved_residuals`), the inputs W and x included;
  - XLA temp bytes of `jit(grad(loss))`, from `compile().memory_analysis()`
    (XLA may fuse or schedule differently from the residual count).

    python benchmarks/checkpoint_memory.py [--no-jax] [--only scan|python] [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from harness import jax_available, libraries, load, machine

DEPTH, BATCH, WIDTH = 64, 64, 256


def make_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    ws = rng.standard_normal((DEPTH, WIDTH, WIDTH), np.float32) / np.sqrt(WIDTH)
    x = rng.standard_normal((BATCH, WIDTH), np.float32)
    return [w for w in ws], x


def make_loss(lib, jnp, variant: str):
    """The chain's loss; `variant` says where checkpoint goes and with what policy."""
    policies = lib.checkpoint_policies

    def layer(w, x):
        return jnp.tanh(x @ w)

    per_layer = {
        "none": layer,
        "per layer, save nothing": lib.checkpoint(
            layer, policy=policies.nothing_saveable
        ),
        "per layer, save dots": lib.checkpoint(layer, policy=policies.dots_saveable),
    }

    def chain(ws, x):
        step = per_layer.get(variant, layer)
        for w in ws:
            x = step(w, x)
        return jnp.sum(x * x)

    if variant == "whole chain, save nothing":
        return lib.checkpoint(chain, policy=policies.nothing_saveable)
    return chain


VARIANTS = [
    "none",
    "per layer, save nothing",
    "per layer, save dots",
    "whole chain, save nothing",
]


def residual_bytes(name: str, lib, loss, ws, x) -> int:
    """Bytes of the distinct arrays the linearized forward keeps (inputs included)."""
    if name == "jax":
        from jax._src.ad_checkpoint import (
            saved_residuals,  # what print_saved_residuals prints
        )

        return sum(
            int(np.prod(a.shape)) * a.dtype.itemsize
            for a, _ in saved_residuals(loss, ws, x)
        )
    from olympus.tracer.pytree import tree_flatten, tree_unflatten
    from olympus.transforms.linearize import linearize_flat

    leaves, tree = tree_flatten((ws, x))

    def flat(*a):
        return [loss(*tree_unflatten(tree, list(a)))]

    _, linear = linearize_flat(flat, leaves, [True] * len(leaves))
    distinct = {id(c): c for c in linear.consts}.values()
    return sum(int(np.prod(c.shape)) * np.dtype(c.dtype).itemsize for c in distinct)


def xla_temp_bytes(lib, loss, ws, x) -> int:
    compiled = lib.jit(lib.grad(loss)).lower(ws, x).compile()
    return int(compiled.memory_analysis().temp_size_in_bytes)


def gradient(lib, loss, ws, x) -> np.ndarray:
    return np.asarray(lib.jit(lib.grad(loss))(ws, x)[0])


# ---- scan chain (issue 16) -------------------------------------------------------------
BLOCKS, LAYERS, SCAN_BATCH, SCAN_WIDTH = 32, 4, 512, 256
BUDGETS = (1, 2, 3, 4)  # memory_budget per block, in activations (0 = save nothing)


def make_scan_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    shape = (BLOCKS, LAYERS, SCAN_WIDTH, SCAN_WIDTH)
    ws = (rng.standard_normal(shape) / np.sqrt(SCAN_WIDTH)).astype(np.float32)
    x = rng.standard_normal((SCAN_BATCH, SCAN_WIDTH), np.float32)
    return ws, x


def scan_variants(lib) -> dict:
    """{name: block step for lax.scan}: where checkpoint goes, with what policy."""
    policies = lib.checkpoint_policies
    jnp = load_numpy(lib)

    def layer(h, w):
        return jnp.tanh(h @ w)

    def block_of(step):
        def block(h, wb):
            for i in range(LAYERS):
                h = step(h, wb[i])
            return h, None

        return block

    remat_layer = lib.checkpoint(layer)
    variants = {
        "none": block_of(layer),
        "per block, save nothing": lib.checkpoint(block_of(layer)),
        "per block, save dots": lib.checkpoint(
            block_of(layer), policy=policies.dots_saveable
        ),
        "per layer, save nothing": block_of(remat_layer),
        "per block and per layer (nested)": lib.checkpoint(block_of(remat_layer)),
    }
    if hasattr(policies, "memory_budget"):  # olympus only
        act = SCAN_BATCH * SCAN_WIDTH * 4  # bytes of one activation
        for k in BUDGETS:
            label = f"per block, memory_budget({k} activation{'s' if k > 1 else ''})"
            variants[label] = lib.checkpoint(
                block_of(layer), policy=policies.memory_budget(k * act)
            )
    return variants


def load_numpy(lib):
    return load("jax" if lib.__name__ == "jax" else "olympus")[1]


def scan_loss(lib, step):
    lax = load("jax" if lib.__name__ == "jax" else "olympus")[2]
    jnp = load_numpy(lib)

    def loss(ws, x):
        h, _ = lax.scan(step, x, ws)
        return jnp.sum(h * h)

    return loss


def compiled_stats(lib, loss, ws, x) -> tuple[int, int, float]:
    """(temp bytes, arguments + outputs + temp - aliased bytes, GFLOP) of
    jit(grad(loss)). XLA's cost analysis counts a loop body once, so its flops
    are scaled by the trip count (the forward and backward scans are all the work)."""
    compiled = lib.jit(lib.grad(loss)).lower(ws, x).compile()
    stats = compiled.memory_analysis()
    total = (
        stats.argument_size_in_bytes
        + stats.output_size_in_bytes
        + stats.temp_size_in_bytes
        - stats.alias_size_in_bytes
    )
    flops = compiled.cost_analysis()["flops"] * BLOCKS
    return int(stats.temp_size_in_bytes), int(total), flops / 1e9


def seconds_per_call(lib, fn, args, rounds: int) -> float:
    lib.block_until_ready(fn(*args))
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        lib.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def scan_table(names: list[str], rounds: int) -> list[str]:
    """The scan chain's rows (a variant a library lacks shows "-")."""
    ws, x = make_scan_data()
    lines = [
        (
            f"scan over {BLOCKS} blocks of {LAYERS} layers tanh(h @ W), batch "
            f"{SCAN_BATCH}, width {SCAN_WIDTH}, f32; weights "
            f"{ws.nbytes / 2**20:.1f} MiB, one activation {x.nbytes / 2**20:.2f} MiB"
        ),
        "| checkpoint | "
        + " | ".join(
            f"{n} XLA temp | {n} total | {n} residuals | {n} GFLOP | {n} ms/call"
            for n in names
        )
        + " |",
        "|---" * (1 + 5 * len(names)) + "|",
    ]
    variants = list(scan_variants(load(names[0])[0]))
    reference = {}
    for variant in variants:
        cells = []
        for name in names:
            lib = load(name)[0]
            steps = scan_variants(lib)
            if variant not in steps:
                cells.append("- | - | - | - | -")
                continue
            step = steps[variant]
            loss = scan_loss(lib, step)
            dev_ws, dev_x = lib.device_put((ws, x))
            temp, total, gflop = compiled_stats(lib, loss, dev_ws, dev_x)
            grad = lib.jit(lib.grad(loss))
            g = np.asarray(grad(dev_ws, dev_x))
            reference.setdefault(name, g)
            np.testing.assert_allclose(g, reference[name], rtol=2e-3, atol=1e-5)
            res = residual_bytes(name, lib, loss, dev_ws, dev_x)
            ms = seconds_per_call(lib, grad, (dev_ws, dev_x), rounds) * 1e3
            cells.append(
                f"{temp / 2**20:.1f} MiB | {total / 2**20:.1f} MiB | "
                f"{res / 2**20:.1f} MiB | {gflop:.1f} | {ms:.0f}"
            )
        lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument("--only", choices=["scan", "python"])
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args(argv)
    names = libraries(not opts.no_jax and jax_available())
    print(machine())
    if opts.only != "python":
        print("\n".join(scan_table(names, opts.rounds)))
    if opts.only == "scan":
        return
    python_chain_table(names)


def python_chain_table(names: list[str]) -> None:
    ws, x = make_data()
    rows = []
    for variant in VARIANTS:
        row, grads = {}, []
        for name in names:
            lib, jnp, _ = load(name)
            loss = make_loss(lib, jnp, variant)
            dev_ws, dev_x = lib.device_put((ws, x))  # so inputs are saved, not copies
            row[name] = (
                residual_bytes(name, lib, loss, dev_ws, dev_x),
                xla_temp_bytes(lib, loss, dev_ws, dev_x),
            )
            grads.append(gradient(lib, loss, dev_ws, dev_x))
        for g in grads[1:]:  # every variant computes the same gradient
            np.testing.assert_allclose(g, grads[0], rtol=2e-3, atol=1e-5)
        rows.append((variant, row))
    print(
        f"\nchain of {DEPTH} layers tanh(x @ W), batch {BATCH}, width {WIDTH}, f32; "
        f"inputs are {(DEPTH * WIDTH * WIDTH + BATCH * WIDTH) * 4 / 2**20:.1f} MiB"
    )
    head = (
        "| checkpoint | "
        + " | ".join(f"{n} residuals | {n} XLA temp" for n in names)
        + " |"
    )
    print(head)
    print("|---" * (1 + 2 * len(names)) + "|")
    for variant, row in rows:
        cells = " | ".join(
            f"{row[n][0] / 2**20:.2f} MiB | {row[n][1] / 2**20:.2f} MiB" for n in names
        )
        print(f"| {variant} | {cells} |")


if __name__ == "__main__":
    main()
