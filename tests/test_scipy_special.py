"""olympus.scipy.special and the special-function primitives under it
(lax.erfc, erf_inv, lgamma, digamma, polygamma): values against Python's
`math` and classical identities in float64, jit == eager == the NumPy
reference interpreter, vmap == a loop, derivatives against finite
differences, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
import olympus.scipy.special as sp
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
