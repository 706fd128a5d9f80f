"""olympus.random: the threefry2x32 hash against the Random123 known answers,
keys and samples against the numbers JAX 0.10.2 gives for the same keys,
reproducibility across eager / jit / vmap, and every distribution against
its law (Kolmogorov-Smirnov statistics, moments, frequencies)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import olympus
from olympus import random

N = 4000  # samples per distribution test
KS_CRITICAL = 1.95 / math.sqrt(N)  # the KS statistic's 0.1% quantile


def ks_statistic(samples, cdf) -> float:
    """sup |F_n(x) - F(x)|: the largest gap between the empirical and true CDFs."""
    x = np.sort(np.asarray(samples, np.float64))
    f = cdf(x)
    n = len(x)
    above = np.arange(1, n + 1) / n - f
    below = f - np.arange(n) / n
    return float(max(above.max(), below.max()))


_erf = np.vectorize(math.erf)


def normal_cdf(x):
    return 0.5 * (1 + _erf(x / math.sqrt(2)))


# ---- the hash and the keys ------------------------------------------------------
@pytest.mark.parametrize(
    "key, counter, expected",
    [
        ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ],
)
def test_threefry2x32_known_answers(key, counter, expected):
    """Random123's known-answer vectors for threefry2x32 with 20 rounds."""
    out = random.threefry2x32(
        np.array(key, np.uint32), np.array(counter, np.uint32)[:, None]
    )
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(np.asarray(out)[:, 0], np.array(expected, np.uint32))


def test_keys_and_bits_match_jax():
    """The numbers JAX 0.10.2 (partitionable threefry, its default) gives."""
    k = random.PRNGKey(0)
    np.testing.assert_array_equal(np.asarray(k), [0, 0])
    np.testing.assert_array_equal(np.asarray(random.PRNGKey(-1)), [0, 4294967295])
    np.testing.assert_array_equal(
        np.asarray(random.split(k)), [[1797259609, 2579123966], [928981903, 3453687069]]
    )
    np.testing.assert_array_equal(
        np.asarray(random.fold_in(k, 7)), [2716826189, 292468403]
    )
    np.testing.assert_array_equal(
        np.asarray(random.bits(random.key(42), (5,))),
        np.array(
            [2098992034, 2919706841, 2646866425, 2409546199, 1935504149], np.uint32
        ),
    )
    np.testing.assert_allclose(
        np.asarray(random.uniform(random.key(42), (3,))),
        [0.48870957, 0.6797972, 0.6162715],
        rtol=1e-7,
    )
    np.testing.assert_allclose(
        np.asarray(random.normal(random.key(1), (4,))),
        [-0.15443718, 0.08470728, -0.13598049, -0.15503626],
        rtol=1e-5,
    )
    np.testing.assert_array_equal(
        np.asarray(random.randint(random.key(1), (6,), 0, 10)), [6, 7, 0, 3, 8, 4]
    )


def test_split_shapes_and_traced_seed():
    assert random.split(random.PRNGKey(1), 5).shape == (5, 2)
    assert random.split(random.PRNGKey(1), (2, 3)).shape == (2, 3, 2)
    from_traced = olympus.jit(random.PRNGKey)(np.int32(7))
    np.testing.assert_array_equal(
        np.asarray(from_traced), np.asarray(random.PRNGKey(7))
    )


def test_split_keys_are_independent():
    """Samples under sibling keys are uncorrelated and share no words."""
    k1, k2 = random.split(random.PRNGKey(3))
    a, b = np.asarray(random.uniform(k1, (N,))), np.asarray(random.uniform(k2, (N,)))
    assert abs(np.corrcoef(a, b)[0, 1]) < 4 / math.sqrt(N)
    assert not np.array_equal(np.asarray(k1), np.asarray(k2))
    folded = np.asarray(
        olympus.vmap(lambda i: random.fold_in(k1, i))(np.arange(3, dtype=np.int32))
    )
    assert len({tuple(f) for f in folded.tolist()}) == 3
    np.testing.assert_array_equal(folded[2], np.asarray(random.fold_in(k1, 2)))


def test_bad_key_is_a_clear_error():
    with pytest.raises(TypeError, match=r"expected a PRNG key, a uint32\[2\] array"):
        random.uniform(np.zeros(3, np.uint32), (2,))


