"""`x[idx]` against NumPy's basic indexing, eagerly and under jit.

Covers ints (negative too), slices with any step, None, Ellipsis, their
mixtures, traced integer scalars inside jit, and the errors for what basic
indexing does not cover.
"""

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def check_index(idx, x=X, eager=True):
    """x[idx] eagerly and under jit (idx static) equals NumPy's x[idx].

    `eager=False` checks under jit only: one compile instead of one per
    primitive, for cases whose eager path another case already covers.
    """
    want = x[idx]
    runs = [("jit", olympus.jit(lambda a: a[idx])(x))]
    if eager:
        runs.append(("eager", jnp.asarray(x)[idx]))
    for mode, got in runs:
        assert isinstance(got, olympus.Array), mode
        assert got.shape == want.shape and got.dtype == want.dtype, mode
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=mode)


@pytest.mark.parametrize(
    "idx",
    [
        0,
        -1,
        1,
        (1, 2),
        (-1, -2, -3),
        (0, 1, 3),
        slice(None),
        slice(1, None),
        slice(None, -1),
        slice(None, None, 2),
        slice(None, None, -1),
        (slice(None), slice(2, 0, -1)),
        (slice(None), slice(None), slice(3, None, -2)),
        (slice(None), slice(-2, None)),
        (slice(None), slice(5, 9)),
        (slice(None), slice(2, 1)),
        (slice(None), slice(None, None, 5)),
        (0, slice(None, None, -2), slice(1, 3)),
        None,
        (None, 0),
        (0, None, 1),
        (None, Ellipsis, None),
        (Ellipsis, 1),
        (Ellipsis, -1, None),
        (None, Ellipsis, 1),
        (1, Ellipsis),
        (0, Ellipsis, 2),
        (Ellipsis,),
        (Ellipsis, slice(None, None, -1)),
        (slice(None), None, slice(None, 2), None, -1),
        (),
    ],
    ids=repr,
)
def test_static_basic_indexing(idx):
    check_index(idx)


def test_indexing_vectors_and_scalars_of_other_dtypes():
    v = np.array([3, -1, 4, -1, 5], np.int32)
    check_index(2, v)
    check_index(slice(None, None, -2), v)
    check_index((None, slice(1, 4)), v)
    check_index(Ellipsis, np.array(7, np.int32))
    check_index(None, np.array(True))


def test_numpy_and_array_integers_are_static_indices():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(x[np.int32(1), np.int64(-1)]), X[1, -1])
    np.testing.assert_array_equal(np.asarray(x[jnp.array(1)]), X[1])
    np.testing.assert_array_equal(np.asarray(x[:, jnp.array(-1)]), X[:, -1])


@pytest.mark.parametrize("i", [0, 2, -1, -3])
def test_traced_integer_index_inside_jit(i):
    f = olympus.jit(lambda x, i: x[:, i])
    np.testing.assert_array_equal(np.asarray(f(X, i)), X[:, i])
    g = olympus.jit(lambda x, i: x[i % 2, None, ..., i])
    np.testing.assert_array_equal(np.asarray(g(X, i)), X[i % 2, None, ..., i])


def test_traced_index_mixed_with_slices_and_steps():
    f = olympus.jit(lambda x, i: x[i, ::-1, 1::2])
    for i in (0, 1, -1):
        np.testing.assert_array_equal(np.asarray(f(X, i)), X[i, ::-1, 1::2])


def test_traced_index_from_computation():
    f = olympus.jit(lambda x: x[jnp.argmax(jnp.sum(x, axis=(1, 2)))])
    np.testing.assert_array_equal(np.asarray(f(X)), X[1])


def test_traced_unsigned_index():
    f = olympus.jit(lambda x, i: x[i])
    np.testing.assert_array_equal(np.asarray(f(X, np.uint8(1))), X[1])


def test_indexing_result_can_be_used_further():
    x = jnp.asarray(X)
    np.testing.assert_allclose(
        np.asarray(x[0, :, 1:] * 2 + x[1, ::-1, :-1]), X[0, :, 1:] * 2 + X[1, ::-1, :-1]
    )


def test_indexing_a_scalar_result_of_jit():
    out = olympus.jit(lambda x: x[1, 2, 3])(X)
    assert out.shape == () and float(out) == X[1, 2, 3]


@pytest.mark.parametrize(
    "idx, error, match",
    [
        ((0, 0, 0, 0), IndexError, "too many indices"),
        ((Ellipsis, 0, Ellipsis), IndexError, "single ellipsis"),
        (1.5, TypeError, "invalid index"),
        ("a", TypeError, "invalid index"),
    ],
    ids=repr,
)
def test_index_errors(idx, error, match):
    with pytest.raises(error, match=match):
        jnp.asarray(X)[idx]


