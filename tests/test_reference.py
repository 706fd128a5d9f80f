"""The NumPy reference interpreter: it covers every primitive and agrees with
XLA (jit) on programs of every kind the suite builds."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.backends.reference import evaluate, reference_rules
from olympus.test_util import reference_call
from olympus.ir.core import all_primitives
from olympus.ir.evaluation import program_rules
from olympus.tracer.pytree import tree_flatten


def test_every_primitive_has_a_reference_rule():
    """A NumPy rule each, or a rule of the evaluation loop's (the
    higher-order primitives, whose bodies run with the caller's rules)."""
    missing = sorted(set(all_primitives) - set(reference_rules) - set(program_rules))
    assert missing == [], f"primitives without a reference rule: {missing}"


def _rng():
    return np.random.default_rng(0)


def _x(*shape, dtype=np.float32):
    return _rng().normal(size=shape).astype(dtype)


def _spd(n):
    a = _x(n, n)
    return (a @ a.T + n * np.eye(n)).astype(np.float32)


def _mlp(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def _scan_cumsum(xs):
    return lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)


def _while_count(x):
    return lax.while_loop(
        lambda s: s[0] < 5, lambda s: (s[0] + 1, s[1] * 1.5 + 1.0), (0, x)
    )


def _cond_branches(p, x):
    return lax.cond(p > 0, lambda v: jnp.sin(v), lambda v: jnp.cos(v) * 2.0, x)


def _switch(i, x):
    return lax.switch(i, [lambda v: v + 1.0, lambda v: v * v, lambda v: -v], x)


@olympus.custom_jvp
def _softplus(x):
    return jnp.log1p(jnp.exp(x))


_softplus.defjvp(lambda p, t: (_softplus(p[0]), t[0] * olympus.nn.sigmoid(p[0])))


def _ints(x, y):
    return (
        x // y,
        x % y,
        lax.shift_left(x, np.int32(2)),
        lax.shift_right_arithmetic(x, np.int32(1)),
        lax.shift_right_logical(x, np.int32(3)),
        x ^ y,
        ~x,
        jnp.max(x),
        jnp.argmax(x),
    )


def _shapes(x):
    y = lax.pad(x, np.float32(0.5), [(1, -1, 1), (0, 2, 0)])
    z = jnp.concatenate([x, x[::-1]], axis=0).T.reshape(-1)
    return (
        y,
        z,
        lax.dynamic_slice(x, (np.int32(2), np.int32(9)), (2, 2)),
        jnp.flip(x, 1),
        lax.iota(np.int32, 4),
        lax.dynamic_update_slice(x, jnp.ones((1, 2)), (np.int32(1), np.int32(1))),
    )


def _linalg(a):
    l = lax.linalg.cholesky(a)
    s = lax.linalg.triangular_solve(l, a, left_side=True, lower=True)
    lu, piv, perm = lax.linalg.lu(a)
    return (
        l,
        s,
        lu,
        piv,
        perm,
        jnp.linalg.eigvalsh(a),
        jnp.linalg.svd(a, compute_uv=False),
        jnp.abs(jnp.linalg.qr(a)[1]),
        jnp.linalg.det(a),
    )


