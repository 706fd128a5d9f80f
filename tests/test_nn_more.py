"""olympus.nn's further activations (mish, squareplus, sparse_plus,
sparse_sigmoid, tanh, identity): values against float64 NumPy formulas,
gradients against finite differences (float64), finite values and gradients
in the tails, and the names JAX 0.10.2 has (and only those)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import nn
from olympus.test_util import check_grads, check_jit_matches_eager

X = np.float32([-6.0, -1.5, -1.0, -0.5, 0.0, 0.25, 1.0, 3.0])
TAILS = np.float32([-1e4, -100.0, -30.0, 30.0, 100.0, 1e4])


def _np_mish(x):
    return x * np.tanh(np.logaddexp(x, 0))


def _np_squareplus(x, b=4.0):
    return (x + np.sqrt(x * x + b)) / 2


def _np_sparse_plus(x):
    return np.where(x <= -1, 0.0, np.where(x < 1, (x + 1) ** 2 / 4, x))


REFERENCES = [
    ("mish", nn.mish, _np_mish),
    ("squareplus", nn.squareplus, _np_squareplus),
    (
        "squareplus_b1",
        lambda x: nn.squareplus(x, b=1.0),
        lambda x: _np_squareplus(x, 1.0),
    ),
    ("sparse_plus", nn.sparse_plus, _np_sparse_plus),
    ("sparse_sigmoid", nn.sparse_sigmoid, lambda x: np.clip((x + 1) / 2, 0, 1)),
    ("tanh", nn.tanh, np.tanh),
    ("identity", nn.identity, lambda x: x),
]
IDS = [r[0] for r in REFERENCES]


@pytest.mark.parametrize("name, fn, ref", REFERENCES, ids=IDS)
def test_values_match_numpy(name, fn, ref):
    for x in (X, TAILS):
        got = np.asarray(fn(x))
        assert got.dtype == np.float32 and got.shape == x.shape
        np.testing.assert_allclose(
            got, ref(x.astype(np.float64)), rtol=3e-6, atol=1e-6, err_msg=name
        )


@pytest.mark.parametrize("name, fn, ref", REFERENCES, ids=IDS)
def test_gradients_match_finite_differences(name, fn, ref):
    """Away from sparse_plus' kinks at +-1 (where no derivative exists)."""
    x = np.float32([-2.5, -0.7, 0.3, 0.9, 2.0])
    check_grads(fn, (x,), order=1)
    check_grads(fn, (x,), order=2, modes=("fwd",))


@pytest.mark.parametrize("name, fn, ref", REFERENCES, ids=IDS)
def test_tails_are_finite(name, fn, ref):
    value = np.asarray(fn(TAILS))
    grad = np.asarray(olympus.grad(lambda x: jnp.sum(fn(x)))(TAILS))
    assert np.all(np.isfinite(value)) and np.all(np.isfinite(grad)), (value, grad)


def test_tail_values_and_slopes():
    """mish and squareplus go to 0 below and to x above, with slopes 0 and 1;
    squareplus keeps its relative accuracy far below 0 (no cancellation)."""
    np.testing.assert_allclose(np.asarray(nn.mish(TAILS[-2:])), TAILS[-2:])
    assert np.all(np.abs(np.asarray(nn.mish(TAILS[:2]))) < 1e-30)
    np.testing.assert_allclose(
        np.asarray(nn.squareplus(np.float32([-1e4]))), [1e-4], rtol=1e-5
    )
    for fn in (nn.mish, nn.squareplus, nn.sparse_plus):
        slopes = np.asarray(olympus.vmap(olympus.grad(fn))(np.float32([-1e4, 1e4])))
        np.testing.assert_allclose(slopes, [0.0, 1.0], atol=1e-6)


def test_sparse_sigmoid_is_the_derivative_of_sparse_plus():
    x = np.linspace(-3, 3, 61).astype(np.float32)
    grads = np.asarray(olympus.vmap(olympus.grad(nn.sparse_plus))(x))
    np.testing.assert_allclose(grads, np.asarray(nn.sparse_sigmoid(x)), atol=1e-6)


def test_jit_matches_eager_and_integers():
    for fn in (nn.mish, nn.squareplus, nn.sparse_plus, nn.tanh):
        check_jit_matches_eager(fn, (X,))
    assert nn.identity(np.int32(3)).dtype == np.int32
    assert nn.squareplus(np.float16([1.0])).dtype == np.float16


def test_names_match_jax():
    """Each of these exists in jax.nn 0.10.2 with the same parameters;
    scaled_dot_product_attention does not exist there, so not here either."""
    jax = pytest.importorskip("jax")
    import inspect

    for name in (
        "mish",
        "squareplus",
        "sparse_plus",
        "sparse_sigmoid",
        "tanh",
        "identity",
    ):
        ours = list(inspect.signature(getattr(nn, name)).parameters)
        theirs = list(inspect.signature(getattr(jax.nn, name)).parameters)
        assert ours == theirs, name
    assert not hasattr(jax.nn, "scaled_dot_product_attention")
    assert not hasattr(nn, "scaled_dot_product_attention")


# ---- log1mexp, logmeanexp ----------------------------------------------------------
def test_log1mexp_against_float64_and_at_both_ends():
    x = np.array([1e-30, 1e-8, 1e-3, 0.3, 0.69, 0.7, 2.0, 20.0, 80.0], np.float32)
    x64 = x.astype(np.float64)  # each form where float64 keeps it exact
    want = np.where(x64 < 0.5, np.log(-np.expm1(-x64)), np.log1p(-np.exp(-x64)))
    got = np.asarray(nn.log1mexp(x))
    np.testing.assert_allclose(got, want, rtol=2e-6)
    assert np.isneginf(float(nn.log1mexp(0.0))) and np.isnan(float(nn.log1mexp(-1.0)))
    g = olympus.grad(nn.log1mexp)
    for v in (1e-3, 0.5, 5.0):  # d/dx = 1 / expm1(x)
        np.testing.assert_allclose(float(g(np.float32(v))), 1 / np.expm1(v), rtol=1e-5)


def test_logmeanexp_against_numpy_with_axis_where_and_keepdims():
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32) * 30
    want = np.log(np.mean(np.exp(x.astype(np.float64)), axis=1))
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(x, axis=1)), want, rtol=1e-5)
    mask = x > 0
    got = nn.logmeanexp(x, axis=0, where=mask, keepdims=True)
    e = np.where(mask, np.exp(x.astype(np.float64)), 0)
    with np.errstate(divide="ignore"):
        expected = np.log(e.sum(0, keepdims=True) / mask.sum(0, keepdims=True))
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5)
    assert float(nn.logmeanexp(jnp.array([1e4, 1e4]))) == 1e4


def test_log1mexp_and_logmeanexp_match_jax():
    jax = pytest.importorskip("jax")
    x = np.array([1e-6, 0.2, 3.0, 40.0], np.float32)
    np.testing.assert_allclose(
        np.asarray(nn.log1mexp(x)), np.asarray(jax.nn.log1mexp(x)), rtol=1e-6
    )
    y = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(
        np.asarray(nn.logmeanexp(y, axis=1)),
        np.asarray(jax.nn.logmeanexp(y, axis=1)),
        rtol=1e-6,
    )
