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
