"""Programs through the lax helpers that issue #30's merges made shared
(squeeze/expand_dims' rules, ...), each checked against JAX with the oracle."""

import numpy as np
import pytest
from jax_oracle import Raised, agree, run_both

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


@pytest.mark.parametrize(
    "program",
    [
        lambda ox, r: ox.lax.cond(True, lambda: r, lambda: r),
        lambda ox, r: ox.lax.scan(lambda c, x: (c, r), 0.0, ox.jnp.arange(2.0)),
        lambda ox, r: ox.jit(lambda: r)(),
    ],
)
def test_a_returned_ref_is_a_value_error_in_jit_and_control_flow(program):
    """jit and the control-flow bodies check output leaves with one function:
    a Ref is refused with a ValueError, as JAX's."""
    ours, theirs = run_both(lambda ox: program(ox, ox.new_ref(ox.jnp.zeros(3))))
    assert isinstance(ours, Raised) and isinstance(theirs, Raised)
    assert isinstance(ours.error, ValueError), ours
    assert isinstance(theirs.error, ValueError), theirs
    assert "cannot be returned" in str(ours.error)