@pytest.mark.parametrize(
    "idx",
    [
        np.array([1, 0, 1]),
        ([1, -2],),  # a bare list as the whole index is refused, as in JAX
        (slice(None), np.array([2, -1])),
        (slice(None), [0, 2], slice(1, 3)),
        (np.array([0, 1]), np.array([2, 0])),
        (Ellipsis, np.array([[3, 0], [1, 1]])),
        (1, np.array([0, 2])),
        (np.array([1, 0]), 1),
        (np.array([1, 0]), 2, np.array([3, 3])),
        (None, np.array([1]), slice(None, None, -1)),
    ],
    ids=repr,
)
def test_integer_array_indexing(idx):
    check_index(idx, eager=isinstance(idx, np.ndarray))


def test_integer_array_index_traced_and_differentiable():
    logits = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    labels = np.array([0, 2, 1, 1], np.int32)
    pick = olympus.jit(lambda l, y: l[jnp.arange(4), y])
    np.testing.assert_array_equal(
        np.asarray(pick(logits, labels)), logits[np.arange(4), labels]
    )
    grad = olympus.grad(lambda l: jnp.sum(l[jnp.arange(4), labels]))(logits)
    want = np.zeros_like(logits)
    want[np.arange(4), labels] = 1.0
    np.testing.assert_array_equal(np.asarray(grad), want)


def test_take():
    v = np.arange(10.0, dtype=np.float32)
    idx = np.array([[1, 9], [-1, 0]])
    np.testing.assert_array_equal(np.asarray(jnp.take(v, idx)), np.take(v, idx))
    np.testing.assert_array_equal(
        np.asarray(olympus.jit(lambda a, i: jnp.take(a, i, axis=1))(X, [2, 0])),
        np.take(X, [2, 0], axis=1),
    )
    # jnp.take fills out-of-range indices by default (as JAX); x[i] clamps
    np.testing.assert_array_equal(
        np.asarray(jnp.take(v, np.array([12, -11]))), [np.nan] * 2
    )
    np.testing.assert_array_equal(
        np.asarray(jnp.take(v, np.array([12]), mode="clip")), [9.0]
    )
    np.testing.assert_array_equal(np.asarray(jnp.asarray(v)[np.array([12])]), [9.0])
    assert jnp.take(jnp.array([True, False]), np.array([1, 0])).dtype == np.bool_


@pytest.mark.parametrize(
    "mask",
    [
        X > 10,
        X[:, :, 0] > 4,
        np.array([True, False]),
        ([False, True],),
        (slice(None), X[0, :, 0] > 0),
        (Ellipsis, X[0, 0] > 1),
        (0, X[0, :, 0] > 4, None),
    ],
    ids=["3d", "2d", "1d", "list", "after-slice", "after-ellipsis", "after-int"],
)
def test_concrete_boolean_masks(mask):
    """Concrete masks work eagerly and under jit (the mask is a constant there)."""
    check_index(mask, eager=isinstance(mask, np.ndarray) and mask.ndim == 3)


def test_traced_boolean_mask_is_an_error():
    with pytest.raises(IndexError, match="concrete mask"):
        olympus.jit(lambda x: x[x > 3])(X)
    with pytest.raises(IndexError, match="concrete mask"):  # concrete ones work
        olympus.jit(lambda x: x.at[x > 3].set(0.0))(X)
    with pytest.raises(IndexError, match="does not match"):
        jnp.asarray(X)[X[0] > 4]


def test_nonzero_argwhere_and_one_argument_where():
    a = np.array([[0, 3, 0], [4, 0, 5]], np.float32)
    for got, want in zip(jnp.nonzero(a), np.nonzero(a)):
        np.testing.assert_array_equal(np.asarray(got), want)
    for got, want in zip(jnp.where(a > 3), np.where(a > 3)):
        np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(jnp.flatnonzero(a)), np.flatnonzero(a))
    fixed = olympus.jit(lambda x: jnp.nonzero(x, size=4, fill_value=-1))(a)
    np.testing.assert_array_equal(np.asarray(fixed[0]), [0, 1, 1, -1])
    np.testing.assert_array_equal(np.asarray(fixed[1]), [1, 0, 2, -1])
    rows = olympus.jit(lambda x: jnp.argwhere(x, size=2))(a)
    np.testing.assert_array_equal(np.asarray(rows), np.argwhere(a)[:2])
    with pytest.raises(ValueError, match="size="):
        olympus.jit(jnp.nonzero)(a)


