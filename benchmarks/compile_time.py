"""Compile time against JAX's: programs written like JAX's examples and like the
jitted functions of olympus's own examples/ (ported by renaming), each
lowered and compiled in a fresh interpreter with no persistent cache, under
olympus and (when importable) JAX 0.10.2 on the same XLA.

What is timed is `jit(f).lower(*args).compile()` (trace + lower + XLA compile);
a fresh process per (program, library) keeps any cache or warm state from
helping either side. The ratio column is olympus / JAX; the goal is at most 1.0.

    python benchmarks/compile_time.py              # every program, 3 runs each
    python benchmarks/compile_time.py --runs 1 vae_sample scan_rnn
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

HERE = os.path.dirname(os.path.abspath(__file__))


def _programs(lib, jnp, lax, random, nn):
    """name -> (function, arguments), written once for both libraries."""
    import importlib

    import numpy as np

    rng = np.random.RandomState(0)
    f32 = np.float32
    w_dec = rng.randn(10, 784).astype(f32) * 0.1
    w_enc = rng.randn(784, 20).astype(f32) * 0.1
    images = (rng.rand(64, 784) > 0.5).astype(f32)
    key = random.PRNGKey(0)

    def image_grid(nrow, ncol, imagevecs, imshape):
        images_iter = iter(imagevecs.reshape((-1,) + imshape))
        return jnp.vstack(
            [
                jnp.hstack([next(images_iter).T for _ in range(ncol)][::-1])
                for _ in range(nrow)
            ]
        ).T

    def vae_sample(key):
        k1, k2 = random.split(key)
        z = random.normal(k1, (100, 10))
        sampled = random.bernoulli(k2, nn.sigmoid(z @ w_dec))
        return image_grid(10, 10, sampled, (28, 28))

    def vae_evaluate(key, x):
        stats = x @ w_enc
        mu, log_sd = stats[:, :10], stats[:, 10:]
        eps = random.normal(key, mu.shape)
        z = mu + jnp.exp(log_sd) * eps
        logits = z @ w_dec
        loglik = -jnp.sum(jnp.logaddexp(0.0, jnp.where(x > 0.5, -logits, logits)))
        kl = 0.5 * jnp.sum(jnp.exp(2 * log_sd) + mu**2 - 1.0 - 2 * log_sd)
        return loglik - kl, vae_sample(key)

    k_conv = rng.randn(3, 3, 1, 8).astype(f32) * 0.3
    k_conv2 = rng.randn(3, 3, 8, 8).astype(f32) * 0.3
    w_out = rng.randn(8 * 7 * 7, 10).astype(f32) * 0.05

    def conv_loss(params, x):
        k1, k2, w = params
        dn = ("NHWC", "HWIO", "NHWC")
        h = lax.conv_general_dilated(x, k1, (2, 2), "SAME", dimension_numbers=dn)
        h = nn.relu(h)
        h = lax.conv_general_dilated(h, k2, (2, 2), "SAME", dimension_numbers=dn)
        logits = nn.relu(h).reshape((x.shape[0], -1)) @ w
        return -jnp.mean(nn.log_softmax(logits)[:, 0])

    def conv_train_step(params, x):
        loss, grads = lib.value_and_grad(conv_loss)(params, x)
        return loss, [p - 0.1 * g for p, g in zip(params, grads)]

    w_h = rng.randn(64, 64).astype(f32) * 0.1
    w_x = rng.randn(32, 64).astype(f32) * 0.1

    def rnn_loss(w_h, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w_h + x @ w_x)
            return h, h.sum()

        _, ys = lax.scan(cell, jnp.zeros((8, 64), f32), xs)
        return ys.sum()

    def scan_rnn(w_h, xs):
        return lib.grad(rnn_loss)(w_h, xs)

    def augment(key, batch):
        keys = random.split(key, 4)
        flip = random.bernoulli(keys[0], 0.5, (batch.shape[0], 1, 1))
        batch = jnp.where(flip, batch[:, :, ::-1], batch)
        batch = batch + 0.1 * random.normal(keys[1], batch.shape)
        scale = random.uniform(keys[2], (batch.shape[0], 1, 1), minval=0.8, maxval=1.2)
        order = random.permutation(keys[3], batch.shape[0])
        return (batch * scale)[order]

    def elementwise_chain(x):
        for i in range(200):
            x = jnp.sin(x) * 1.01 + jnp.cos(x * 0.5) - 0.001 * i
        return x

    def sort_top_k(x):
        values, idx = lax.top_k(x, 16)
        return jnp.sort(x, axis=-1), values, idx, jnp.argsort(x[:, 0])

    def scatter_heavy(x, idx, upd):
        for _ in range(10):
            x = x.at[idx].add(upd)
            x = x.at[idx[::2]].max(upd[::2] * 2.0)
        return x

    # The jitted functions of examples/ (convnet, mnist_digits, demo, data_parallel),
    # ported by renaming, on synthetic data of the examples' shapes.
    ex = lib.__name__ + ".example_libraries."
    stax = importlib.import_module(ex + "stax")
    optimizers = importlib.import_module(ex + "optimizers")

    def classifier(layers, input_shape, batch_size, lr):
        """convnet.py / mnist_digits.py: a stax model, its jitted loss, adam's update."""
        init, predict = stax.serial(*layers, stax.LogSoftmax)

        @lib.jit
        def loss(params, batch):
            inputs, targets = batch
            return -jnp.mean(jnp.sum(predict(params, inputs) * targets, axis=1))

        opt_init, opt_update, get_params = optimizers.adam(lr)

        def update(i, opt_state, batch):
            params = get_params(opt_state)
            return opt_update(i, lib.grad(loss)(params, batch), opt_state)

        _, params = init(random.PRNGKey(0), (-1,) + input_shape)
        x = rng.rand(batch_size, *input_shape).astype(f32)
        batch = (x, np.eye(10, dtype=f32)[rng.randint(0, 10, batch_size)])
        return (loss, (params, batch)), (update, (0, opt_init(params), batch))

    convnet = [
        stax.Conv(16, (3, 3), padding="SAME"), stax.Relu,
        stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Conv(32, (3, 3), padding="SAME"), stax.Relu,
        stax.AvgPool((2, 2), strides=(2, 2)),
        stax.Flatten, stax.Dense(64), stax.Relu, stax.Dense(10),
    ]  # fmt: skip
    mnist = [stax.Dense(128), stax.Relu, stax.Dense(128), stax.Relu, stax.Dense(10)]

    def demo_loss(w, x):  # demo.py
        h = jnp.tanh(x @ w)
        return jnp.mean(h * h)

    def mlp_loss(params, x, y):  # data_parallel.py
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        return jnp.mean((h @ w + b - y) ** 2)

    def sgd_step(params, x, y, lr=0.1):
        value, grads = lib.value_and_grad(mlp_loss)(params, x, y)
        new = [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(params, grads)]
        return new, value

    sizes = [16, 64, 64, 1]
    mlp = [
        (rng.randn(m, n).astype(f32) / np.sqrt(m), np.zeros(n, f32))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]
    x_dp = rng.randn(64, 16).astype(f32)
    demo_args = (
        np.linspace(-1.0, 1.0, 12).reshape(4, 3).astype(f32),
        np.ones((2, 4), f32),
    )

    return {
        # (lambdas: the eager init runs only for the program measured)
        "convnet_loss": lambda: classifier(convnet, (8, 8, 1), 64, 3e-3)[0],
        "convnet_update": lambda: classifier(convnet, (8, 8, 1), 64, 3e-3)[1],
        "mnist_update": lambda: classifier(mnist, (64,), 128, 1e-3)[1],
        "demo_loss": (demo_loss, demo_args),
        "demo_grad": (lib.grad(demo_loss), demo_args),
        "dp_sgd_step": (sgd_step, (mlp, x_dp, np.sin(x_dp.sum(1, keepdims=True)))),
        "vae_sample": (vae_sample, (key,)),
        "vae_evaluate": (vae_evaluate, (key, images)),
        "conv_train_step": (
            conv_train_step,
            ([k_conv, k_conv2, w_out], rng.randn(32, 28, 28, 1).astype(f32)),
        ),
        "scan_rnn": (scan_rnn, (w_h, rng.randn(20, 8, 32).astype(f32))),
        "augment": (augment, (key, rng.rand(64, 32, 32).astype(f32))),
        "elementwise_chain": (elementwise_chain, (rng.randn(256, 256).astype(f32),)),
        "sort_top_k": (sort_top_k, (rng.randn(128, 512).astype(f32),)),
        "scatter_heavy": (
            scatter_heavy,
            (
                rng.randn(1000, 16).astype(f32),
                rng.randint(0, 1000, 500).astype(np.int32),
                rng.randn(500, 16).astype(f32),
            ),
        ),
    }


