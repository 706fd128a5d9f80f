"""The optimizer (issue 14): how much shorter it makes programs, at what cost.

For grad of an MLP, grad of attention, grad of a layernorm, grad of a scan RNN
and a hessian: equations (sub-programs included) before and after
`olympus.optimizer.optimize`, beside JAX's `make_jaxpr` when JAX is
installed; the optimizer's time as a share of the trace time (it runs on
every compile: each round traces a fresh program and optimizes it, so the two
are measured under the same load); compile and run time of the program before
and after. Times are medians over repeats, on this machine's CPU, with the
persistent compilation cache off. `opt/jax` is the optimized count over
JAX's (the issue's goal: below 0.75).

Then naive programs (and their gradients) whose unoptimized result is inf or
NaN: the value with the optimizer off (what JAX computes too: its column when
JAX is installed), on, and the closed form (float64 NumPy).

    python benchmarks/optimizer.py [--no-jax] [--repeats N] [--share-only | --naive-only]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import itertools
import statistics
import time

import numpy as np
from harness import jax_available, load

import olympus
from olympus.optimizer import count_eqns, optimize
from olympus.stages import Traced

f32 = np.float32
RNG = np.random.default_rng(0)


def _normal(*shape):
    return RNG.standard_normal(shape).astype(f32)


def workloads(lib, jnp, lax):
    """name -> (function, args); the same code for olympus and JAX."""

    def mlp_loss(params, x, y):
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return jnp.mean((x @ w + b - y) ** 2)

    sizes = [16, 32, 32, 4]
    mlp_params = [(_normal(m, n), _normal(n)) for m, n in itertools.pairwise(sizes)]

    def attention(wq, wk, wv, x):
        q, k, v = x @ wq, x @ wk, x @ wv
        scores = q @ k.T / np.sqrt(f32(q.shape[-1]))
        weights = jnp.exp(scores - jnp.max(scores, axis=-1, keepdims=True))
        weights = weights / jnp.sum(weights, axis=-1, keepdims=True)
        return jnp.sum((weights @ v) ** 2)

    def layernorm_loss(gamma, beta, x):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        y = (x - mean) / jnp.sqrt(var + 1e-5) * gamma + beta
        return jnp.sum(y * y)

    def rnn_loss(wh, wx, xs):
        def step(h, x):
            h = jnp.tanh(h @ wh + x @ wx)
            return h, jnp.sum(h)

        h, ys = lax.scan(step, jnp.zeros((wh.shape[0],), f32), xs)
        return jnp.sum(h) + jnp.sum(ys)

    def energy(x):
        return jnp.sum(jnp.tanh(x) ** 2 * jnp.sin(x))

    return {
        "grad(mlp)": (lib.grad(mlp_loss), (mlp_params, _normal(8, 16), _normal(8, 4))),
        "grad(attention)": (
            lib.grad(attention, argnums=(0, 1, 2)),
            (_normal(8, 8), _normal(8, 8), _normal(8, 8), _normal(5, 8)),
        ),
        "grad(layernorm)": (
            lib.grad(layernorm_loss, argnums=(0, 1, 2)),
            (_normal(8), _normal(8), _normal(4, 8)),
        ),
        "grad(scan rnn)": (
            lib.grad(rnn_loss, argnums=(0, 1)),
            (_normal(8, 8), _normal(4, 8), _normal(6, 4)),
        ),
        "hessian": (lib.hessian(energy), (_normal(5),)),
    }


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _jaxpr_eqns(jaxpr) -> int:
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        for value in eqn.params.values():
            for v in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(v, "jaxpr", None)
                if inner is not None:
                    total += _jaxpr_eqns(getattr(inner, "jaxpr", inner))
    return total


def jax_counts() -> dict:
    jax, jnp, lax = load("jax")
    return {
        name: _jaxpr_eqns(jax.make_jaxpr(fn)(*args).jaxpr)
        for name, (fn, args) in workloads(jax, jnp, lax).items()
    }


def _compile(program):
    return Traced.from_olympuspr(program).lower().compile()


def trace_and_optimize(fn, args, rounds: int) -> tuple[float, float, float]:
    """Median trace seconds, optimize seconds and optimize / trace over
    `rounds`, each tracing a fresh program and optimizing it (what every
    compile does), so load on the machine hits both alike."""
    trace = olympus.make_olympuspr(fn)
    optimize(trace(*args))  # the optimizer's own indexes, made once per process
    traces, optimizes, shares = [], [], []
    for _ in range(rounds):
        start = time.perf_counter()
        closed = trace(*args)
        traced = time.perf_counter()
        optimize(closed)
        done = time.perf_counter()
        traces.append(traced - start)
        optimizes.append(done - traced)
        shares.append((done - traced) / (traced - start))
    return (
        statistics.median(traces),
        statistics.median(optimizes),
        statistics.median(shares),
    )


def measure(repeats: int, compile_too: bool = True) -> list[dict]:
    lib, jnp, lax = load("olympus")
    rows = []
    for name, (fn, args) in workloads(lib, jnp, lax).items():
        leaves = olympus.tree_util.tree_leaves(args)
        closed = olympus.make_olympuspr(fn)(*args)
        optimized = optimize(closed)
        trace_s, optimize_s, share = trace_and_optimize(fn, args, 20 * repeats)
        row = {
            "name": name,
            "before": count_eqns(closed),
            "after": count_eqns(optimized),
            "trace_ms": 1e3 * trace_s,
            "optimize_ms": 1e3 * optimize_s,
            "share": share,
        }
        rows.append(row)
        if not compile_too:
            continue
        for key, program in (("", closed), ("_opt", optimized)):
            compile_s = _median_seconds(functools.partial(_compile, program), 3)
            row["compile_ms" + key] = 1e3 * compile_s
            compiled = _compile(program)
            call = functools.partial(compiled, *leaves)
            olympus.block_until_ready(call())
            run_s = _median_seconds(
                lambda c=call: olympus.block_until_ready(c()), 20 * repeats
            )
            row["run_us" + key] = 1e6 * run_s
    return rows


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _log_softmax(x, axis):
    return x - np.logaddexp.reduce(x, axis=axis, keepdims=True)


def _log_softmax_grad(x, axis, t):
    """The gradient of sum(t * log_softmax(x, axis)), float64."""
    x, t = x.astype(float), np.broadcast_to(t, x.shape).astype(float)
    return t - np.exp(_log_softmax(x, axis)) * t.sum(axis, keepdims=True)


def naive_programs(lib, jnp, lax):
    """name -> (function, x, closed form): formulas that overflow as written."""
    big = np.array([100.0, -100.0], f32)
    lse = np.array([1000.0, 999.0], f32)
    huge = np.array([3e20, 1e30], f32)
    # Softmax along an axis of a 2-D array: exp(1000) = inf, and the softmax of
    # -1000 beside 1000 underflows to 0.
    wide = np.array([[1000.0, -1000.0], [1.0, 2.0]], f32)
    labels = np.array([[1.0, 0.0], [0.25, 0.75]], f32)

    def hand_log_softmax(x, axis):
        return jnp.log(jnp.exp(x) / jnp.sum(jnp.exp(x), axis=axis, keepdims=True))

    def grad(f):
        return lib.grad(lambda x: jnp.sum(f(x)))

    name = importlib.import_module(f"{lib.__name__}.ad_checkpoint").checkpoint_name

    return {
        "log(1+exp(x))": (lambda x: jnp.log(1 + jnp.exp(x)), big, np.logaddexp(0, big)),
        "log1p(exp(x))": (lambda x: jnp.log1p(jnp.exp(x)), big, np.logaddexp(0, big)),
        "exp(x)/(1+exp(x))": (
            lambda x: jnp.exp(x) / (1 + jnp.exp(x)),
            big,
            _sigmoid(big.astype(float)),
        ),
        "log(sum(exp(x)))": (
            lambda x: jnp.log(jnp.sum(jnp.exp(x))),
            lse,
            np.logaddexp.reduce(lse.astype(float)),
        ),
        "log(softmax(x))": (
            lambda x: jnp.log(jnp.exp(x) / jnp.sum(jnp.exp(x))),
            lse,
            lse - np.logaddexp.reduce(lse.astype(float)),
        ),
        "sqrt(x**2+y**2)": (
            lambda x, y: jnp.sqrt(x**2 + y**2),
            (huge, 2 * huge),
            np.hypot(huge, 2.0 * huge),
        ),
        "grad sqrt(x**2+y**2)": (
            lib.grad(lambda x, y: jnp.sum(jnp.sqrt(x**2 + y**2))),
            (huge, 2 * huge),
            1 / np.sqrt(5.0) + 0 * huge,
        ),
        "grad log(1+exp(x))": (
            grad(lambda x: jnp.log(1 + jnp.exp(x))),
            big,
            _sigmoid(big),
        ),
        "grad log(logistic(x))": (
            grad(lambda x: jnp.log(lax.logistic(x))),
            -big - 100,
            _sigmoid(big + 100.0),
        ),
        "grad 1/(1+exp(-x))": (
            grad(lambda x: 1 / (1 + jnp.exp(-x))),
            big,
            _sigmoid(big) * _sigmoid(-big),
        ),
        "grad log(1/(1+exp(-x)))": (
            grad(lambda x: jnp.log(1 / (1 + jnp.exp(-x)))),
            big,
            _sigmoid(-big),
        ),
        "grad log(sum(exp(x)))": (
            grad(lambda x: jnp.log(jnp.sum(jnp.exp(x)))),
            lse,
            np.exp(lse - np.logaddexp.reduce(lse.astype(float))),
        ),
        "log(exp(x)/sum(exp(x),0))": (
            lambda x: hand_log_softmax(x, 0),
            wide,
            _log_softmax(wide.astype(float), 0),
        ),
        "grad log(exp(x)/sum(exp(x),0))": (
            grad(lambda x: hand_log_softmax(x, 0)),
            wide,
            _log_softmax_grad(wide, 0, 1.0),
        ),
        "grad log(exp(x)/sum(exp(x),1))": (
            grad(lambda x: hand_log_softmax(x, 1)),
            wide,
            _log_softmax_grad(wide, 1, 1.0),
        ),
        "grad log(nn.softmax(x,1))": (
            grad(lambda x: jnp.log(lib.nn.softmax(x, axis=1))),
            wide,
            _log_softmax_grad(wide, 1, 1.0),
        ),
        "grad -sum(y*log(softmax(x)),1)": (
            grad(lambda x: -jnp.sum(labels * hand_log_softmax(x, 1), axis=1)),
            wide,
            _log_softmax_grad(wide, 1, -labels),
        ),
        # Inside a checkpoint: reverse mode recomputes in a sub-program of its own.
        "grad checkpoint(log(1+exp(x)))": (
            grad(lib.checkpoint(lambda x: jnp.log(1 + jnp.exp(x)))),
            big,
            _sigmoid(big),
        ),
        "grad checkpoint(1/(1+exp(-x)))": (
            grad(lib.checkpoint(lambda x: 1 / (1 + jnp.exp(-x)))),
            big,
            _sigmoid(big) * _sigmoid(-big),
        ),
        "grad checkpoint(log(sum(exp(x))))": (
            grad(lib.checkpoint(lambda x: jnp.log(jnp.sum(jnp.exp(x))))),
            lse,
            np.exp(lse - np.logaddexp.reduce(lse.astype(float))),
        ),
        "grad checkpoint(log(exp(x)/sum(exp(x),1)), dots_saveable)": (
            grad(
                lib.checkpoint(
                    lambda x: hand_log_softmax(x, 1),
                    policy=lib.checkpoint_policies.dots_saveable,
                )
            ),
            wide,
            _log_softmax_grad(wide, 1, 1.0),
        ),
        "grad scan(remat(log(1+exp(x))))": (
            grad(
                lambda x: lax.scan(
                    lambda c, v: (c, lib.remat(lambda v: jnp.log(1 + jnp.exp(v)))(v)),
                    0.0,
                    x,
                )[1]
            ),
            big,
            _sigmoid(big),
        ),
        # A tagged exp: the tag is saved and read where exp's output was.
        "grad checkpoint(log(1+name(exp(x))), everything_saveable)": (
            grad(
                lib.checkpoint(
                    lambda x: jnp.log(1 + name(jnp.exp(x), "e")),
                    policy=lib.checkpoint_policies.everything_saveable,
                )
            ),
            big,
            _sigmoid(big),
        ),
        # A tag between exp and log: the rows match through it.
        "log(1+name(exp(x)))": (
            lambda x: jnp.log(1 + name(jnp.exp(x), "e")),
            big,
            np.logaddexp(0, big),
        ),
        # The saved tag is exp(x) = inf; the transposed part works from x.
        "grad checkpoint(log(1+name(exp(x))), save_only_these_names)": (
            grad(
                lib.checkpoint(
                    lambda x: jnp.log(1 + name(jnp.exp(x), "e")),
                    policy=lib.checkpoint_policies.save_only_these_names("e"),
                )
            ),
            big,
            _sigmoid(big),
        ),
    }


def _args(x) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def _fmt(values) -> str:
    if isinstance(values, tuple):
        return "; ".join(map(_fmt, values))
    return "[" + ", ".join(f"{v:.4g}" for v in np.ravel(values)) + "]"


def naive_table(with_jax: bool) -> None:
    lib, jnp, lax = load("olympus")
    programs = naive_programs(lib, jnp, lax)
    jax_values = {}
    if with_jax:
        jax, jjnp, jlax = load("jax")
        for name, (fn, x, _) in naive_programs(jax, jjnp, jlax).items():
            jax_values[name] = np.asarray(jax.jit(fn)(*_args(x)))
    print(
        f"\n{'naive program':<33}{'x':<32}{'off':<30}{'jax':<30}{'on':<26}{'closed form':<26}"
    )
    for name, (fn, x, want) in programs.items():
        with olympus.config.override("olympus_optimize", False):
            off = np.asarray(olympus.jit(fn)(*_args(x)))
        on = np.asarray(olympus.jit(fn)(*_args(x)))
        jax_text = _fmt(jax_values[name]) if name in jax_values else "-"
        print(
            f"{name:<33}{_fmt(x):<32}{_fmt(off):<30}{jax_text:<30}"
            f"{_fmt(on):<26}{_fmt(want):<26}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--share-only",
        action="store_true",
        help="only the equation counts and the optimizer's time against the trace's",
    )
    parser.add_argument("--naive-only", action="store_true", help="the naive table")
    args = parser.parse_args()
    if args.naive_only:
        naive_table(jax_available() and not args.no_jax)
        return
    olympus.config.update("olympus_compilation_cache", False)  # time real compiles
    rows = measure(args.repeats, compile_too=not args.share_only)
    if args.share_only:
        print(
            f"{'program':<17}{'eqns':>6}{'opt':>6}"
            f"{'trace ms':>10}{'opt ms':>8}{'share':>7}"
        )
        for r in rows:
            print(
                f"{r['name']:<17}{r['before']:>6}{r['after']:>6}"
                f"{r['trace_ms']:>10.2f}{r['optimize_ms']:>8.2f}{r['share']:>7.0%}"
            )
        return
    jax = jax_counts() if jax_available() and not args.no_jax else {}
    print(
        f"{'program':<17}{'eqns':>6}{'opt':>6}{'ratio':>7}{'jax':>6}{'opt/jax':>8}"
        f"{'trace ms':>10}{'opt ms':>8}{'share':>7}"
        f"{'compile ms':>12}{'opt':>7}{'run us':>9}{'opt':>7}"
    )
    for r in rows:
        n_jax = jax.get(r["name"])
        vs_jax = f"{r['after'] / n_jax:.2f}" if n_jax else "-"
        print(
            f"{r['name']:<17}{r['before']:>6}{r['after']:>6}"
            f"{r['after'] / r['before']:>7.2f}{n_jax or '-':>6}{vs_jax:>8}"
            f"{r['trace_ms']:>10.2f}{r['optimize_ms']:>8.2f}{r['share']:>7.0%}"
            f"{r['compile_ms']:>12.1f}{r['compile_ms_opt']:>7.1f}"
            f"{r['run_us']:>9.1f}{r['run_us_opt']:>7.1f}"
        )
    naive_table(bool(jax))


if __name__ == "__main__":
    main()
