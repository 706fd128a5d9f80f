"""Checkpoint memory (issue 3): what a deep chain saves for its backward pass.

A chain of 64 layers `x = tanh(x @ W_i)` (batch 64, width 256, float32) is
differentiated without checkpoint and with each layer wrapped in `checkpoint`
under two policies (save nothing; save dots only), and with the whole chain in
one `checkpoint`. Two measures, for olympus and (when importable) JAX:

  - residual bytes: the values the forward pass keeps for the backward pass,
    i.e. the constants of the linearized program (olympus `linearize_flat`,
    JAX `saved_residuals`, behind `ad_checkpoint.print_saved_residuals`), the inputs W and x included;
  - XLA temp bytes of `jit(grad(loss))`, from `compile().memory_analysis()`
    (XLA may fuse or schedule differently from the residual count).

    python benchmarks/checkpoint_memory.py [--no-jax]
"""

from __future__ import annotations

import argparse

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
    flat = lambda *a: [loss(*tree_unflatten(tree, list(a)))]
    _, linear = linearize_flat(flat, leaves, [True] * len(leaves))
    distinct = {id(c): c for c in linear.consts}.values()
    return sum(int(np.prod(c.shape)) * np.dtype(c.dtype).itemsize for c in distinct)


def xla_temp_bytes(lib, loss, ws, x) -> int:
    compiled = lib.jit(lib.grad(loss)).lower(ws, x).compile()
    return int(compiled.memory_analysis().temp_size_in_bytes)


def gradient(lib, loss, ws, x) -> np.ndarray:
    return np.asarray(lib.jit(lib.grad(loss))(ws, x)[0])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-jax", action="store_true")
    opts = parser.parse_args(argv)
    names = libraries(not opts.no_jax and jax_available())
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
        f"chain of {DEPTH} layers tanh(x @ W), batch {BATCH}, width {WIDTH}, f32; "
        f"inputs are {(DEPTH * WIDTH * WIDTH + BATCH * WIDTH) * 4 / 2**20:.1f} MiB"
    )
    print(machine())
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
