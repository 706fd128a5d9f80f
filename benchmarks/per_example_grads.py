"""Per-example gradients (issue 4): `jit(vmap(grad(loss)))` of a 2-layer MLP.

Batch 64 examples (784 -> 256 -> 10, tanh, softmax cross-entropy, float32).
Two ways, olympus and (when importable) JAX interleaved in one process:
  - `jit(vmap(grad(loss), in_axes=(None, 0, 0)))`, one call for the batch;
  - a Python loop of the jitted `grad(loss)` over the 64 examples;
Target: the vmapped call <= 1.1x JAX.

    python benchmarks/per_example_grads.py [--quick] [--no-jax]
"""

from __future__ import annotations

import argparse

import numpy as np
from harness import format_table, interleaved, jax_available, libraries, load, machine

BATCH, IN, HIDDEN, OUT = 64, 784, 256, 10


def make_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = {
        "w1": rng.standard_normal((IN, HIDDEN), np.float32) / np.sqrt(IN),
        "b1": np.zeros(HIDDEN, np.float32),
        "w2": rng.standard_normal((HIDDEN, OUT), np.float32) / np.sqrt(HIDDEN),
        "b2": np.zeros(OUT, np.float32),
    }
    x = rng.standard_normal((BATCH, IN), np.float32)
    labels = np.eye(OUT, dtype=np.float32)[rng.integers(0, OUT, BATCH)]
    return params, x, labels


def make_loss(jnp):
    def loss(params, x, label):
        """Cross-entropy of one example (x: [IN], label: one-hot [OUT])."""
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        logits = h @ params["w2"] + params["b2"]
        shifted = logits - jnp.max(logits)
        return -jnp.sum(label * (shifted - jnp.log(jnp.sum(jnp.exp(shifted)))))

    return loss


def workloads(name: str) -> dict:
    """{case: (lib, fn)} for one library, and the per-example gradients of both."""
    lib, jnp, _ = load(name)
    params, x, labels = lib.device_put(make_data())
    grad = lib.grad(make_loss(jnp))
    batched = lib.jit(lib.vmap(grad, in_axes=(None, 0, 0)))
    one = lib.jit(grad)
    rows = [(x[i], labels[i]) for i in range(BATCH)]

    def loop():
        return [one(params, xi, li) for xi, li in rows]

    return {
        "jit(vmap(grad))": (lib, lambda: batched(params, x, labels)),
        "loop of jit(grad)": (lib, loop),
    }


def check_same(per_lib: dict) -> None:
    """vmap and the loop agree, in each library and across libraries."""
    want = None
    for cases in per_lib.values():
        vm = np.asarray(cases["jit(vmap(grad))"][1]()["w1"])
        loop = np.stack([np.asarray(g["w1"]) for g in cases["loop of jit(grad)"][1]()])
        np.testing.assert_allclose(vm, loop, rtol=1e-4, atol=1e-6)
        want = vm if want is None else want
        np.testing.assert_allclose(vm, want, rtol=1e-4, atol=1e-6)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-jax", action="store_true")
    opts = parser.parse_args(argv)
    names = libraries(not opts.no_jax and jax_available())
    rounds = 5 if opts.quick else 9
    per_lib = {n: workloads(n) for n in names}
    check_same(per_lib)
    rows = []
    for case, number in (("jit(vmap(grad))", 5), ("loop of jit(grad)", 1)):
        calls = {n: per_lib[n][case] for n in names}
        rows.append((case, "ms", interleaved(calls, number, rounds)))
    print(f"per-example gradients, MLP {IN}-{HIDDEN}-{OUT}, batch {BATCH}, f32")
    print(machine())
    print(format_table(rows, names))


if __name__ == "__main__":
    main()
