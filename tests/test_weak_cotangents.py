"""Weak types of gradients through control flow, against JAX through the oracle.

JAX types the result of scan, while and cond as its body (branch 0) returns it,
and types a loop carry's cotangent as the cotangent coming in; so the gradient
of a Python scalar stays weakly typed through scan/fori_loop/cond as through
plain ops, unless the function makes it strong. `agree` compares weak types.
"""

import numpy as np
import pytest
from jax_oracle import OLYMPUS, agree

F32 = np.float32

# ---- functions of one scalar, through control flow ---------------------------------
FUNCTIONS = {
    "mul": lambda ox: lambda c: c * ox.jnp.float32(2),
    "scan": lambda ox: (
        lambda c: ox.lax.scan(
            lambda c, xi: (c * 2.0 + xi, None), c, ox.jnp.arange(3.0)
        )[0]
    ),
    "scan ys": lambda ox: (
        lambda c: ox.lax.scan(lambda k, xi: (k + xi, k * c), 0.0, ox.jnp.arange(3.0))[
            1
        ].sum()
    ),
    "scan weak body": lambda ox: (
        lambda c: ox.lax.scan(lambda k, xi: (k * 2.0, None), c, None, length=3)[0]
    ),
    "fori": lambda ox: (
        lambda c: ox.lax.fori_loop(0, 3, lambda i, c: c * 2.0 + ox.jnp.float32(1), c)
    ),
    "cond": lambda ox: (
        lambda c: ox.lax.cond(True, lambda c: c * ox.jnp.float32(2), lambda c: c, c)
    ),
    "cond strong branch 0": lambda ox: (
        lambda c: ox.lax.cond(False, lambda c: c, lambda c: c * ox.jnp.float32(2), c)
    ),
    "switch": lambda ox: (
        lambda c: ox.lax.switch(
            1, [lambda c: c * 3.0, lambda c: c * ox.jnp.float32(2), lambda c: -c], c
        )
    ),
    "map": lambda ox: lambda c: ox.lax.map(lambda x: x * c, ox.jnp.arange(3.0)).sum(),
    "checkpoint": lambda ox: (
        lambda c: ox.checkpoint(
            lambda c: ox.lax.fori_loop(0, 2, lambda i, c: ox.jnp.sin(c) * 2.0, c)
        )(c)
    ),
}

ARGUMENTS = {"python": 0.5, "weak": "weak", "strong": F32(0.5)}


def _argument(ox, kind):
    return ox.jnp.asarray(0.5) if kind == "weak" else ARGUMENTS[kind]


@pytest.mark.parametrize("kind", ARGUMENTS)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_grad_keeps_jax_weak_type(name, kind):
    agree(lambda ox: ox.grad(FUNCTIONS[name](ox))(_argument(ox, kind)))


@pytest.mark.parametrize("name", ["scan", "fori", "cond", "switch", "scan weak body"])
def test_transforms_of_grad_keep_jax_weak_type(name):
    """jit, vmap, vjp, jacrev and value_and_grad give the gradient grad gives."""
    f = FUNCTIONS[name]
    agree(lambda ox: ox.jit(ox.grad(f(ox)))(0.5))
    agree(lambda ox: ox.vmap(ox.grad(f(ox)))(ox.jnp.arange(3.0)))
    agree(lambda ox: ox.vjp(f(ox), 0.5)[1](F32(1.0)))
    agree(lambda ox: ox.jacrev(f(ox))(0.5))
    agree(lambda ox: ox.value_and_grad(f(ox))(0.5))


def test_weak_carry_made_strong_gets_a_strong_cotangent():
    """JAX types the carry's cotangent as the one coming in: strong here, so
    the initial carry's gradient is strong although the carry starts weak."""

    def h(ox):
        def f(c0, x):
            body = lambda c, xi: (c * x + xi, c)  # noqa: E731
            return ox.lax.scan(body, c0, ox.jnp.arange(3.0))[0]

        return f

    agree(lambda ox: ox.grad(h(ox))(0.0, F32(2.0)))
    agree(lambda ox: ox.grad(h(ox), 1)(0.0, F32(2.0)))
    agree(lambda ox: ox.grad(h(ox))(0.0, 2.0))
    agree(lambda ox: ox.grad(h(ox), (0, 1))(0.0, 2.0))


