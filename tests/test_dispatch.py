"""The call path of compiled code: results come back right, fast paths agree with
the general path, and running code never imports jax (even when installed)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

import olympus
import olympus.numpy as jnp


def test_running_code_never_imports_jax():
    # A fresh interpreter: jaxlib would import jax while unpacking results.
    code = (
        "import sys, numpy as np, olympus, olympus.numpy as jnp\n"
        "x = jnp.arange(4.0)\n"
        "f = olympus.jit(lambda a, b: (jnp.sin(a) * b, a.sum()))\n"
        "out = f(x, np.ones(4, np.float32))\n"
        "out = f(x, np.ones(4, np.float32))  # a hit: jaxlib's C++ dispatcher\n"
        "print(float(out[1]), float((x + 1.0).sum()), float(olympus.grad(lambda a: (a * a).sum())(x)[1]))\n"
        "assert sys.modules.get('jax') is None, 'jax was imported'\n"
        "assert not [m for m in sys.modules if m.startswith('jax.')]\n"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["6.0", "10.0", "2.0"]


def test_multiple_results_keep_their_avals():
    f = olympus.jit(lambda x: (x * 2.0, x.astype(jnp.int32), 3))
    a, b, c = f(jnp.arange(3.0))
    np.testing.assert_array_equal(a, [0.0, 2.0, 4.0])
    assert a.dtype == np.float32 and b.dtype == np.int32 and b.shape == (3,)
    np.testing.assert_array_equal(b, [0, 1, 2])
    assert c.shape == () and c.weak_type and int(c) == 3


def test_results_are_independent_buffers():
    f = olympus.jit(lambda x: x + 1.0)
    x = jnp.zeros(2)
    first, second = f(x), f(first_arg := x + 1.0)
    np.testing.assert_array_equal(first, [1.0, 1.0])
    np.testing.assert_array_equal(second, [2.0, 2.0])
    np.testing.assert_array_equal(first_arg, [1.0, 1.0])


def _counting_jit(fun, **kwargs):
    traces = []

    def counted(*args):
        traces.append(1)
        return fun(*args)

    return olympus.jit(counted, **kwargs), traces


def test_numpy_then_array_arguments_share_one_compilation():
    f, traces = _counting_jit(lambda x, y: jnp.sum(x + jnp.sin(y) * 3.0))
    xh = np.arange(4, dtype=np.float32)
    expected = np.sum(xh + np.sin(xh) * 3.0)
    for args in [
        (xh, xh),
        (jnp.asarray(xh), xh),
        (jnp.asarray(xh), jnp.asarray(xh)),
        (xh, xh),
    ]:
        np.testing.assert_allclose(f(*args), expected, rtol=1e-6)
    assert len(traces) == 1
    f(np.arange(4.0), xh)  # float64 NumPy input canonicalizes to the same f32 aval
    assert len(traces) == 1


def test_fast_path_respects_config_changes():
    f, traces = _counting_jit(lambda x: x + jnp.arange(2))
    x = jnp.zeros(2, jnp.int32)
    assert f(x).dtype == np.int32 and f(x).dtype == np.int32
    with olympus.disable_jit():
        out = f(x)
    assert len(traces) == 2  # disable_jit ran the Python function
    np.testing.assert_array_equal(out, [0, 1])
    olympus.config.update("olympus_enable_x64", True)
    try:
        assert f(x).dtype == np.int64  # retraced: arange is int64 under x64
    finally:
        olympus.config.update("olympus_enable_x64", False)
    assert len(traces) == 3
    assert f(x).dtype == np.int32


def test_deleted_array_is_reported_on_the_fast_path():
    f = olympus.jit(lambda x: x * 2.0)
    x, y = jnp.ones(2), jnp.ones(2)
    f(x)
    x.delete()
    for call in (lambda: f(x), lambda: x + y, lambda: jnp.sin(x)):
        try:
            call()
        except RuntimeError as err:
            assert "deleted" in str(err)
        else:
            raise AssertionError("a deleted Array was accepted")


def test_donated_arguments_are_deleted_on_every_call():
    f = olympus.jit(lambda x: x + 1.0, donate_argnums=0)
    for _ in range(2):
        x = jnp.ones(2)
        np.testing.assert_array_equal(f(x), [2.0, 2.0])
        assert x.is_deleted()


def test_eager_ops_with_mixed_operands_promote():
    x = jnp.arange(3, dtype=jnp.int32)
    assert (x + x).dtype == np.int32 and (x + 1.5).dtype == np.float32
    assert (x + np.float32(1)).dtype == np.float32
    assert jnp.sin(x).dtype == np.float32  # inexact: ints become floats
    np.testing.assert_allclose(jnp.sin(x), np.sin(np.arange(3)), rtol=1e-6)
    w = jnp.asarray(2.0)  # weak f32 stays weak through x + x
    assert (w + w).weak_type and not (x.astype(jnp.float32) + w).weak_type


def _aligned_zeros(n: int) -> np.ndarray:
    """A float32 NumPy array at a 64-byte boundary (what XLA's CPU can alias)."""
    raw = np.zeros(n + 16, np.float32)
    start = (-raw.ctypes.data % 64) // 4
    return raw[start : start + n]


def test_arrays_do_not_alias_host_memory():
    host = _aligned_zeros(1024)
    x = olympus.device_put(host)
    y = jnp.asarray(host)
    z = olympus.jit(lambda v: v + 0.0)(host)
    host[0] = 5.0
    assert float(x[0]) == 0.0 and float(y[0]) == 0.0 and float(z[0]) == 0.0


def test_numpy_arguments_are_not_read_after_the_call():
    # jaxlib's C++ dispatcher (NumPy-fed cache hits) would alias an aligned
    # array while the program runs: writing to it at once must not matter.
    host = _aligned_zeros(1 << 20)
    f = olympus.jit(lambda v: jnp.sum(jnp.sin(jnp.sin(v)) * 0.0 + v))
    f(host)
    for _ in range(3):
        host[:] = 1.0
        out = f(host)
        host[:] = 0.0
        assert float(out) == float(1 << 20)


def test_numpy_fed_hits_match_the_python_route():
    const = jnp.arange(3.0)
    f = olympus.jit(lambda x, y: {"a": x * const, "b": (y + 1, x.astype(jnp.int32), 2)})
    xh, yh = np.arange(3, dtype=np.float32), np.ones(3, np.int16)
    expected = f(jnp.asarray(xh), jnp.asarray(yh))
    for args in [(xh, yh), (xh, yh), (jnp.asarray(xh), yh), (jnp.asarray(xh), yh)]:
        got = f(*args)
        assert olympus.tree.structure(got) == olympus.tree.structure(expected)
        for g, e in zip(olympus.tree.leaves(got), olympus.tree.leaves(expected)):
            assert type(g) is type(e) and g.aval == e.aval
            np.testing.assert_array_equal(g, e)
    assert f._host._cache_size() == 2  # the hits went through the C++ dispatcher
    shared = jnp.from_dlpack(xh)  # a buffer jaxlib made: the Python route
    for _ in range(2):
        np.testing.assert_array_equal(f(shared, yh)["a"], expected["a"])
    x = jnp.asarray(xh)
    x.delete()
    try:
        f(x, yh)
    except RuntimeError as err:
        assert "deleted" in str(err)
    else:
        raise AssertionError("a deleted Array was accepted")


def test_numpy_fed_hits_keep_x64_and_ordered_effects():
    f = olympus.jit(lambda x: x * 2)
    olympus.config.update("olympus_enable_x64", True)
    try:
        for _ in range(2):  # 64-bit parameters take the Python route
            out = f(np.arange(3.0))
            assert out.dtype == np.float64
            np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])
    finally:
        olympus.config.update("olympus_enable_x64", False)
    assert f(np.arange(3.0)).dtype == np.float32
    seen = []

    def show(x):
        olympus.debug.callback(lambda v: seen.append(float(v)), x.sum())
        return x + 1.0

    g = olympus.jit(show)
    for _ in range(2):  # ordered effects take the Python route, and run
        g(np.ones(2, np.float32))
    assert seen == [2.0, 2.0]


