"""eval_shape, named_call and ensure_compile_time_eval: JAX's tracing
utilities, checked on what they promise (nothing computed; scopes in the IR
and in XLA's metadata; concrete values inside a trace)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.tracer.errors import ConcretizationTypeError

S = olympus.ShapeDtypeStruct


# ---- eval_shape ---------------------------------------------------------------
def test_eval_shape_gives_shapes_dtypes_and_weak_types_of_a_pytree():
    def f(params, x, scale):
        w, b = params["w"], params["b"]
        return {"y": jnp.tanh(x @ w + b) * scale, "n": jnp.sum(x > 0)}

    params = {"w": S((4, 5), np.float32), "b": S((5,), np.float32)}
    out = olympus.eval_shape(f, params, S((3, 4), np.float32), 2.0)
    assert out["y"].shape == (3, 5) and out["y"].dtype == np.float32
    assert out["n"].shape == () and out["n"].dtype == np.int32
    assert not out["y"].weak_type
    assert olympus.eval_shape(lambda x: x * 2, 1.0).weak_type
    assert repr(olympus.eval_shape(lambda x: x * 2, 1.0)) == (
        "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"
    )


def test_eval_shape_runs_nothing():
    """A 1 TiB intermediate is fine: no array is made, no program compiled."""
    huge = S((1 << 20, 1 << 18), np.float32)
    out = olympus.eval_shape(lambda x: jnp.sum(jnp.exp(x), axis=1), huge)
    assert out.shape == (1 << 20,)
    calls = []
    olympus.eval_shape(
        lambda x: olympus.pure_callback(
            lambda v: calls.append(1) or v, S((2,), x.dtype), x
        ),
        S((2,), np.float32),
    )
    assert calls == []


def test_eval_shape_takes_arrays_and_other_shape_dtype_objects():
    class Spec:  # e.g. another library's ShapeDtypeStruct
        shape, dtype = (2, 3), np.dtype(np.int32)

    assert olympus.eval_shape(lambda x: x.T, Spec()).shape == (3, 2)
    assert olympus.eval_shape(lambda x: x.T, Spec()).dtype == np.int32
    out = olympus.eval_shape(jnp.outer, np.ones(3, np.float32), jnp.ones(4))
    assert (out.shape, out.dtype) == ((3, 4), np.float32)


def test_eval_shape_matches_the_computed_result_and_jax():
    def f(x, y):
        return jnp.concatenate([x, y.astype(x.dtype)])[::2], jnp.argmax(y)

    x, y = np.ones(5, np.float32), np.arange(4, dtype=np.int32)
    shapes = olympus.eval_shape(f, x, y)
    values = f(x, y)
    for s, v in zip(shapes, values):
        assert (s.shape, s.dtype) == (v.shape, v.dtype)
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp

    theirs = jax.eval_shape(
        lambda x, y: (jjnp.concatenate([x, y.astype(x.dtype)])[::2], jjnp.argmax(y)),
        x,
        y,
    )
    for s, t in zip(shapes, theirs):
        assert (s.shape, s.dtype) == (t.shape, t.dtype)


def test_eval_shape_reports_errors_like_tracing():
    with pytest.raises(TypeError, match="dot_general"):
        olympus.eval_shape(
            lambda x, y: x @ y, S((2, 3), np.float32), S((4, 5), np.float32)
        )


# ---- named_call -----------------------------------------------------------------
def test_named_call_scopes_every_equation_of_the_function():
    def layer(x):
        return jnp.tanh(x * 2.0)

    named = olympus.named_call(layer, name="dense1")
    closed = olympus.make_olympuspr(lambda x: named(x) + 1.0)(np.ones(2, np.float32))
    scopes = [e.source_info.scope for e in closed.olympuspr.eqns]
    assert scopes == ["dense1", "dense1", ""]
    assert olympus.named_call(layer)(np.float32(0.5)) == np.tanh(1.0).astype(np.float32)
    default = olympus.make_olympuspr(olympus.named_call(layer))(1.0)
    assert {e.source_info.scope for e in default.olympuspr.eqns} == {"layer"}


def test_named_call_name_reaches_xla_metadata_and_survives_grad():
    f = olympus.named_call(lambda x: jnp.sin(x) * 3.0, name="block")
    compiled = olympus.jit(f).trace(np.ones(3, np.float32)).lower().compile()
    assert 'op_name="block/sin"' in compiled.as_text()
    g = olympus.grad(lambda x: f(x).sum())(np.ones(3, np.float32))
    np.testing.assert_allclose(np.asarray(g), 3 * np.cos(1.0), rtol=1e-6)


# ---- ensure_compile_time_eval ---------------------------------------------------------
def test_compile_time_eval_makes_constants_concrete_inside_jit():
    @olympus.jit
    def f(x):
        with olympus.ensure_compile_time_eval():
            table = jnp.cumsum(jnp.arange(4))  # concrete
            n = int(jnp.argmax(table))  # would raise without the context
            factor = table[n].astype(jnp.float32)
            positive = jnp.sin(3.0) > 0
        if positive:
            return x * factor
        return -x

    np.testing.assert_allclose(np.asarray(f(np.float32(2))), 12.0)
    closed = olympus.make_olympuspr(f)(np.float32(2))
    inner = closed.olympuspr.eqns[0].params["olympuspr"].olympuspr
    assert [e.primitive.name for e in inner.eqns] == ["mul"]


def test_compile_time_eval_still_traces_the_arguments():
    @olympus.jit
    def f(x):
        with olympus.ensure_compile_time_eval():
            y = x + 1.0  # traced: depends on the argument
            c = jnp.float32(2) * 3
        return y * c

    np.testing.assert_allclose(np.asarray(f(np.float32(1))), 12.0)
    with pytest.raises(ConcretizationTypeError):

        @olympus.jit
        def g(x):
            with olympus.ensure_compile_time_eval():
                return int(x)

        g(np.float32(1))


def test_compile_time_eval_under_grad_and_vmap_and_outside_traces():
    def f(x):
        with olympus.ensure_compile_time_eval():
            k = float(jnp.sqrt(16.0))
        return jnp.sin(x) * k

    x = np.linspace(0, 1, 3, dtype=np.float32)
    np.testing.assert_allclose(
        np.asarray(olympus.vmap(olympus.grad(f))(x)), 4 * np.cos(x), rtol=1e-6
    )
    with olympus.ensure_compile_time_eval():  # no trace: eager as usual
        assert float(jnp.sin(0.0)) == 0.0


# ---- custom_gradient ------------------------------------------------------------
def test_custom_gradient_replaces_the_derivative_and_closes_over_the_forward_pass():
    @olympus.custom_gradient
    def scaled_sin(x, y):
        z = jnp.sin(x) * y
        # a deliberately different rule: twice d/dx, and d/dy as is
        return z, lambda g: (2 * g * y * jnp.cos(x), g * jnp.sin(x))

    x, y = np.float32([0.5, 1.0]), np.float32([2.0, 3.0])
    loss = lambda x, y: scaled_sin(x, y).sum()  # noqa: E731
    gx, gy = olympus.grad(loss, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(np.asarray(gx), 2 * y * np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gy), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(scaled_sin(x, y)), np.sin(x) * y, rtol=1e-6)
    jitted = olympus.jit(olympus.grad(loss))(x, y)
    np.testing.assert_allclose(np.asarray(jitted), 2 * y * np.cos(x), rtol=1e-6)
    per_example = olympus.vmap(olympus.grad(lambda x: scaled_sin(x, 2.0)))(x)
    np.testing.assert_allclose(np.asarray(per_example), 4 * np.cos(x), rtol=1e-6)


def test_custom_gradient_clips_and_takes_a_bare_cotangent():
    @olympus.custom_gradient
    def clip_gradient(x):
        return x, lambda g: jnp.clip(g, -1.0, 1.0)  # bare, one argument

    assert float(olympus.grad(lambda x: 5.0 * clip_gradient(x))(2.0)) == 1.0
    assert float(olympus.grad(lambda x: 0.5 * clip_gradient(x))(2.0)) == 0.5

    @olympus.custom_gradient
    def pair(x):
        return (x, 2 * x), lambda g: (g[0] + 10 * g[1],)

    g = olympus.grad(lambda x: pair(x)[0] + pair(x)[1])(1.0)
    assert float(g) == 11.0


def test_custom_gradient_matches_jax():
    jax = pytest.importorskip("jax")

    def make(lib, np_):
        @lib.custom_gradient
        def f(x):
            return np_.exp(x), lambda g: (g * np_.tanh(x),)

        return lib.grad(lambda x: f(x).sum())

    x = np.float32([0.1, -0.7, 2.0])
    np.testing.assert_allclose(
        np.asarray(make(olympus, jnp)(x)),
        np.asarray(make(jax, jax.numpy)(x)),
        rtol=1e-6,
    )


# ---- small utilities -------------------------------------------------------------
def test_typeof_backend_jacobian_and_option_contexts():
    assert olympus.typeof(jnp.ones((2, 3))) == olympus.core.ShapedArray(
        (2, 3), np.float32
    )
    assert olympus.typeof(1.0).weak_type
    assert olympus.default_backend() == olympus.devices()[0].platform == "cpu"
    x = np.float32([0.3, 1.1])
    np.testing.assert_allclose(
        np.asarray(olympus.jacobian(jnp.sin)(x)), np.diag(np.cos(x)), rtol=1e-6
    )
    with olympus.enable_x64():
        assert jnp.asarray(1.0).dtype == np.float64
    assert jnp.asarray(1.0).dtype == np.float32
    with olympus.debug_nans():
        with pytest.raises(FloatingPointError, match="log"):
            jnp.log(-jnp.ones(2))
    assert np.isnan(float(jnp.log(-1.0)))