def test_custom_jvp_through_scan_keeps_jax_weak_type():
    def f(ox):
        @ox.custom_jvp
        def g(x):
            return ox.jnp.sin(x)

        g.defjvp(lambda p, t: (g(p[0]), ox.jnp.cos(p[0]) * t[0]))
        return lambda c: ox.lax.scan(lambda k, _: (g(k), None), c, None, length=2)[0]

    agree(lambda ox: ox.grad(f(ox))(0.5))
    agree(lambda ox: ox.grad(f(ox))(F32(0.5)))


@pytest.mark.parametrize("x", [0.5, F32(0.5)])
def test_forward_mode_through_while_keeps_jax_weak_type(x):
    """while_loop has no reverse mode (JAX's neither): jvp and jacfwd."""
    body = lambda ox: lambda c: c * 2.0 + ox.jnp.float32(1)  # noqa: E731
    loop = lambda ox: lambda c: ox.lax.while_loop(lambda c: c < 10, body(ox), c)  # noqa: E731
    agree(lambda ox: ox.jvp(loop(ox), (x,), (x,)))
    agree(lambda ox: ox.jacfwd(loop(ox))(x))
    agree(lambda ox: ox.lax.while_loop(lambda c: c < 3, lambda c: 4.0, F32(1)))


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.lax.scan(lambda c, x: (2.0, None), F32(1), None, length=3)[0],
        lambda ox: ox.lax.fori_loop(0, 3, lambda i, c: 2.0, F32(1)),
        lambda ox: ox.lax.cond(True, lambda: F32(1), lambda: 2.0),
        lambda ox: ox.jit(lambda: ox.lax.cond(True, lambda: F32(1), lambda: 2.0))(),
        lambda ox: ox.lax.switch(1, [lambda: 2.0, lambda: F32(1)]),
    ],
    ids=["scan", "fori", "cond", "jit cond", "switch"],
)
def test_results_are_typed_as_jax_types_them(program):
    """A strong carry the body returns weak, a branch 0 returning weak: weak."""
    agree(program)


def test_eager_jit_vmap_gradients_agree():
    ox = OLYMPUS
    g = ox.grad(FUNCTIONS["scan"](ox))
    eager, jitted = g(0.5), ox.jit(g)(0.5)
    batched = ox.vmap(g)(ox.jnp.full(2, 0.5))
    assert eager.weak_type and jitted.weak_type
    np.testing.assert_allclose(eager, jitted)
    np.testing.assert_allclose(batched, [eager, eager])


# ---- jnp reductions of weakly typed arrays (found by the fuzzer's Python floats) ----
REDUCTIONS = ["sum", "prod", "max", "min", "amax", "ptp", "cumsum", "cumprod"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("shape", [(), (2,)])
@pytest.mark.parametrize("value", [0.5, 3])
def test_reductions_of_weak_arrays_are_strong(name, shape, value):
    """JAX's jnp reductions convert their operand to a strong type first: the
    sum of a weak scalar (a Python float) is strong, and so is its value under
    value_and_grad, while the gradient keeps the argument's weak type."""
    agree(
        lambda ox: getattr(ox.jnp, name)(
            ox.jnp.broadcast_to(ox.jnp.asarray(value), shape)
        )
    )


@pytest.mark.parametrize("name", ["sum", "max", "prod", "cumsum"])
def test_value_and_grad_of_a_reduction_of_a_python_float(name):
    f = lambda ox: lambda x: getattr(ox.jnp, name)(x).sum()  # noqa: E731
    agree(lambda ox: ox.value_and_grad(f(ox))(0.5))
    agree(lambda ox: ox.jit(ox.value_and_grad(f(ox)))(-0.0))
