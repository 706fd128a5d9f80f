"""Dispatch benchmark: how much Python a call costs once everything is compiled.

Measures, for olympus and (when it is importable) JAX in the same process:
  - a jit cache hit on a tiny function with device-resident arguments,
  - the same call with NumPy arguments (a host-to-device copy each call),
    and with its result read back by `np.asarray` (issue 33), and the
    device-argument call read back (the read-back's cost alone),
  - a jit call whose argument is a dict of 100 small arrays (pytree flattening),
  - a jit call with a static argument, one with it as a keyword, and one
    whose first argument is a tuple of arrays (a container),
  - one eager op (`x + y`), an eager `jnp.sin(x)` and an eager 3-layer MLP,
  - a notebook-like first cell (20 distinct eager ops) in a fresh interpreter,
    olympus with an empty and with a filled persistent compilation cache,
  - `import olympus` / `import jax` time, each in a fresh interpreter.

The machine is shared and noisy, so every figure is the median (and the best)
over many short rounds of many calls, and olympus and JAX are measured
interleaved in one run.

    python benchmarks/dispatch.py            # full run (about a minute)
    python benchmarks/dispatch.py --quick    # fewer rounds
    python benchmarks/dispatch.py --no-jax   # olympus only
    python benchmarks/dispatch.py --focus    # issue 17/33's cases, best rounds
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")


# ---- timing ----------------------------------------------------------------
def time_per_call(fn, number: int, rounds: int) -> float:
    """Median over `rounds` of the mean time of `number` calls, in microseconds.

    Dispatch may be asynchronous, so each round waits for its last result: the
    figure is the throughput of back-to-back calls, as in a training loop.
    """
    _ready(fn())
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(number):
            out = fn()
        _ready(out)
        samples.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(samples)


def _ready(out):
    """Waits for a device result (a NumPy result is ready already)."""
    if not isinstance(out, np.ndarray):
        out.block_until_ready()


def import_time(module: str, repeats: int) -> float:
    """Median wall time of `import module` in a fresh interpreter, in seconds.

    Bytecode is cached first (in a private PYTHONPYCACHEPREFIX, so nothing is
    written into the source trees), as it is in any installed package: with
    PYTHONDONTWRITEBYTECODE set, an editable install would recompile every
    module on every import while site-packages (jax) ships its .pyc files.
    """
    code = (
        "import time; t = time.perf_counter(); import {m}; "
        "print(time.perf_counter() - t)".format(m=module)
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(TF_CPP_MIN_LOG_LEVEL="1", PYTHONPYCACHEPREFIX=_PYCACHE)
    times = []
    for _ in range(repeats + 1):  # the first run fills the bytecode cache
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times[1:])


_PYCACHE = os.path.join(tempfile.gettempdir(), "olympus-benchmark-pycache")

FIRST_CELL = """
import sys, time
import numpy as np
if sys.argv[1] == "olympus":
    import olympus.numpy as jnp
else:
    import jax
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
x = jnp.asarray(np.linspace(0.1, 1.0, 12, dtype=np.float32).reshape(3, 4))
y = jnp.asarray(np.linspace(1.0, 2.0, 12, dtype=np.float32).reshape(3, 4))
x.block_until_ready(), y.block_until_ready()
ops = [jnp.sin, jnp.cos, jnp.exp, jnp.log, jnp.tanh, jnp.sqrt, jnp.abs, jnp.negative,
       lambda a: a + y, lambda a: a - y, lambda a: a / y, lambda a: a * y,
       lambda a: jnp.maximum(a, y), lambda a: jnp.minimum(a, y), jnp.sum,
       lambda a: jnp.max(a, axis=1), lambda a: a @ a.T, lambda a: a.reshape(4, 3),
       lambda a: a.T, lambda a: a > y]
start = time.perf_counter()
for op in ops:
    op(x).block_until_ready()
