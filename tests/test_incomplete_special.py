"""lax.igamma, igammac, igamma_grad_a, random_gamma_grad, betainc, zeta,
bessel_i0e, bessel_i1e and the scipy.special / scipy.stats functions built
on them: float32 values against float64 references (the reference
interpreter's textbook loops, and closed forms), classical identities,
jit == eager == the reference interpreter, vmap == a loop, derivatives
against finite differences in float64, edge values and errors; scipy and
JAX as optional oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
import olympus.scipy.special as sp
from olympus import lax
from olympus.backends.reference import special as ref
from olympus.scipy import stats
from olympus.test_util import check_grads, reference_call
from olympus.tracer.errors import OlympusTypeError

_rng = np.random.default_rng(7)
# shapes over [0.01, 1e3] (log-uniform), x spread over [0, 1e3] and packed
# around the mean a, where the series and continued fraction meet
A = np.exp(_rng.uniform(math.log(0.01), math.log(1e3), 600)).astype(np.float32)
X = np.concatenate(
    [
        np.exp(_rng.uniform(math.log(1e-3), math.log(1e3), 300)),
        A[300:] * np.exp(_rng.normal(0, 0.2, 300)),
    ]
)
X = np.minimum(X, 1e3).astype(np.float32)
# shapes for betainc, and x spread over (0, 1) and packed around the mean
B = np.exp(_rng.uniform(math.log(0.1), math.log(1e3), 600)).astype(np.float32)
A_B = np.exp(_rng.uniform(math.log(0.1), math.log(1e3), 600)).astype(np.float32)
_mean = A_B / (A_B + B)
_sd = np.sqrt(_mean * (1 - _mean) / (A_B + B + 1))
U = np.concatenate(
    [
        _rng.uniform(0, 1, 300),
        np.clip(_mean[300:] + _rng.normal(0, 1, 300) * _sd[300:], 1e-6, 1 - 1e-6),
    ]
).astype(np.float32)


def _reference(fn, *args):
    return np.vectorize(fn, otypes=[np.float64])(*[a.astype(np.float64) for a in args])


def _relative_error(got, want, floor=1e-30):
    keep = np.abs(want) > floor
    return np.max(
        np.abs(np.asarray(got, np.float64)[keep] - want[keep]) / np.abs(want[keep])
    )


def test_igamma_and_igammac_are_accurate_in_float32():
    p, q = olympus.jit(lambda a, x: (lax.igamma(a, x), lax.igammac(a, x)))(A, X)
    assert p.dtype == q.dtype == np.float32
    want_p = _reference(lambda a, x: ref._igamma_pair(a, x)[0], A, X)
    want_q = _reference(lambda a, x: ref._igamma_pair(a, x)[1], A, X)
    assert _relative_error(p, want_p) < 2e-5
    # Q is 1 - P only where P < ~0.6, except at a < 1 (below: the measured bound)
    large = A >= 1
    assert _relative_error(np.asarray(q)[large], want_q[large]) < 2e-5
    assert _relative_error(q, want_q) < 1e-3
    np.testing.assert_allclose(np.asarray(p) + np.asarray(q), 1, atol=2e-6)


def test_igamma_identities():
    x = np.float32([0.0, 1e-4, 0.3, 1.0, 2.5, 9.0, 30.0, 88.0])
    np.testing.assert_allclose(
        lax.igamma(np.float32(1), x), -np.expm1(-x.astype(float)), rtol=1e-5
    )
    np.testing.assert_allclose(
        lax.igammac(np.float32(1), x), np.exp(-x.astype(float)), rtol=1e-5, atol=1e-38
    )
    erf = np.vectorize(math.erf)(np.sqrt(x.astype(float)))
    np.testing.assert_allclose(lax.igamma(np.float32(0.5), x), erf, rtol=1e-5)
    # P(a+1, x) = P(a, x) - x^a e^-x / Gamma(a+1)
    a = np.float32([0.3, 1.7, 4.0, 25.0, 300.0])
    x = np.float32([0.2, 2.0, 3.5, 27.0, 290.0])
    step = np.exp(a * np.log(x.astype(float)) - x - np.vectorize(math.lgamma)(a + 1.0))
    np.testing.assert_allclose(
        lax.igamma(a + 1, x), np.asarray(lax.igamma(a, x), np.float64) - step, rtol=3e-5
    )


def test_igamma_edges_and_domain():
    a = np.float32([0.0, 1.0, 1.0, 1.0, np.inf, 1.0, -1.0, np.nan, 0.5])
    x = np.float32([1.0, 0.0, -1.0, np.inf, 1.0, np.nan, 1.0, 1.0, 0.0])
    p = np.asarray(lax.igamma(a, x))
    np.testing.assert_array_equal(
        p, [1, 0, np.nan, 1, np.nan, np.nan, np.nan, np.nan, 0]
    )
    np.testing.assert_array_equal(lax.igammac(a, x), 1 - p)


def test_betainc_is_accurate_in_float32():
    got = olympus.jit(lax.betainc)(A_B, B, U)
    want = _reference(ref._betainc, A_B, B, U)
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(got, want, atol=1e-5)
    # relative where neither I nor 1 - I is tiny (their tails need more)
    middle = (want > 1e-3) & (want < 1 - 1e-3)
    assert _relative_error(np.asarray(got)[middle], want[middle]) < 3e-4


def test_betainc_identities_and_edges():
    a = np.float32([0.5, 2.0, 3.0, 40.0, 0.2])
    b = np.float32([0.5, 3.0, 1.0, 70.0, 5.0])
    x = np.float32([0.3, 0.5, 0.8, 0.4, 0.01])
    np.testing.assert_allclose(
        lax.betainc(a, b, x), 1 - np.asarray(lax.betainc(b, a, 1 - x)), atol=2e-6
    )
    np.testing.assert_allclose(
        lax.betainc(a, np.float32(1), x), x.astype(float) ** a, rtol=1e-5
    )
    arcsine = 2 / math.pi * np.arcsin(np.sqrt(x.astype(float)))
    np.testing.assert_allclose(
        lax.betainc(np.float32(0.5), np.float32(0.5), x), arcsine, rtol=1e-5
    )
    edges = lax.betainc(
        np.float32([1, 0, 1, 1, -1, 2, 2]),
        np.float32([1, 1, 0, 1, 1, 2, 2]),
        np.float32([0.5, 0.5, 0.5, 1.5, 0.5, 0, 1]),
    )
    np.testing.assert_allclose(edges, [0.5, 1, 0, np.nan, np.nan, 0, 1], atol=2e-6)


def test_gamma_sample_gradients():
    a, x = A[::6], X[::6]
    dx_da = np.asarray(lax.random_gamma_grad(a, x))
    dp_da = np.asarray(lax.igamma_grad_a(a, x))
    want = _reference(ref._igamma_grad_a, a, x)
    keep = np.abs(want) > 1e-6
    assert _relative_error(dp_da[keep], want[keep]) < 2e-4
    # dx/da = -(dP/da) / density
    density = np.exp(
        (a - 1.0) * np.log(x.astype(float)) - x - np.vectorize(math.lgamma)(a)
    )
    keep &= density > 1e-30
    np.testing.assert_allclose(dx_da[keep], -want[keep] / density[keep], rtol=2e-3)
    # olympus.random.gamma differentiates its samples by the same rule
    key = olympus.random.PRNGKey(0)
    shape = jnp.float32([0.4, 3.0, 50.0])
    samples = olympus.random.gamma(key, shape)
    grads = olympus.jacfwd(lambda s: olympus.random.gamma(key, s))(shape)
    np.testing.assert_allclose(
        np.diag(np.asarray(grads)), lax.random_gamma_grad(shape, samples), rtol=1e-5
    )


def test_zeta_and_bessel_values():
    s = np.float32([2.0, 3.0, 1.5, 4.0, 2.0, 6.0])
    q = np.float32([1.0, 2.0, 0.3, 10.0, -1.5, 0.7])
    np.testing.assert_allclose(lax.zeta(s, q), _reference(ref._zeta, s, q), rtol=1e-5)
    assert float(lax.zeta(np.float32(2), np.float32(1))) == pytest.approx(
        math.pi**2 / 6, rel=1e-6
    )
    assert np.isinf(float(lax.zeta(np.float32(1), np.float32(1))))
    assert np.isnan(float(lax.zeta(np.float32(0.5), np.float32(1))))
    x = np.float32(
        np.concatenate([-np.geomspace(1e-3, 700, 30), [0], np.geomspace(1e-3, 700, 30)])
    )
    for fn, order in ((lax.bessel_i0e, 0), (lax.bessel_i1e, 1)):
        want = _reference(ref._bessel_ie(order), x)
        np.testing.assert_allclose(fn(x), want, rtol=1e-5, atol=1e-12)


FUNCTIONS = {  # name -> (function, arguments)
    "igamma": (lax.igamma, (A[:8], X[:8])),
    "igammac": (lax.igammac, (A[300:308], X[300:308])),
    "igamma_grad_a": (lax.igamma_grad_a, (A[:8], X[:8])),
    "random_gamma_grad": (lax.random_gamma_grad, (A[300:308], X[300:308])),
    "betainc": (lax.betainc, (A_B[:8], B[:8], U[:8])),
    "zeta": (lax.zeta, (np.float32([2, 3, 4.5]), np.float32([0.5, 1, 7]))),
    "bessel_i0e": (lax.bessel_i0e, (np.float32([-30, -1, 0, 0.5, 14, 16, 90]),)),
    "bessel_i1e": (lax.bessel_i1e, (np.float32([-30, -1, 0, 0.5, 14, 16, 90]),)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jit_eager_reference_and_vmap_agree(name):
    fun, args = FUNCTIONS[name]
    jitted = np.asarray(olympus.jit(fun)(*args))
    eager = fun(*[olympus.device_put(a) for a in args])
    np.testing.assert_allclose(eager, jitted, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(reference_call(fun, *args), jitted, rtol=2e-4, atol=1e-7)
    looped = [np.asarray(fun(*[a[i] for a in args])) for i in range(len(args[0]))]
    np.testing.assert_allclose(olympus.vmap(fun)(*args), looped, rtol=1e-6, atol=1e-7)
    assert olympus.make_olympuspr(fun)(*args).olympuspr.eqns[0].primitive.name in (
        name,
        "regularized_incomplete_beta",
    )


@pytest.mark.parametrize(
    "fun, args",
    [
        (lambda a, x: lax.igamma(a, x), ([0.4, 3.0, 30.0], [0.7, 2.0, 40.0])),
        (lambda a, x: lax.igammac(a, x), ([0.4, 3.0, 30.0], [0.7, 5.0, 20.0])),
        (lambda x: lax.igamma_grad_a(np.float64(2.5), x), ([0.7, 2.0, 6.0],)),
        (lambda x: lax.random_gamma_grad(np.float64(2.5), x), ([0.7, 2.0, 6.0],)),
        (
            lambda x: lax.betainc(np.float64(2.5), np.float64(4.0), x),
            ([0.1, 0.4, 0.9],),
        ),
        (lambda q: lax.zeta(np.float64(3.0), q), ([0.5, 2.0, 7.0],)),
        (lax.bessel_i0e, ([-3.0, -0.2, 0.4, 20.0],)),
        (lax.bessel_i1e, ([-3.0, -0.2, 0.4, 20.0],)),
    ],
)
def test_derivatives_match_finite_differences(fun, args):
    with olympus.config.override("olympus_enable_x64", True):
        args = tuple(np.asarray(a, np.float64) for a in args)
        check_grads(fun, args, order=1, atol=1e-6, rtol=1e-5)


def test_bessel_i1e_derivative_at_zero():
    assert float(olympus.grad(lax.bessel_i1e)(0.0)) == pytest.approx(0.5)


def test_errors_name_the_function():
    with pytest.raises(OlympusTypeError, match="igamma.*floating-point.*i32"):
        lax.igamma(np.int32(1), np.int32(2))
    with pytest.raises(OlympusTypeError, match="betainc.*respect to a"):
        olympus.grad(lambda a: lax.betainc(a, 2.0, 0.5))(1.5)
    with pytest.raises(OlympusTypeError, match="zeta.*respect to x"):
        olympus.grad(lambda s: lax.zeta(s, 2.0))(3.0)
    with pytest.raises(OlympusTypeError, match="igamma_grad_a.*respect to a"):
        olympus.grad(lambda a: lax.igamma_grad_a(a, 2.0))(3.0)
    with pytest.raises(TypeError, match="q is required"):
        sp.zeta(2.0)


def test_scipy_special_wrappers():
    x = np.float32([-4.0, -0.5, 0.0, 1.0, 9.0])
    np.testing.assert_allclose(
        sp.i0(x), np.exp(np.abs(x)) * np.asarray(sp.i0e(x)), rtol=1e-6
    )
    np.testing.assert_allclose(
        sp.i1(x), np.exp(np.abs(x)) * np.asarray(sp.i1e(x)), rtol=1e-6
    )
    assert sp.gammainc(1, 2.0).dtype == np.float32  # integers promote
    np.testing.assert_allclose(sp.gammainc(1, 2.0), 1 - math.exp(-2), rtol=1e-5)
    np.testing.assert_allclose(sp.gammaincc(1, 2.0), math.exp(-2), rtol=1e-5)
    np.testing.assert_allclose(sp.betainc(2.0, 3.0, 0.5), 0.6875, rtol=1e-5)
    np.testing.assert_allclose(sp.zeta(2.0, 1.0), math.pi**2 / 6, rtol=1e-6)
    # gradients through the wrappers: d/dx P(a, x) is the gamma density
    slope = olympus.grad(lambda x: sp.gammainc(3.0, x))(2.0)
    np.testing.assert_allclose(slope, 2.0**2 * math.exp(-2) / 2, rtol=1e-5)


def test_stats_cdfs_against_closed_forms():
    x = np.float32([0.0, 0.5, 2.0, 7.0])
    np.testing.assert_allclose(
        stats.gamma.cdf(x, 1.0, 0.0, 2.0), -np.expm1(-x / 2.0), rtol=1e-5
    )
    np.testing.assert_allclose(
        stats.gamma.sf(x, 1.0, 0.0, 2.0), np.exp(-x / 2.0), rtol=1e-5
    )
    np.testing.assert_allclose(stats.gamma.logsf(x, 1.0), -x, rtol=1e-5, atol=1e-6)
    assert float(stats.gamma.cdf(-1.0, 2.0)) == 0.0
    np.testing.assert_allclose(stats.chi2.cdf(x, 2.0), -np.expm1(-x / 2.0), rtol=1e-5)
    np.testing.assert_allclose(
        stats.chi2.logpdf(x, 2.0), np.log(0.5) - x / 2, rtol=1e-5
    )
    np.testing.assert_allclose(
        stats.chi2.logcdf(x[1:], 2.0), np.log(-np.expm1(-x[1:] / 2.0)), rtol=1e-5
    )
    z = np.float32([0.0, 0.2, 0.5, 0.9, 1.0])
    np.testing.assert_allclose(stats.beta.cdf(z, 2.0, 1.0), z**2, rtol=1e-5)
    np.testing.assert_allclose(
        stats.beta.sf(z, 2.0, 1.0), 1 - z.astype(float) ** 2, atol=2e-6
    )
    t = np.float32([-3.0, -1.0, 0.0, 0.5, 4.0])
    np.testing.assert_allclose(
        stats.t.cdf(t, 1.0), 0.5 + np.arctan(t) / np.pi, rtol=1e-5
    )
    k = np.float32([-1.0, 0.0, 2.0, 2.5, 6.0])
    pmf = (
        np.exp(-3.0) * 3.0 ** np.arange(7) / np.vectorize(math.factorial)(np.arange(7))
    )
    want = [0.0, pmf[0], pmf[:3].sum(), pmf[:3].sum(), pmf.sum()]
    np.testing.assert_allclose(stats.poisson.cdf(k, 3.0), want, rtol=1e-5)


ORACLE = {  # name -> (olympus function, scipy/JAX name under scipy, arguments)
    "gammainc": (sp.gammainc, "special.gammainc", (A[:50], X[:50])),
    "gammaincc": (sp.gammaincc, "special.gammaincc", (A[300:350], X[300:350])),
    "betainc": (sp.betainc, "special.betainc", (A_B[:50], B[:50], U[:50])),
    "zeta": (sp.zeta, "special.zeta", (np.float32([2, 3.5]), np.float32([0.5, 4]))),
    "i0e": (sp.i0e, "special.i0e", (np.float32([-3, 0.1, 25]),)),
    "i1": (sp.i1, "special.i1", (np.float32([-3, 0.1, 25]),)),
    "gamma.logcdf": (stats.gamma.logcdf, "stats.gamma.logcdf", (X[:50], A[:50])),
    "beta.logsf": (stats.beta.logsf, "stats.beta.logsf", (U[:50], A_B[:50], B[:50])),
    "chi2.sf": (stats.chi2.sf, "stats.chi2.sf", (X[:50], A[:50])),
    "poisson.cdf": (
        stats.poisson.cdf,
        "stats.poisson.cdf",
        (np.float32([0, 3, 9]), 4.0),
    ),
}


def _lookup(module, name):
    for part in name.split("."):
        module = getattr(module, part)
    return module


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_values_match_scipy(name):
    pytest.importorskip("scipy.special")
    scipy = pytest.importorskip("scipy.stats") and __import__("scipy")

    fun, path, args = ORACLE[name]
    want = _lookup(scipy, path)(*[np.asarray(a, np.float64) for a in args])
    keep = np.asarray(want) > -80  # log-probabilities float32 can hold
    got = np.asarray(fun(*args))[keep]
    np.testing.assert_allclose(got, want[keep], rtol=1e-4, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_values_match_jax(name):
    pytest.importorskip("jax.scipy.special")
    jax = pytest.importorskip("jax.scipy.stats") and __import__("jax")

    fun, path, args = ORACLE[name]
    want = np.asarray(_lookup(jax.scipy, path)(*args), np.float64)
    got = np.asarray(fun(*args), np.float64)
    finite = np.isfinite(want) & (np.abs(want) > 1e-30)
    np.testing.assert_allclose(
        got[finite], want[finite], rtol=2e-3, atol=1e-6, err_msg=name
    )
