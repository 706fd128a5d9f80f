"""olympus.nn against NumPy float64 references, at ordinary inputs and at
+-1e4 where naive formulas overflow; gradients against finite differences
(float64) and finite at the extremes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import nn
from olympus.test_util import check_grads

X = np.float32([-6.0, -2.5, -0.5, 0.25, 1.0, 4.0])
EXTREME = np.float32([-1e4, -30.0, 0.0, 30.0, 1e4])
_erf = np.vectorize(math.erf)


def _np_softplus(x):
    return np.logaddexp(x, 0)


def _np_sigmoid(x):
    return np.exp(-np.logaddexp(0, -x))


def _np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


REFERENCES = [  # name, olympus function, float64 NumPy reference
    ("relu", nn.relu, lambda x: np.maximum(x, 0)),
    ("relu6", nn.relu6, lambda x: np.clip(x, 0, 6)),
    ("leaky_relu", nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    ("elu", nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    (
        "selu",
        nn.selu,
        lambda x: (
            1.0507009873554805
            * np.where(x > 0, x, 1.6732632423543772 * np.expm1(np.minimum(x, 0)))
        ),
    ),
    ("celu", nn.celu, lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0))),
    ("sigmoid", nn.sigmoid, _np_sigmoid),
    ("softplus", nn.softplus, _np_softplus),
    ("log_sigmoid", nn.log_sigmoid, lambda x: -_np_softplus(-x)),
    ("silu", nn.silu, lambda x: x * _np_sigmoid(x)),
    (
        "gelu_tanh",
        nn.gelu,
        lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    ),
    (
        "gelu_exact",
        lambda x: nn.gelu(x, approximate=False),
        lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
    ),
    ("hard_tanh", nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    ("soft_sign", nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    ("hard_silu", nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("softmax", nn.softmax, _np_softmax),
    (
        "log_softmax",
        nn.log_softmax,
        lambda x: x - x.max() - np.log(np.sum(np.exp(x - x.max()))),
    ),
    (
        "logsumexp",
        nn.logsumexp,
        lambda x: np.log(np.sum(np.exp(x - x.max()))) + x.max(),
    ),
    ("standardize", nn.standardize, lambda x: (x - x.mean()) / np.sqrt(x.var() + 1e-5)),
]


@pytest.mark.parametrize("name, fn, ref", REFERENCES, ids=[r[0] for r in REFERENCES])
def test_values_match_numpy(name, fn, ref):
    for x in (X, EXTREME):
        want = ref(x.astype(np.float64))
        got = np.asarray(fn(x))
        assert got.dtype == np.float32
        np.testing.assert_allclose(
            got, want, rtol=2e-6, atol=1e-6 if x is X else 1e-3, err_msg=name
        )


@pytest.mark.parametrize("name, fn, ref", REFERENCES, ids=[r[0] for r in REFERENCES])
def test_gradients_finite_at_extremes(name, fn, ref):
    """No NaN or inf in values or gradients at +-1e4 (softmax & co. included)."""
    x = np.float32([-1e4, -1.0, 0.5, 1e4])
    weights = np.float32([0.5, -1.0, 2.0, 1.5])
    value = np.asarray(fn(x))
    grad = np.asarray(olympus.grad(lambda x: jnp.sum(fn(x) * weights))(x))
    assert np.all(np.isfinite(value)) and np.all(np.isfinite(grad)), (name, value, grad)


def test_extreme_values_are_exact():
    np.testing.assert_array_equal(
        np.asarray(nn.softplus(np.float32([1e4, -1e4]))), [1e4, 0.0]
    )
    np.testing.assert_array_equal(
        np.asarray(nn.log_sigmoid(np.float32([-1e4, 1e4]))), [-1e4, 0.0]
    )
    np.testing.assert_array_equal(
        np.asarray(nn.softmax(np.float32([1e4, -1e4]))), [1.0, 0.0]
    )
    np.testing.assert_array_equal(
        np.asarray(nn.log_softmax(np.float32([1e4, -1e4]))), [0.0, -2e4]
    )
    np.testing.assert_allclose(
        np.asarray(nn.logsumexp(np.float32([1e4, 1e4]))), 1e4 + np.log(2), rtol=1e-7
    )
    g = np.asarray(olympus.grad(nn.logsumexp)(np.float32([1e4, 1e4, -1e4])))
    np.testing.assert_allclose(g, [0.5, 0.5, 0.0])


def test_relu_derivative_at_zero_is_zero():
    g = olympus.grad(lambda x: jnp.sum(nn.relu(x)))(np.float32([-1.0, 0.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 0.0, 1.0])


SMOOTH = [
    "sigmoid",
    "softplus",
    "log_sigmoid",
    "silu",
    "gelu_tanh",
    "gelu_exact",
    "softmax",
    "log_softmax",
    "logsumexp",
    "standardize",
    "elu",
]


@pytest.mark.parametrize("name", SMOOTH)
def test_gradients_match_finite_differences(x64, name):
    fn = {n: f for n, f, _ in REFERENCES}[name]
    x = np.array([-2.5, -0.7, 0.3, 1.9], np.float64)
    check_grads(fn, (x,), order=2 if name in ("softmax", "gelu_exact") else 1)


def test_softmax_axis_and_where():
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(
        np.asarray(nn.softmax(x, axis=0)), _np_softmax(x, 0), rtol=1e-6
    )
    mask = np.array([True, False, True, True])
    got = np.asarray(nn.softmax(x, axis=1, where=mask))
    want = _np_softmax(np.where(mask, x, -np.inf), 1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(
        np.asarray(nn.log_softmax(x, axis=(0, 1))),
        np.log(_np_softmax(x.ravel())).reshape(3, 4),
        rtol=1e-5,
    )


def test_logsumexp_options():
    a = np.float32([[0.0, 1.0, 2.0], [-np.inf, -np.inf, -np.inf]])
    out = np.asarray(nn.logsumexp(a, axis=1))
    assert out[1] == -np.inf and abs(out[0] - np.log(np.exp([0, 1, 2]).sum())) < 1e-6
    b = np.float32([1.0, -3.0, 1.0])
    value, sign = nn.logsumexp(np.float32([0.0, 1.0, 0.5]), b=b, return_sign=True)
    total = 1 - 3 * np.e + np.exp(0.5)
    np.testing.assert_allclose(float(value), np.log(abs(total)), rtol=1e-6)
    assert float(sign) == -1.0
    assert nn.logsumexp(np.ones((2, 3), np.float32), axis=0, keepdims=True).shape == (
        1,
        3,
    )


def test_one_hot():
    labels = np.array([0, 2, 1, 5, -1], np.int32)
    np.testing.assert_array_equal(
        np.asarray(nn.one_hot(labels, 3)),
        (labels[:, None] == np.arange(3)).astype(np.float32),
    )
    out = nn.one_hot(np.array([[1, 0]]), 2, dtype=jnp.int32, axis=0)
    assert out.shape == (2, 1, 2) and out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out)[:, 0, :], [[0, 1], [1, 0]])
    jitted = olympus.jit(lambda l: nn.one_hot(l, 4))(labels)
    np.testing.assert_array_equal(
        np.asarray(jitted), (labels[:, None] == np.arange(4)).astype(np.float32)
    )


def test_standardize_at_large_offset():
    """A large common offset does not cancel the variance away."""
    x = np.float32([1e4, 1e4 + 1, 1e4 + 2, 1e4 + 3])
    np.testing.assert_allclose(
        np.asarray(nn.standardize(x)),
        (np.arange(4) - 1.5) / np.sqrt(1.25 + 1e-5),
        rtol=1e-5,
    )
    y = np.random.default_rng(1).standard_normal((2, 5)).astype(np.float32)
    want = (y - y.mean(0)) / np.sqrt(y.var(0) + 1e-5)
    np.testing.assert_allclose(
        np.asarray(nn.standardize(y, axis=0)), want, rtol=1e-5, atol=1e-6
    )


def test_under_jit_and_vmap():
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    f = lambda x: nn.log_softmax(nn.gelu(x))
    eager = np.asarray(f(x))
    np.testing.assert_allclose(
        np.asarray(olympus.jit(f)(x)), eager, rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(
        np.asarray(olympus.vmap(f)(x)), eager, rtol=1e-6, atol=1e-6
    )


# ---- initializers ------------------------------------------------------------------
def test_variance_scaling_initializers():
    from olympus import random
    from olympus.nn import initializers as init

    key = random.key(0)
    for factory, variance in [
        (init.glorot_normal, 2 / 500),
        (init.glorot_uniform, 2 / 500),
        (init.he_normal, 2 / 200),
        (init.lecun_uniform, 1 / 200),
    ]:
        w = np.asarray(factory()(key, (200, 300)))
        assert w.shape == (200, 300) and w.dtype == np.float32
        np.testing.assert_allclose(w.var(), variance, rtol=0.05)
    truncated = np.asarray(init.glorot_normal()(key, (200, 300)))
    assert np.abs(truncated).max() <= 2 * np.sqrt(2 / 500) / 0.87962566103423978 * (
        1 + 1e-6
    )
    conv = np.asarray(init.he_uniform()(key, (3, 3, 16, 32)))  # receptive field 3x3
    np.testing.assert_allclose(conv.var(), 2 / (16 * 9), rtol=0.1)


def test_simple_and_orthogonal_initializers():
    from olympus import random
    from olympus.nn import initializers as init

    key = random.key(1)
    np.testing.assert_array_equal(np.asarray(init.zeros(key, (2, 3))), np.zeros((2, 3)))
    np.testing.assert_array_equal(np.asarray(init.constant(1.5)(key, (2,))), [1.5, 1.5])
    u = np.asarray(init.uniform(0.5)(key, (1000,)))
    assert 0 <= u.min() and u.max() < 0.5
    n = np.asarray(init.normal(3.0)(key, (4000,)))
    np.testing.assert_allclose(n.std(), 3.0, rtol=0.05)
    for shape in [(5, 3), (3, 5)]:
        q = np.asarray(init.orthogonal(2.0)(key, shape))
        gram = q.T @ q if shape[0] >= shape[1] else q @ q.T
        np.testing.assert_allclose(gram, 4 * np.eye(min(shape)), atol=1e-5)


# ---- attention -----------------------------------------------------------------------
def _np_attention(q, k, v, mask=None, causal=False):
    n, kh = q.shape[2], k.shape[2]
    k, v = np.repeat(k, n // kh, axis=2), np.repeat(v, n // kh, axis=2)
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(q.shape[-1])
    allowed = (
        np.ones(logits.shape, bool)
        if mask is None
        else np.broadcast_to(mask, logits.shape)
    )
    if causal:
        allowed = allowed & np.tril(np.ones(logits.shape[-2:], bool))
    logits = np.where(allowed, logits, -np.inf)
    return np.einsum("bnts,bsnh->btnh", _np_softmax(logits), v)


def test_dot_product_attention():
    r = np.random.default_rng(3)
    q = r.standard_normal((2, 4, 4, 8)).astype(np.float32)
    k = r.standard_normal((2, 5, 2, 8)).astype(
        np.float32
    )  # 2 key heads for 4 query heads
    v = r.standard_normal((2, 5, 2, 8)).astype(np.float32)
    np.testing.assert_allclose(
        np.asarray(nn.dot_product_attention(q, k, v)),
        _np_attention(q, k, v),
        rtol=1e-5,
        atol=1e-5,
    )
    mask = r.random((2, 1, 4, 5)) > 0.3
    mask[..., 0] = True
    np.testing.assert_allclose(
        np.asarray(nn.dot_product_attention(q, k, v, mask=mask)),
        _np_attention(q, k, v, mask),
        rtol=1e-5,
        atol=1e-5,
    )
    square_k, square_v = k[:, :4], v[:, :4]
    causal = olympus.jit(
        lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True)
    )(q, square_k, square_v)
    np.testing.assert_allclose(
        np.asarray(causal),
        _np_attention(q, square_k, square_v, causal=True),
        rtol=1e-5,
        atol=1e-5,
    )
    single = nn.dot_product_attention(q[0], k[0], v[0])
    np.testing.assert_allclose(
        np.asarray(single), _np_attention(q, k, v)[0], rtol=1e-5, atol=1e-5
    )
    g = olympus.grad(
        lambda q: jnp.sum(nn.dot_product_attention(q, k, v, is_causal=False) ** 2)
    )(q)
    assert np.all(np.isfinite(np.asarray(g)))
