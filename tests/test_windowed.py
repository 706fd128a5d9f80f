"""reduce_window_sum / reduce_window_max (olympus/lax/windowed.py), the
pooling primitives: values against explicit NumPy windows, jit, gradients,
vmap."""

import numpy as np

import olympus
from olympus import lax
from olympus.test_util import check_grads

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 5, 6)).astype(np.float32)
WINDOW, STRIDES, PADDING = (1, 2, 3), (1, 2, 2), ((0, 0), (1, 0), (0, 1))


def reference(x, reduce, fill, window=WINDOW, strides=STRIDES, padding=PADDING):
    x = np.pad(x, padding, constant_values=fill)
    out_shape = [(n - w) // s + 1 for n, w, s in zip(x.shape, window, strides)]
    out = np.empty(out_shape, x.dtype)
    for pos in np.ndindex(*out_shape):
        box = tuple(slice(p * s, p * s + w) for p, s, w in zip(pos, strides, window))
        out[pos] = reduce(x[box])
    return out


def test_values_against_windows():
    got = olympus.jit(lambda x: lax.reduce_window_max(x, WINDOW, STRIDES, PADDING))(X)
    np.testing.assert_array_equal(np.asarray(got), reference(X, np.max, -np.inf))
    got = lax.reduce_window_sum(X, WINDOW, STRIDES, PADDING)
    np.testing.assert_allclose(np.asarray(got), reference(X, np.sum, 0), rtol=1e-5)
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(
        np.asarray(lax.reduce_window_max(ints, (2, 2), (1, 2))),
        reference(ints, np.max, 0, (2, 2), (1, 2), ((0, 0), (0, 0))),
    )
    same = lax.reduce_window_sum(np.ones((5,), np.float32), (3,), (1,), "SAME")
    np.testing.assert_array_equal(np.asarray(same), [2, 3, 3, 3, 2])


def test_gradients():
    check_grads(
        lambda x: lax.reduce_window_sum(x, WINDOW, STRIDES, PADDING), (X,), order=2
    )
    check_grads(
        lambda x: lax.reduce_window_max(x, WINDOW, STRIDES, PADDING), (X,), order=1
    )
    # a tie passes the whole cotangent to the first maximum
    g = olympus.grad(lambda x: lax.reduce_window_max(x, (2,), (2,)).sum())(
        np.float32([1, 1, 0, 2])
    )
    np.testing.assert_array_equal(np.asarray(g), [1, 0, 0, 1])


def test_vmap_matches_stacking():
    pool = lambda x: lax.reduce_window_max(x, (2, 2), (2, 2))  # noqa: E731
    got = olympus.vmap(pool, in_axes=2)(X)
    want = np.stack([np.asarray(pool(X[:, :, i])) for i in range(X.shape[2])])
    np.testing.assert_array_equal(np.asarray(got), want)
    got = olympus.vmap(lambda x: lax.reduce_window_sum(x, (2, 3), (1, 1)))(X)
    np.testing.assert_allclose(
        np.asarray(got),
        np.stack(
            [reference(x, np.sum, 0, (2, 3), (1, 1), ((0, 0), (0, 0))) for x in X]
        ),
        rtol=1e-5,
    )
