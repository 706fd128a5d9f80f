"""Tiered execution: `jit(f, tiered=True)` interprets a new signature's program
with NumPy while XLA compiles it in the background, then runs the compiled
executable; results, pytrees and avals agree with the ordinary jit."""

from __future__ import annotations

import gc
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import config, lax, stages
from olympus.backends import interpreted
from olympus.backends.interpreted import _dot_general, interpret, not_interpretable
from olympus.backends.reference import reference_rules
from olympus.backends.xla.array import Array
from olympus.errors import LoweringError
from olympus.ir.core import ShapedArray

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _wait(f) -> None:
    """Waits for every background compile of the jitted `f`."""
    for pending in list(f._pending.values()):
        pending.start()
        pending.done.wait(60)


@pytest.fixture
def held(monkeypatch):
    """Background compiles wait until the test sets this event (or ends), so
    a test can look at the state while a compile is pending."""
    release = threading.Event()
    compile_ = stages.Lowered.compile

    def held_compile(self):
        release.wait(60)
        return compile_(self)

    monkeypatch.setattr(stages.Lowered, "compile", held_compile)
    yield release
    release.set()


def _rng():
    return np.random.default_rng(0)


def _mlp_loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    return jnp.mean((h @ w + b - y) ** 2)


def _mlp_args():
    r = _rng()
    params = [
        (r.normal(size=(8, 8)).astype(np.float32), np.zeros(8, np.float32))
        for _ in range(3)
    ]
    return (
        params,
        r.normal(size=(4, 8)).astype(np.float32),
        r.normal(size=(4, 8)).astype(np.float32),
    )


def _scan(xs):
    return lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)


def _loop(x):
    return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))


def _cond(p, x):
    return lax.cond(p > 0, lambda x: jnp.sin(x), lambda x: jnp.cos(x) * 2.0, x)


def _nested(x):
    inner = olympus.jit(lambda a: jnp.exp(a) - a)
    return olympus.checkpoint(lambda a: inner(a) * 3.0)(x).sum()