# ---- reproducibility ------------------------------------------------------------
def test_same_key_same_numbers_eager_jit_vmap():
    keys = random.split(random.PRNGKey(5), 3)
    keys_np = np.asarray(keys)
    eager = np.stack([np.asarray(random.normal(k, (4,))) for k in keys_np])
    again = np.stack([np.asarray(random.normal(k, (4,))) for k in keys_np])
    jitted = np.stack(
        [np.asarray(olympus.jit(lambda k: random.normal(k, (4,)))(k)) for k in keys_np]
    )
    mapped = np.asarray(olympus.vmap(lambda k: random.normal(k, (4,)))(keys))
    np.testing.assert_array_equal(eager, again)
    np.testing.assert_allclose(jitted, eager, rtol=1e-6)
    np.testing.assert_allclose(mapped, eager, rtol=1e-6)
    split_mapped = np.asarray(olympus.vmap(random.split)(keys))
    np.testing.assert_array_equal(
        split_mapped, np.stack([np.asarray(random.split(k)) for k in keys_np])
    )


# ---- shapes and dtypes ------------------------------------------------------------
@pytest.mark.parametrize(
    "fn, dtype",
    [
        (lambda k: random.uniform(k, (2, 3)), np.float32),
        (
            lambda k: random.uniform(k, (2, 3), dtype=olympus.numpy.bfloat16),
            olympus.numpy.bfloat16,
        ),
        (lambda k: random.normal(k, (2, 3)), np.float32),
        (lambda k: random.exponential(k, (2, 3)), np.float32),
        (lambda k: random.bits(k, (2, 3), np.uint8), np.uint8),
        (lambda k: random.randint(k, (2, 3), -3, 3, np.int8), np.int8),
        (lambda k: random.bernoulli(k, 0.3, (2, 3)), np.bool_),
        (lambda k: random.categorical(k, np.zeros((2, 3, 4), np.float32)), np.int32),
        (lambda k: random.truncated_normal(k, -1.0, 1.0, (2, 3)), np.float32),
        (lambda k: random.gamma(k, 2.0, (2, 3)), np.float32),
    ],
)
def test_shapes_and_dtypes(fn, dtype):
    out = fn(random.key(0))
    assert out.shape == (2, 3) and out.dtype == np.dtype(dtype)


def test_uniform_range_in_low_precision():
    u = np.asarray(
        random.uniform(random.key(2), (N,), dtype=olympus.numpy.bfloat16)
    ).astype(np.float32)
    assert u.min() >= 0 and u.max() < 1 and len(np.unique(u)) > 64


# ---- continuous laws: Kolmogorov-Smirnov ---------------------------------------------
def _laplace_cdf(x):
    return np.where(
        x < 0, 0.5 * np.exp(np.minimum(x, 0)), 1 - 0.5 * np.exp(-np.maximum(x, 0))
    )


def _truncated_cdf(lo, hi):
    a, b = normal_cdf(lo), normal_cdf(hi)
    return lambda x: (normal_cdf(np.clip(x, lo, hi)) - a) / (b - a)


@pytest.mark.parametrize(
    "name, sample, cdf",
    [
        (
            "uniform",
            lambda k: random.uniform(k, (N,), minval=-2.0, maxval=3.0),
            lambda x: np.clip((x + 2) / 5, 0, 1),
        ),
        ("normal", lambda k: random.normal(k, (N,)), normal_cdf),
        (
            "exponential",
            lambda k: random.exponential(k, (N,)),
            lambda x: 1 - np.exp(-np.maximum(x, 0)),
        ),
        ("laplace", lambda k: random.laplace(k, (N,)), _laplace_cdf),
        (
            "logistic",
            lambda k: random.logistic(k, (N,)),
            lambda x: 1 / (1 + np.exp(-x)),
        ),
        ("gumbel", lambda k: random.gumbel(k, (N,)), lambda x: np.exp(-np.exp(-x))),
        (
            "truncated_normal",
            lambda k: random.truncated_normal(k, -0.5, 2.0, (N,)),
            _truncated_cdf(-0.5, 2.0),
        ),
        (
            "gamma(2.5)",
            lambda k: random.gamma(k, 2.5, (N,)),  # Gamma(5/2) = chi^2(5) / 2
            lambda x: _chi2_5_cdf(2 * np.maximum(x, 0)),
        ),
    ],
)
def test_ks(name, sample, cdf):
    samples = np.asarray(sample(random.key(11)))
    assert np.all(np.isfinite(samples))
    assert ks_statistic(samples, cdf) < KS_CRITICAL, name


