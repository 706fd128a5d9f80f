"""The sort primitive (olympus/lax/sorting.py), lax.top_k and jnp.sort /
argsort / lexsort: against NumPy, under jit, gradients, vmap."""

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.test_util import check_grads

RNG = np.random.default_rng(1)
X = RNG.normal(size=(3, 5)).astype(np.float32)
TIES = np.int32([[3, 1, 3, 0, 1], [2, 2, 2, 1, 0]])


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_and_argsort_against_numpy(axis):
    for a in (X, TIES, np.float32([2, np.nan, -1, np.inf])):
        if a.ndim == 1 and axis == 0:
            continue
        if a.ndim == 1 and axis not in (-1, None):
            continue
        np.testing.assert_array_equal(
            np.asarray(jnp.sort(a, axis=axis)), np.sort(a, axis=axis)
        )
        np.testing.assert_array_equal(
            np.asarray(jnp.argsort(a, axis=axis)),
            np.argsort(a, axis=axis, kind="stable"),
        )


def test_sort_under_jit_and_descending():
    got = olympus.jit(lambda a: (jnp.sort(a), jnp.argsort(a, descending=True)))(TIES)
    np.testing.assert_array_equal(np.asarray(got[0]), np.sort(TIES))
    np.testing.assert_array_equal(np.asarray(got[1]), np.argsort(-TIES, kind="stable"))


def test_multi_operand_sort_with_num_keys():
    keys = np.int32([2, 1, 2, 1, 0])
    second = np.float32([4, 2, 3, 1, 9])
    k, v = lax.sort((keys, second), num_keys=1)
    np.testing.assert_array_equal(
        np.asarray(v), second[np.argsort(keys, kind="stable")]
    )
    k, v = lax.sort((keys, second), num_keys=2)
    np.testing.assert_array_equal(np.asarray(v), second[np.lexsort((second, keys))])
    np.testing.assert_array_equal(
        np.asarray(jnp.lexsort((second, keys))), np.lexsort((second, keys))
    )


def test_top_k():
    values, indices = olympus.jit(lambda a: lax.top_k(a, 3))(TIES)
    want = np.argsort(-TIES, kind="stable")[:, :3]
    np.testing.assert_array_equal(np.asarray(indices), want)
    np.testing.assert_array_equal(np.asarray(values), np.take_along_axis(TIES, want, 1))


def test_sort_gradients_and_vmap():
    check_grads(lambda a: lax.sort(a, 0), (X,), order=2)
    check_grads(lambda a: lax.top_k(a, 2)[0], (X,), order=1)
    check_grads(lambda a, b: lax.sort((a, b), num_keys=1)[1], (X, X * 3), order=1)
    got = olympus.vmap(lambda a: jnp.argsort(a))(TIES)
    np.testing.assert_array_equal(
        np.asarray(got), np.stack([np.argsort(r, kind="stable") for r in TIES])
    )
    got = olympus.vmap(lambda a, b: lax.sort((a, b))[1], in_axes=(1, None))(
        TIES, X[0, :2]
    )
    want = np.stack([X[0, :2][np.argsort(TIES[:, j], kind="stable")] for j in range(5)])
    np.testing.assert_array_equal(np.asarray(got), want)


def test_functions_built_on_sort_against_numpy():
    np.testing.assert_array_equal(
        np.asarray(jnp.take_along_axis(X, np.argsort(X, axis=0)[:2], axis=0)),
        np.take_along_axis(X, np.argsort(X, axis=0)[:2], axis=0),
    )
    median, quantile, percentile = olympus.jit(
        lambda x: (
            jnp.median(x, axis=1),
            jnp.quantile(x, np.float32([0.1, 0.9]), axis=0),
            jnp.percentile(x, 30, axis=1, keepdims=True),
        )
    )(X)
    np.testing.assert_allclose(np.asarray(median), np.median(X, axis=1), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(quantile), np.quantile(X, [0.1, 0.9], axis=0), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        np.asarray(percentile), np.percentile(X, 30, axis=1, keepdims=True), rtol=1e-5
    )
    a = np.array([1, 2, 2, 3])
    for side in ("left", "right"):
        np.testing.assert_array_equal(
            np.asarray(jnp.searchsorted(a, np.array([2, 0, 5]), side)),
            np.searchsorted(a, [2, 0, 5], side),
        )
    part = np.asarray(jnp.partition(TIES, 2, axis=1))
    np.testing.assert_array_equal(part[:, 2], np.partition(TIES, 2, axis=1)[:, 2])
    check_grads(
        olympus.jit(lambda a: jnp.median(a, axis=0)), (X,), order=1, modes=("rev",)
    )


# ---- approx_max_k / approx_min_k (exact here) ---------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_approx_max_and_min_k_are_the_exact_extremes_along_any_axis(dim):
    x = np.random.default_rng(3).permutation(60).astype(np.float32).reshape(4, 15)
    for fun, order in ((lax.approx_max_k, -1), (lax.approx_min_k, 1)):
        values, indices = fun(x, 3, reduction_dimension=dim, recall_target=0.5)
        want = np.argsort(order * x, axis=dim, kind="stable")
        want = np.take(want, np.arange(3), axis=dim)
        np.testing.assert_array_equal(np.asarray(indices), want)
        np.testing.assert_array_equal(
            np.asarray(values), np.take_along_axis(x, want, dim)
        )
        again = olympus.jit(lambda v: fun(v, 3, dim, aggregate_to_topk=False))(x)
        np.testing.assert_array_equal(np.asarray(again[0]), np.asarray(values))


def test_approx_max_k_gradient_vmap_and_errors():
    x = np.float32([[3, 1, 2, 5], [0, 7, 6, 1]])
    g = olympus.grad(lambda v: lax.approx_max_k(v, 2)[0].sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [[1, 0, 0, 1], [0, 1, 1, 0]])
    per_row = olympus.vmap(lambda r: lax.approx_min_k(r, 1)[1])(x)
    np.testing.assert_array_equal(np.asarray(per_row), [[1], [0]])
    with pytest.raises(TypeError, match="approx_max_k: the operand must be floating"):
        lax.approx_max_k(np.int32([1, 2]), 1)
    with pytest.raises(ValueError, match="k=5 is out of range"):
        lax.approx_min_k(x, 5)
    with pytest.raises(ValueError, match="recall_target"):
        lax.approx_max_k(x, 1, recall_target=1.5)


def test_approx_max_k_matches_jax():
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(4).normal(size=(3, 9)).astype(np.float32)
    for name, k, dim in (("approx_max_k", 4, 1), ("approx_min_k", 2, 0)):
        ours = getattr(lax, name)(x, k, reduction_dimension=dim)
        theirs = getattr(jax.lax, name)(x, k, reduction_dimension=dim)
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