def program_names() -> list[str]:
    return [
        "vae_sample", "vae_evaluate", "conv_train_step", "scan_rnn", "augment",
        "elementwise_chain", "sort_top_k", "scatter_heavy", "convnet_loss",
        "convnet_update", "mnist_update", "demo_loss", "demo_grad", "dp_sgd_step",
    ]  # fmt: skip


def _measure_here(library: str, name: str) -> dict:
    """Runs in the child process: one compile, its seconds."""
    import time

    if library == "olympus":
        os.environ["OLYMPUS_COMPILATION_CACHE"] = "0"
        import olympus as lib
        import olympus.numpy as jnp
        from olympus import lax, nn, random
    else:
        import jax as lib
        import jax.numpy as jnp
        from jax import lax, nn, random

        lib.config.update("jax_platforms", "cpu")
        lib.config.update("jax_enable_compilation_cache", False)
    entry = _programs(lib, jnp, lax, random, nn)[name]
    fun, args = entry() if callable(entry) else entry
    start = time.perf_counter()
    lowered = lib.jit(fun).lower(*args)
    lowered_at = time.perf_counter()
    lowered.compile()
    done = time.perf_counter()
    return {"trace_lower": lowered_at - start, "compile": done - lowered_at}


def measure(library: str, name: str) -> dict:
    """One compile of `name` under `library` in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", library, name],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{library} {name} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("programs", nargs="*", default=program_names())
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure_here(*args.child)))
        return
    sys.path.insert(0, HERE)
    from harness import jax_available

    libs = ["olympus"] + (["jax"] if jax_available() else [])
    print(f"{'program':<20}" + "".join(f"{lib + ' s':>14}" for lib in libs)
          + ("   olympus/jax" if len(libs) == 2 else ""))  # fmt: skip
    for name in args.programs:
        runs = {lib: [] for lib in libs}
        for i in range(args.runs):  # alternate the libraries' order run by run
            for lib in libs if i % 2 == 0 else libs[::-1]:
                r = measure(lib, name)
                runs[lib].append(r["trace_lower"] + r["compile"])
        medians = {lib: statistics.median(v) for lib, v in runs.items()}
        row = f"{name:<20}" + "".join(f"{medians[lib]:>14.2f}" for lib in libs)
        if len(libs) == 2:
            row += f"{medians['olympus'] / medians['jax']:>14.2f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
