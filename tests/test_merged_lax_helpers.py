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


@pytest.mark.parametrize(
    "program",
    [
        lambda ox, x, w: ox.lax.conv(x, w, (2, 1), "SAME"),
        lambda ox, x, w: ox.jit(
            ox.grad(lambda a: ox.lax.conv(a, w, (1, 1), "VALID").sum())
        )(x),
        lambda ox, x, w: ox.lax.conv_with_general_padding(
            x, w, (1, 2), ((1, 0), (2, 1)), (2, 1), None
        ),
        lambda ox, x, w: ox.vmap(lambda a: ox.lax.conv(a[None], w, (1, 1), "SAME"))(x),
    ],
)
def test_conv_through_its_shared_params_record_matches_jax(program):
    """conv is conv_with_general_padding without dilations; the shape rule and
    lowering read conv_general_dilated's params through one record."""
    x = np.arange(2 * 3 * 5 * 4, dtype=np.float32).reshape(2, 3, 5, 4) / 10
    w = np.linspace(-1, 1, 4 * 3 * 3 * 2, dtype=np.float32).reshape(4, 3, 3, 2)
    agree(program, x, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox, x: ox.jit(lambda a: a[ox.jnp.array([2, 0, 2])])(x),
        lambda ox, x: ox.jit(lambda a: a[:, ox.jnp.array([1, 3])])(x),
        lambda ox, x: ox.jit(lambda a: a.at[ox.jnp.array([0, 2, 0])].add(1.5))(x),
        lambda ox, x: ox.jit(lambda a: a.at[:, 1].max(ox.jnp.arange(3.0)))(x),
    ],
)
def test_gather_and_scatter_lowerings_spell_dimension_numbers_as_jax(program):
    """Both lowerings write their dimension numbers through one function."""
    agree(program, np.arange(12, dtype=np.float32).reshape(3, 4))
