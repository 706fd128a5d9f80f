"""olympus.pure_callback: eager, jit, vmap (every vmap_method), its errors,
tiered execution and the optimizer; an optional JAX oracle."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
from olympus.callback import (
    CallbackDifferentiationError,
    CallbackResultError,
    CallbackVmapError,
)
from olympus.debug import HostCallbackError

S = olympus.ShapeDtypeStruct


def host_cumsum(x):
    assert type(x) is np.ndarray  # the callback sees NumPy arrays
    return np.cumsum(x).astype(x.dtype)


def call_cumsum(x):
    return olympus.pure_callback(host_cumsum, S(x.shape, x.dtype), x)


@pytest.mark.parametrize("wrap", [lambda f: f, olympus.jit], ids=["eager", "jit"])
def test_values_against_numpy(wrap):
    x = np.arange(1.0, 6.0, dtype=np.float32)
    got = wrap(lambda x: call_cumsum(x) * 2.0)(x)
    assert isinstance(got, olympus.Array) and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.cumsum(x) * 2.0)


def test_pytrees_and_keywords_in_and_out():
    def host(pair, *, scale):
        a, b = pair
        return {"sum": (a + b) * scale, "count": np.int32(a.size)}

    def f(a, b):
        out = S(a.shape, a.dtype)
        return olympus.pure_callback(
            host, {"sum": out, "count": S((), np.int32)}, (a, b), scale=np.float32(3)
        )

    a, b = np.ones(3, np.float32), np.arange(3, dtype=np.float32)
    for fun in (f, olympus.jit(f)):
        got = fun(a, b)
        np.testing.assert_allclose(np.asarray(got["sum"]), (a + b) * 3)
        assert int(got["count"]) == 3 and got["count"].dtype == np.int32


def test_program_holds_the_callback_and_lowers_to_a_host_call():
    closed = olympus.make_olympuspr(call_cumsum)(np.ones(3, np.float32))
    (eqn,) = closed.olympuspr.eqns
    assert eqn.primitive.name == "pure_callback"
    assert "pure_callback[callback=host_cumsum" in str(closed)
    text = olympus.jit(call_cumsum).lower(np.ones(3, np.float32)).as_text()
    assert "xla_ffi_python_cpu_callback" in text and "has_side_effect" not in text


def test_unused_result_may_skip_the_call():
    """Pure: a compiled program whose output does not read the result needs
    no call (the optimizer's dead-code pass drops it)."""
    calls = []

    def host(x):
        calls.append(1)
        return x

    @olympus.jit
    def f(x):
        olympus.pure_callback(host, S(x.shape, x.dtype), x)
        return x + 1

    np.testing.assert_allclose(np.asarray(f(np.ones(2, np.float32))), 2.0)
    assert calls == []


def test_sixty_four_bit_results_narrow_without_x64():
    f = lambda x: olympus.pure_callback(  # noqa: E731
        lambda x: x.astype(np.float64) / 3, S(x.shape, np.float32), x
    )
    for fun in (f, olympus.jit(f)):
        got = fun(np.ones(2, np.float32))
        assert got.dtype == np.float32
        np.testing.assert_allclose(np.asarray(got), 1 / 3, rtol=1e-6)


@pytest.mark.parametrize(
    "result, message",
    [
        (lambda x: np.ones(3, np.float32), r"float32\[3\].*float32\[2\]"),
        (lambda x: np.ones(2, np.int32), r"int32\[2\].*float32\[2\]"),
        (lambda x: (x, x), "returned a"),
    ],
    ids=["shape", "dtype", "tree"],
)
def test_wrong_results_are_named_errors(result, message):
    f = lambda x: olympus.pure_callback(result, S((2,), np.float32), x)  # noqa: E731
    x = np.ones(2, np.float32)
    with pytest.raises(CallbackResultError, match=message):
        f(x)
    with pytest.raises(HostCallbackError, match="CallbackResultError"):
        olympus.jit(f)(x)


def test_an_error_inside_a_compiled_callback_is_raised_by_the_call():
    def host(x):
        raise KeyError("no such entry")

    f = olympus.jit(lambda x: olympus.pure_callback(host, S(x.shape, x.dtype), x) + 1)
    for _ in range(2):  # also from the cached executable's fast path
        with pytest.raises(HostCallbackError, match="no such entry"):
            f(np.ones(2, np.float32))
    with pytest.raises(HostCallbackError, match="no such entry"):
        f(olympus.device_put(np.ones(2, np.float32)))


def test_grad_raises_a_named_error_and_custom_jvp_gives_the_derivative():
    def sin_cb(x):
        return olympus.pure_callback(np.sin, S(x.shape, x.dtype), x)

    with pytest.raises(
        CallbackDifferentiationError, match="pure_callback sin at .*test_callback.py"
    ):
        olympus.grad(lambda x: sin_cb(x).sum())(np.ones(2, np.float32))

    @olympus.custom_jvp
    def host_sin(x):
        return sin_cb(x)

    @host_sin.defjvp
    def host_sin_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return host_sin(x), olympus.pure_callback(np.cos, S(x.shape, x.dtype), x) * t

    x = np.array([0.3, 1.2], np.float32)
    g = olympus.jit(olympus.grad(lambda x: host_sin(x).sum()))(x)
    np.testing.assert_allclose(np.asarray(g), np.cos(x), rtol=1e-6)


def _batched_callback(method, seen):
    def host(a, b):
        seen.append((a.shape, b.shape))
        b = b.reshape(b.shape + (1,) * (a.ndim - b.ndim)) if b.ndim else b
        return (a * 2 + b).astype(np.float32)

    def f(a):
        return olympus.pure_callback(
            host, S(a.shape, a.dtype), a, np.float32(1), vmap_method=method
        )

    return f


@pytest.mark.parametrize(
    "method, arg_shapes",
    [
        ("sequential", [((2,), ())] * 3),
        ("sequential_unrolled", [((2,), ())] * 3),
        ("expand_dims", [((3, 2), (1,))]),
        ("broadcast_all", [((3, 2), (3,))]),
        ("legacy_vectorized", [((3, 2), ())]),
    ],
)
def test_vmap_methods_call_as_documented(method, arg_shapes):
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    want = xs * 2 + 1
    seen = []
    got = olympus.vmap(_batched_callback(method, seen))(xs)
    np.testing.assert_allclose(np.asarray(got), want)
    assert seen == arg_shapes
    seen.clear()
    got = olympus.jit(olympus.vmap(_batched_callback(method, seen)))(xs)
    np.testing.assert_allclose(np.asarray(got), want)
    assert sorted(seen) == sorted(arg_shapes)


def test_vmap_over_another_axis_matches_a_loop():
    xs = np.arange(12, dtype=np.float32).reshape(3, 4)
    f = lambda x: olympus.pure_callback(  # noqa: E731
        lambda x: np.sort(x)[::-1].copy(),
        S(x.shape, x.dtype),
        x,
        vmap_method="sequential",
    )
    got = olympus.vmap(f, in_axes=1, out_axes=1)(xs)
    want = np.stack([np.sort(xs[:, j])[::-1] for j in range(4)], axis=1)
    np.testing.assert_allclose(np.asarray(got), want)


def test_vmap_without_a_method_says_how_to_choose_one():
    f = lambda x: olympus.pure_callback(np.sin, S(x.shape, x.dtype), x)  # noqa: E731
    with pytest.raises(CallbackVmapError, match="vmap_method="):
        olympus.vmap(f)(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="vmap_method must be one of"):
        olympus.pure_callback(
            np.sin, S((2,), np.float32), np.ones(2), vmap_method="loop"
        )
    with pytest.raises(TypeError, match="needs .shape and .dtype"):
        olympus.pure_callback(np.sin, (2,), np.ones(2))


def test_tiered_execution_calls_the_callback_from_the_interpreter():
    calls = []

    def host(x):
        calls.append(x.shape)
        return np.cumsum(x).astype(x.dtype)

    f = olympus.jit(
        lambda x: olympus.pure_callback(host, S(x.shape, x.dtype), x) + 1.0,
        tiered=True,
    )
    x = np.arange(4, dtype=np.float32)
    first = f(x)  # the interpreter tier runs the program
    np.testing.assert_allclose(np.asarray(first), np.cumsum(x) + 1)
    assert calls == [(4,)]


def test_matches_jax():
    jax = pytest.importorskip("jax")
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)

    def make(lib, struct):
        return lambda row: lib.pure_callback(
            lambda v: np.tanh(v) * 2,
            struct(row.shape, row.dtype),
            row,
            vmap_method="expand_dims",
        )

    ours = olympus.jit(olympus.vmap(make(olympus, S)))(x)
    theirs = jax.jit(jax.vmap(make(jax, jax.ShapeDtypeStruct)))(x)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


