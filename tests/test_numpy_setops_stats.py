"""jnp set operations (unique and friends) and statistics (cov, histogram,
interp, gradient, ...) against NumPy, under jit, and their gradients."""

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.test_util import reference_call
from olympus.test_util import (
    assert_allclose,
    check_against_numpy,
    check_grads,
    check_jit_matches_eager,
    check_reference_against_numpy,
    rand_int,
    rand_normal,
)
from olympus.tracer.errors import ConcretizationTypeError


def _rng():
    return np.random.default_rng(0)


# ---- unique -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape,dtype", [((7,), np.int32), ((3, 4), np.float32), ((0,), np.int32)]
)
def test_unique_all_flags_match_numpy(shape, dtype):
    x = rand_int(_rng(), shape, dtype, low=-2, high=3)
    flags = {"return_index": True, "return_inverse": True, "return_counts": True}
    check_against_numpy(
        lambda a: jnp.unique(a, **flags), lambda a: np.unique(a, **flags), (x,)
    )


def test_unique_along_axis_matches_numpy():
    x = rand_int(_rng(), (5, 3), np.int32, low=0, high=2)
    flags = {"return_index": True, "return_inverse": True, "return_counts": True}
    for axis in (0, 1):
        check_against_numpy(
            lambda a, axis=axis: jnp.unique(a, axis=axis, **flags),
            lambda a, axis=axis: np.unique(a, axis=axis, **flags),
            (x,),
        )


def test_unique_treats_nans_as_equal():
    x = np.float32([1.0, np.nan, 0.0, np.nan])
    check_against_numpy(
        lambda a: jnp.unique(a, return_counts=True),
        lambda a: np.unique(a, return_counts=True),
        (x,),
    )


def test_unique_of_complex_and_bool_matches_numpy():
    z = np.complex64([1 + 2j, 1 + 2j, 0j, 1 - 1j, 0j])
    got = reference_call(lambda a: jnp.unique(a, size=3, return_counts=True), z)
    want = np.unique(z, return_counts=True)
    assert_allclose(got[0], want[0])
    assert_allclose(got[1], want[1])
    b = np.array([True, False, True])
    assert_allclose(reference_call(lambda a: jnp.unique(a, size=2), b), np.unique(b))


def test_unique_with_size_pads_under_jit():
    x = np.int32([3, 1, 3, 2])
    f = olympus.jit(
        lambda a: jnp.unique(
            a, size=5, fill_value=-1, return_counts=True, return_index=True
        )
    )
    values, index, counts = f(x)
    np.testing.assert_array_equal(values, [1, 2, 3, -1, -1])
    np.testing.assert_array_equal(index, [1, 3, 0, 1, 1])
    np.testing.assert_array_equal(counts, [1, 1, 2, 0, 0])
    truncated = olympus.jit(lambda a: jnp.unique(a, size=2, return_counts=True))(x)
    np.testing.assert_array_equal(truncated[0], [1, 2])
    np.testing.assert_array_equal(truncated[1], [1, 1])
    # Without fill_value the padding repeats the smallest value, as in JAX.
    np.testing.assert_array_equal(jnp.unique(x, size=4), [1, 2, 3, 1])


def test_unique_under_jit_without_size_names_the_fix():
    with pytest.raises(ConcretizationTypeError, match=r"jnp\.unique.*size="):
        olympus.jit(jnp.unique)(np.int32([1, 2]))
    with pytest.raises(ConcretizationTypeError, match=r"jnp\.setdiff1d.*size="):
        olympus.jit(jnp.setdiff1d)(np.int32([1, 2]), np.int32([2]))


def test_array_api_unique_functions():
    # NumPy 2.3+ leaves unique_values & co. unsorted; olympus sorts, as np.unique.
    x = rand_int(_rng(), (2, 5), np.int32, low=0, high=4)
    cases = {
        "unique_values": {},
        "unique_counts": {"return_counts": True},
        "unique_inverse": {"return_inverse": True},
        "unique_all": {
            "return_index": True,
            "return_inverse": True,
            "return_counts": True,
        },
    }
    for name, flags in cases.items():
        got, want = getattr(jnp, name)(x), np.unique(x, **flags)
        for g, w in zip(
            got if isinstance(got, tuple) else (got,),
            want if isinstance(want, tuple) else (want,),
        ):
            assert_allclose(g, w, err_msg=name)
    assert jnp.unique_all(x).inverse_indices.shape == x.shape


def test_unique_vmap_with_size_matches_loop():
    xs = rand_int(_rng(), (3, 6), np.int32, low=0, high=4)
    f = lambda a: jnp.unique(a, size=6, fill_value=9)
    batched = olympus.vmap(f)(xs)
    np.testing.assert_array_equal(batched, np.stack([f(x) for x in xs]))