def _ints(a, b):
    return (a // 3 + b) % 7, jnp.argmax(a), (a > 2) & (b < 4)


_X = _rng().normal(size=(5,)).astype(np.float32)
CASES = {
    "mlp value_and_grad": (olympus.value_and_grad(_mlp_loss), _mlp_args()),
    "scan": (_scan, (_X,)),
    "while": (_loop, (_X,)),
    "cond": (_cond, (np.float32(1.0), _X)),
    "nested jit, checkpoint": (_nested, (_X,)),
    "ints and bools": (
        _ints,
        (np.arange(6, dtype=np.int32), np.arange(6, dtype=np.int32)[::-1].copy()),
    ),
    "batched dot": (
        lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
        (
            _rng().normal(size=(2, 3, 4)).astype(np.float32),
            _rng().normal(size=(2, 4, 5)).astype(np.float32),
        ),
    ),
    "grad of a reduction": (
        olympus.grad(lambda x: jnp.sum(jnp.logaddexp(x, 1.0) ** 2)),
        (_X,),
    ),
}


def _assert_same(got, want) -> None:
    got_leaves, got_tree = olympus.tree_util.tree_flatten(got)
    want_leaves, want_tree = olympus.tree_util.tree_flatten(want)
    assert got_tree == want_tree
    for g, w in zip(got_leaves, want_leaves):
        assert type(g) is Array
        assert g.dtype == w.dtype and g.shape == w.shape and g.weak_type == w.weak_type
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_interpreted_first_call_matches_compiled(name, held):
    fun, args = CASES[name]
    tiered = olympus.jit(fun, tiered=True)
    first = tiered(*args)
    assert tiered._pending and not tiered._cache  # the first call did not compile
    held.set()
    _assert_same(first, olympus.jit(fun)(*args))
    _wait(tiered)
    _assert_same(tiered(*args), first)
    assert tiered._cache and not tiered._pending


def test_weak_types_and_single_outputs():
    f = olympus.jit(lambda x: x * 2, tiered=True)
    out = f(1.0)
    assert type(out) is Array and out.weak_type and out.dtype == np.float32
    assert float(out) == 2.0
    g = olympus.jit(
        lambda x: (x, {"a": x + 1, "b": [x.astype(jnp.int32)]}), tiered=True
    )
    _assert_same(g(np.float32(3.0)), olympus.jit(g.fun)(np.float32(3.0)))
    # literals and arguments returned as they are
    h = olympus.jit(lambda x, y: (x * 2.0, 3, y, x), tiered=True)
    _assert_same(h(jnp.arange(3.0), 5), olympus.jit(h.fun)(jnp.arange(3.0), 5))


def test_x64_off_narrows_as_compiled():
    f = olympus.jit(lambda x, i: (x * 2.0, i + 1), tiered=True)
    x, i = np.arange(3, dtype=np.float64), np.arange(3, dtype=np.int64)
    out = f(x, i)
    assert out[0].dtype == np.float32 and out[1].dtype == np.int32
    _assert_same(out, olympus.jit(f.fun)(x, i))


def test_second_call_runs_compiled_once_ready(held):
    f = olympus.jit(lambda x: jnp.sin(x) + 1.0, tiered=True)
    x = jnp.arange(4.0)
    f(x)
    (pending,) = f._pending.values()
    held.set()
    assert pending.done.wait(60) and pending.error is None
    out = f(x)  # installs the Compiled: later calls take the fast path
    assert list(f._cache.values()) == [pending.compiled]
    assert f._fast.get((x.aval,)) is not None  # the next call is a fast hit
    np.testing.assert_allclose(out, np.sin(np.arange(4.0)) + 1.0, rtol=1e-6)


def test_calls_before_the_compile_is_ready_interpret(held):
    f = olympus.jit(lambda x: x * 3.0, tiered=True)
    outs = [f(np.float32(i)) for i in range(3)]
    assert [float(o) for o in outs] == [0.0, 3.0, 6.0] and not f._cache
    held.set()
    _wait(f)
    assert float(f(np.float32(2.0))) == 6.0 and f._cache


def test_background_compile_failure_surfaces_on_a_later_call(monkeypatch):
    def broken(text, out_avals):
        raise LoweringError("XLA could not compile the program: broken on purpose")

    monkeypatch.setattr(stages, "Executable", broken)
    f = olympus.jit(lambda x: x + 1.0, tiered=True)
    assert float(f(np.float32(1.0))) == 2.0  # the interpreted result still comes back
    _wait(f)
    with pytest.raises(LoweringError, match="broken on purpose") as info:
        f(np.float32(1.0))
    (note,) = [n for n in info.value.__notes__ if "background compile" in n]
    assert "background compile of jit(<lambda>)" in note and "test_tiered.py:" in note
    # From now on the signature compiles synchronously, as the ordinary jit does.
    with pytest.raises(LoweringError, match="broken on purpose"):
        f(np.float32(1.0))
    with pytest.raises(LoweringError, match="broken on purpose"):
        olympus.jit(lambda x: x + 1.0, tiered=False)(np.float32(1.0))


def test_threads_calling_during_the_compile_compile_once(monkeypatch):
    compiles = []
    release = threading.Event()
    compile_ = stages.Lowered.compile

    def counted(self):
        compiles.append(self)
        release.wait(60)
        return compile_(self)

    monkeypatch.setattr(stages.Lowered, "compile", counted)
    f = olympus.jit(lambda x: jnp.tanh(x) * 2.0, tiered=True)
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    barrier, results, errors = threading.Barrier(4), [], []

    def work():
        try:
            barrier.wait()
            for _ in range(5):
                results.append(np.asarray(f(x)))
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and len(results) == 20
    release.set()
    _wait(f)
    results.append(np.asarray(f(x)))
    assert len(compiles) == 1
    for r in results:
        np.testing.assert_allclose(r, np.tanh(x) * 2.0, rtol=1e-6)


def test_the_logger_says_which_tier_ran(caplog):
    f = olympus.jit(lambda x: x - 1.0, tiered=True)
    with caplog.at_level(logging.DEBUG, logger="olympus"):
        f(np.float32(1.0))
        _wait(f)
        f(np.float32(1.0))
    text = caplog.text
    assert "interpreting while XLA compiles in the background" in text
    assert "ran interpreted (NumPy)" in text
    assert "compiled in the background in" in text and "running the compiled" in text


def test_config_option_and_override(held):
    with config.override("olympus_tiered_execution", True):
        f = olympus.jit(lambda x: x * 5.0)
        assert float(f(np.float32(1.0))) == 5.0 and f._pending
        held.set()
        g = olympus.jit(lambda x: x * 5.0, tiered=False)
        g(np.float32(1.0))
        assert g._cache and not g._pending
        _wait(f)
    with config.override("olympus_tiered_execution", False):  # the default
        h = olympus.jit(lambda x: x * 5.0)
        h(np.float32(1.0))
    assert h._cache and not h._pending


def test_effects_and_donation_compile_directly(caplog, capsys):
    def printing(x):
        olympus.debug.print("x = {}", x)
        return x * 2.0

    f = olympus.jit(printing, tiered=True)
    with caplog.at_level(logging.INFO, logger="olympus"):
        assert float(f(np.float32(2.0))) == 4.0
    assert "not interpreted: it has ordered effects" in caplog.text
    assert f._cache and not f._pending
    assert capsys.readouterr().out.count("x = 2.0") == 1

    d = olympus.jit(lambda x: x + 1.0, donate_argnums=0, tiered=True)
    d(jnp.arange(3.0))
    assert d._cache and not d._pending


def test_a_deleted_argument_is_refused_after_an_interpreted_call():
    """The interpreter reads an argument's host copy; deleting the Array must
    drop it, so a later call raises instead of reading freed data."""
    f = olympus.jit(lambda x: x * 2.0, tiered=True)
    x = jnp.ones(2)
    np.testing.assert_allclose(np.asarray(f(x)), [2.0, 2.0])
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x)
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)


