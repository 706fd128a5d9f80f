"""gather and the scatter family (olympus/lax/slicing.py), integer-array
indexing `x[idx]` and `x.at[idx]` updates built on them (olympus/numpy/indexing.py):
values against NumPy eagerly and under jit, gradients against finite
differences, vmap against stacking."""

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.test_util import check_grads

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4, 5)).astype(np.float32)
ROWS = lax.GatherDimensionNumbers(
    offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
)
ROWS_SCATTER = lax.ScatterDimensionNumbers(
    update_window_dims=(1,),
    inserted_window_dims=(0,),
    scatter_dims_to_operand_dims=(0,),
)
M = RNG.normal(size=(4, 3)).astype(np.float32)
IDX = np.int32([[2], [0], [2]])
UPD = RNG.normal(size=(3, 3)).astype(np.float32)


def _rows(m, idx):
    return lax.gather(m, idx, ROWS, (1, 3))


# ---- lax level -------------------------------------------------------------------
def test_gather_rows_and_windows():
    np.testing.assert_array_equal(np.asarray(_rows(M, IDX)), M[[2, 0, 2]])
    np.testing.assert_array_equal(np.asarray(olympus.jit(_rows)(M, IDX)), M[[2, 0, 2]])
    # 2x2 windows at two (row, col) starts; the second start clamps to fit
    dn = lax.GatherDimensionNumbers((1, 2), (), (0, 1))
    out = lax.gather(M, np.int32([[0, 1], [3, 2]]), dn, (2, 2))
    np.testing.assert_array_equal(np.asarray(out), np.stack([M[0:2, 1:3], M[2:4, 1:3]]))


@pytest.mark.parametrize(
    "fn, np_op",
    [
        (lax.scatter, None),
        (lax.scatter_add, np.add),
        (lax.scatter_mul, np.multiply),
        (lax.scatter_min, np.minimum),
        (lax.scatter_max, np.maximum),
    ],
    ids=["scatter", "add", "mul", "min", "max"],
)
def test_scatter_family_against_numpy_ufunc_at(fn, np_op):
    idx = IDX if np_op is not None else np.int32([[2], [0], [1]])  # set: unique rows
    want = M.copy()
    if np_op is None:
        want[idx[:, 0]] = UPD
    else:
        np_op.at(want, idx[:, 0], UPD)
    got = olympus.jit(lambda m, i, u: fn(m, i, u, ROWS_SCATTER))(M, idx, UPD)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(fn(M, idx, UPD, ROWS_SCATTER)), want, rtol=1e-6
    )


def test_scatter_drops_out_of_range_windows():
    out = lax.scatter_add(
        M, np.int32([[7], [1]]), np.ones((2, 3), np.float32), ROWS_SCATTER
    )
    want = M.copy()
    want[1] += 1
    np.testing.assert_allclose(np.asarray(out), want)


def test_gather_scatter_gradients():
    uniq = np.int32([[2], [0], [1]])
    check_grads(lambda m: _rows(m, IDX), (M,), order=2)
    check_grads(
        lambda m, u: lax.scatter_add(m, IDX, u, ROWS_SCATTER), (M, UPD), order=2
    )
    check_grads(lambda m, u: lax.scatter(m, uniq, u, ROWS_SCATTER), (M, UPD), order=1)
    check_grads(
        lambda m, u: lax.scatter_mul(m, uniq, u, ROWS_SCATTER), (M, UPD), order=1
    )
    check_grads(
        lambda m, u: lax.scatter_max(m, uniq, u, ROWS_SCATTER),
        (M, UPD),
        order=1,
        modes=("fwd",),
    )
    # the gradient of a gather adds the cotangent of repeated rows
    g = olympus.grad(lambda m: _rows(m, IDX).sum())(M)
    np.testing.assert_allclose(
        np.asarray(g), np.float32([[1] * 3, [0] * 3, [2] * 3, [0] * 3])
    )


