"""Differences the op-by-op sweep (tests/test_conformance_sweep.py) found in
array construction, statistics, polynomials, nan-functions and index tricks,
fixed: each test runs the sweep's kind of call (and the edge cases behind the
fix) under olympus and JAX 0.10.2 and checks they agree, eagerly and, where
the function traces, under jit and vmap."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from jax_oracle import agree, x64

BF16 = ml_dtypes.bfloat16


# ---- construction: arange, linspace, meshgrid ------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        (np.int8(3),),  # the bounds' dtype, not the default int
        (np.uint8(7),),
        (np.float16(2.5),),
        (np.array(np.nan, BF16),),  # JAX's length of NaN in bfloat16 is 0
        (np.float32(np.nan),),  # ... and in float32 an error
        (np.True_,),  # no bool iota
        (np.array([1, 2]),),  # not a scalar
        (1 + 2j,),
        (1, 7, 2),
        (-2, 3, 1, np.uint8),
        (0.5, 3.0, 0.3),
        (np.float16(1), np.float16(3), np.float16(0.1)),  # computed in float32
        (np.int8(-7), np.int8(100), np.int8(3)),
        (5, 1, -1),
    ],
)
def test_arange_dtype_and_values_as_jax(args):
    agree(lambda ox, *a: ox.jnp.arange(*a), *args)


def test_arange_under_jit_and_x64_as_jax():
    agree(lambda ox: ox.jit(lambda: ox.jnp.arange(np.int8(2), 9, 3))())
    with x64():
        agree(lambda ox, n: ox.jnp.arange(n), np.int64(4))
        agree(lambda ox, n: ox.jnp.arange(n), np.float64(2.5))


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((np.float16(0), np.float16(1)), {}),  # float16 stays float16
        ((np.array(np.nan, BF16), np.array(1, BF16)), {}),
        ((np.int8(3), np.int8(-7)), {}),
        ((0, 10), dict(num=4, dtype=np.int32)),  # floored, as JAX
        ((0, 5), dict(num=4, dtype=np.bool_)),
        ((np.array([1.0, 2.0]), np.array([[3.0], [4.0]])), dict(num=3, axis=-1)),
        ((1.0, 2.0), dict(num=1)),
        ((1.0, 2.0), dict(num=0, retstep=True)),
        ((1.0, 2.0), dict(num=1, endpoint=False, retstep=True)),
        ((1.0, 2.0), dict(num=5, endpoint=False, retstep=True)),
        ((-np.inf, np.inf), dict(num=4)),
        ((1.0, 2.0), dict(num=-1)),
    ],
)
def test_linspace_dtype_and_values_as_jax(args, kwargs):
    agree(lambda ox, *a: ox.jnp.linspace(*a, **kwargs), *args)


def test_linspace_under_jit_and_vmap_as_jax():
    a, b = np.float16(1), np.float16(3)
    agree(lambda ox, a, b: ox.jit(lambda a, b: ox.jnp.linspace(a, b, 5))(a, b), a, b)
    ends = np.array([2.0, 4.0], np.float32)
    agree(lambda ox, e: ox.vmap(lambda e: ox.jnp.linspace(0.0, e, 3))(e), ends)


@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_meshgrid_takes_only_1d_arrays_as_jax(shape):
    agree(lambda ox, x: ox.jnp.meshgrid(x), np.ones(shape, np.float32))
    agree(lambda ox, x: ox.jnp.meshgrid(x, x, indexing="ij"), np.ones(shape))


def test_meshgrid_of_vectors_as_jax():
    a, b = np.arange(3.0), np.arange(2, dtype=np.int8)
    for kwargs in ({}, dict(indexing="ij"), dict(sparse=True)):
        agree(lambda ox, a, b: ox.jnp.meshgrid(a, b, **kwargs), a, b)
    agree(lambda ox, a, b: ox.jit(lambda a, b: ox.jnp.meshgrid(a, b, a))(a, b), a, b)


# ---- statistics: gradient, trapezoid, unwrap, cov, bincount, digitize, histograms --------
def edge(dtype: str, shape: tuple, offset: int = 0) -> np.ndarray:
    from test_conformance_sweep import edge_array

    return edge_array(dtype, shape, offset)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_calculus_and_cov_on_edge_values_as_jax(dtype, shape):
    """gradient gives a list for several (or no) axes; trapezoid refuses an
    empty axis and computes dx * (sum - (first + last) / 2); unwrap of an
    empty axis is p in p's and period's promoted (weak) dtype; cov without
    observations is NaN."""
    x = edge(dtype, shape)
    for name in ("gradient", "trapezoid", "unwrap", "cov"):
        agree(lambda ox, x: getattr(ox.jnp, name)(x), x)


def test_trapezoid_with_steps_and_coordinates_as_jax():
    y = np.arange(12.0, dtype=np.float32).reshape(3, 4) ** 2
    agree(lambda ox, y: ox.jnp.trapezoid(y, axis=0), y)
    agree(lambda ox, y: ox.jnp.trapezoid(y, dx=np.array([1.0, 2, 3, 4])), y)
    agree(lambda ox, y: ox.jnp.trapezoid(y, x=np.array([0.0, 1, 3, 4])), y)
    agree(lambda ox, y: ox.jnp.trapezoid(y, x=y, axis=0), y)
    agree(lambda ox, y: ox.jit(ox.jnp.trapezoid)(y), y)
    agree(lambda ox, y: ox.vmap(ox.jnp.trapezoid)(y), y)
    agree(lambda ox, y: ox.jnp.unwrap(y + 0j), y)  # complex: both refuse


@pytest.mark.parametrize("dtype", ["bool", "float16"])
@pytest.mark.parametrize("shape", [(0,), (3,), (2, 3)])
def test_counting_functions_on_edge_values_as_jax(dtype, shape):
    """bincount counts bools; histogram counts in a's inexact dtype and
    refuses empty samples without a range; histogramdd takes only (N, D)."""
    x, y = edge(dtype, shape), edge(dtype, shape, 3)
    for name in ("histogram", "histogram_bin_edges", "histogramdd", "bincount"):
        agree(lambda ox, x: getattr(ox.jnp, name)(x), x)
    agree(lambda ox, x, y: ox.jnp.histogram2d(x, y), x, y)
    agree(lambda ox, x, y: ox.jnp.digitize(x, y), x, y)


def test_digitize_is_int32_with_x64_as_jax():
    with x64():
        for dtype in ("float64", "int64"):
            agree(lambda ox, x, b: ox.jnp.digitize(x, b), edge(dtype, (3,)), edge(dtype, (3,), 3))  # fmt: skip
            agree(lambda ox, x: ox.jnp.digitize(x, np.zeros(0)), edge(dtype, (3,)))


def test_histograms_with_options_as_jax():
    a = np.array([0.1, 0.5, 0.5, 0.9, 2.0, -1.0], np.float32)
    w = np.arange(6, dtype=np.float32)
    agree(lambda ox, a: ox.jnp.histogram(a, bins=4, range=(0, 1)), a)
    agree(lambda ox, a, w: ox.jnp.histogram(a, bins=3, weights=w, density=True), a, w)
    agree(lambda ox, a: ox.jit(lambda a: ox.jnp.histogram(a, bins=3))(a), a)
    s = np.stack([a, a[::-1]], 1)
    agree(lambda ox, s: ox.jnp.histogramdd(s, bins=[2, 3], density=True), s)
    agree(lambda ox, s, w: ox.jnp.histogramdd(s, 2, weights=w, range=[(0, 1), None]), s, w)  # fmt: skip
    agree(lambda ox, a: ox.jnp.histogram2d(a, a[::-1], bins=[2, 3]), a)
    agree(lambda ox, a: ox.jnp.histogram2d(a, a, bins=np.array([0.0, 0.5, 1, 2])), a)
    agree(lambda ox: ox.jnp.bincount(np.array([True, False, True]), minlength=4))
    agree(lambda ox: ox.jnp.bincount(np.array([[1]])))


# ---- nan-functions: quantile, median and their nan-forms ------------------------------
@pytest.mark.parametrize("dtype", ["bool", "int8", "float32"])
@pytest.mark.parametrize("shape", [(0,), (3,)])
def test_quantiles_on_edge_values_as_jax(dtype, shape):
    """q must be floating (JAX computes q * (n - 1) in q's dtype), and no
    elements to read an order statistic from raise; running nan-sums keep
    small ints."""
    x, q = edge(dtype, shape), edge(dtype, shape, 3)
    for name in ("quantile", "nanquantile"):
        agree(lambda ox, x, q: getattr(ox.jnp, name)(x, q), x, q)
    for name in ("median", "nanmedian", "nancumsum", "nancumprod"):
        agree(lambda ox, x: getattr(ox.jnp, name)(x), x)


def test_quantiles_of_empty_axes_as_jax():
    e, m = np.zeros(0, np.float32), np.zeros((2, 0), np.float32)
    agree(lambda ox: ox.jnp.quantile(e, e))  # no q: an empty result
    agree(lambda ox: ox.jnp.quantile(m, 0.5, axis=0))
    agree(lambda ox: ox.jnp.nanquantile(m, 0.5, axis=1))
    agree(lambda ox: ox.jnp.quantile(np.ones(3, np.float32), 1))
    agree(lambda ox: ox.jnp.percentile(np.arange(5), 30))
    agree(lambda ox: ox.jit(ox.jnp.nanmedian)(np.array([1.0, np.nan, 3.0, 0.5])))
    agree(lambda ox, x: ox.vmap(ox.jnp.median)(x), np.arange(6.0).reshape(2, 3))


# ---- polynomials --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["bool", "uint8", "float16"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_polynomials_on_edge_values_as_jax(dtype, shape):
    """Coefficients run along the first axis, further axes batch (as JAX);
    a scalar is one root for poly, fewer than two coefficients have no roots;
    bool sums and powers are refused; vander's exponents are x's dtype."""
    x, y = edge(dtype, shape), edge(dtype, shape, 3)
    for name in ("polyadd", "polysub", "polyval"):
        agree(lambda ox, x, y: getattr(ox.jnp, name)(x, y), x, y)
    for name in ("poly", "polyder", "roots", "vander"):
        agree(lambda ox, x: getattr(ox.jnp, name)(x), x)


def test_polynomials_with_options_as_jax():
    p = np.array([0, 0, 1, -3, 2, 0], np.float32)
    agree(lambda ox, p: ox.jnp.roots(p), p)  # leading zeros stripped
    agree(lambda ox: ox.jnp.roots(np.array([0, 0, 5.0])))
    agree(lambda ox: ox.jnp.roots(np.zeros(3)))
    for m in (0, 3, 7):
        agree(lambda ox, p: ox.jnp.polyder(p, m), p)
    agree(lambda ox, p: ox.jnp.polyadd(p, p[:2]), p)
    agree(lambda ox, p: ox.jnp.polysub(p[:2], p), p)
    agree(lambda ox, p: ox.jnp.polyval(p, np.arange(3.0)), p)
    agree(lambda ox: ox.jnp.polyval(np.ones((3, 2)), np.arange(2.0)))
    agree(lambda ox: ox.jnp.vander(np.arange(3, dtype=np.int8), 4))
    agree(lambda ox: ox.jnp.poly(np.array([[1.0, 2], [3, 4]])))
    agree(lambda ox, p: ox.jit(ox.jnp.polyder)(p), p)
    agree(lambda ox, p: ox.vmap(lambda q: ox.jnp.polyval(q, 2.0))(np.stack([p, p])), p)
    with x64():
        agree(lambda ox: ox.jnp.roots(np.array([1.0, -3, 2])))
        agree(lambda ox: ox.jnp.roots(np.array(1.0)))


# ---- geometric ranges, ix_, unravel_index --------------------------------------------
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_ranges_and_index_tricks_on_edge_values_as_jax(dtype, shape):
    """geomspace/logspace keep float16 and compute as JAX's one program
    (log10 is log * (1 / ln 10)); an empty ix_ index is an integer array;
    unravel_index is divmod in the indices' own dtype."""
    x, y = edge(dtype, shape), edge(dtype, shape, 3)
    for name in ("geomspace", "logspace"):
        agree(lambda ox, x, y: getattr(ox.jnp, name)(x, y), x, y)
    if dtype != "bool":  # JAX has no bool ix_ (see docs/differences.md)
        agree(lambda ox, x: ox.jnp.ix_(x), x)
    agree(lambda ox, x: ox.jnp.unravel_index(x, (2, 3)), x)
    agree(lambda ox, x, y: ox.jnp.ravel_multi_index((x, y), (2, 3), mode="clip"), x, y)


def test_ranges_and_index_tricks_with_options_as_jax():
    agree(lambda ox: ox.jnp.geomspace(1.0, 1000.0, 4))
    agree(lambda ox: ox.jnp.geomspace(-1.0, -1000.0, 4, endpoint=False))
    agree(lambda ox: ox.jnp.geomspace(np.array([1.0, 2.0]), 16.0, 5, axis=1))
    agree(lambda ox: ox.jnp.geomspace(1, 16, 5, dtype=np.int32))  # exact powers
    agree(lambda ox: ox.jnp.logspace(np.array([0, 5]), np.array([5, 0]), 5, base=np.array([2.0, 3.0])))  # fmt: skip
    agree(lambda ox, a: ox.jit(lambda a: ox.jnp.geomspace(a, 8.0, 4))(a), np.float32(1))
    agree(
        lambda ox: ox.jnp.log10(np.array([16, 0.3, 1e-30, -1, 0, np.inf], np.float32))
    )
    agree(lambda ox: ox.jnp.log10(np.array([1 + 2j, 16, -3j], np.complex64)))
    agree(lambda ox: ox.jnp.unravel_index(np.array([5, -1, 30, -7]), (2, 3)))
    agree(lambda ox: ox.jnp.unravel_index(7, 4))
    agree(lambda ox: ox.jnp.unravel_index(np.uint8(200), (2, 3)))
    agree(lambda ox, i: ox.jit(lambda i: ox.jnp.unravel_index(i, (2, 3)))(i), np.array([4, -2]))  # fmt: skip
    agree(lambda ox, i: ox.vmap(lambda i: ox.jnp.unravel_index(i, (2, 3)))(i), np.array([4, -2]))  # fmt: skip
    with x64():
        agree(lambda ox: ox.jnp.ix_(np.zeros(0, np.int8), np.arange(3)))
        agree(lambda ox: ox.jnp.unravel_index(np.float64(4.5), (2, 3)))


@pytest.mark.parametrize("dtype", [np.uint8, np.bool_, np.int32])
def test_cumulative_sum_promotes_narrow_ints_as_jax(dtype):
    """cumulative_sum sums narrow ints in the default int (as sum), while
    cumsum and cumulative_prod keep them (the Array API suite's x64 check)."""
    x = np.ones(3, dtype)
    for include_initial in (False, True):
        for name in ("cumulative_sum", "cumulative_prod"):
            run = lambda ox, x: getattr(ox.jnp, name)(
                x, include_initial=include_initial
            )  # noqa: E731
            agree(run, x)
            with x64():
                agree(run, x)


def test_eager_integer_indexing_compiles_one_program_for_all_indices():
    """x[i] eagerly passes i as an operand (as JAX), so reading every element,
    as the Array API suite's hypothesis strategies do, compiles one program
    rather than one per index (seconds per draw before)."""
    import olympus.numpy as onp
    from olympus.backends.xla import dispatch

    x = onp.asarray(np.arange(40, dtype=np.float16) / 3)
    x[0]  # the program for this shape and dtype
    before = len(dispatch._eager_cache)
    values = [float(x[i]) for i in range(-40, 40, 3)]
    assert len(dispatch._eager_cache) == before
    ref = np.arange(40, dtype=np.float16) / 3
    assert values == [float(ref[i]) for i in range(-40, 40, 3)]
    m = np.arange(24.0).reshape(2, 3, 4)
    for index in [(1, slice(0, 2), -1), (-1, 2), (slice(1, 2), 0, slice(1, 3))]:
        agree(lambda ox, m: m[index], m)
        agree(lambda ox, m: ox.jit(lambda m: m[index])(m), m)


def test_interp_extrapolates_and_treats_tiny_steps_as_flat_as_jax():
    xp = np.array([0.0, 1.0, 1.0, 2.0, 4.0], np.float32)
    fp = np.array([0.0, 1.0, 3.0, 2.0, 0.0], np.float32)
    x = np.array([-1.0, 0.0, 0.5, 1.0, 1.5, 3.0, 5.0, np.nan], np.float32)
    for kwargs in (
        {},
        dict(left="extrapolate", right="extrapolate"),
        dict(left=-9.0, right=np.float32(9)),
        dict(period=3.0),
        dict(left="bad"),  # both refuse
    ):
        agree(lambda ox: ox.jnp.interp(x, xp, fp, **kwargs))
    agree(lambda ox: ox.jit(lambda x: ox.jnp.interp(x, xp, fp, right="extrapolate"))(x))  # fmt: skip
    agree(lambda ox: ox.vmap(lambda f: ox.jnp.interp(x, xp, f))(np.stack([fp, fp])))