def _chi2_5_cdf(x):
    """The chi-squared CDF with 5 degrees of freedom, in closed form."""
    s = np.sqrt(x)
    return _erf(s / math.sqrt(2)) - np.sqrt(2 / np.pi) * np.exp(-x / 2) * (s + s**3 / 3)


def test_truncated_normal_stays_in_bounds():
    x = np.asarray(
        random.truncated_normal(random.key(4), np.float32([-3.0, 1.0]), 1.5, (500, 2))
    )
    assert x[:, 0].min() >= -3 and x[:, 1].min() >= 1 and x.max() <= 1.5


def test_normal_f64_with_x64():
    previous = olympus.config.read("olympus_enable_x64")
    olympus.config.update("olympus_enable_x64", True)
    try:
        x = random.normal(random.key(0), (N,), dtype=np.float64)
        assert x.dtype == np.float64
        assert ks_statistic(np.asarray(x), normal_cdf) < KS_CRITICAL
        u = random.uniform(random.key(0), (1000,), dtype=np.float64)
        u = np.asarray(u)
        assert (
            np.mean(u != u.astype(np.float32).astype(np.float64)) > 0.9
        )  # 52 random mantissa bits
    finally:
        olympus.config.update("olympus_enable_x64", previous)


def test_erf_inv_against_bisection():
    y = np.linspace(-0.999, 0.999, 41).astype(np.float32)
    x = np.asarray(random.erf_inv(y)).astype(np.float64)
    np.testing.assert_allclose(_erf(x), y, atol=3e-6)
    assert np.asarray(random.erf_inv(np.float32([1.0, -1.0]))).tolist() == [
        np.inf,
        -np.inf,
    ]


# ---- gamma family: moments ---------------------------------------------------------
def test_gamma_moments():
    """a < 1 goes through the boost; mean a, variance a."""
    for a in (0.3, 4.0):
        x = np.asarray(random.gamma(random.key(8), a, (N,)))
        assert x.min() > 0
        assert abs(x.mean() - a) < 4 * math.sqrt(a / N)
        assert abs(x.var() - a) < 0.15 * a


def test_beta_and_dirichlet_moments():
    x = np.asarray(random.beta(random.key(9), 2.0, 5.0, (N,)))
    assert 0 < x.min() and x.max() < 1
    assert abs(x.mean() - 2 / 7) < 0.01
    assert abs(x.var() - 10 / (49 * 8)) < 0.004
    alpha = np.float32([1.0, 2.0, 3.0])
    d = np.asarray(random.dirichlet(random.key(10), alpha, (N,)))
    assert d.shape == (N, 3)
    np.testing.assert_allclose(d.sum(axis=1), 1, rtol=1e-5)
    np.testing.assert_allclose(d.mean(axis=0), alpha / 6, atol=0.01)


# ---- gamma family: derivatives in the shape parameters -----------------------------
def _lower_gamma_cdf(a: float, x: float) -> float:
    """P(a, x) = e^-x sum_n x^(a+n) / Gamma(a+n+1), in float64 (log-space terms)."""
    total, n = 0.0, 0
    while True:
        term = math.exp((a + n) * math.log(x) - x - math.lgamma(a + n + 1))
        total += term
        n += 1
        if n > x and term < 1e-17 * total:
            return total


def _implicit_dx_da(a: float, x: float, h: float = 1e-5) -> float:
    """-(dP/da) / p at x, with dP/da by central differences of the series."""
    dp_da = (_lower_gamma_cdf(a + h, x) - _lower_gamma_cdf(a - h, x)) / (2 * h)
    density = math.exp((a - 1) * math.log(x) - x - math.lgamma(a))
    return -dp_da / density


GAMMA_SHAPES = np.repeat([0.5, 0.9, 1.0, 1.7, 3.0, 5.0], 3)


