"""olympus.random's further laws (poisson, binomial, geometric, pareto,
weibull_min, loggamma, ball, orthogonal, generalized_normal, triangular, wald,
maxwell): each against its law with fixed seeds (moments within 5 standard
errors of the sample size, and a chi-squared test against the exact pmf or a
Kolmogorov-Smirnov test against the exact cdf, both computed in NumPy), plus
support, shape and dtype, jit == eager, vmap over keys == a loop, and clear
errors for bad arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest

import olympus
from olympus import random

N = 20_000
KS_CRITICAL = 1.95 / math.sqrt(N)  # the KS statistic's 0.1% quantile
_erf = np.vectorize(math.erf)


def ks_statistic(samples, cdf) -> float:
    """sup |F_n(x) - F(x)|."""
    x = np.sort(np.asarray(samples, np.float64))
    f = cdf(x)
    n = len(x)
    return float(max((np.arange(1, n + 1) / n - f).max(), (f - np.arange(n) / n).max()))


def normal_cdf(x):
    return 0.5 * (1 + _erf(np.asarray(x) / math.sqrt(2)))


def assert_mean_var(x, mean: float, var: float, fourth_central: float) -> None:
    """Sample mean and variance within 5 standard errors: sqrt(var / n) for the
    mean, sqrt((mu4 - var^2) / n) for the variance."""
    x = np.asarray(x, np.float64)
    n = x.size
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n), (x.mean(), mean)
    assert abs(x.var() - var) < 5 * math.sqrt((fourth_central - var**2) / n), (
        x.var(),
        var,
    )


def assert_pmf(samples, pmf: dict[int, float]) -> None:
    """Pearson's chi-squared against the exact pmf, cells with fewer than 5
    expected counts pooled into one; the statistic must stay below
    df + 5 sqrt(2 df) (about 5 standard deviations of its law)."""
    samples = np.asarray(samples).ravel()
    n = samples.size
    cells = sorted(k for k, p in pmf.items() if n * p >= 5)
    observed = np.array([np.sum(samples == k) for k in cells], np.float64)
    expected = np.array([n * pmf[k] for k in cells])
    rest_obs, rest_exp = n - observed.sum(), n - expected.sum()
    stat = float(np.sum((observed - expected) ** 2 / expected))
    if rest_exp >= 1:
        stat += (rest_obs - rest_exp) ** 2 / rest_exp
    else:
        assert rest_obs <= 5, f"{rest_obs} samples where the pmf puts {rest_exp}"
    df = len(cells)
    assert stat < df + 5 * math.sqrt(2 * df), (stat, df)


def poisson_pmf(lam: float, upto: int) -> dict[int, float]:
    return {
        k: math.exp(k * math.log(lam) - lam - math.lgamma(k + 1)) for k in range(upto)
    }


def binomial_pmf(n: int, p: float) -> dict[int, float]:
    return {k: math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)}


def check_keys_jit_vmap(
    sample, integer: bool = False, jit: bool = True, jit_of_vmap: bool = False
) -> None:
    """The same key gives the same numbers; jit gives eager's; vmap over split
    keys gives the loop over them. `sample` returns an array or a tuple;
    `jit=False` skips the jit check (one sampler alone: its public function
    is a compiled program already); `jit_of_vmap=True` checks both at once
    through jit(vmap(sample)), whose row 0 must be eager's (one compile of the
    batched program instead of a jit and a vmap of every sampler)."""

    def as_tuple(out):
        return tuple(np.asarray(o) for o in (out if isinstance(out, tuple) else (out,)))

    keys = random.split(random.key(99), 3)
    loop = [as_tuple(sample(keys[i])) for i in range(3)]
    again = as_tuple(sample(keys[0]))
    if jit_of_vmap:
        mapped = as_tuple(olympus.jit(olympus.vmap(sample))(keys))
        jitted = tuple(m[0] for m in mapped)
    else:
        jitted = as_tuple(olympus.jit(sample)(keys[0])) if jit else loop[0]
        mapped = as_tuple(olympus.vmap(sample)(keys))
    for j, first in enumerate(loop[0]):
        stacked = np.stack([out[j] for out in loop])
        np.testing.assert_array_equal(again[j], first)
        assert not np.array_equal(first, loop[1][j])
        if integer:
            np.testing.assert_array_equal(jitted[j], first)
            np.testing.assert_array_equal(mapped[j], stacked)
        else:
            np.testing.assert_allclose(jitted[j], first, rtol=2e-6, atol=1e-6)
            np.testing.assert_allclose(mapped[j], stacked, rtol=2e-6, atol=1e-6)


def _x64(fn):
    with olympus.enable_x64():
        return fn()


# ---- poisson -------------------------------------------------------------------------
@pytest.mark.parametrize("lam", [0.5, 4.0, 30.0, 1e4])
def test_poisson_moments(lam):
    """Knuth's branch (lam < 10) and PTRS (lam >= 10): mean = variance = lam,
    fourth central moment lam (1 + 3 lam)."""
    x = np.asarray(random.poisson(random.key(1), lam, (N,)))
    assert x.dtype == np.int32 and x.min() >= 0
    assert_mean_var(x, lam, lam, lam * (1 + 3 * lam))


@pytest.mark.parametrize("lam", [0.5, 7.5, 30.0])
def test_poisson_pmf(lam):
    assert_pmf(random.poisson(random.key(2), lam, (N,)), poisson_pmf(lam, 120))


def test_poisson_large_lam_is_normal_in_shape():
    """At lam = 1e4 the law is N(lam, lam) to O(1/sqrt(lam)) in the cdf."""
    lam = 1e4
    x = np.asarray(random.poisson(random.key(3), lam, (N,)))
    stat = ks_statistic(x, lambda k: normal_cdf((k + 0.5 - lam) / math.sqrt(lam)))
    assert stat < KS_CRITICAL + 0.01


POISSON_LAMS = np.broadcast_to(
    np.float32([0.0, -1.0, np.nan, np.inf, 3.0, 50.0, 0.3, 400.0]), (500, 8)
)


def test_poisson_edges_and_default_shape():
    """lam = 0 gives 0, negative or nan lam gives -1, infinite lam JAX's
    rejection loop's inf (the int maximum) or nan (0); the shape defaults to lam's."""
    x = np.asarray(random.poisson(random.key(4), POISSON_LAMS))
    assert x.shape == (500, 8)
    assert np.all(x[:, 0] == 0) and np.all(x[:, 1:3] == -1)
    assert np.all((x[:, 3] == np.iinfo(np.int32).max) | (x[:, 3] == 0))
    assert x[:, 4].min() >= 0 and abs(x[:, 5].mean() - 50) < 5 * np.sqrt(50 / 500)


def test_poisson_keys_jit_vmap():
    check_keys_jit_vmap(
        lambda k: random.poisson(k, POISSON_LAMS), integer=True, jit=False
    )


def test_poisson_in_x64():
    def draw():
        return np.asarray(random.poisson(random.key(5), 12.0, (N,)))

    x = _x64(draw)
    assert x.dtype == np.int64
    assert_mean_var(x, 12.0, 12.0, 12.0 * 37)


# ---- binomial ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "n, p",
    [(5, 0.3), (50, 0.9), (100, 0.4), (1_000_000, 0.3)],
    ids=["small", "flipped", "btrs", "huge"],
)
def test_binomial_moments(n, p):
    """Waiting times (n min(p, 1-p) < 10) and BTRS; variance npq, fourth
    central moment npq (1 + 3 (n - 2) pq)."""
    x = np.asarray(random.binomial(random.key(6), n, p, (N,)))
    assert x.dtype == np.float32
    assert x.min() >= 0 and x.max() <= n and np.all(x == np.floor(x))
    q = 1 - p
    assert_mean_var(x, n * p, n * p * q, n * p * q * (1 + 3 * (n - 2) * p * q))


@pytest.mark.parametrize("n, p", [(10, 0.7), (100, 0.4), (40, 0.5)])
def test_binomial_pmf(n, p):
    assert_pmf(random.binomial(random.key(7), n, p, (N,)), binomial_pmf(n, p))


BINOMIAL_N = np.float32([0, 5, 5, 5, -1, 5.5, 5, np.nan, 3, 40, 500])
BINOMIAL_P = np.float32([0.5, 0.0, 1.0, 0.5, 0.5, 0.5, 1.5, 0.5, 0.5, 0.2, 0.9])


def test_binomial_edges():
    x = np.asarray(random.binomial(random.key(8), BINOMIAL_N, BINOMIAL_P))
    np.testing.assert_array_equal(x[:3], [0, 0, 5])
    # JAX's rules: n < 0, nan n and p outside [0, 1] give nan; n = 5.5 counts as 5
    assert 0 <= x[3] <= 5 and 0 <= x[5] <= 5 and np.all(np.isnan(x[[4, 6, 7]]))
    assert np.all((x[8:] >= 0) & (x[8:] <= BINOMIAL_N[8:]))


def test_binomial_keys_jit_vmap():
    """The edge cases' arguments: the unbatched program is test_binomial_edges'."""
    check_keys_jit_vmap(
        lambda k: random.binomial(k, BINOMIAL_N, BINOMIAL_P),
        integer=True,
        jit=False,
    )


# ---- geometric, pareto, weibull_min -------------------------------------------------
@pytest.mark.parametrize("p", [0.05, 0.5, 0.9])
def test_geometric_law(p):
    x = np.asarray(random.geometric(random.key(9), p, (N,)))
    assert x.dtype == np.int32 and x.min() >= 1
    q = 1 - p
    var = q / p**2
    assert_mean_var(x, 1 / p, var, var * (9 * q + p**2) / p**2)
    assert_pmf(x, {k: p * q ** (k - 1) for k in range(1, 2000)})


def test_geometric_edges():
    """JAX's values: p = 0 saturates; p outside [0, 1] is not checked (as JAX)."""
    x = np.asarray(random.geometric(random.key(9), np.float32([1.0, 0.0, -0.5, 2.0])))
    np.testing.assert_array_equal(x, [1, np.iinfo(np.int32).max, -2, 0])