def test_programs_over_several_devices_call_back_once_with_whole_arrays():
    from test_sharding import run_on_devices

    out = run_on_devices(
        """
        S = olympus.ShapeDtypeStruct
        mesh = olympus.make_mesh((2,), ("x",))
        x = olympus.device_put(np.arange(8, dtype=np.float32), NamedSharding(mesh, P("x")))
        seen = []
        def host(v):
            seen.append(v.shape)
            return v[::-1].copy(), np.float32(v.sum())
        f = olympus.jit(lambda x: olympus.pure_callback(
            host, (S(x.shape, x.dtype), S((), x.dtype)), x))
        rev, total = f(x)
        print(np.asarray(rev).tolist(), float(total), seen)
        def boom(v):
            raise KeyError("on several devices")
        try:
            olympus.jit(lambda x: olympus.pure_callback(boom, S(x.shape, x.dtype), x))(x)
        except olympus.debug.HostCallbackError as err:
            print("raised", "on several devices" in str(err))
        """,
        count=2,
    )
    assert out.split("\n")[:2] == [
        "[7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0] 28.0 [(8,)]",
        "raised True",
    ]


# ---- io_callback ------------------------------------------------------------------
io_callback = olympus.experimental.io_callback


def test_io_callback_runs_once_per_call_in_order_even_when_unused():
    log = []

    def record(x):
        log.append(("io", float(x)))
        return x + np.float32(100)

    @olympus.jit
    def f(x):
        olympus.debug.callback(lambda v: log.append(("before", float(v))), x)
        count = io_callback(record, S((), np.float32), x * 2)
        io_callback(record, S((), np.float32), x * 3)  # result unused: still runs
        olympus.debug.callback(lambda v: log.append(("after", float(v))), count)
        return x + 1

    assert float(f(1.0)) == 2.0 and float(f(1.0)) == 2.0
    assert log == [("before", 1.0), ("io", 2.0), ("io", 3.0), ("after", 102.0)] * 2
    closed = olympus.make_olympuspr(f)(1.0)
    assert str(closed).count("io_callback[") == 2  # the optimizer dropped neither