def test_eager_cache_hits_keep_numpy_semantics():
    # The second call of each op takes the direct route from olympus.numpy to
    # the cached executable (unary_op / binary_op): same results as the first.
    b = jnp.asarray(np.array([True, False]))
    i = jnp.arange(1, 4, dtype=jnp.int32)
    c = jnp.asarray(np.array([1 + 2j, 3 - 1j], np.complex64))
    w = jnp.asarray(2.0)
    cases = [
        (lambda: b + b, [True, False]),  # bool add is `or`, not lax.add
        (lambda: b * b, [True, False]),
        (lambda: i / i, [1.0, 1.0, 1.0]),  # divide of ints is float
        (lambda: jnp.sin(i), np.sin([1, 2, 3])),
        (lambda: jnp.less(c, c[::-1]), [True, False]),  # complex: lexicographic
        (lambda: jnp.maximum(c, c[::-1]), [3 - 1j, 3 - 1j]),
        (lambda: w + w, 4.0),
        (lambda: i - i, [0, 0, 0]),
    ]
    for op, expected in cases:
        first, second = op(), op()
        assert first.aval == second.aval
        np.testing.assert_allclose(second, expected, rtol=1e-6)
    assert (w + w).weak_type and (i / i).dtype == np.float32
    x = jnp.zeros(2)
    x / x  # cached
    with olympus.config.override("olympus_debug_nans", True):
        try:
            x / x  # reported per primitive even where the executable is cached
        except FloatingPointError as err:
            assert "div" in str(err)
        else:
            raise AssertionError("debug_nans missed the NaN")


