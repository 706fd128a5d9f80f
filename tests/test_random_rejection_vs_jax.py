"""poisson (PTRS) and binomial (BTRS) share one transformed-rejection loop
(issue 30); both still draw JAX's numbers for the same key, eagerly and under
vmap over keys."""

import numpy as np

from jax_oracle import agree

LAM = np.array([0.5, 12.0, 40.0], np.float32)  # Knuth below 10, PTRS above
N = np.array([5.0, 40.0, 100.0], np.float32)  # n q > 10: BTRS
P = np.array([0.3, 0.6, 0.5], np.float32)


def test_poisson_draws_jax_numbers():
    agree(lambda ox, lam: ox.random.poisson(ox.random.key(1), lam, (4, 3)), LAM)


def test_binomial_draws_jax_numbers():
    agree(lambda ox, n, p: ox.random.binomial(ox.random.key(2), n, p, (4, 3)), N, P)


def test_rejection_samplers_under_vmap_over_keys():
    def program(ox, seeds):
        keys = ox.vmap(ox.random.key)(seeds)
        return ox.vmap(lambda k: ox.random.binomial(k, 50.0, 0.5, (2,)))(keys)

    agree(program, np.arange(2, dtype=np.uint32))