# ---- set operations ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_set_operations_match_numpy(name):
    rng = _rng()
    a, b = rand_int(rng, (8,), np.int32, 0, 6), rand_int(rng, (2, 3), np.int32, 3, 9)
    check_against_numpy(getattr(jnp, name), getattr(np, name), (a, b))


def test_set_operations_with_size_under_jit():
    a, b = np.int32([5, 1, 2, 2, 7]), np.int32([2, 9, 7])
    for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d"):
        want = getattr(np, name)(a, b)
        f = olympus.jit(
            lambda x, y, name=name: getattr(jnp, name)(x, y, size=6, fill_value=-1)
        )
        expected = np.concatenate([want, np.full(6 - want.size, -1, np.int32)])
        np.testing.assert_array_equal(f(a, b), expected, err_msg=name)


def test_set_operation_padding_follows_jax():
    """What fills the padding under size= is JAX's convention (checked once
    against jax 0.10.2): the smallest result value, 0 for setdiff1d, and
    out-of-range indices for intersect1d."""
    a, b = np.int32([5, 1, 2, 2, 7]), np.int32([2, 9, 7])
    f = olympus.jit(
        lambda x, y: (
            jnp.union1d(x, y, size=7),
            jnp.setdiff1d(x, y, size=4),
            jnp.setxor1d(x, y, size=5),
            jnp.intersect1d(x, y, size=4, return_indices=True),
        )
    )
    union, difference, xor, (common, in_a, in_b) = f(a, b)
    np.testing.assert_array_equal(union, [1, 2, 5, 7, 9, 1, 1])
    np.testing.assert_array_equal(difference, [1, 5, 0, 0])
    np.testing.assert_array_equal(xor, [1, 5, 9, 1, 1])
    np.testing.assert_array_equal(common, [2, 7, 2, 2])
    np.testing.assert_array_equal(in_a, [2, 4, 5, 5])
    np.testing.assert_array_equal(in_b, [0, 2, 3, 3])


def test_intersect1d_return_indices_matches_numpy():
    a, b = np.int32([4, 1, 3, 1, 9]), np.int32([9, 9, 3, 0])
    check_against_numpy(
        lambda x, y: jnp.intersect1d(x, y, return_indices=True),
        lambda x, y: np.intersect1d(x, y, return_indices=True),
        (a, b),
    )


@pytest.mark.parametrize("method", ["compare_all", "sort"])
@pytest.mark.parametrize("invert", [False, True])
def test_isin_matches_numpy(method, invert):
    rng = _rng()
    element = rand_normal(rng, (3, 4)).round()
    test = np.concatenate([element.ravel()[:5], [np.nan, 7.0]]).astype(np.float32)
    check_reference_against_numpy(
        lambda e, t: jnp.isin(e, t, invert=invert, method=method),
        lambda e, t: np.isin(e, t, invert=invert),
        (element, test),
    )


# ---- differences and integrals ------------------------------------------------------
@pytest.mark.parametrize("n,axis", [(1, -1), (2, 0), (0, 1)])
def test_diff_matches_numpy(n, axis):
    x = rand_normal(_rng(), (4, 5))
    check_reference_against_numpy(
        lambda a: jnp.diff(a, n, axis), lambda a: np.diff(a, n, axis), (x,)
    )
    check_reference_against_numpy(
        lambda a: jnp.diff(a, n, axis, prepend=1.0, append=2.0),
        lambda a: np.diff(a, n, axis, prepend=1.0, append=2.0),
        (x,),
    )


def test_diff_of_booleans_and_ediff1d():
    b = np.array([True, True, False, True])
    check_reference_against_numpy(jnp.diff, np.diff, (b,))
    x = rand_normal(_rng(), (2, 3))
    check_reference_against_numpy(
        lambda a: jnp.ediff1d(a, to_end=jnp.asarray([7.0, 8.0]), to_begin=-1.0),
        lambda a: np.ediff1d(a, to_end=[7.0, 8.0], to_begin=-1.0),
        (x,),
    )


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_numpy(edge_order):
    f = rand_normal(_rng(), (4, 6))
    coords = np.float32([0.0, 0.5, 2.0, 2.5, 4.0, 7.0])
    check_reference_against_numpy(
        lambda a: jnp.gradient(a, edge_order=edge_order),
        lambda a: np.gradient(a, edge_order=edge_order),
        (f,),
    )
    check_reference_against_numpy(
        lambda a: jnp.gradient(a, 0.5, coords, edge_order=edge_order),
        lambda a: np.gradient(a, 0.5, coords, edge_order=edge_order),
        (f,),
        rtol=1e-5,
        atol=1e-5,
    )
    check_reference_against_numpy(
        lambda a: jnp.gradient(a, coords, axis=1, edge_order=edge_order),
        lambda a: np.gradient(a, coords, axis=1, edge_order=edge_order),
        (f,),
        rtol=1e-5,
        atol=1e-5,
    )


