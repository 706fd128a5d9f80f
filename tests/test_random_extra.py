"""random.lognormal, rayleigh, double_sided_maxwell and multinomial: moments
within 5 standard errors, a Kolmogorov-Smirnov or chi-squared test against
the exact law, jit == eager, vmap over split keys == a loop, and JAX's shape
conventions. Fixed seeds throughout."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import olympus
from olympus import random

N = 20_000
KS_CRITICAL = 1.95 / math.sqrt(N)  # Kolmogorov-Smirnov at significance 0.001
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _check_moments(x, mean, var):
    x = np.asarray(x, np.float64).ravel()
    n = x.size
    se_mean = math.sqrt(var / n)
    assert abs(x.mean() - mean) < 5 * se_mean, (x.mean(), mean, se_mean)
    fourth = np.mean((x - x.mean()) ** 4)
    se_var = math.sqrt(max(fourth - x.var() ** 2, 1e-30) / n)
    assert abs(x.var() - var) < 5 * se_var, (x.var(), var, se_var)


def _ks_statistic(x, cdf):
    x = np.sort(np.asarray(x, np.float64).ravel())
    f = cdf(x)
    n = x.size
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def _normal_cdf(z):
    return 0.5 * (1 + _erf(z / math.sqrt(2)))


def _maxwell_cdf(r):
    return _erf(r / math.sqrt(2)) - math.sqrt(2 / math.pi) * r * np.exp(-(r**2) / 2)


# ---- lognormal -------------------------------------------------------------------------
def test_lognormal_moments_and_law():
    sigma = 0.5
    x = np.asarray(random.lognormal(random.key(0), sigma, (N,)))
    assert x.dtype == np.float32 and (x > 0).all()
    s2 = sigma**2
    _check_moments(x, math.exp(s2 / 2), (math.exp(s2) - 1) * math.exp(s2))
    assert _ks_statistic(x, lambda v: _normal_cdf(np.log(v) / sigma)) < KS_CRITICAL
    assert _ks_statistic(x, lambda v: _normal_cdf(np.log(v) / 0.55)) > KS_CRITICAL


def test_lognormal_shapes_and_default_sigma():
    key = random.key(1)
    assert random.lognormal(key).shape == ()
    assert random.lognormal(key, np.float32([0.5, 1.0])).shape == (2,)
    assert random.lognormal(key, shape=(3, 2), dtype=np.float16).dtype == np.float16
    np.testing.assert_array_equal(
        random.lognormal(key, shape=(4,)),
        np.exp(np.asarray(random.normal(key, (4,)))),
    )


# ---- rayleigh ---------------------------------------------------------------------------
def test_rayleigh_moments_and_law():
    scale = 2.0
    x = np.asarray(random.rayleigh(random.key(2), scale, (N,)))
    assert (x >= 0).all()
    _check_moments(x, scale * math.sqrt(math.pi / 2), (4 - math.pi) / 2 * scale**2)
    cdf = lambda v: 1 - np.exp(-(v**2) / (2 * scale**2))  # noqa: E731
    assert _ks_statistic(x, cdf) < KS_CRITICAL
    assert random.rayleigh(random.key(2), np.float32([1.0, 2.0, 3.0])).shape == (3,)


# ---- double_sided_maxwell --------------------------------------------------------------------
def test_double_sided_maxwell_moments_and_law():
    loc, scale = 1.5, 0.5
    x = np.asarray(random.double_sided_maxwell(random.key(3), loc, scale, (N,)))
    _check_moments(x, loc, 3 * scale**2)  # E z^2 = 3 for Maxwell's z

    def cdf(v):
        z = (v - loc) / scale
        return 0.5 + 0.5 * np.sign(z) * _maxwell_cdf(np.abs(z))

    assert _ks_statistic(x, cdf) < KS_CRITICAL
    assert np.mean(x > loc) == pytest.approx(0.5, abs=5 * 0.5 / math.sqrt(N))


def test_double_sided_maxwell_shape_prefixes_the_parameter_shape():
    out = random.double_sided_maxwell(
        random.key(4), np.float32([0.0, 10.0]), 1.0, shape=(3,)
    )
    assert out.shape == (3, 2)
    assert np.all(np.abs(np.asarray(out)[:, 1] - 10) < 10)


# ---- multinomial ---------------------------------------------------------------------------
P3 = np.float32([0.2, 0.3, 0.5])


def test_multinomial_counts_sum_to_n_with_binomial_marginals():
    n = 20.0
    counts = np.asarray(random.multinomial(random.key(5), n, np.tile(P3, (N, 1))))
    assert counts.shape == (N, 3) and counts.dtype == np.float32
    assert (counts.sum(1) == n).all() and (counts >= 0).all()
    assert (counts == np.round(counts)).all()
    for i, p in enumerate(P3):
        _check_moments(counts[:, i], n * p, n * p * (1 - p))
    cov01 = np.cov(counts[:, 0], counts[:, 1])[0, 1]
    assert cov01 == pytest.approx(-n * P3[0] * P3[1], abs=0.3)


def test_multinomial_outcome_frequencies_chi_squared():
    """n = 3 draws over 3 categories: 10 outcomes, each against its exact
    probability n! / (k1! k2! k3!) p1^k1 p2^k2 p3^k3."""
    n = 3
    counts = np.asarray(
        random.multinomial(random.key(6), float(n), np.tile(P3 * 4, (N, 1)))
    )  # unnormalised p: the law only sees p / sum(p)
    outcomes = [k for k in itertools.product(range(n + 1), repeat=3) if sum(k) == n]
    chi2 = 0.0
    for k in outcomes:
        prob = math.factorial(n) / math.prod(math.factorial(c) for c in k)
        prob *= math.prod(float(p) ** c for p, c in zip(P3, k))
        seen = np.sum(np.all(counts == np.array(k), axis=1))
        chi2 += (seen - N * prob) ** 2 / (N * prob)
    assert chi2 < 27.88  # chi-squared with 9 degrees of freedom at 0.001


def test_multinomial_shapes_broadcast_n_and_errors():
    """Shapes by tracing only (olympus.eval_shape): a multinomial compiles slowly."""
    key = random.key(7)
    p = np.float32([[0.2, 0.8], [0.5, 0.5]])
    n = np.float32([10.0, 20.0])
    assert olympus.eval_shape(lambda k: random.multinomial(k, n, p), key).shape == (
        2,
        2,
    )
    out = olympus.eval_shape(
        lambda k: random.multinomial(k, n, p[0], shape=(3, 2, 2), dtype=np.float16),
        key,
    )
    assert out.shape == (3, 2, 2) and out.dtype == np.float16
    with pytest.raises(random.RandomParameterError, match="number of categories 2"):
        random.multinomial(key, 5.0, np.float32([0.5, 0.5]), shape=(3,))
    with pytest.raises(random.RandomParameterError, match="last axis"):
        random.multinomial(key, 5.0, np.float32(1.0))


# ---- transformations ---------------------------------------------------------------------------
# The arguments of the moment tests above, so the eager loop reuses their
# compiled samplers (a multinomial takes seconds to compile).
SAMPLERS = {
    "lognormal": lambda k: random.lognormal(k, 0.5, (N,)),
    "rayleigh": lambda k: random.rayleigh(k, 2.0, (N,)),
    "double_sided_maxwell": lambda k: random.double_sided_maxwell(k, 1.5, 0.5, (N,)),
    "multinomial": lambda k: random.multinomial(k, 20.0, np.tile(P3, (N, 1))),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_of_vmap_over_split_keys_matches_an_eager_loop(name):
    sample = SAMPLERS[name]
    keys = random.split(random.key(8), 3)
    looped = np.stack([np.asarray(sample(k)) for k in keys])
    np.testing.assert_allclose(
        olympus.jit(olympus.vmap(sample))(keys), looped, rtol=1e-6
    )
    assert not np.array_equal(looped[0], looped[1])  # split keys differ