@pytest.mark.parametrize("b", [0.5, 3.0])
def test_pareto_cdf(b):
    x = np.asarray(random.pareto(random.key(10), b, (N,)))
    assert x.dtype == np.float32 and x.min() >= 1
    assert ks_statistic(x, lambda t: 1 - t ** (-b)) < KS_CRITICAL


def test_weibull_min_cdf_and_shape():
    scale, c = 2.0, 1.5
    x = np.asarray(random.weibull_min(random.key(11), scale, c, (N,)))
    assert x.min() > 0
    assert ks_statistic(x, lambda t: 1 - np.exp(-((t / scale) ** c))) < KS_CRITICAL
    assert_mean_var(
        x,
        scale * math.gamma(1 + 1 / c),
        scale**2 * (math.gamma(1 + 2 / c) - math.gamma(1 + 1 / c) ** 2),
        _weibull_mu4(scale, c),
    )
    wide = random.weibull_min(random.key(11), np.ones(3, np.float32), 2.0)
    assert wide.shape == (3,) and len(set(np.asarray(wide).tolist())) == 3


def _weibull_mu4(scale: float, c: float) -> float:
    m = [scale**k * math.gamma(1 + k / c) for k in range(5)]
    return m[4] - 4 * m[3] * m[1] + 6 * m[2] * m[1] ** 2 - 3 * m[1] ** 4