def test_trapezoid_matches_numpy_and_differentiates():
    y = rand_normal(_rng(), (3, 5))
    x = np.float32([0.0, 1.0, 1.5, 3.0, 4.0])
    check_reference_against_numpy(
        lambda a: jnp.trapezoid(a, dx=0.5), lambda a: np.trapezoid(a, dx=0.5), (y,)
    )
    check_reference_against_numpy(
        lambda a: jnp.trapezoid(a, x), lambda a: np.trapezoid(a, x), (y,)
    )
    check_reference_against_numpy(
        lambda a: jnp.trapezoid(a, axis=0), lambda a: np.trapezoid(a, axis=0), (y,)
    )
    check_grads(lambda a: jnp.trapezoid(a, x), (y,), order=1)


def test_unwrap_matches_numpy():
    rng = _rng()
    phase = np.cumsum(rng.uniform(-4, 4, (3, 12)), axis=1).astype(np.float32)
    check_reference_against_numpy(jnp.unwrap, np.unwrap, (phase,), rtol=1e-5, atol=1e-5)
    check_reference_against_numpy(
        lambda p: jnp.unwrap(p, discont=2.0, axis=0, period=6.0),
        lambda p: np.unwrap(p, discont=2.0, axis=0, period=6.0),
        (phase,),
        rtol=1e-5,
        atol=1e-5,
    )
    check_grads(jnp.unwrap, (phase[0],), order=1)


def test_sort_complex_matches_numpy():
    z = np.complex64([[1 + 2j, 1 - 1j, 0j], [3, 1j, -1j]])
    check_reference_against_numpy(jnp.sort_complex, np.sort_complex, (z,))
    check_reference_against_numpy(
        jnp.sort_complex,
        lambda a: np.sort_complex(a).astype(np.complex64),
        (np.float32([3, 1, 2]),),
    )


def test_diff_gradient_and_jit():
    x = rand_normal(_rng(), (3, 5))
    check_grads(lambda a: jnp.diff(a, 2), (x,), order=1)
    check_grads(lambda a: jnp.gradient(a, axis=1), (x,), order=1)
    check_jit_matches_eager(lambda a: (jnp.diff(a, axis=0), jnp.gradient(a)), (x,))


# ---- covariance ----------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"bias": True}, {"ddof": 2}, {"rowvar": False}])
def test_cov_and_corrcoef_match_numpy(kwargs):
    m = rand_normal(_rng(), (3, 6))
    check_reference_against_numpy(
        lambda a: jnp.cov(a, **kwargs),
        lambda a: np.cov(a, **kwargs),
        (m,),
        rtol=1e-5,
        atol=1e-6,
    )
    rowvar = kwargs.get("rowvar", True)
    check_reference_against_numpy(
        lambda a: jnp.corrcoef(a, rowvar=rowvar),
        lambda a: np.corrcoef(a, rowvar=rowvar),
        (m,),
        rtol=1e-5,
        atol=1e-6,
    )


def test_cov_weights_second_variable_and_grad():
    rng = _rng()
    m, y = rand_normal(rng, (2, 6)), rand_normal(rng, (6,))
    fw, aw = np.int32([1, 2, 1, 3, 1, 1]), rng.random(6).astype(np.float32)
    check_reference_against_numpy(
        lambda a, b: jnp.cov(a, b, fweights=fw, aweights=aw),
        lambda a, b: np.cov(a, b, fweights=fw, aweights=aw),
        (m, y),
        rtol=1e-5,
        atol=1e-6,
    )
    assert_allclose(jnp.cov(y), np.cov(y), rtol=1e-5)
    check_grads(lambda a: jnp.corrcoef(a) + jnp.cov(a, aweights=aw), (m,), order=1)


