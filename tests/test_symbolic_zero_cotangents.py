"""An operand that a jitted or checkpointed function ignores gets a symbolic
zero cotangent, as in JAX: its transposed call returns a zero for it, which
the operand's own transpose must not multiply through (`cos(inf) * 0` is NaN
where JAX's gradient is 0). Found by the JAX-oracle fuzz (edge seed 1310)."""

import pytest
from jax_oracle import agree

INF = float("inf")


@pytest.mark.parametrize("wrap", ["jit", "checkpoint", "jit_of_grad"])
def test_an_ignored_operand_gets_a_zero_cotangent_as_in_jax(wrap):
    def program(ox, a, b):
        call = ox.jit if wrap != "checkpoint" else ox.checkpoint
        f = lambda a, b: call(lambda p, q: q * 2.0)(ox.jnp.sin(a), ox.jnp.log(b))  # noqa: E731
        g = ox.grad(f, (0, 1))
        return ox.jit(g)(a, b) if wrap == "jit_of_grad" else g(a, b)

    agree(program, INF, 2.0)
    agree(program, 0.0, 2.0)


def test_a_partly_used_operand_tuple_keeps_the_used_cotangents():
    def program(ox, a):
        f = ox.jit(lambda p, q, r: p * r)
        return ox.grad(lambda a: f(ox.jnp.sin(a), ox.jnp.log(a - 10.0), a * 3.0))(a)

    agree(program, 1.5)
    agree(program, INF)