# ---- loggamma ------------------------------------------------------------------------
def _trigamma(a: float) -> float:
    shift = sum(1 / (a + k) ** 2 for k in range(10))
    z = a + 10
    return shift + 1 / z + 1 / (2 * z**2) + 1 / (6 * z**3) - 1 / (30 * z**5)


def _digamma(a: float) -> float:
    shift = sum(1 / (a + k) for k in range(10))
    z = a + 10
    return math.log(z) - 1 / (2 * z) - 1 / (12 * z**2) + 1 / (120 * z**4) - shift


def _loggamma_program(key, a):
    """loggamma(key, a), gamma(key, a) and loggamma's reparameterised gradient
    at a[0] under 4000 keys split from key: one program for this section."""
    sample_grad = olympus.grad(lambda k, a: random.loggamma(k, a), argnums=1)
    grads = olympus.vmap(sample_grad, (0, None))(random.split(key, 4000), a[0])
    return random.loggamma(key, a), random.gamma(key, a), grads


_loggamma_draws = olympus.jit(_loggamma_program)


def _loggamma(key, a) -> tuple[np.ndarray, ...]:
    """_loggamma_program for a float32[N] `a` (an argument, not a constant:
    one compile for every test here)."""
    out = _loggamma_draws(key, np.broadcast_to(np.float32(a), (N,)))
    return tuple(np.asarray(o, np.float64) for o in out)


