"""olympus.scipy (special, stats.norm) and the special-function primitives
under it (lax.erfc, erf_inv, lgamma, digamma, polygamma): values against
Python's `math` and classical identities in float64, jit == eager == the
NumPy reference interpreter, vmap == a loop, derivatives against finite
differences, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
import olympus.scipy.special as sp
from olympus.scipy import stats
from olympus.scipy.stats import norm
from olympus import lax
from olympus.test_util import check_grads, reference_call
from olympus.tracer.errors import OlympusTypeError

X = np.array([-2.5, -0.3, 0.2, 0.5, 1.0, 2.0, 3.7, 12.0, 40.0], np.float32)
POSITIVE = np.array([0.2, 0.5, 1.0, 1.5, 3.7, 9.0, 12.0, 40.0], np.float32)
UNIT = np.array([-0.999, -0.5, -0.1, 0.0, 0.3, 0.9, 0.99], np.float32)


def _math(fn, x):
    return np.array([fn(float(v)) for v in np.ravel(x)]).reshape(np.shape(x))


def test_values_against_math():
    np.testing.assert_allclose(
        sp.gammaln(X), _math(math.lgamma, X), rtol=2e-6, atol=1e-6
    )
    np.testing.assert_allclose(sp.gamma(X[:-1]), _math(math.gamma, X[:-1]), rtol=2e-5)
    assert float(sp.gamma(40.0)) == np.inf  # beyond float32, as in JAX
    np.testing.assert_allclose(sp.erfc(X), _math(math.erfc, X), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(sp.erf(X), _math(math.erf, X), rtol=2e-6, atol=1e-7)
    erf_of_inverse = _math(math.erf, np.asarray(sp.erfinv(UNIT), np.float64))
    np.testing.assert_allclose(erf_of_inverse, UNIT, rtol=1e-6, atol=1e-6)
    beta = _math(
        lambda a: math.lgamma(a) + math.lgamma(3.0) - math.lgamma(a + 3.0), POSITIVE
    )
    np.testing.assert_allclose(sp.betaln(POSITIVE, 3.0), beta, rtol=2e-5, atol=2e-6)
    # one large argument: no cancellation of two large gammaln values
    a = np.array([0.5, 1.0, 2.5, 7.0, 30.0], np.float32)
    for b in (8.0, 12.0, 1e3, 1e6):
        want = _math(lambda v: math.lgamma(v) + math.lgamma(b) - math.lgamma(v + b), a)
        np.testing.assert_allclose(sp.betaln(a, b), want, rtol=2e-6, atol=1e-6)
        np.testing.assert_allclose(sp.betaln(b, a), want, rtol=2e-6, atol=1e-6)


def test_digamma_and_polygamma_identities():
    x = POSITIVE.astype(np.float64)
    # psi(1) = -Euler's gamma; psi(x + 1) - psi(x) = 1/x; psi'(1) = pi^2/6
    np.testing.assert_allclose(sp.digamma(1.0), -0.5772156649015329, rtol=1e-6)
    step = np.asarray(sp.digamma(POSITIVE + 1)) - np.asarray(sp.digamma(POSITIVE))
    np.testing.assert_allclose(step, 1 / x, rtol=2e-5)
    np.testing.assert_allclose(sp.polygamma(1, 1.0), np.pi**2 / 6, rtol=1e-6)
    # psi^(n)(x + 1) - psi^(n)(x) = (-1)^n n! / x^(n+1)
    for n in (1, 2, 3):
        step = np.asarray(sp.polygamma(n, POSITIVE + 1)) - np.asarray(
            sp.polygamma(n, POSITIVE)
        )
        want = (-1) ** n * math.factorial(n) / x ** (n + 1)
        np.testing.assert_allclose(step, want, rtol=5e-4)
    np.testing.assert_allclose(
        sp.polygamma(0, POSITIVE), sp.digamma(POSITIVE), rtol=1e-6
    )


def test_normal_distribution_functions_and_logistic():
    np.testing.assert_allclose(
        sp.ndtr(X),
        _math(lambda v: 0.5 * math.erfc(-v / math.sqrt(2)), X),
        rtol=2e-6,
        atol=1e-7,
    )
    p = np.array([0.01, 0.2, 0.5, 0.8413447, 0.99], np.float32)
    np.testing.assert_allclose(sp.ndtr(sp.ndtri(p)), p, rtol=2e-5)
    np.testing.assert_allclose(
        sp.expit(X), 1 / (1 + np.exp(-X.astype(np.float64))), rtol=2e-6
    )
    np.testing.assert_allclose(sp.logit(sp.expit(X[:6])), X[:6], rtol=1e-4, atol=1e-5)
    assert sp.logsumexp is olympus.nn.logsumexp


def test_xlogy_is_zero_where_x_is_zero_and_differentiable_there():
    assert float(sp.xlogy(0.0, 0.0)) == 0.0 and float(sp.xlog1py(0.0, -1.0)) == 0.0
    np.testing.assert_allclose(sp.xlogy(2.0, 3.0), 2 * np.log(3.0), rtol=1e-6)
    np.testing.assert_allclose(sp.xlog1py(2.0, 3.0), 2 * np.log1p(3.0), rtol=1e-6)
    # d/dx x log y = log y, also at x = 0; d/dy = x / y
    np.testing.assert_allclose(olympus.grad(sp.xlogy)(0.0, 2.0), np.log(2.0), rtol=1e-6)
    np.testing.assert_allclose(olympus.grad(sp.xlogy, 1)(3.0, 2.0), 1.5, rtol=1e-6)
    assert float(olympus.grad(sp.xlogy, 1)(0.0, 2.0)) == 0.0


def _log_ndtr_64(x: float) -> float:
    """log(ndtr(x)) in float64: from erfc where that is representable, else
    from the asymptotic series to more terms than olympus uses."""
    if x > -30:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2)))
    z, term, total = 1 / (x * x), 1.0, 1.0
    for k in range(1, 12):
        term *= -(2 * k - 1) * z
        total += term
    return -0.5 * x * x - math.log(-x) - 0.5 * math.log(2 * math.pi) + math.log(total)


def test_log_ndtr_across_its_branches():
    x = np.array([-60, -40, -20, -6, -5.01, -4.99, -1, 0, 1, 4, 9], np.float32)
    want = _math(_log_ndtr_64, x)
    np.testing.assert_allclose(sp.log_ndtr(x), want, rtol=2e-5, atol=1e-7)
    slope = olympus.vmap(olympus.grad(sp.log_ndtr))(x)
    assert np.all(np.isfinite(slope)) and np.all(np.asarray(slope) > 0)
    # d/dx log ndtr(x) -> -x far in the lower tail (Mills' ratio)
    np.testing.assert_allclose(slope[:2], [60.0166, 40.02497], rtol=1e-4)


def test_normal_distribution():
    x = np.array([-3.0, -0.5, 0.0, 1.0, 2.5], np.float32)
    loc, scale = 0.5, 2.0
    z = (x.astype(np.float64) - loc) / scale
    logpdf = -0.5 * z * z - 0.5 * np.log(2 * np.pi) - np.log(scale)
    np.testing.assert_allclose(norm.logpdf(x, loc, scale), logpdf, rtol=1e-6)
    np.testing.assert_allclose(norm.pdf(x, loc, scale), np.exp(logpdf), rtol=1e-6)
    cdf = _math(lambda v: 0.5 * math.erfc(-v / math.sqrt(2)), z)
    np.testing.assert_allclose(norm.cdf(x, loc, scale), cdf, rtol=2e-6)
    np.testing.assert_allclose(norm.sf(x, loc, scale), 1 - cdf, rtol=2e-6)
    np.testing.assert_allclose(norm.logcdf(x, loc, scale), np.log(cdf), rtol=2e-6)
    np.testing.assert_allclose(norm.logsf(x, loc, scale), np.log1p(-cdf), rtol=2e-6)
    q = np.array([0.025, 0.5, 0.9], np.float32)
    np.testing.assert_allclose(
        norm.cdf(norm.ppf(q, loc, scale), loc, scale), q, rtol=1e-5
    )
    np.testing.assert_allclose(
        norm.sf(norm.isf(q, loc, scale), loc, scale), q, rtol=1e-5
    )
    # the gradient of a log-likelihood in loc and scale, against the formula
    data = x.astype(np.float64)
    g_loc, g_scale = olympus.grad(
        lambda m, s: jnp.sum(norm.logpdf(jnp.asarray(x), m, s)), (0, 1)
    )(loc, scale)
    np.testing.assert_allclose(g_loc, np.sum(data - loc) / scale**2, rtol=1e-5)
    np.testing.assert_allclose(
        g_scale, np.sum((data - loc) ** 2) / scale**3 - len(x) / scale, rtol=1e-5
    )


_lgamma = np.vectorize(math.lgamma)
_S = np.array([0.3, 1.0, 2.5, 4.0], np.float32)  # inside every support below
_K = np.array([0.0, 1.0, 3.0, 7.0], np.float32)  # counts
_Z = np.array([0.1, 0.4, 0.75, 0.95], np.float32)  # in (0, 1)

# name -> (olympus function, float64 NumPy formula, arguments)
DISTRIBUTIONS = {
    "expon.logpdf": (
        stats.expon.logpdf,
        lambda x, m, s: -(x - m) / s - np.log(s),
        (_S, 0.1, 1.5),
    ),
    "expon.cdf": (
        stats.expon.cdf,
        lambda x, m, s: 1 - np.exp(-(x - m) / s),
        (_S, 0.1, 1.5),
    ),
    "uniform.logpdf": (
        stats.uniform.logpdf,
        lambda x, a, b: np.where((x >= a) & (x <= a + b), -np.log(b), -np.inf),
        (_S, 0.5, 3.0),
    ),
    "laplace.logpdf": (
        stats.laplace.logpdf,
        lambda x, m: -np.abs(x - m) - np.log(2),
        (_S, 1.2),
    ),
    "laplace.cdf": (
        stats.laplace.cdf,
        lambda x, m: np.where(x < m, 0.5 * np.exp(x - m), 1 - 0.5 * np.exp(-(x - m))),
        (_S, 1.2),
    ),
    "logistic.logpdf": (
        stats.logistic.logpdf,
        lambda x: -x - 2 * np.log1p(np.exp(-x)),
        (X,),
    ),
    "logistic.ppf": (stats.logistic.ppf, lambda q: np.log(q / (1 - q)), (_Z,)),
    "cauchy.logpdf": (
        stats.cauchy.logpdf,
        lambda x, m, s: -np.log(np.pi * s * (1 + ((x - m) / s) ** 2)),
        (X, 0.5, 2.0),
    ),
    "cauchy.cdf": (
        stats.cauchy.cdf,
        lambda x: 0.5 + np.arctan(x) / np.pi,
        (X,),
    ),
    "gamma.logpdf": (
        stats.gamma.logpdf,
        lambda x, a, m, s: (
            (a - 1) * np.log((x - m) / s) - (x - m) / s - _lgamma(a) - np.log(s)
        ),
        (_S, 2.5, 0.1, 1.5),
    ),
    "beta.logpdf": (
        stats.beta.logpdf,
        lambda x, a, b: (
            (a - 1) * np.log(x)
            + (b - 1) * np.log1p(-x)
            - (_lgamma(a) + _lgamma(b) - _lgamma(a + b))
        ),
        (_Z, 2.0, 3.5),
    ),
    "t.logpdf": (
        stats.t.logpdf,
        lambda x, df: (
            _lgamma((df + 1) / 2)
            - _lgamma(df / 2)
            - 0.5 * np.log(df * np.pi)
            - (df + 1) / 2 * np.log1p(x * x / df)
        ),
        (X, 3.0),
    ),
    "poisson.logpmf": (
        stats.poisson.logpmf,
        lambda k, mu: k * np.log(mu) - _lgamma(k + 1) - mu,
        (_K, 2.5),
    ),
    "bernoulli.logpmf": (
        stats.bernoulli.logpmf,
        lambda k, p: np.where(k == 1, np.log(p), np.log1p(-p)),
        (np.float32([0, 1, 1, 0]), 0.3),
    ),
}


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_distributions_against_their_formulas(name):
    fun, formula, args = DISTRIBUTIONS[name]
    want = formula(*[np.asarray(a, np.float64) for a in args])
    got = fun(*args)
    np.testing.assert_allclose(got, want, rtol=3e-6, atol=2e-6, err_msg=name)
    assert np.asarray(got).dtype == np.float32


def test_distributions_outside_their_support():
    assert float(stats.expon.logpdf(-1.0)) == -np.inf
    assert float(stats.gamma.logpdf(-1.0, 2.0)) == -np.inf
    assert float(stats.beta.logpdf(1.5, 2.0, 2.0)) == -np.inf
    assert float(stats.poisson.logpmf(2.5, 1.0)) == -np.inf
    assert float(stats.bernoulli.logpmf(2.0, 0.5)) == -np.inf
    assert float(stats.uniform.cdf(5.0, 0.0, 2.0)) == 1.0
    # a log-likelihood's gradient, finite where the data sit at the support's edge
    rate = olympus.grad(lambda mu: jnp.sum(stats.poisson.logpmf(_K, mu)))(2.5)
    np.testing.assert_allclose(rate, np.sum(_K) / 2.5 - len(_K), rtol=1e-6)


FUNCTIONS = {
    "gammaln": (sp.gammaln, (X,)),
    "digamma": (sp.digamma, (X,)),
    "polygamma": (lambda x: sp.polygamma(2, x), (POSITIVE,)),
    "erfc": (sp.erfc, (X,)),
    "erfinv": (sp.erfinv, (UNIT,)),
    "ndtri": (sp.ndtri, (np.float32([0.01, 0.3, 0.5, 0.97]),)),
    "betaln": (sp.betaln, (POSITIVE, POSITIVE[::-1])),
    "xlogy": (
        sp.xlogy,
        (X, POSITIVE[: len(X)] if len(POSITIVE) >= len(X) else np.abs(X) + 0.5),
    ),
    "xlog1py": (sp.xlog1py, (X, np.abs(X))),
    "log_ndtr": (sp.log_ndtr, (X * 10,)),
    "norm.logcdf": (lambda x: norm.logcdf(x, 1.0, 2.0), (X * 10,)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jit_eager_and_reference_agree(name):
    fun, args = FUNCTIONS[name]
    eager = fun(*[olympus.device_put(a) for a in args])
    jitted = olympus.jit(fun)(*args)
    reference = reference_call(fun, *args)
    np.testing.assert_allclose(jitted, eager, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(jitted, reference, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vmap_matches_a_loop(name):
    fun, args = FUNCTIONS[name]
    looped = np.stack(
        [np.asarray(fun(*[a[i] for a in args])) for i in range(len(args[0]))]
    )
    np.testing.assert_allclose(olympus.vmap(fun)(*args), looped, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "fun, x",
    [
        (lax.lgamma, POSITIVE),
        (lax.digamma, POSITIVE),
        (lambda x: lax.polygamma(jnp.ones_like(x), x), POSITIVE),
        (lax.erfc, X),
        (lax.erf_inv, UNIT[1:-1]),
        (lambda x: sp.xlogy(x, x * x + 1), X),
    ],
)
def test_derivatives_match_finite_differences(fun, x):
    with olympus.config.override("olympus_enable_x64", True):
        check_grads(fun, (x.astype(np.float64),), order=2, atol=1e-5, rtol=1e-5)


def test_errors_name_the_primitive():
    with pytest.raises(OlympusTypeError, match="lgamma.*floating-point"):
        lax.lgamma(np.int32(3))
    with pytest.raises(OlympusTypeError, match="polygamma.*order m"):
        olympus.grad(lambda m: lax.polygamma(m, np.float32(2.0)))(np.float32(1.0))
    assert np.isnan(float(sp.erfinv(1.5))) and float(sp.erfinv(1.0)) == np.inf
    assert jnp.isinf(sp.gammaln(0.0))


ORACLE = {  # name -> (olympus function, its JAX name, arguments)
    "gammaln": (sp.gammaln, "special.gammaln", (X,)),
    "gamma": (sp.gamma, "special.gamma", (X[:-1],)),
    "betaln": (sp.betaln, "special.betaln", (POSITIVE, POSITIVE[::-1])),
    "digamma": (sp.digamma, "special.digamma", (X,)),
    "polygamma": (lambda x: sp.polygamma(2, x), None, (POSITIVE,)),
    "erfc": (sp.erfc, "special.erfc", (X,)),
    "erfinv": (sp.erfinv, "special.erfinv", (UNIT,)),
    "ndtr": (sp.ndtr, "special.ndtr", (X,)),
    "ndtri": (sp.ndtri, "special.ndtri", (np.float32([0.01, 0.3, 0.5, 0.97]),)),
    "log_ndtr": (sp.log_ndtr, "special.log_ndtr", (X * 10,)),
    "xlogy": (sp.xlogy, "special.xlogy", (X, np.abs(X) + 0.5)),
    "xlog1py": (sp.xlog1py, "special.xlog1py", (X, np.abs(X))),
    "norm.logpdf": (norm.logpdf, "stats.norm.logpdf", (X, 0.5, 2.0)),
    "norm.logcdf": (norm.logcdf, "stats.norm.logcdf", (X * 10, 0.5, 2.0)),
    "norm.ppf": (norm.ppf, "stats.norm.ppf", (UNIT * 0.5 + 0.5, 0.5, 2.0)),
    **{
        name: (fun, "stats." + name, args)
        for name, (fun, _, args) in DISTRIBUTIONS.items()
    },
}


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_values_and_gradients_match_jax(name):
    """Optional oracle: jax.scipy's function of the same name, its value and
    the gradient of its sum with respect to the first argument."""
    jax = pytest.importorskip("jax")
    fun, jax_name, args = ORACLE[name]
    if jax_name is None:
        jax_fun = lambda x: jax.scipy.special.polygamma(2, x)  # noqa: E731
    else:
        jax_fun = jax.scipy
        for part in jax_name.split("."):
            jax_fun = getattr(jax_fun, part)
    got, want = fun(*args), jax_fun(*args)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, err_msg=name)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    grad = olympus.grad(lambda x, *rest: jnp.sum(fun(x, *rest)))(*args)
    jax_grad = jax.grad(lambda x, *rest: jax.numpy.sum(jax_fun(x, *rest)))(*args)
    np.testing.assert_allclose(grad, jax_grad, rtol=2e-5, atol=1e-5, err_msg=name)


# ---- scipy.linalg and multivariate_normal -------------------------------------------
_RNG = np.random.default_rng(7)
_M = _RNG.normal(size=(4, 4)).astype(np.float32)
_SPD = (_M @ _M.T + 4 * np.eye(4)).astype(np.float32)
_TRI = (np.tril(_M) + 3 * np.eye(4)).astype(np.float32)
_B = _RNG.normal(size=(4, 3)).astype(np.float32)
_V = _B[:, 0]


def _solve64(a, b):
    return np.linalg.solve(np.asarray(a, np.float64), np.asarray(b, np.float64))


@pytest.mark.parametrize("rhs", [_V, _B], ids=["vector", "matrix"])
def test_linalg_solvers_against_numpy(rhs):
    from olympus.scipy import linalg as sl

    close = dict(rtol=1e-5, atol=1e-5)
    for lower in (False, True):
        factor = sl.cho_factor(_SPD, lower=lower)
        np.testing.assert_allclose(
            sl.cho_solve(factor, rhs), _solve64(_SPD, rhs), **close
        )
    np.testing.assert_allclose(
        sl.solve(_SPD, rhs, assume_a="pos"), _solve64(_SPD, rhs), **close
    )
    np.testing.assert_allclose(sl.solve(_M, rhs), _solve64(_M, rhs), **close)
    for trans, op in [(0, _M), ("T", _M.T), (2, _M.T)]:
        got = sl.lu_solve(sl.lu_factor(_M), rhs, trans=trans)
        np.testing.assert_allclose(got, _solve64(op, rhs), **close)
    for trans, op in [("N", _TRI), (1, _TRI.T)]:
        got = sl.solve_triangular(_TRI, rhs, trans=trans, lower=True)
        np.testing.assert_allclose(got, _solve64(op, rhs), **close)
    upper = _TRI.T + np.tril(np.ones((4, 4), np.float32), -1)  # junk below: unread
    np.testing.assert_allclose(
        sl.solve_triangular(upper, rhs), _solve64(np.triu(upper), rhs), **close
    )


def test_linalg_factors_batches_and_gradients():
    from olympus.scipy import linalg as sl

    u = np.asarray(sl.cholesky(_SPD))
    assert np.allclose(np.tril(u, -1), 0) and np.allclose(u.T @ u, _SPD, atol=1e-4)
    lower = np.asarray(sl.cholesky(_SPD, lower=True))
    np.testing.assert_allclose(lower, u.T, rtol=1e-6, atol=1e-6)
    lu, piv = sl.lu_factor(_M)
    perm = np.arange(4)
    for i, p in enumerate(np.asarray(piv)):  # LAPACK's swaps, in order
        perm[[i, p]] = perm[[p, i]]
    l_factor = np.tril(np.asarray(lu), -1) + np.eye(4)
    np.testing.assert_allclose(l_factor @ np.triu(np.asarray(lu)), _M[perm], atol=1e-5)
    batch = np.stack([_SPD, 2 * _SPD])
    batched = olympus.vmap(lambda a: sl.cho_solve(sl.cho_factor(a), _V))(batch)
    np.testing.assert_allclose(batched[1], _solve64(2 * _SPD, _V), rtol=1e-5, atol=1e-6)
    with olympus.config.override("olympus_enable_x64", True):
        check_grads(
            lambda a: sl.solve(
                a @ a.T + 4 * jnp.eye(4), _V.astype(np.float64), assume_a="pos"
            ),
            (_M.astype(np.float64),),
            order=1,
            atol=1e-6,
            rtol=1e-6,
        )
    blocks = sl.block_diag(np.ones((2, 2)), 3.0, np.arange(2.0))
    want = np.zeros((4, 5))
    want[:2, :2], want[2, 2], want[3, 3:] = 1.0, 3.0, [0.0, 1.0]
    np.testing.assert_array_equal(blocks, want)
    with pytest.raises(ValueError, match="solve_triangular: trans"):
        sl.solve_triangular(_TRI, _V, trans="X")


def test_multivariate_normal_against_its_formula():
    mvn = stats.multivariate_normal
    mean = _RNG.normal(size=4).astype(np.float32)
    x = _RNG.normal(size=(5, 4)).astype(np.float32)
    d = x.astype(np.float64) - mean
    cov = _SPD.astype(np.float64)
    quadratic = np.einsum("ij,jk,ik->i", d, np.linalg.inv(cov), d)
    want = -0.5 * (quadratic + np.log(np.linalg.det(cov)) + 4 * np.log(2 * np.pi))
    np.testing.assert_allclose(mvn.logpdf(x, mean, _SPD), want, rtol=1e-5)
    np.testing.assert_allclose(mvn.logpdf(x[2], mean, _SPD), want[2], rtol=1e-5)
    np.testing.assert_allclose(mvn.pdf(x, mean, _SPD), np.exp(want), rtol=1e-5)
    # d/dmean sum log N(x_i; mean, cov) = cov^-1 sum (x_i - mean)
    grad = olympus.grad(lambda m: jnp.sum(mvn.logpdf(x, m, _SPD)))(mean)
    np.testing.assert_allclose(grad, _solve64(cov, d.sum(0)), rtol=1e-4, atol=1e-5)


LINALG_ORACLE = {
    "cho_solve": lambda sl: sl.cho_solve(sl.cho_factor(_SPD), _B),
    "lu_solve T": lambda sl: sl.lu_solve(sl.lu_factor(_M), _V, trans=1),
    "solve pos": lambda sl: sl.solve(_SPD, _B, assume_a="pos"),
    "solve_triangular": lambda sl: sl.solve_triangular(_TRI, _B, lower=True),
    "cholesky": lambda sl: sl.cholesky(_SPD),
    "block_diag": lambda sl: sl.block_diag(_M[:2, :3], _V),
}


@pytest.mark.parametrize("name", sorted(LINALG_ORACLE))
def test_linalg_matches_jax(name):
    """Optional oracle: jax.scipy.linalg on the same inputs."""
    jax = pytest.importorskip("jax")
    from olympus.scipy import linalg as sl

    got, want = LINALG_ORACLE[name](sl), LINALG_ORACLE[name](jax.scipy.linalg)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=name)
    mean = _V
    x = _B.T
    np.testing.assert_allclose(
        stats.multivariate_normal.logpdf(x, mean, _SPD),
        jax.scipy.stats.multivariate_normal.logpdf(x, mean, _SPD),
        rtol=1e-5,
    )