def test_traced_float_index_is_an_error():
    with pytest.raises(IndexError):
        olympus.jit(lambda x, i: x[i])(X, 1.0)


def test_arrays_are_immutable():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 2.0


# ---- functional updates: x.at[idx] ---------------------------------------------
def _numpy_update(x, idx, op, values):
    out = x.copy()
    view = out[idx]
    out[idx] = {
        "set": lambda v: values,
        "add": lambda v: v + values,
        "multiply": lambda v: v * values,
        "min": lambda v: np.minimum(v, values),
        "max": lambda v: np.maximum(v, values),
        "subtract": lambda v: v - values,
        "divide": lambda v: v / values,
    }[op](view)
    return out


@pytest.mark.parametrize(
    "idx, op, values",
    [
        (0, "set", -1.0),
        ((1, -1), "add", 10.0),
        ((slice(None), 1), "set", np.arange(4.0)),
        ((Ellipsis, slice(None, None, 2)), "add", 100.0),
        (
            (slice(None, None, -1), 0, slice(1, 3)),
            "set",
            np.array([[1.0, 2.0], [3.0, 4.0]]),
        ),
        ((slice(None), slice(None, None, 2), slice(3, 0, -2)), "multiply", 0.0),
        ((None, 1, slice(1, None)), "min", 15.0),
        ((0, slice(None, 2)), "max", 2.5),
        ((slice(1, 1),), "set", 5.0),
        ((1, 2), "subtract", 1.0),
        ((Ellipsis, -1), "divide", 2.0),
    ],
    ids=repr,
)
def test_at_updates_match_numpy(idx, op, values):
    want = _numpy_update(X, idx, op, values)
    runs = [("jit", olympus.jit(lambda a: getattr(a.at[idx], op)(values))(X))]
    if op in ("set", "add"):  # eager shares the code path; a few cases suffice
        runs.append(("eager", getattr(jnp.asarray(X).at[idx], op)(values)))
    for mode, got in runs:
        assert got.dtype == np.float32 and got.shape == X.shape, mode
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=mode)


@pytest.mark.parametrize("i", [0, 2, -1])
def test_at_update_with_traced_index(i):
    f = olympus.jit(lambda x, i, v: x.at[:, i, 1::2].set(v))
    want = X.copy()
    want[:, i, 1::2] = -5.0
    np.testing.assert_array_equal(np.asarray(f(X, i, -5.0)), want)
    g = olympus.jit(lambda x, i: x.at[:, i].add(1.0))
    want = X.copy()
    want[:, i] += 1.0
    np.testing.assert_array_equal(np.asarray(g(X, i)), want)


def test_at_get_apply_and_dtype_cast():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(x.at[1, ::-1].get()), X[1, ::-1])
    np.testing.assert_allclose(
        np.asarray(x.at[0, 0].apply(jnp.sqrt)[0, 0]), np.sqrt(X[0, 0])
    )
    ints = jnp.arange(5)
    out = ints.at[1:3].set(2.7)  # values are cast to the array's dtype, as in JAX
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 2, 3, 4])
    assert x.at[0].set(0.0) is not x and float(x[0, 0, 1]) == 1.0  # x is unchanged


def test_out_of_bounds_concrete_array_index_clamps_like_jit():
    """A Python int out of bounds raises; an olympus Array index is data, so eager
    clamps it as the jitted gather does (fuzz seed 165: eager raised, jit did not)."""
    x = jnp.asarray(np.array([1.0, 2.0], np.float32))
    take = olympus.jit(lambda x, i: x[i])
    for i in (-3, 5, -1, 0):
        index = olympus.device_put(np.int32(i))
        assert (
            float(x[index])
            == float(take(x, np.int32(i)))
            == float(x[min(max(i, -2), 1)])
        )


def test_zero_d_numpy_int_array_index_is_an_int_index():
    """`x[np.array(1)]` indexes like `x[1]` (it raised 'indexing with ndarray ()
    is not supported'; fuzz seed 28, an int input held fixed while
    differentiating), and out of bounds it clamps like an olympus Array index."""
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    take = olympus.jit(lambda x, i: x[i])
    for i in (1, -1, 4, -3):
        index = np.array(i, np.int32)
        expected = np.asarray(x)[min(max(i, -2), 1)]
        np.testing.assert_array_equal(x[index], expected)
        np.testing.assert_array_equal(take(x, index), expected)
    assert float(x[np.array(1), np.array(2)]) == 5.0
    grad = olympus.grad(lambda x: jnp.sum(x[np.array(1)] ** 2))(x)
    np.testing.assert_array_equal(grad, [[0, 0, 0], [6, 8, 10]])