print(time.perf_counter() - start)
"""


def first_cell_time(lib: str, repeats: int, cache: str | None) -> float:
    """Median wall time of 20 distinct eager ops, each used for the first time,
    in a fresh interpreter (imports and the input arrays not counted).
    `cache`: olympus's persistent compilation cache folder ("" = a new empty
    one per run); JAX runs with its defaults (eager ops are not persisted)."""
    times = []
    for _ in range(repeats):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1", PYTHONPYCACHEPREFIX=_PYCACHE)
        with tempfile.TemporaryDirectory() as empty:
            if lib == "olympus":
                env["OLYMPUS_COMPILATION_CACHE_DIR"] = cache or empty
            out = subprocess.run(
                [sys.executable, "-c", FIRST_CELL, lib],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def first_cell_rows(with_jax: bool, repeats: int) -> list[tuple]:
    """(case, unit, per-library figures) rows for the first-cell cases."""
    jax_time = [first_cell_time("jax", repeats, None)] if with_jax else []
    with tempfile.TemporaryDirectory() as warm:
        first_cell_time("olympus", 1, warm)  # fills the cache
        warm_time = first_cell_time("olympus", repeats, warm)
    cold_time = first_cell_time("olympus", repeats, "")
    return [
        ("first cell, 20 ops (empty cache)", "s", [cold_time, *jax_time]),
        ("first cell, 20 ops (filled cache)", "s", [warm_time, *jax_time]),
    ]


# ---- the workloads, written once against either library ----------------------
def tiny(jnp):
    return lambda x, y: jnp.sum(x + jnp.sin(y) * 3.0)


def mlp(jnp):
    """A 3-layer tanh MLP, run op by op (eager): 8 ops per call."""

    def forward(params, x):
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return x @ w + b

    return forward


def dict_sum(jnp):
    return lambda tree: sum(jnp.sum(v) for v in tree.values())


def scaled(x, factor):
    return x * factor


def affine(pair, x):
    return pair[0] * x + pair[1]


def workloads(lib, jnp) -> dict:
    """name -> zero-argument callable that makes one call and returns its result."""
    x_host = np.arange(4, dtype=np.float32)
    y_host = np.linspace(0.0, 1.0, 4, dtype=np.float32)
    x, y = lib.device_put(x_host), lib.device_put(y_host)
    f = lib.jit(tiny(jnp))
    g = lib.jit(dict_sum(jnp))
    h = lib.jit(scaled, static_argnums=1)
    k = lib.jit(scaled, static_argnames="factor")
    t = lib.jit(affine)
    tree = {f"w{i:03d}": lib.device_put(np.full(4, i, np.float32)) for i in range(100)}
    rng = np.random.default_rng(0)
    sizes = [(16, 32), (32, 32), (32, 4)]
    host_params = [
        (
            rng.normal(size=s).astype(np.float32) / 4,
            rng.normal(size=s[1]).astype(np.float32),
        )
        for s in sizes
    ]
    params = lib.device_put(host_params)
    batch_host = rng.normal(size=(8, 16)).astype(np.float32)
    batch = lib.device_put(batch_host)
    forward = mlp(jnp)
    check_same(forward(params, batch), mlp(np)(host_params, batch_host), rtol=1e-4)
    check_same(f(x, y), tiny(np)(x_host, y_host))
    check_same(g(tree), float(sum(4 * i for i in range(100))))
    check_same(h(x, 2.0), x_host * 2.0)
    check_same(k(x, factor=2.0), x_host * 2.0)
    check_same(t((x, y), x), x_host * x_host + y_host)
    return {
        "jit, device args": lambda: f(x, y),
        "jit, NumPy args": lambda: f(x_host, y_host),
        "jit, NumPy args, np.asarray result": lambda: np.asarray(f(x_host, y_host)),
        "jit, device args, np.asarray result": lambda: np.asarray(f(x, y)),
        "jit, dict of 100 arrays": lambda: g(tree),
        "jit, static argument": lambda: h(x, 2.0),
        "jit, static keyword argument": lambda: k(x, factor=2.0),
        "jit, tuple argument": lambda: t((x, y), x),
        "eager x + y": lambda: x + y,
        "eager jnp.sin(x)": lambda: jnp.sin(x),
        "eager 3-layer MLP": lambda: forward(params, batch),
    }


def check_same(got, want, rtol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol)


NUMBERS = {  # calls per round: enough for ~50-100 ms per round
    "jit, device args": 10000,
    "jit, NumPy args": 5000,
    "jit, NumPy args, np.asarray result": 5000,
    "jit, device args, np.asarray result": 5000,
    "jit, dict of 100 arrays": 500,
    "jit, static argument": 5000,
    "jit, static keyword argument": 5000,
    "jit, tuple argument": 5000,
    "eager x + y": 5000,
    "eager jnp.sin(x)": 5000,
    "eager 3-layer MLP": 1000,
}


def load(name: str):
    if name == "olympus":
        import olympus
        import olympus.numpy as jnp

        return olympus, jnp
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")
    return jax, jnp


# ---- report --------------------------------------------------------------------
def run(
    rounds: int, scale: float, with_jax: bool, import_repeats: int
) -> tuple[list[tuple], float]:
    libs = ["olympus"] + (["jax"] if with_jax else [])
    # Import times first, before this process warms any file caches further.
    imports = {name: import_time(name, import_repeats) for name in libs}
    loads = {}
    for name in libs:  # olympus first, so this also checks that it never imports jax
        loads[name] = workloads(*load(name))
        for call in loads[name].values():
            _ready(call())
        if name == "olympus":
            assert sys.modules.get("jax") is None, "running olympus imported jax"
    rows = []
    for case, number in NUMBERS.items():
        n = max(1, int(number * scale))
        per_lib = {name: [] for name in libs}
        for _ in range(rounds):  # interleave, so noise hits both alike
            for name in libs:
                per_lib[name].append(time_per_call(loads[name][case], n, 1))
        rows.append((case, "us", [per_lib[name] for name in libs]))
    rows.extend(first_cell_rows(with_jax, import_repeats))
    rows.append(("import", "s", [imports[name] for name in libs]))
    return rows, import_time("numpy", import_repeats)


FOCUS = {  # issue 17's and 33's cases: calls per (short) round
    "jit, device args": 500,
    "jit, static argument": 500,
    "jit, static keyword argument": 500,
    "jit, tuple argument": 500,
    "jit, NumPy args": 500,
    "jit, NumPy args, np.asarray result": 500,
    "jit, device args, np.asarray result": 500,
    "eager jnp.sin(x)": 500,
    "eager x + y": 500,
    "eager 3-layer MLP": 50,
}


def focus(rounds: int) -> str:
    """The fastest of `rounds` interleaved short rounds per library, for the
    cases of issues 17 and 33: on a shared machine a short round is often
    uninterrupted, so best rounds compare the libraries' own costs."""
    names = ["olympus", "jax"]
    loads = {name: workloads(*load(name)) for name in names}
    lines = [
        "| case | olympus (best round) | jax (best round) | ratio |",
        "|---|---:|---:|---:|",
    ]
    for case, number in FOCUS.items():
        best = {name: float("inf") for name in names}
        for _ in range(rounds):
            for name in names:
                best[name] = min(
                    best[name], time_per_call(loads[name][case], number, 1)
                )
        ratio = best["olympus"] / best["jax"]
        lines.append(
            f"| {case} | {best['olympus']:.2f} us | {best['jax']:.2f} us | {ratio:.2f}x |"
        )
    return "\n".join(lines)