PROGRAMS = {
    "elementwise": (
        lambda x: (
            jnp.exp(x) * jnp.sin(x) - jnp.sqrt(jnp.abs(x)) / 3,
            jnp.round(x * 2),
            lax.erf(x),
            olympus.nn.sigmoid(x),
            jnp.where(x > 0, x, -x),
        ),
        (_x(3, 4),),
    ),
    "reductions": (
        lambda x: (
            jnp.sum(x, 0),
            jnp.max(x, 1),
            jnp.prod(x),
            jnp.min(x),
            jnp.argmin(x, 0),
            jnp.any(x > 1),
            jnp.all(x > -3),
        ),
        (_x(3, 4),),
    ),
    "dot": (
        lambda a, b: (a @ b, jnp.einsum("ij,ij->i", a, a), jnp.dot(b.T, a.T)),
        (_x(3, 4), _x(4, 2)),
    ),
    "batched_dot": (
        lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
        (_x(2, 3, 4), _x(2, 4, 5)),
    ),
    "ints": (
        _ints,
        (np.array([7, -7, 9, 0, -128], np.int32), np.array([2, 2, -4, 3, 5], np.int32)),
    ),
    "shapes": (_shapes, (_x(4, 3),)),
    "scan": (_scan_cumsum, (_x(5),)),
    "while": (_while_count, (_x(3),)),
    "cond": (_cond_branches, (np.float32(-1.0), _x(3))),
    "switch": (_switch, (np.int32(1), _x(3))),
    "grad_mlp": (olympus.grad(_mlp, argnums=(0, 1)), (_x(4, 3), _x(2, 4))),
    "grad_scan": (
        olympus.grad(lambda xs: jnp.sum(_scan_cumsum(xs)[1]) + _scan_cumsum(xs)[0]),
        (_x(5),),
    ),
    "grad_while_cond": (
        olympus.grad(lambda x: jnp.sum(_cond_branches(1.0, x)) * 2.0),
        (_x(3),),
    ),
    "vmap_mlp": (olympus.vmap(_mlp, in_axes=(None, 0)), (_x(4, 3), _x(5, 2, 4))),
    "vmap_cond": (olympus.vmap(_cond_branches), (_x(4), _x(4, 3))),
    "vmap_while": (olympus.vmap(_while_count), (_x(2, 3),)),
    "custom_jvp": (olympus.grad(lambda x: jnp.sum(_softplus(x))), (_x(4),)),
    "checkpoint_pjit": (
        olympus.grad(
            lambda x: jnp.sum(
                olympus.checkpoint(olympus.jit(lambda y: jnp.sin(y) ** 2))(x)
            )
        ),
        (_x(4),),
    ),
    "linalg": (_linalg, (_spd(3),)),
    "gather_scatter": (
        lambda x, i: (
            x[i],
            x[:, i],
            x.at[i].add(1.0),
            x.at[i, 1].set(-1.0),
            x.at[i].max(0.5),
            jnp.take(x, i, axis=1),
        ),
        (_x(3, 4), np.array([2, 0, 2], np.int32)),
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reference_matches_jit(name):
    fun, args = PROGRAMS[name]
    expected, _ = tree_flatten(olympus.jit(fun)(*args))
    actual, _ = tree_flatten(reference_call(fun, *args))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        e = np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape, (
            a.dtype,
            e.dtype,
            a.shape,
            e.shape,
        )
        np.testing.assert_allclose(a, e, rtol=2e-5, atol=2e-5, err_msg=name)


def test_evaluate_runs_consts_and_literals():
    w = _x(3, 3)
    closed = olympus.make_olympuspr(lambda x: jnp.dot(w, x) + 1.0)(_x(3))
    (out,) = evaluate(closed, np.ones(3, np.float32))
    np.testing.assert_allclose(out, w @ np.ones(3) + 1.0, rtol=1e-6)


def test_reference_follows_hlo_where_numpy_differs():
    x = np.array([-7, 7, 5], np.int32)
    y = np.array([2, -2, 0], np.int32)
    closed = olympus.make_olympuspr(lambda a, b: (lax.div(a, b), lax.rem(a, b)))(x, y)
    q, r = evaluate(closed, x, y)
    np.testing.assert_array_equal(q[:2], [-3, -3])  # truncation, not floor
    np.testing.assert_array_equal(r[:2], [-1, 1])  # sign of the dividend
    closed = olympus.make_olympuspr(lambda a: lax.shift_left(a, np.int32(40)))(x)
    np.testing.assert_array_equal(evaluate(closed, x)[0], [0, 0, 0])


def _window_case(prim_name):
    from olympus.lax import windowed

    prim = getattr(windowed, f"{prim_name}_p")
    return lambda a: prim.bind(
        a,
        window_dimensions=(1, 2, 3),
        window_strides=(1, 2, 1),
        padding=((0, 0), (1, 0), (0, 1)),
    )


def _sort_with_nan():
    x = _x(3, 5)
    x[0, 1] = np.nan
    keys = _rng().integers(0, 3, size=(3, 5)).astype(np.int32)
    return x, keys


@pytest.mark.parametrize(
    "name, fun, args",
    [
        (
            "sort by int keys, stable",
            lambda a, k: lax.sort((k, a), dimension=1, num_keys=1),
            _sort_with_nan(),
        ),
        (
            "sort floats with NaN",
            lambda a, k: lax.sort(a, dimension=0),
            _sort_with_nan(),
        ),
        (
            "conv: strides, dilations, negative pad, groups",
            lambda a, b: lax.conv_general_dilated(
                a,
                b,
                (2, 1),
                [(1, 2), (0, -1)],
                lhs_dilation=(1, 2),
                rhs_dilation=(2, 1),
                feature_group_count=2,
            ),
            (_x(2, 4, 7, 6), _x(6, 2, 3, 2)),
        ),
        (
            "conv: batch groups, strides, lhs dilation",
            lambda a, b: lax.conv_general_dilated(
                a, b, (1, 2), [(1, 0), (2, 1)], lhs_dilation=(2, 1), batch_group_count=2
            ),
            (_x(4, 3, 5, 6), _x(4, 3, 2, 3)),
        ),
        ("reduce_window_max", _window_case("reduce_window_max"), (_x(2, 5, 6),)),
        ("reduce_window_sum", _window_case("reduce_window_sum"), (_x(2, 5, 6),)),
    ],
)
def test_sort_conv_and_windows_match_jit(name, fun, args):
    expected = tree_flatten(olympus.jit(fun)(*args))[0]
    got = tree_flatten(reference_call(fun, *args))[0]
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(np.asarray(e), g, rtol=1e-5, atol=1e-5)