def test_vmap_matches_stacking():
    ms = RNG.normal(size=(2, 4, 3)).astype(np.float32)
    idxs = np.int32([[[1], [3], [1]], [[0], [0], [2]]])
    upds = RNG.normal(size=(2, 3, 3)).astype(np.float32)
    got = olympus.vmap(_rows)(ms, idxs)
    np.testing.assert_array_equal(
        np.asarray(got), np.stack([ms[0][[1, 3, 1]], ms[1][[0, 0, 2]]])
    )
    got = olympus.vmap(_rows, in_axes=(None, 0))(M, idxs)
    np.testing.assert_array_equal(
        np.asarray(got), np.stack([M[[1, 3, 1]], M[[0, 0, 2]]])
    )
    f = lambda m, i, u: lax.scatter_add(m, i, u, ROWS_SCATTER)  # noqa: E731
    got = olympus.vmap(f, in_axes=(0, None, 0))(ms, IDX, upds)
    want = np.stack([np.asarray(f(m, IDX, u)) for m, u in zip(ms, upds)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


# ---- numpy level -----------------------------------------------------------------
INDICES = [
    np.array([2, 0, 2]),
    (slice(None), [3, -1]),
    ([0, 2], slice(None), [4, 1]),
    (Ellipsis, [[1], [2]]),
    (1, slice(None), [0, -1]),
    (np.array([[0], [1]]), np.array([0, 2, 1])),
    (None, [1, 0], 0),
    (slice(1, None), [2, 0], slice(None, None, 2)),
    ([1, 0], [3, 3], [4, 0]),
]


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_integer_array_indexing_against_numpy(idx):
    want = X[idx]
    got = jnp.asarray(X)[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def test_integer_array_indexing_under_jit_and_grad():
    rows, cols = np.array([2, 0]), np.array([1, 3])
    got = olympus.jit(lambda x, r, c: x[r, :, c])(X, rows, cols)
    np.testing.assert_array_equal(np.asarray(got), X[rows, :, cols])
    check_grads(lambda x: x[[0, 2, 0], 1:3], (X,), order=1)
    got = olympus.vmap(lambda x, i: x[i])(X, np.array([3, 0, 1]))
    np.testing.assert_array_equal(np.asarray(got), X[np.arange(3), np.array([3, 0, 1])])


@pytest.mark.parametrize(
    "method, ufunc",
    [
        ("add", np.add),
        ("multiply", np.multiply),
        ("min", np.minimum),
        ("max", np.maximum),
        ("subtract", np.subtract),
    ],
)
def test_at_accumulates_like_ufunc_at(method, ufunc):
    idx = (np.array([1, 1, 0]), slice(None), np.array([4, 4, 2]))
    vals = RNG.normal(size=(3, 4)).astype(np.float32)
    want = X.copy()
    ufunc.at(want, idx, vals)
    got = olympus.jit(lambda x, v: getattr(x.at[idx], method)(v))(X, vals)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_at_set_get_and_gradient():
    x = jnp.asarray(X)
    want = X.copy()
    want[[0, 2], 1] = 7.0
    np.testing.assert_array_equal(np.asarray(x.at[[0, 2], 1].set(7.0)), want)
    np.testing.assert_array_equal(np.asarray(x.at[[0, -1],].get()), X[[0, -1]])
    v = jnp.zeros(4).at[np.array([1, 1, 3])].add(1.0)
    np.testing.assert_array_equal(np.asarray(v), [0, 2, 0, 1])
    check_grads(
        lambda x, u: jnp.asarray(x).at[[2, 0], :, 1].set(u),
        (X, X[0, :2, :4].copy()),
        order=1,
    )
    check_grads(lambda x, u: jnp.asarray(x).at[[2, 2],].add(u), (X, X[:2] * 2), order=1)
    want = X.copy()
    want[[0, 1], 1:3] = 0.0  # integer arrays beside a partial slice, as JAX allows
    np.testing.assert_array_equal(np.asarray(x.at[[0, 1], 1:3].set(0.0)), want)


def test_take_gathers_along_an_axis():
    np.testing.assert_array_equal(
        np.asarray(jnp.take(X, np.array([4, 0]), axis=2)), np.take(X, [4, 0], axis=2)
    )
    np.testing.assert_array_equal(np.asarray(jnp.take(X, 7)), np.take(X, 7))


# ---- out-of-bounds reads: mode="fill" (and "wrap") ---------------------------------
def _np_fill_take(x, idx, axis, fill):
    """NumPy reference: negatives count from the end; still out of range -> fill."""
    size = x.shape[axis]
    wrapped = np.where(idx < 0, idx + size, idx)
    inside = (wrapped >= 0) & (wrapped < size)
    out = np.take(x, np.clip(wrapped, 0, size - 1), axis=axis)
    mask = np.expand_dims(inside, tuple(range(axis))) if axis else inside
    mask = mask.reshape(mask.shape + (1,) * (out.ndim - mask.ndim))
    return np.where(mask, out, fill)


OOB = np.int32([[4, -1], [-6, 9], [0, -5]])  # axis of size 5 (X's last) or 4


def test_fill_mode_reads_fill_value_out_of_bounds():
    """Several reads in one jitted program (one compile); one eager read."""

    def reads(x, small):
        return (
            jnp.take(x, OOB, axis=2, mode="fill"),
            jnp.take(x, OOB, axis=1, mode="fill", fill_value=-7.0),
            x.at[OOB].get(mode="fill"),
            small.at[np.int32([1, 3])].get(mode="fill"),
            jnp.take(x[0, 0], np.int32([7, -8]), mode="wrap"),
            jnp.take(x[0, 0], np.int32([7])),
        )

    ints = np.arange(3, dtype=np.int32)
    got = olympus.jit(reads)(X, ints)
    want = (
        _np_fill_take(X, OOB, 2, np.nan),
        _np_fill_take(X, OOB, 1, -7.0),
        _np_fill_take(X, OOB, 0, np.nan),
        [1, np.iinfo(np.int32).min],
        np.take(X[0, 0], [7, -8], mode="wrap"),
        [np.nan],
    )  # the default fills, as JAX
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    assert np.isnan(
        float(jnp.arange(3.0).at[5].get(mode="fill"))
    )  # eager, a static int
    with pytest.raises(ValueError, match="take: unknown mode 'raise'"):
        jnp.take(X, OOB, mode="raise")


def test_fill_mode_lax_gather_windows():
    """A 2x2 window whose start does not fit is filled whole (no clamping)."""
    dn = lax.GatherDimensionNumbers((1, 2), (), (0, 1))
    out = lax.gather(
        M, np.int32([[0, 1], [3, 2], [2, 1]]), dn, (2, 2), mode="fill", fill_value=0.5
    )
    np.testing.assert_array_equal(
        np.asarray(out), np.stack([M[0:2, 1:3], np.full((2, 2), 0.5), M[2:4, 1:3]])
    )
    with pytest.raises(ValueError, match="lax.gather: unknown mode 'bogus'"):
        lax.gather(M, IDX, ROWS, (1, 3), mode="bogus")


def test_fill_mode_under_jit_vmap_and_grad():
    f = lambda x, i: jnp.asarray(x).at[:, i].get(mode="fill", fill_value=-1.0)
    np.testing.assert_array_equal(
        np.asarray(olympus.jit(f)(X, OOB)), _np_fill_take(X, OOB, 1, -1.0)
    )
    mapped = olympus.jit(
        olympus.vmap(lambda x, i: jnp.take(x, i, axis=1, mode="fill"))
    )(X, OOB)
    for b in range(3):
        np.testing.assert_array_equal(
            np.asarray(mapped)[b], _np_fill_take(X[b], OOB[b], 1, np.nan)
        )
    # filled positions get no cotangent; in-range ones accumulate theirs
    g = olympus.jit(
        olympus.grad(
            lambda x: jnp.sum(
                jnp.take(x, OOB, axis=2, mode="fill", fill_value=0.0) ** 2
            )
        )
    )(X)
    want = np.zeros_like(X)
    for i in OOB.ravel():
        if -5 <= i < 5:
            want[..., i % 5] += 2 * X[..., i % 5]
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6)
    check_grads(
        lambda x: jnp.take(x, OOB, axis=2, mode="fill", fill_value=0.0),
        (X,),
        order=1,
        modes=("rev",),
    )