def test_loggamma_is_the_log_of_gamma():
    """JAX's contract: exp(loggamma(key, a)) equals gamma(key, a)."""
    a = np.tile(np.float32([0.3, 1.0, 4.0, 20.0]), N // 4)
    log_x, x, _ = _loggamma(random.key(12), a)
    np.testing.assert_allclose(np.exp(log_x), x, rtol=2e-5)


@pytest.mark.parametrize("a", [0.01, 2.0])
def test_loggamma_moments_and_gradient(a):
    """E log X = digamma(a), Var log X = trigamma(a); at a = 0.01 most gamma
    samples underflow float32 and loggamma's stay finite. The reparameterised
    gradient's mean is d E[log X] / da = trigamma(a)."""
    x, _, grads = _loggamma(random.key(13), a)
    assert np.all(np.isfinite(x))
    var = _trigamma(a)
    assert abs(x.mean() - _digamma(a)) < 5 * math.sqrt(var / N)
    assert abs(x.var() / var - 1) < 0.1
    assert abs(grads.mean() - var) < 5 * grads.std() / math.sqrt(grads.size)


# ---- ball, orthogonal, generalized_normal -----------------------------------------
@pytest.mark.parametrize("d, p", [(3, 2.0), (2, 1.0), (5, 4.0)])
def test_ball_is_uniform(d, p):
    """Inside the unit l_p ball, with the gauge's law P(|x|_p <= r) = r^d of a
    uniform point, and symmetric."""
    x = np.asarray(random.ball(random.key(15), d, p, (N,)))
    assert x.shape == (N, d) and x.dtype == np.float32
    radius = np.sum(np.abs(x.astype(np.float64)) ** p, axis=1) ** (1 / p)
    assert radius.max() < 1
    assert ks_statistic(radius, lambda r: np.clip(r, 0, 1) ** d) < KS_CRITICAL
    assert np.all(np.abs(x.mean(axis=0)) < 5 * x.std(axis=0) / math.sqrt(N))


def test_ball_bad_arguments():
    with pytest.raises(random.RandomParameterError, match="random.ball: d must"):
        random.ball(random.key(0), -1)
    with pytest.raises(random.RandomParameterError, match="p must be positive"):
        random.ball(random.key(0), 2, p=0.0)
    assert random.ball(random.key(0), 0, shape=(2,)).shape == (2, 0)


@pytest.mark.parametrize("n, m", [(4, 4), (5, 3), (2, 6)])
def test_orthogonal_is_orthonormal(n, m):
    q = np.asarray(random.orthogonal(random.key(16), n, (200,), m=m), np.float64)
    assert q.shape == (200, n, m)
    gram = q.transpose(0, 2, 1) @ q if n >= m else q @ q.transpose(0, 2, 1)
    np.testing.assert_allclose(
        gram, np.broadcast_to(np.eye(min(n, m)), gram.shape), atol=2e-5
    )


def test_orthogonal_is_haar():
    """For Haar O(n) each entry squared is Beta(1/2, (n-1)/2): mean 1/n,
    variance 2 (n-1) / (n^2 (n+2)); and det = +1 and -1 equally often
    (QR without the sign fix would bias both)."""
    n = 3
    q = np.asarray(random.orthogonal(random.key(17), n, (N // 4,)), np.float64)
    sq = (q[:, 0, 0] ** 2, q[:, 2, 1] ** 2)
    var = 2 * (n - 1) / (n**2 * (n + 2))
    for s in sq:
        assert abs(s.mean() - 1 / n) < 5 * math.sqrt(var / s.size)
    assert abs(q[:, 0, 0].mean()) < 5 * math.sqrt(1 / n / q.shape[0])
    det = np.linalg.det(q)
    np.testing.assert_allclose(np.abs(det), 1, atol=1e-4)
    assert abs(np.mean(det > 0) - 0.5) < 5 * math.sqrt(0.25 / q.shape[0])


def test_generalized_normal():
    """p = 2 is N(0, 1/2); p = 1 is Laplace; for any p, |x|^p ~ Gamma(1/p)
    with mean and variance 1/p."""
    x2 = np.asarray(random.generalized_normal(random.key(18), 2.0, (N,)))
    assert ks_statistic(x2, lambda t: normal_cdf(t * math.sqrt(2))) < KS_CRITICAL
    x1 = np.asarray(random.generalized_normal(random.key(19), 1.0, (N,)))
    laplace = lambda t: np.where(t < 0, 0.5 * np.exp(t), 1 - 0.5 * np.exp(-t))  # noqa: E731
    assert ks_statistic(x1, laplace) < KS_CRITICAL
    for p in (0.5, 8.0):
        x = np.asarray(random.generalized_normal(random.key(20), p, (N,)), np.float64)
        g = np.abs(x) ** p
        assert abs(g.mean() - 1 / p) < 5 * math.sqrt(1 / p / N)
        assert abs(np.mean(x > 0) - 0.5) < 5 * math.sqrt(0.25 / N)


# ---- triangular, wald, maxwell ------------------------------------------------------
def test_triangular_cdf():
    a, c, b = -1.0, 0.5, 2.0

    def cdf(t):
        t = np.clip(t, a, b)
        return np.where(
            t <= c,
            (t - a) ** 2 / ((b - a) * (c - a)),
            1 - (b - t) ** 2 / ((b - a) * (b - c)),
        )

    x = np.asarray(random.triangular(random.key(21), a, c, b, (N,)))
    assert x.min() >= a and x.max() <= b
    assert ks_statistic(x, cdf) < KS_CRITICAL
    bad = random.triangular(
        random.key(21),
        np.float32([0, 1, 0]),
        np.float32([0.5, 0.5, 2]),
        np.float32([1, 0, 1]),
    )
    assert np.isfinite(np.asarray(bad)).tolist() == [True, False, False]


def _wald_cdf(mu: float):
    def cdf(x):
        x = np.maximum(x, 1e-300)
        s = np.sqrt(1 / x)
        tail = np.exp(2 / mu) * normal_cdf(-s * (x / mu + 1))
        return normal_cdf(s * (x / mu - 1)) + tail

    return cdf


@pytest.mark.parametrize("mu", [0.5, 3.0])
def test_wald_law(mu):
    """Inverse Gaussian with shape 1: mean mu, variance mu^3, and its cdf."""
    x = np.asarray(random.wald(random.key(22), mu, (N,)), np.float64)
    assert x.min() > 0
    assert ks_statistic(x, _wald_cdf(mu)) < KS_CRITICAL
    assert abs(x.mean() - mu) < 5 * math.sqrt(mu**3 / N)
    assert np.all(
        np.isnan(np.asarray(random.wald(random.key(22), np.float32([0.0, -1.0]))))
    )


def test_maxwell_law():
    x = np.asarray(random.maxwell(random.key(23), (N,)), np.float64)
    cdf = lambda t: (
        _erf(t / math.sqrt(2)) - math.sqrt(2 / math.pi) * t * np.exp(-t * t / 2)
    )  # noqa: E731
    assert x.min() > 0
    assert ks_statistic(x, cdf) < KS_CRITICAL
    assert abs(x.mean() - 2 * math.sqrt(2 / math.pi)) < 5 * math.sqrt(
        (3 - 8 / math.pi) / N
    )


# ---- shapes, dtypes, staging and errors for all -------------------------------------
SAMPLERS = {
    "pareto": lambda k: random.pareto(k, 2.0, (4, 3)),
    "weibull_min": lambda k: random.weibull_min(k, 1.0, 2.0, (4, 3)),
    "loggamma": lambda k: random.loggamma(k, np.float32([0.1, 1.0, 9.0]), (4, 3)),
    "ball": lambda k: random.ball(k, 3, 1.5, (4,)),
    "orthogonal": lambda k: random.orthogonal(k, 3, (4,)),
    "generalized_normal": lambda k: random.generalized_normal(k, 1.5, (4, 3)),
    "triangular": lambda k: random.triangular(k, 0.0, 0.2, 1.0, (4, 3)),
    "wald": lambda k: random.wald(k, np.float32([0.5, 1.0, 2.0]), (4, 3)),
    "maxwell": lambda k: random.maxwell(k, (4, 3)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_shapes_and_dtypes(name):
    out = SAMPLERS[name](random.key(0))
    expected = {"ball": (4, 3), "orthogonal": (4, 3, 3)}.get(name, (4, 3))
    assert out.shape == expected and out.dtype == np.float32
    assert np.all(np.isfinite(np.asarray(out)))


def test_keys_jit_vmap_for_all_samplers():
    """One program holding every continuous sampler: jit == eager and vmap ==
    a loop, element by element (one compile of jit(vmap(...)), not a jit and
    a vmap of each sampler; eager vmap is test_random_extra's and
    test_random's)."""
    check_keys_jit_vmap(
        lambda k: tuple(SAMPLERS[n](k) for n in sorted(SAMPLERS)), jit_of_vmap=True
    )


def test_raw_keys_and_requested_dtypes():
    """Traced only (eval_shape): the dtype plumbing, without compiling each
    sampler again for each dtype."""
    raw = random.PRNGKey(3)

    def dtype_of(f):
        return olympus.eval_shape(f, raw).dtype

    assert dtype_of(lambda k: random.poisson(k, 2.0, (2,), dtype=np.int16)) == np.int16
    assert (
        dtype_of(lambda k: random.geometric(k, 0.5, (2,), dtype=np.uint8)) == np.uint8
    )
    assert (
        dtype_of(lambda k: random.binomial(k, 4, 0.5, (2,), dtype=np.float16))
        == np.float16
    )
    bf16 = olympus.numpy.bfloat16
    assert dtype_of(lambda k: random.maxwell(k, (2,), dtype=bf16)) == bf16
    f64 = _x64(lambda: random.wald(raw, 1.0, (3,)))
    assert f64.dtype == np.float64


def test_bad_arguments_are_clear_errors():
    key = random.key(0)
    with pytest.raises(
        random.RandomDtypeError, match="random.poisson: dtype must be an integer"
    ):
        random.poisson(key, 1.0, dtype=np.float32)
    with pytest.raises(ValueError, match="random.geometric: dtype must be an integer"):
        random.geometric(key, 0.5, dtype=np.float32)
    with pytest.raises(TypeError, match="real floating-point"):
        random.binomial(key, 3, 0.5, dtype=np.int32)
    with pytest.raises(random.RandomParameterError, match="random.orthogonal: m must"):
        random.orthogonal(key, 3, m=-2)
    with pytest.raises(ValueError, match=r"does not broadcast to \(2,\)"):
        random.poisson(key, np.ones(3, np.float32), (2,))
    with pytest.raises(random.KeyError_, match="expected a single PRNG key"):
        random.maxwell(random.split(key, 2))


def test_moments_match_jax():
    """Optional oracle: JAX's samplers give the same first two moments."""
    jax = pytest.importorskip("jax")
    cases = {
        "poisson": ((3.5,), 3.5, 3.5),
        "binomial": ((30.0, 0.4), 12.0, 7.2),
    }
    for name, (params, mean, var) in cases.items():
        ours = np.asarray(
            getattr(random, name)(random.key(30), *params, shape=(N,)), np.float64
        )
        theirs = np.asarray(
            getattr(jax.random, name)(jax.random.key(30), *params, shape=(N,)),
            np.float64,
        )
        for x in (ours, theirs):
            assert abs(x.mean() - mean) < 5 * math.sqrt(var / N), name
        assert abs(ours.var() / theirs.var() - 1) < 0.1, name