def test_direct_routes_step_aside_under_a_trace_and_after_clear_caches():
    # jnp.sin / x + x on cached Arrays run their executable directly; inside
    # an outer trace the same calls on closed-over Arrays must be staged.
    x = jnp.arange(3.0)
    for _ in range(2):
        jnp.sin(x), x + x
    closed = olympus.make_olympuspr(lambda v: jnp.sin(x) + (x + x) + v)(1.0)
    names = [eqn.primitive.name for eqn in closed.olympuspr.eqns]
    assert "sin" in names and names.count("add") >= 2, names
    olympus.clear_caches()
    from olympus.backends.xla.dispatch import _op_tables

    assert len(_op_tables) == 0
    np.testing.assert_allclose(jnp.sin(x), np.sin([0.0, 1.0, 2.0]), rtol=1e-6)
    f = olympus.jit(lambda v: v * 2)
    assert f(x).dtype == np.float32 and f(x).dtype == np.float32
    with olympus.config.override("olympus_enable_x64", True):
        assert f(np.arange(3.0)).dtype == np.float64  # a new epoch: not the f32 hit
    assert f(np.arange(3.0)).dtype == np.float32


def test_fast_hits_with_constants_and_several_outputs():
    """A cache hit of a program with captured constants: with one output the
    call adds them itself, with several `run_buffers` does (once)."""
    const = jnp.arange(3.0) + 1.0
    one = olympus.jit(lambda x: x * const)
    two = olympus.jit(lambda x: (x * const, x + const, jnp.sum(const)))
    x = jnp.ones(3)
    for _ in range(3):  # miss, then hits
        np.testing.assert_allclose(one(x), [1.0, 2.0, 3.0])
        a, b, c = two(x)
        np.testing.assert_allclose(a, [1.0, 2.0, 3.0])
        np.testing.assert_allclose(b, [2.0, 3.0, 4.0])
        assert float(c) == 6.0


def test_eager_matrix_products_take_the_direct_route_and_keep_semantics():
    """`a @ b` of two matrices of one strong dtype runs its cached dot_general
    executable directly from the second call; other forms (vectors, batches,
    promotion, weak operands) keep theirs; a precision set later is obeyed
    (the route's table is emptied by option changes); a trace stages it."""
    from olympus.backends.xla.dispatch import _op_tables

    r = np.random.default_rng(0)
    a = r.normal(size=(8, 16)).astype(np.float32)
    b = r.normal(size=(16, 4)).astype(np.float32)
    x, y = jnp.asarray(a), jnp.asarray(b)
    before = len(_op_tables)
    first, second = x @ y, jnp.matmul(x, y)
    assert len(_op_tables) == before + 1  # the second call found the executable
    for got in (first, second, x @ y):
        assert got.aval == first.aval
        np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)
    halves = jnp.asarray(b.astype(np.float16))
    mixed = x @ halves  # promotes: not the direct route's executable
    assert mixed.dtype == np.float32
    np.testing.assert_allclose(mixed, a @ b.astype(np.float16), rtol=1e-3, atol=1e-3)
    v = jnp.asarray(b[:, 0])
    np.testing.assert_allclose(x @ v, a @ b[:, 0], rtol=1e-5, atol=1e-5)
    batch = jnp.asarray(np.stack([a, a]))
    np.testing.assert_allclose(batch @ y, np.stack([a, a]) @ b, rtol=1e-5, atol=1e-5)
    assert (x @ jnp.asarray(2.0 * np.eye(16, dtype=np.float32))).dtype == np.float32
    with olympus.default_matmul_precision("bfloat16"):
        assert len(_op_tables) == 0  # emptied by the option change
        rough = x @ y
    np.testing.assert_allclose(rough, a @ b, rtol=5e-2, atol=5e-2)
    exact = x @ y
    np.testing.assert_allclose(exact, a @ b, rtol=1e-5, atol=1e-5)
    closed = olympus.make_olympuspr(lambda w: (x @ y) * w)(1.0)
    assert [e.primitive.name for e in closed.olympuspr.eqns][0] == "dot_general"


