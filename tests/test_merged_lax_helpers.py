"""Programs through the lax helpers that issue #30's merges made shared
(squeeze/expand_dims' rules, ...), each checked against JAX with the oracle."""

import numpy as np
import pytest
from jax_oracle import agree

X = np.arange(6, dtype=np.float32).reshape(2, 1, 3)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox, x: ox.grad(lambda v: (ox.lax.squeeze(v, (1,)) ** 2).sum())(x),
        lambda ox, x: ox.grad(lambda v: (ox.lax.expand_dims(v, (0, 3)) ** 3).sum())(x),
        lambda ox, x: ox.jit(ox.vmap(lambda v: ox.lax.squeeze(v, (0,))))(x),
        lambda ox, x: ox.vmap(lambda v: ox.lax.expand_dims(v, (1,)), in_axes=2)(x),
        lambda ox, x: ox.jvp(lambda v: ox.lax.squeeze(v, (1,)), (x,), (x,)),
    ],
)
def test_squeeze_and_expand_dims_rules_match_jax(program):
    agree(program, X)