def test_io_callback_eager_tiered_and_errors():
    calls = []

    def host(x):
        calls.append(x.shape)
        return x[::-1].copy()

    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(
        np.asarray(io_callback(host, S((3,), np.float32), x)), x[::-1]
    )
    t = olympus.jit(
        lambda x: io_callback(host, S((3,), np.float32), x) * 2, tiered=True
    )
    np.testing.assert_array_equal(
        np.asarray(t(x)), x[::-1] * 2
    )  # compiled, not interpreted
    assert calls == [(3,), (3,)]
    with pytest.raises(CallbackDifferentiationError, match="io_callback host"):
        olympus.grad(lambda x: io_callback(host, S((3,), np.float32), x).sum())(x)
    with pytest.raises(CallbackResultError, match="float32\\[2\\]"):
        io_callback(lambda x: x[:2], S((3,), np.float32), x)

    def boom(x):
        raise OSError("disk full")

    with pytest.raises(HostCallbackError, match="disk full"):
        olympus.jit(lambda x: io_callback(boom, S((3,), np.float32), x))(x)


def test_io_callback_under_vmap_calls_per_example_unless_ordered():
    calls = []

    def host(x):
        calls.append(float(x))
        return x * 10

    xs = np.arange(3, dtype=np.float32)
    got = olympus.jit(olympus.vmap(lambda x: io_callback(host, S((), np.float32), x)))(
        xs
    )
    np.testing.assert_array_equal(np.asarray(got), xs * 10)
    assert calls == [0.0, 1.0, 2.0]
    with pytest.raises(CallbackVmapError, match="ordered=True"):
        olympus.vmap(lambda x: io_callback(host, S((), np.float32), x, ordered=True))(
            xs
        )


def test_io_callback_program_prints_and_parses():
    from olympus.ir import parse

    closed = olympus.make_olympuspr(
        lambda x: io_callback(np.negative, S((2,), np.float32), x, ordered=True)
    )(np.ones(2, np.float32))
    assert str(parse(str(closed), list(closed.consts))) == str(closed)


def test_io_callback_matches_jax():
    jax = pytest.importorskip("jax")
    from jax.experimental import io_callback as jax_io_callback

    x = np.arange(4, dtype=np.float32)
    ours = olympus.jit(lambda x: io_callback(np.cumsum, S((4,), np.float32), x))(x)
    theirs = jax.jit(
        lambda x: jax_io_callback(
            lambda v: np.cumsum(v).astype(np.float32),
            jax.ShapeDtypeStruct((4,), np.float32),
            x,
        )
    )(x)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