# ---- interp ----------------------------------------------------------------------------
def test_interp_matches_numpy():
    xp = np.float32([0.0, 1.0, 1.0, 3.0, 4.0])
    fp = np.float32([1.0, 3.0, 4.0, 2.0, 0.0])
    x = np.float32([-1.0, 0.0, 0.5, 1.0, 2.0, 3.5, 4.0, 5.0])
    check_reference_against_numpy(jnp.interp, np.interp, (x, xp, fp))
    check_reference_against_numpy(
        lambda *a: jnp.interp(*a, left=-9.0, right=9.0),
        lambda *a: np.interp(*a, left=-9.0, right=9.0),
        (x, xp, fp),
    )
    xs = np.float32([-170.0, -10.0, 5.0, 190.0])
    check_reference_against_numpy(
        lambda *a: jnp.interp(*a, period=360.0),
        lambda *a: np.interp(*a, period=360.0),
        (xs, np.float32([-180.0, -90.0, 0.0, 100.0]), np.float32([4, 1, 2, 3])),
        rtol=1e-5,
        atol=1e-5,
    )


def test_interp_gradients_and_jit():
    xp = np.float32([0.0, 1.0, 3.0, 4.0])
    fp = np.float32([1.0, 3.0, 2.0, 0.0])
    x = np.float32([0.3, 1.7, 3.2])
    check_grads(jnp.interp, (x, xp, fp), order=1)
    check_jit_matches_eager(lambda a, b: jnp.interp(a, xp, b), (x, fp))


# ---- counting ---------------------------------------------------------------------------
def test_bincount_matches_numpy_and_needs_length_under_jit():
    x = np.int32([0, 3, 3, 1, 5])
    w = np.float32([0.5, 1.0, 2.0, 1.0, 3.0])
    check_against_numpy(jnp.bincount, np.bincount, (x,))
    check_against_numpy(
        lambda a, b: jnp.bincount(a, b, minlength=8),
        lambda a, b: np.bincount(a, b, minlength=8).astype(np.float32),
        (x, w),
    )
    np.testing.assert_array_equal(
        olympus.jit(lambda a: jnp.bincount(a, length=4))(x), [1, 1, 0, 2]
    )
    with pytest.raises(ConcretizationTypeError, match="bincount.*length="):
        olympus.jit(jnp.bincount)(x)
    with pytest.raises(TypeError, match="bincount"):
        jnp.bincount(np.float32([1.0]))


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("bins", [np.float32([0, 1, 2, 3]), np.float32([3, 2, 1, 0])])
def test_digitize_matches_numpy(right, bins):
    x = np.float32([-1, 0, 0.5, 1, 2.5, 3, 4])
    check_reference_against_numpy(
        lambda a, b: jnp.digitize(a, b, right),
        lambda a, b: np.digitize(a, b, right),
        (x, bins),
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"bins": 4, "range": (-1.0, 1.0)},
        {"bins": np.float32([-2, 0, 0.5, 3])},
        {"bins": 3, "density": True},
        {"bins": 5, "weights": True},
    ],
)
def test_histogram_matches_numpy(kwargs):
    rng = _rng()
    a = rand_normal(rng, (30,))
    kwargs = dict(kwargs)
    if kwargs.pop("weights", False):
        kwargs["weights"] = rng.random(30).astype(np.float32)
    got = reference_call(lambda x: jnp.histogram(x, **kwargs), a)
    want = np.histogram(a, **kwargs)
    assert_allclose(got[0], want[0], rtol=1e-5, check_dtypes=False)
    assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6, check_dtypes=False)
    edges = reference_call(
        lambda x: jnp.histogram_bin_edges(
            x, kwargs.get("bins", 10), kwargs.get("range")
        ),
        a,
    )
    assert_allclose(edges, want[1], rtol=1e-5, atol=1e-6, check_dtypes=False)


def test_histogram_under_jit_and_multi_dimensional():
    rng = _rng()
    x, y = rand_normal(rng, (25,)), rand_normal(rng, (25,))
    check_jit_matches_eager(lambda a: jnp.histogram(a, bins=6), (x,))
    got, xe, _ = reference_call(
        lambda a, b: jnp.histogram2d(a, b, bins=[3, 4], range=[(-2, 2), (-1, 1)]), x, y
    )
    want, wxe, _ = np.histogram2d(x, y, bins=[3, 4], range=[(-2, 2), (-1, 1)])
    assert_allclose(got, want, check_dtypes=False)
    assert_allclose(xe, wxe, check_dtypes=False)
    sample = rand_normal(rng, (40, 3))
    got, edges = reference_call(
        lambda s: jnp.histogramdd(s, bins=(2, 3, 2), density=True), sample
    )
    want, wedges = np.histogramdd(sample, bins=(2, 3, 2), density=True)
    assert_allclose(got, want, rtol=1e-4, check_dtypes=False)
    for g, w in zip(edges, wedges):
        assert_allclose(g, w, rtol=1e-5, atol=1e-6, check_dtypes=False)
    with pytest.raises(TypeError, match="histogram"):
        jnp.histogram(x, bins="auto")