def test_values_laid_out_over_devices_compile_directly():
    from olympus.sharding import NamedSharding, PartitionSpec

    mesh = olympus.make_mesh((1,), ("x",), axis_types=(olympus.sharding.AxisType.Auto,))
    program = olympus.make_olympuspr(
        lambda x: lax.with_sharding_constraint(
            x * 2.0, NamedSharding(mesh, PartitionSpec("x"))
        )
    )(_X)
    assert "lays out values over devices (sharding_constraint)" in not_interpretable(
        program
    )


def test_sharded_arguments_and_constraints_keep_their_layout():
    """On 4 devices a tiered jit of sharded arguments (or a constraint inside)
    returns what the compiled program returns, laid out the same."""
    code = """
        import numpy as np, olympus, olympus.numpy as jnp
        from olympus import lax
        from olympus.sharding import NamedSharding, PartitionSpec as P
        auto = (olympus.sharding.AxisType.Auto,) * 2  # JAX constrains only Auto axes
        mesh = olympus.make_mesh((2, 2), ("x", "y"), axis_types=auto)
        rows = NamedSharding(mesh, P("x"))
        x = olympus.device_put(np.arange(16.0, dtype=np.float32).reshape(8, 2), rows)
        f = olympus.jit(lambda a: jnp.tanh(a) * 2.0, tiered=True)
        out = f(x)
        assert out.sharding == rows, out.sharding
        np.testing.assert_allclose(np.asarray(out), np.tanh(np.asarray(x)) * 2, rtol=1e-6)
        g = olympus.jit(lambda a: lax.with_sharding_constraint(a + 1.0, rows), tiered=True)
        out = g(np.ones((8, 2), np.float32))
        assert out.sharding == rows, out.sharding
        print("ok")
    """
    env = dict(os.environ, OLYMPUS_NUM_CPU_DEVICES="4", PYTHONPATH=ROOT)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
    )
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-3000:]


def test_prng_keys_cross_the_boundary_as_their_data(held):
    k = olympus.jit(
        lambda key: (olympus.random.uniform(key, (3,)), olympus.random.split(key)),
        tiered=True,
    )
    out = k(olympus.random.key(0))
    assert k._pending  # interpreted: keys enter and leave the program as uint32 data
    held.set()
    want = olympus.jit(k.fun)(olympus.random.key(0))
    np.testing.assert_array_equal(out[0], want[0])
    np.testing.assert_array_equal(
        olympus.random.key_data(out[1]), olympus.random.key_data(want[1])
    )


def test_debug_nans_checks_the_compiled_result():
    f = olympus.jit(lambda x: jnp.log(x), tiered=True)
    with config.override("olympus_debug_nans", True):
        with pytest.raises(FloatingPointError, match="log"):
            f(np.float32(-1.0))


def test_an_interpreter_failure_waits_for_the_compiled_result(monkeypatch, caplog):
    import olympus.jit_function

    def failing(program, leaves):
        raise ValueError("interpreter broken on purpose")

    monkeypatch.setattr(olympus.jit_function, "interpret", failing)
    f = olympus.jit(lambda x: x * 4.0, tiered=True)
    with caplog.at_level(logging.INFO, logger="olympus"):
        assert float(f(np.float32(2.0))) == 8.0
    assert "interpreter failed" in caplog.text and f._cache


def test_clear_cache_during_a_background_compile():
    f = olympus.jit(lambda x: x + 2.0, tiered=True)
    f(np.float32(1.0))
    pending = list(f._pending.values())
    olympus.clear_caches()
    assert not f._pending
    for p in pending:
        p.done.wait(60)
    assert float(f(np.float32(1.0))) == 3.0