def test_matmul_keywords_as_jax_spells_them():
    """jnp.matmul(a, b, *, precision, preferred_element_type) as JAX's, eager
    and traced; keyword operands reach the general route."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    x, y = jnp.asarray(a), jnp.asarray(b)
    np.testing.assert_allclose(jnp.matmul(a=x, b=y), a @ b, rtol=1e-6)
    got = jnp.matmul(x, y, precision="highest")
    np.testing.assert_allclose(got, a @ b, rtol=1e-6)
    halves = jnp.asarray(a.astype(np.float16))
    wide = jnp.matmul(halves, halves.T, preferred_element_type=np.float32)
    assert wide.dtype == np.float32
    np.testing.assert_allclose(wide, a @ a.T, rtol=1e-3)
    traced = olympus.jit(lambda p, q: jnp.matmul(p, q, precision="highest"))(x, y)
    np.testing.assert_allclose(traced, a @ b, rtol=1e-6)
    closed = olympus.make_olympuspr(
        lambda p, q: jnp.matmul(p, q, precision=("highest", "default"))
    )(x, y)
    assert closed.olympuspr.eqns[-1].params["precision"] == ("HIGHEST", "DEFAULT")


def test_static_argument_hits_keep_the_slow_paths_semantics():
    """A jitted function with static arguments runs a hit (same static values,
    Arrays of the same avals) without the general path; new static values,
    config changes, traces, unhashable statics and deleted Arrays still get
    the general path's answers and errors."""
    traces = []

    def scaled(x, s, n=1):
        traces.append((s, n))
        return x * s + n

    h = olympus.jit(scaled, static_argnums=(1, 2))
    x = jnp.arange(4.0)
    for _ in range(3):
        np.testing.assert_allclose(h(x, 2.0, 1), [1.0, 3.0, 5.0, 7.0])
    assert len(traces) == 1 and len(h._fast) == 1
    np.testing.assert_allclose(h(x, 3.0, 1), [1.0, 4.0, 7.0, 10.0])
    np.testing.assert_allclose(h(x, 2.0, 0), [0.0, 2.0, 4.0, 6.0])
    np.testing.assert_allclose(h(x, 2.0), [1.0, 3.0, 5.0, 7.0])  # another arity
    assert len(traces) == 4
    # 2 == 2.0, but static arguments of other types are other signatures (JAX's)
    np.testing.assert_allclose(h(x, 2, 1), [1.0, 3.0, 5.0, 7.0])
    assert len(traces) == 5
    h(x, 2, 1)
    assert len(traces) == 5
    np.testing.assert_allclose(h(jnp.arange(3.0), 2.0, 1), [1.0, 3.0, 5.0])
    assert len(traces) == 6
    with olympus.config.override("olympus_enable_x64", True):
        assert h(jnp.arange(4.0), 2.0, 1).dtype == np.float64
        assert h(x, 2.0, 1).dtype == np.float32
    assert len(traces) == 8  # x64 is part of the signature: traced anew
    h(x, 2.0, 1)
    assert len(traces) == 8  # the f32 entry again
    closed = olympus.make_olympuspr(lambda v: h(v, 2.0, 1))(x)
    assert [e.primitive.name for e in closed.olympuspr.eqns] == ["pjit"]
    try:
        h(x, [2.0], 1)
    except ValueError as err:
        assert "hashable" in str(err)
    else:
        raise AssertionError("an unhashable static argument was accepted")
    dead = jnp.arange(4.0)
    dead.delete()
    try:
        h(dead, 2.0, 1)
    except RuntimeError as err:
        assert "deleted" in str(err)
    else:
        raise AssertionError("a deleted Array was accepted")
    h.clear_cache()
    assert not h._fast
    np.testing.assert_allclose(h(x, 2.0, 1), [1.0, 3.0, 5.0, 7.0])