def format_table(rows: list[tuple], with_jax: bool) -> str:
    """Medians over rounds, and (with jax) the ratio of medians and of best rounds."""
    if with_jax:
        lines = [
            "| case | olympus | jax | olympus / jax | best-round ratio |",
            "|---|---:|---:|---:|---:|",
        ]
    else:
        lines = ["| case | olympus |", "|---|---:|"]
    for case, unit, samples in rows:
        fmt = (lambda v: f"{v:.3f} s") if unit == "s" else (lambda v: f"{v:.1f} us")
        ours, *theirs = [
            s if isinstance(s, float) else statistics.median(s) for s in samples
        ]
        if not with_jax:
            lines.append(f"| {case} | {fmt(ours)} |")
            continue
        best = "" if unit == "s" else f"{min(samples[0]) / min(samples[1]):.2f}x"
        lines.append(
            f"| {case} | {fmt(ours)} | {fmt(theirs[0])} | {ours / theirs[0]:.2f}x | {best} |"
        )
    return "\n".join(lines)


def machine() -> str:
    """One line naming the machine, for the results table."""
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

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores, {cpu}; "
        f"load average {load:.1f}; Python {sys.version.split()[0]}, jaxlib {jaxlib.__version__}"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--no-jax", action="store_true", help="measure olympus only")
    parser.add_argument(
        "--focus", action="store_true", help="issue 17/33's cases: best of 60 rounds"
    )
    opts = parser.parse_args(argv)
    with_jax = not opts.no_jax and importlib.util.find_spec("jax") is not None
    if opts.focus:
        if not with_jax:
            parser.error("--focus compares with JAX, which is not importable")
        print(machine())
        print(focus(60))
        return
    # Many short rounds: on a shared machine a short round is more often
    # uninterrupted, so the best rounds are steadier (benchmarks/README.md).
    rounds, scale, imports = (5, 0.3, 3) if opts.quick else (41, 0.25, 7)
    rows, numpy_import = run(rounds, scale, with_jax, imports)
    print(machine())
    print(format_table(rows, with_jax))
    print(f"(`import numpy` alone, which both import first: {numpy_import:.3f} s)")


if __name__ == "__main__":
    main()