def _x64(fn):
    previous = olympus.config.read("olympus_enable_x64")
    olympus.config.update("olympus_enable_x64", True)
    try:
        return fn()
    finally:
        olympus.config.update("olympus_enable_x64", previous)


def test_gamma_grad_is_the_implicit_reparameterisation():
    """d sample / d a = -(dP/da)(a, x) / p(x; a) at each fixed-key sample, for
    a in [0.5, 5] (both the series and the continued-fraction branch), in
    float64 and float32."""
    k = random.key(30)

    @olympus.jit
    def sample_and_grad(a):  # one compile per dtype for both
        total_and_sample = lambda a: (
            olympus.numpy.sum(random.gamma(k, a)),
            random.gamma(k, a),
        )
        (_, x), g = olympus.value_and_grad(total_and_sample, has_aux=True)(a)
        return x, g

    for dtype, rtol in ((np.float64, 1e-7), (np.float32, 2e-4)):
        x, g = _x64(lambda: sample_and_grad(GAMMA_SHAPES.astype(dtype)))
        assert g.dtype == dtype
        want = [
            _implicit_dx_da(a, float(xi)) for a, xi in zip(GAMMA_SHAPES, np.asarray(x))
        ]
        assert (
            np.min(np.asarray(x) / GAMMA_SHAPES) < 0.5
            and np.max(np.asarray(x) - GAMMA_SHAPES) > 1
        )
        np.testing.assert_allclose(np.asarray(g), want, rtol=rtol, err_msg=str(dtype))


def test_gamma_and_beta_grads_are_unbiased():
    """E[dx/da] = dE[x]/da: 1 for Gamma(a); b / (a + b)^2 for Beta(a, b)
    (through its two gamma draws); within 5 standard errors."""
    k = random.key(31)
    n = 8000
    per_sample = np.asarray(
        olympus.jacfwd(lambda a: random.gamma(k, a, (n,)))(np.float32(2.5))
    )
    assert abs(per_sample.mean() - 1.0) < 5 * per_sample.std() / math.sqrt(n)
    beta_grads = olympus.jacfwd(lambda a, b: random.beta(k, a, b, (n,)), argnums=(0, 1))
    da, db = (np.asarray(d) for d in beta_grads(np.float32(2.0), np.float32(3.0)))
    assert abs(da.mean() - 3 / 25) < 5 * da.std() / math.sqrt(n)
    assert abs(db.mean() + 2 / 25) < 5 * db.std() / math.sqrt(n)


def test_gamma_samples_in_float64():
    """float64 draws use 64-bit words (32-bit ones never passed the acceptance test)."""
    x = _x64(
        lambda: np.asarray(random.gamma(random.key(32), 2.5, (N,), dtype=np.float64))
    )
    assert x.dtype == np.float64 and x.min() > 0
    assert abs(x.mean() - 2.5) < 4 * math.sqrt(2.5 / N)


# ---- discrete laws -----------------------------------------------------------------
def _assert_frequencies(samples, probabilities):
    """Each outcome's count within 4.5 standard deviations of its expectation."""
    n = samples.size
    counts = np.bincount(samples.ravel(), minlength=len(probabilities))
    expected = n * np.asarray(probabilities)
    assert np.all(
        np.abs(counts - expected) <= 4.5 * np.sqrt(expected * (1 - probabilities)) + 1
    )


def test_bernoulli_and_randint_frequencies():
    b = np.asarray(random.bernoulli(random.key(12), np.float32(0.3), (N,)))
    assert abs(b.mean() - 0.3) < 4.5 * math.sqrt(0.21 / N)
    r = np.asarray(random.randint(random.key(13), (N,), -3, 4))
    assert r.min() == -3 and r.max() == 3
    _assert_frequencies(r + 3, np.full(7, 1 / 7))
    full = np.asarray(random.randint(random.key(13), (N,), -(2**31), 2**31 - 1))
    assert full.min() < -(2**30) and full.max() > 2**30


def test_categorical_frequencies():
    p = np.float32([0.1, 0.6, 0.3])
    c = np.asarray(random.categorical(random.key(14), np.log(p), shape=(N,)))
    _assert_frequencies(c, p)
    rows = np.asarray(
        random.categorical(
            random.key(14), np.log(np.float32([[0.0, 1.0], [1.0, 0.0]]) + 1e-30), axis=1
        )
    )
    assert rows.tolist() == [1, 0]