def test_exit_while_compiling_is_clean():
    code = (
        "import numpy as np, olympus, olympus.numpy as jnp\n"
        "f = olympus.jit(lambda x: jnp.tanh(x @ x.T).sum(), tiered=True)\n"
        "print(float(f(np.ones((64, 64), np.float32))))\n"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", OLYMPUS_COMPILATION_CACHE="0")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout) == pytest.approx(64 * 64, rel=1e-6)


@pytest.mark.parametrize(
    "lhs_shape, rhs_shape, dims",
    [
        ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
        ((4, 3), (5, 4), (((0,), (1,)), ((), ()))),
        ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
        ((3, 2, 4, 6), (6, 4, 2, 5), (((2, 3), (1, 0)), ((1,), (2,)))),
        ((4,), (4,), (((0,), (0,)), ((), ()))),
        ((3,), (5,), (((), ()), ((), ()))),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.int32])
def test_fast_dot_general_matches_the_reference(lhs_shape, rhs_shape, dims, dtype):
    r = _rng()
    lhs = r.normal(size=lhs_shape).astype(dtype)
    rhs = r.normal(size=rhs_shape).astype(dtype)
    got = _dot_general(lhs, rhs, dimension_numbers=dims)
    want = reference_rules["dot_general"](lhs, rhs, dimension_numbers=dims)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "lhs_shape, rhs_shape, dims, block",
    [
        ((256, 300), (300, 200), (((1,), (0,)), ((), ())), (1, 128, 200)),  # rows
        ((300, 256), (300, 200), (((0,), (0,)), ((), ())), (1, 128, 200)),  # of a.T
        ((128, 512), (512, 512), (((1,), (0,)), ((), ())), (1, 128, 256)),  # columns
        ((128, 512), (300, 512), (((1,), (1,)), ((), ())), (1, 128, 150)),  # of b.T
        ((64, 16, 128), (64, 128, 64), (((2,), (1,)), ((0,), (0,))), (32, 16, 64)),
        ((2, 130, 512), (2, 512, 96), (((2,), (1,)), ((0,), (0,))), (2, 65, 96)),
        ((2, 96, 512), (2, 512, 130), (((2,), (1,)), ((0,), (0,))), (2, 96, 65)),
    ],
)
def test_large_matmuls_split_over_the_cores_match_numpy(
    lhs_shape, rhs_shape, dims, block, monkeypatch
):
    """A matmul large enough is computed in blocks that the caller and the
    interpreter's worker threads take in turn (one worker even on one core,
    so the test means the same everywhere), cut along the batch or the
    longer of rows and columns (`block`: the first one's shape); the blocks
    make up NumPy's result exactly."""
    monkeypatch.setattr(interpreted, "_workers", interpreted._Workers(1))
    calls = []
    run = interpreted._workers.run
    monkeypatch.setattr(
        interpreted._workers, "run", lambda j: calls.append(j) or run(j)
    )
    r = _rng()
    lhs = r.normal(size=lhs_shape).astype(np.float32)
    rhs = r.normal(size=rhs_shape).astype(np.float32)
    with interpreted._one_blas_thread:  # as when interpreting
        got = _dot_general(lhs, rhs, dimension_numbers=dims)
        assert [len(j) for j in calls] == [2]  # a block per thread
        assert calls[0][0].keywords["out"].shape == block
        monkeypatch.setattr(interpreted, "_workers", interpreted._Workers(0))
        whole = _dot_general(lhs, rhs, dimension_numbers=dims)
    want = reference_rules["dot_general"](lhs, rhs, dimension_numbers=dims)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # Bit for bit where OpenBLAS sums a block's dot products in the same order
    # as the whole matmul's; with OPENBLAS_CORETYPE=Haswell (set on some CI
    # machines) its kernel for fewer rows sums in another order: float32
    # rounding apart, no more.
    np.testing.assert_allclose(got, whole, rtol=1e-5, atol=1e-4)


def _two_layer_backward(x, v, g):
    """A weight gradient (`x.T @ g`) whose result is read only at the end,
    the next matmul (`g @ v.T`) not needing it, and `a` (made here, an
    operand of the first) dying at an elementwise op before that end."""
    a = x * 2.0
    dw = a.T @ g
    dx = g @ v.T
    return dw, jnp.exp(a) + dx


