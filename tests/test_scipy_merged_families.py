"""scipy functions that now share one body (issue 30): chi2's laws are gamma's
at shape df / 2 and scale 2 * scale; the triangular solves of
solve_triangular, cho_solve and lu_solve go through one helper. Each agrees
with JAX."""

import numpy as np
import pytest

from jax_oracle import agree, x64

X = np.array([0.5, 1.0, 3.0, 7.5], np.float32)
RNG = np.random.default_rng(5)
A = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
B = RNG.standard_normal((4, 2))


@pytest.mark.parametrize("name", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
def test_chi2_agrees_with_jax(name):
    agree(lambda ox, x: getattr(ox.scipy.stats.chi2, name)(x, 3.0), X)
    agree(lambda ox, x: getattr(ox.scipy.stats.chi2, name)(x, 2.5, 0.1, 2.0), X)


@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular_agrees_with_jax(trans, lower):
    with x64():
        agree(
            lambda ox, a, b: ox.scipy.linalg.solve_triangular(a, b, trans, lower),
            A,
            B,
        )


@pytest.mark.parametrize("lower", [False, True])
def test_cho_solve_agrees_with_jax(lower):
    spd = A @ A.T
    with x64():
        agree(
            lambda ox, a, b: ox.scipy.linalg.cho_solve(
                ox.scipy.linalg.cho_factor(a, lower), b
            ),
            spd,
            B,
            rtol=1e-9,
        )


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_solve_agrees_with_jax(trans):
    with x64():
        agree(
            lambda ox, a, b: ox.scipy.linalg.lu_solve(
                ox.scipy.linalg.lu_factor(a), b, trans
            ),
            A,
            B,
            rtol=1e-9,
        )


@pytest.mark.parametrize(
    "name", ["gammaln", "digamma", "erf", "erfc", "erfinv", "expit", "i0e", "i1e"]
)
def test_thin_special_wrappers_agree_with_jax(name):
    """The one-line wrappers (lax's function on the operand as floats)."""
    agree(lambda ox, x: getattr(ox.scipy.special, name)(x), X / 10)
    agree(lambda ox, x: getattr(ox.scipy.special, name)(x), np.array([0, 1], np.int32))