def test_permutation_and_shuffle():
    perm = np.asarray(random.permutation(random.key(15), 50))
    assert sorted(perm.tolist()) == list(range(50)) and perm.tolist() != list(range(50))
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    shuffled = np.asarray(random.permutation(random.key(16), x, axis=1))
    assert sorted(shuffled[0].tolist()) == [0, 1, 2]
    np.testing.assert_array_equal(
        shuffled, x[:, shuffled[0].astype(int)]
    )  # one column order
    np.testing.assert_array_equal(
        np.sort(np.asarray(random.shuffle(random.key(17), x[:, 0]))), x[:, 0]
    )
    # positions are uniform: the first element lands anywhere
    firsts = np.asarray(
        olympus.vmap(lambda k: random.permutation(k, 4))(
            random.split(random.key(18), 40)
        )
    )
    assert set(firsts[:, 0].tolist()) == {0, 1, 2, 3}
    assert all(sorted(row) == [0, 1, 2, 3] for row in firsts.tolist())


def test_choice():
    a = np.float32([10, 20, 30, 40, 50])
    no_repeat = np.asarray(random.choice(random.key(19), a, (5,), replace=False))
    assert sorted(no_repeat.tolist()) == a.tolist()
    p = np.float32([0.7, 0.1, 0.1, 0.05, 0.05])
    with_p = np.asarray(random.choice(random.key(20), 5, (N,), p=p))
    _assert_frequencies(with_p, p)
    weighted_first = np.asarray(
        olympus.vmap(lambda k: random.choice(k, 5, (2,), replace=False, p=p))(
            random.split(random.key(21), 60)
        )
    )
    assert np.all(weighted_first[:, 0] != weighted_first[:, 1])
    assert np.mean(weighted_first[:, 0] == 0) > 0.5
    uniform_ints = np.asarray(random.choice(random.key(22), 3, (N,)))
    _assert_frequencies(uniform_ints, np.full(3, 1 / 3))
    with pytest.raises(ValueError, match="without replacement"):
        random.choice(random.key(0), 3, (4,), replace=False)


def test_gradients_flow_through_reparameterised_samples():
    """loc + scale * normal(key) and uniform(key, minval, maxval) are differentiable
    in their parameters (the key itself has no tangent)."""
    k = random.key(23)
    z = np.asarray(random.normal(k, (5,)))
    g = olympus.grad(lambda scale: olympus.numpy.sum(scale * random.normal(k, (5,))))(
        np.float32(2.0)
    )
    np.testing.assert_allclose(float(g), z.sum(), rtol=1e-5)
    u = np.asarray(random.uniform(k, (5,)))
    g_lo, g_hi = olympus.grad(
        lambda lo, hi: olympus.numpy.sum(random.uniform(k, (5,), minval=lo, maxval=hi)),
        argnums=(0, 1),
    )(np.float32(-1.0), np.float32(3.0))
    np.testing.assert_allclose(
        [float(g_lo), float(g_hi)], [(1 - u).sum(), u.sum()], rtol=1e-5
    )


def test_cauchy_rademacher_chisquare_t_multivariate_normal():
    k = random.key(24)
    c = np.asarray(random.cauchy(k, (N,)))
    assert ks_statistic(c, lambda x: 0.5 + np.arctan(x) / np.pi) < KS_CRITICAL
    r = np.asarray(random.rademacher(k, (N,)))
    assert set(r.tolist()) == {-1, 1} and abs(r.mean()) < 4.5 / math.sqrt(N)
    chi2 = np.asarray(random.chisquare(k, 3.0, (N,)))
    assert abs(chi2.mean() - 3) < 4.5 * math.sqrt(6 / N) and abs(chi2.var() - 6) < 1.0
    student = np.asarray(random.t(k, 5.0, (N,)))
    assert abs(student.mean()) < 0.1 and abs(student.var() - 5 / 3) < 0.35
    cov = np.array([[2.0, 0.6], [0.6, 1.0]], np.float32)
    x = np.asarray(random.multivariate_normal(k, np.float32([1, -1]), cov, (N,)))
    np.testing.assert_allclose(x.mean(0), [1, -1], atol=0.08)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.15)