def test_a_matmul_read_after_the_next_one_runs_on_a_worker(monkeypatch):
    """`_early_matmuls` picks the matmul whose result is first read after
    the next matmul; it runs whole on a worker while the caller goes on,
    its operand stays untouched until it is done (not written into by the
    elementwise op where it dies), and the values are NumPy's."""
    monkeypatch.setattr(interpreted, "_workers", interpreted._Workers(1))
    r = _rng()
    x, v, g = (
        r.normal(size=s).astype(np.float32) / 8
        for s in [(128, 256), (256, 256), (128, 256)]
    )
    closed = olympus.make_olympuspr(_two_layer_backward)(x, v, g)
    dots = [
        i
        for i, e in enumerate(closed.olympuspr.eqns)
        if e.primitive.name == "dot_general"
    ]
    assert interpreted._early_matmuls(closed.olympuspr) == {dots[0]}

    def two_products(p, q, s):  # p @ q read only after p @ s
        first = p @ q
        second = p @ s
        return jnp.sum(first) + jnp.sum(second)

    for width, early in [(256, {0}), (240, {0}), (64, set()), (128, set())]:
        s_ = np.ones((256, width), np.float32)
        pair = olympus.make_olympuspr(two_products)(x, v, s_)
        # not where the next matmul is much smaller: splitting both is faster
        assert interpreted._early_matmuls(pair.olympuspr) == early, width
    started = []
    monkeypatch.setattr(
        interpreted,
        "_later_matmul",
        lambda eqn, invals, later=interpreted._later_matmul: (
            started.append(eqn) or later(eqn, invals)
        ),
    )
    with interpreted._one_blas_thread:
        for _ in range(3):  # later runs reuse the first one's memory
            dw, out = interpreted.run_numpy(closed.olympuspr, closed.consts, [x, v, g])
            a = x * np.float32(2)
            np.testing.assert_allclose(dw, a.T @ g, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(out, np.exp(a) + g @ v.T, rtol=1e-5, atol=1e-5)
    assert len(started) == 3 and interpreted._workers.busy == 0


def test_threads_interpreting_at_once_get_one_threads_results(monkeypatch):
    """Several threads interpreting a gradient at once, each prefaulting
    first, share the arena, the worker and its matmuls (split, whole, or
    run beside the caller) and get bit for bit what one thread gets."""
    monkeypatch.setattr(interpreted, "_workers", interpreted._Workers(1))
    r = _rng()
    params = [r.normal(size=(256, 256)).astype(np.float32) / 16 for _ in range(3)]
    x = r.normal(size=(128, 256)).astype(np.float32)

    def loss(params, x):
        for w in params:
            x = jnp.tanh(x @ w)
        return jnp.sum(x**2)

    closed = olympus.make_olympuspr(olympus.value_and_grad(loss))(params, x)
    leaves = [*params, x]
    want = [np.array(o) for o in interpret(closed, leaves)]
    mismatches = []

    def run():
        for _ in range(6):
            interpreted.prefault_like(leaves)
            got = interpret(closed, leaves)
            mismatches.extend(
                i for i, (g, w) in enumerate(zip(got, want)) if not np.array_equal(g, w)
            )

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not mismatches
    assert interpreted._workers.busy == 0


def test_a_failed_matmul_block_raises_after_all_blocks_end():
    workers = interpreted._Workers(2)
    ran = []

    def fails():
        raise FloatingPointError("block 1")

    def slow():
        time.sleep(0.05)
        ran.append("slow")

    with pytest.raises(FloatingPointError, match="block 1"):
        workers.run([lambda: ran.append("here"), fails, slow, slow])
    assert sorted(ran) == ["here", "slow", "slow"]
    workers.run([lambda: ran.append("again")] * 5)
    assert ran.count("again") == 5


def test_the_caller_takes_the_blocks_a_busy_worker_has_not_begun():
    """While the only worker is busy elsewhere, a split call does not wait for
    it: the caller runs every block itself."""
    workers = interpreted._Workers(1)
    release = threading.Event()
    busy = interpreted._Jobs([release.wait])
    workers.run([lambda: None, lambda: None])  # starts the worker
    workers._tasks.put(busy)  # now it waits on `release`
    time.sleep(0.01)
    threads = []
    workers.run([lambda: threads.append(threading.get_ident())] * 4)
    assert threads == [threading.get_ident()] * 4
    release.set()
    busy.done.wait(5)


def test_a_split_matmul_result_is_still_shared(held):
    """The worker threads let go of their blocks' views before the caller
    goes on, so the result is still the sole view of its memory and becomes
    the device buffer without a copy."""
    f32 = ShapedArray((512, 512), np.dtype(np.float32))
    outs = [
        interpreted._dot_general(
            np.ones((128, 512), np.float32),
            np.ones((128, 512), np.float32),
            dimension_numbers=(((0,), (0,)), ((), ())),
        )
    ]
    address = outs[0].ctypes.data
    assert interpreted._allocated(outs[0])  # the tier's own: it may share it
    assert np.asarray(interpreted._result(outs[0], f32, True)).ctypes.data == address


def test_arena_memory_is_reused_only_once_nothing_views_it(held):
    """A large result's memory goes back to the arena when the last array
    viewing it (the device Array sharing it included) is gone, and comes out
    again for the next result of its size; while anything views it, a new
    block is taken. `olympus.clear_caches()` lets the arena's blocks go."""
    arena = interpreted._Arena(8 << 20)
    a = arena.claim(300_000)
    address = a.ctypes.data
    b = arena.claim(300_000)
    assert b.ctypes.data != address  # `a` still views its block
    del a
    c = arena.claim(300_000)
    assert c.ctypes.data == address
    assert len(arena) == 2
    arena.clear()
    assert len(arena) == 0 and c.ctypes.data == address  # `c` keeps its memory

    olympus.clear_caches()
    f32 = ShapedArray((512, 512), np.dtype(np.float32))

    def product():
        return interpreted._dot_general(
            np.ones((512, 64), np.float32),
            np.full((64, 512), 2.0, np.float32),
            dimension_numbers=(((1,), (0,)), ((), ())),
        )

    shared = interpreted._result(product(), f32, True)
    address = np.asarray(shared).ctypes.data
    assert interpreted._arena.ids  # the product's memory is the arena's
    other = product()
    assert other.ctypes.data != address  # the device Array still uses it
    np.testing.assert_array_equal(np.asarray(shared), 128.0)
    del shared
    again = product()
    assert again.ctypes.data == address  # free once the Array is gone
    np.testing.assert_array_equal(again, 128.0)
    olympus.clear_caches()
    assert not interpreted._arena.ids


def test_prefaulted_blocks_are_handed_out_once_written():
    """`_Arena.prefault` lays blocks for the asked sizes out in one fresh
    mapping (none for sizes it has free blocks of, none past `most` bytes
    in all); while the job writing
    them holds them they are not handed out, afterwards `claim` gives them,
    and arrays viewing them count as the sole views of arena memory."""
    arena = interpreted._Arena(8 << 20)
    assert arena.prefault([300_000, 300_000], 500_000)[1][0].nbytes == 303_104
    assert len(arena) == 1  # the second block would pass `most`
    arena.clear()
    mapping, blocks = arena.prefault([300_000, 300_000, 100], 1 << 20)
    assert len(blocks) == 3 and len(arena) == 3
    assert sum(b.nbytes for b in blocks) == len(mapping)
    job = interpreted._Touch(mapping, blocks)
    del mapping, blocks
    taken = arena.claim(300_000)  # the job still holds the prefaulted blocks
    assert len(arena) == 4
    job.work()
    assert job.started.is_set()
    got = [arena.claim(300_000), arena.claim(300_000)]
    assert len(arena) == 4  # both from the mapping
    assert {type(g.base) for g in got} == {np.ndarray}
    assert all(not g.base.flags.owndata for g in got)  # blocks of the mapping
    np.testing.assert_array_equal(got[0], 0)
    extra = arena.prefault([300_000], 1 << 20)  # none free: one more block
    assert extra is not None and len(arena) == 5
    del taken
    assert arena.prefault([300_000], 1 << 20) is None  # `taken`'s is free again
    assert len(arena) == 5 and extra


def test_prefault_like_serves_a_result_the_size_of_an_argument(held):
    """Before a tiered miss is traced, blocks the size of its large
    arguments are written on a worker; a result of that size then takes one
    and still becomes the device buffer without a copy."""
    olympus.clear_caches()
    weights = np.ones((512, 512), np.float32)
    interpreted.prefault_like([weights, np.float32(1.0), np.ones(3, np.float32)])
    if interpreted._workers.count == 0:  # one core: nothing prefaulted
        return
    size = weights.nbytes + interpreted._ALIGN
    size = -(-size // 4096) * 4096
    blocks = interpreted._arena._blocks[size]
    assert len(blocks) == 1 and len(interpreted._arena) == 1
    deadline = time.monotonic() + 10
    while not interpreted._arena._is_free(blocks[0]):  # the worker is writing it
        assert time.monotonic() < deadline
        time.sleep(0.001)
    outs = [
        interpreted._dot_general(
            np.ones((512, 64), np.float32),
            np.full((64, 512), 2.0, np.float32),
            dimension_numbers=(((1,), (0,)), ((), ())),
        )
    ]
    assert np.shares_memory(outs[0], blocks[0])  # the prefaulted block
    block_start = blocks[0].ctypes.data
    f32 = ShapedArray((512, 512), np.dtype(np.float32))
    shared = interpreted._result(outs[0], f32, True)
    assert 0 <= np.asarray(shared).ctypes.data - block_start < interpreted._ALIGN
    np.testing.assert_array_equal(np.asarray(shared), 128.0)
    del outs
    interpreted.prefault_like([weights])  # the block is in use: a new one
    assert len(interpreted._arena) == 2
    olympus.clear_caches()


def test_arena_keeps_at_most_its_limit():
    arena = interpreted._Arena(1 << 20)
    blocks = [arena.claim(300_000) for _ in range(5)]
    assert len(arena) == 3  # a fourth block would pass 1 MiB
    assert len({b.ctypes.data for b in blocks}) == 5


def test_elementwise_results_written_into_arena_memory_match_numpy(held):
    """Large ufunc results without a dying operand to write into take arena
    memory (written before: no page faults); values as NumPy's."""
    x = _rng().normal(size=(256, 128)).astype(np.float32)
    closed = olympus.make_olympuspr(
        lambda x: (jnp.tanh(x) * x + x, (x - 1.0) ** 2, jnp.sin(x) > 0)
    )(x)
    want = (np.tanh(x) * x + x, (x - np.float32(1)) ** 2, np.sin(x) > 0)
    for _ in range(2):  # the second run reuses the first one's blocks
        got = interpret(closed, [x])
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6)


def test_interpret_and_not_interpretable():
    closed = olympus.make_olympuspr(lambda x: jnp.sin(x) * 2)(np.float32(1.0))
    (out,) = interpret(closed, [np.float32(1.0)])
    assert type(out) is Array and out.dtype == np.float32
    assert not_interpretable(closed) is None


def test_explained_misses_count_signatures_still_compiling(caplog):
    f = olympus.jit(lambda x: x * 2.0, tiered=True)
    with config.override("olympus_explain_cache_misses", True):
        with caplog.at_level(logging.WARNING, logger="olympus"):
            f(np.ones(3, np.float32))
            f(np.ones(4, np.float32))  # the first signature may still be compiling
    _wait(f)
    (record,) = [r for r in caplog.records if "recompiles" in r.getMessage()]
    assert "shape (3,) -> (4,)" in record.getMessage()


def test_new_shapes_queue_their_compiles_on_one_thread():
    f = olympus.jit(lambda x: jnp.cumsum(x) * 2.0, tiered=True)
    xs = [np.arange(n, dtype=np.float32) for n in range(1, 6)]
    firsts = [f(x) for x in xs]
    names = [t.name for t in threading.enumerate()]
    assert names.count("olympus background compile") == 1
    _wait(f)
    for x, first in zip(xs, firsts):
        _assert_same(f(x), first)
    assert len(f._cache) == 5 and not f._pending


def test_decorator_static_arguments_and_keywords(held):
    @olympus.jit(static_argnums=1, tiered=True)
    def f(x, n, *, scale):
        return jnp.power(x, n) * scale

    x = np.arange(3, dtype=np.float32)
    out = f(x, 3, scale=2.0)
    assert f._pending and not f._cache
    held.set()
    _wait(f)
    _assert_same(out, f(x, 3, scale=2.0))
    np.testing.assert_allclose(out, x**3 * 2.0)


def _aligned(shape, dtype=np.float32) -> np.ndarray:
    """A NumPy array whose data is 64-byte aligned (one the CPU client could
    use as a device buffer without a copy)."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.zeros(nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start : start + nbytes].view(dtype).reshape(shape)


@pytest.mark.parametrize(
    "fun", [lambda x: x, lambda x: x.T, lambda x: x.reshape(-1), lambda x: (x, x[1:])]
)
def test_results_never_share_the_callers_memory(fun, held):
    """Interpreted results share memory with the device only where the
    interpreter made them: a result that is (a view of) an argument is
    copied, so writing to the argument later leaves the Array as it was."""
    x = _aligned((256, 128))
    x[...] = 1.0
    out = olympus.jit(fun, tiered=True)(x)
    x[...] = 7.0
    for leaf in olympus.tree_util.tree_flatten(out)[0]:
        assert np.all(np.asarray(leaf) == 1.0)


def test_matmul_results_are_shared_and_stay_put(held):
    """A large matmul result becomes the device buffer without a copy (it is
    64-byte aligned, and only the interpreter holds it); a small one, or an
    argument, is copied. Later interpretations do not overwrite it."""
    f32 = ShapedArray((256, 256), np.dtype(np.float32))

    def made():
        return interpreted._dot_general(
            np.ones((256, 8), np.float32),
            np.ones((8, 256), np.float32),
            dimension_numbers=(((1,), (0,)), ((), ())),
        )

    made_once = made()
    address = made_once.ctypes.data
    assert np.asarray(interpreted._result(made_once, f32, True)).ctypes.data == address
    kept = made()  # not owned by the interpretation (a view lives on): copied
    assert not np.shares_memory(np.asarray(interpreted._result(kept, f32, False)), kept)
    given = np.ones((256, 256), np.float32)
    assert not np.shares_memory(
        np.asarray(interpreted._result(given, f32, False)), given
    )
    small = interpreted._aligned_empty((4,), np.float32)
    small_aval = ShapedArray((4,), np.dtype(np.float32))
    assert not np.shares_memory(
        np.asarray(interpreted._result(small, small_aval, True)), small
    )
    a, b = _rng().normal(size=(2, 256, 256)).astype(np.float32)
    f = olympus.jit(lambda a, b: a @ b, tiered=True)
    first = f(a, b)
    second = f(b, a)  # still interpreting: the compile is held
    assert not f._cache
    np.testing.assert_allclose(first, a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(second, b @ a, rtol=1e-4, atol=1e-4)


def test_stable_rewrites_apply_to_the_interpreted_program(held):
    """The interpreter runs the program the compiler gets, stable rewrites
    included (log(1 + exp(100)) is inf without them)."""
    f = olympus.jit(lambda x: jnp.log(1 + jnp.exp(x)), tiered=True)
    first = f(np.float32(100.0))
    assert not f._cache and float(first) == pytest.approx(100.0)
    held.set()
    _wait(f)
    assert float(f(np.float32(100.0))) == pytest.approx(100.0)


def test_a_pending_compile_does_not_keep_a_dropped_function_alive(held):
    f = olympus.jit(lambda x: x * 3.0, tiered=True)
    f(np.ones(3, np.float32))
    (pending,) = f._pending.values()
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None
    held.set()
    assert pending.done.wait(60) and pending.error is None  # compiled, then dropped


def test_one_blas_thread_while_interpreting_and_restored_after():
    """OpenBLAS runs one thread while the interpreter runs (its threads
    contend with XLA's on few cores) and gets its setting back after; the
    library found beside a NumPy wheel is the one loaded in the process."""
    limit = interpreted._OneBlasThread()
    wheel = limit._wheel_libraries()
    mapped = limit._mapped_libraries()
    assert set(wheel) <= set(mapped)
    calls = limit._lookup()
    if not calls:
        pytest.skip("NumPy does not use OpenBLAS here")
    get, set_ = calls
    before = get()
    set_(2)
    try:
        with limit:
            assert get() == 1
        assert get() == 2
    finally:
        set_(before)


_CONST = np.full((64, 128), 2.0, np.float32)


def _with_const(v):
    return v * 1.0, jnp.asarray(_CONST)  # the constant itself is an output


def _twice(v):
    u = v * 4.0
    return u, u, u.T


def _elementwise_chain(x, y, z):
    a = jnp.tanh(x * 2.0)  # tanh writes into x * 2.0 (read last there)
    b = olympus.lax.stop_gradient(a)  # b is a: one array under two names
    c = a * a + 1.0  # a dies here, b lives on: neither may be written
    d = jnp.exp(-c) - y  # y, the caller's, dies here: never written
    e = x * 3.0
    f = e.reshape(128, 64)  # a view of e
    g = e + 1.0  # e dies here, its view f lives on: e may not be written
    w = z + 1.0  # z, the caller's, is read for the last time: never written
    p, q, t = olympus.jit(_twice)(x)  # one array under two names, and a view
    s = p - 1.0  # p dies here, q and t live on: p may not be written
    _, k = olympus.jit(_with_const)(x)
    m = k + 1.0  # k is the program's constant: never written
    mm = x @ x.T  # a matmul's result: a view of an aligned buffer
    mv = mm.T  # another view of that buffer
    mo = mm + 1.0  # mm dies here, mv lives on: mm may not be written
    mp = x @ x.T
    mq = mp + 1.0  # mp dies here, the only view of its buffer: written
    return b, c, d, x, f.T * 1.0, g, w, q, s, t, m, mv, mo, mq


def test_ufuncs_write_into_dying_operands_only_where_safe():
    """Elementwise ufuncs reuse an operand read for the last time, never the
    caller's arrays, a value another variable still holds, or an output."""
    r = _rng()
    x = r.normal(size=(64, 128)).astype(np.float32)
    y = r.normal(size=(64, 128)).astype(np.float32)
    z = r.normal(size=(64, 128)).astype(np.float32)
    x0, y0, z0 = x.copy(), y.copy(), z.copy()
    closed = olympus.make_olympuspr(_elementwise_chain)(x, y, z)
    written = []
    donor = interpreted._donor

    def spy(*args):
        found = donor(*args)
        written.append(found is not None)
        return found

    interpreted._donor = spy
    try:
        got = interpret(closed, [x, y, z])
    finally:
        interpreted._donor = donor
    assert any(written)  # some ufunc wrote into a dying intermediate
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(z, z0)
    np.testing.assert_array_equal(_CONST, 2.0)
    want = olympus.jit(_elementwise_chain)(x0, y0, z0)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
