"""Conformance with JAX 0.10.2 in types, tracing and API forms (issue 32).

Each test runs one program under olympus and JAX through the oracle
(`jax_oracle.agree`), which compares container types, dtypes, weak types and
values; JAX's behaviour is the spec.
"""

from __future__ import annotations

import numpy as np
import pytest

from jax_oracle import agree, differences, run_both, x64

F32 = np.float32


# ---- weak types through the transformations ----------------------------------------
@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.grad(lambda x: x * 2.0)(3.0),
        lambda ox: ox.grad(lambda x: x * ox.jnp.float32(2))(3.0),
        lambda ox: ox.grad(lambda x: x * 2.0)(ox.jnp.float32(3)),
        lambda ox: ox.value_and_grad(lambda x: x * 2.0)(3.0),
        lambda ox: ox.jacfwd(lambda x: x * 2.0)(3.0),
        lambda ox: ox.jacfwd(lambda x: x * ox.jnp.float32(2))(3.0),
        lambda ox: ox.jacrev(lambda x: x * 2.0)(3.0),
        lambda ox: ox.jacrev(lambda x: x * ox.jnp.float32(2))(3.0),
        lambda ox: ox.hessian(lambda x: x**3)(2.0),
        lambda ox: ox.jvp(lambda x: x * 2.0, (3.0,), (1.0,)),
        lambda ox: ox.vjp(lambda x: x * 2.0, 3.0)[1](1.0),
        lambda ox: ox.vjp(lambda x: x * ox.jnp.float32(2), 3.0)[1](F32(1)),
        lambda ox: ox.jit(ox.grad(lambda x: x * 2.0))(3.0),
        lambda ox: ox.grad(lambda x, y: x * y, argnums=(0, 1))(3.0, F32(2)),
        lambda ox: ox.lax.fori_loop(0, 3, lambda i, c: c + 1.0, 0.0),
        lambda ox: ox.lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0.0),
        lambda ox: ox.lax.scan(lambda c, x: (c + 1.0, c), 0.0, None, length=3),
    ],
)
def test_weak_types_of_transformed_python_scalars(program):
    agree(program)


def test_grad_of_abs_at_zero_is_one():
    agree(lambda ox: ox.grad(ox.jnp.abs)(0.0), check_weak_type=False)
    agree(lambda ox: ox.grad(ox.jnp.abs)(F32(-0.0)))
    agree(lambda ox: ox.vmap(ox.grad(ox.jnp.abs))(np.array([-1, 0, 2], F32)))


# ---- containers ---------------------------------------------------------------------
X = np.array([3, 1, 4, 1, 5, 9], F32)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.lax.top_k(X, 2),
        lambda ox: ox.jit(lambda x: ox.lax.top_k(x, 2))(X),
        lambda ox: ox.lax.approx_max_k(X, 2),
        lambda ox: ox.lax.approx_min_k(X, 2),
        lambda ox: ox.jnp.split(X, 2),
        lambda ox: ox.jnp.meshgrid(X[:2], X[:3]),
        lambda ox: ox.jnp.broadcast_arrays(X, 1.0),
        lambda ox: ox.lax.sort([X, X], num_keys=1),
    ],
)
def test_container_types(program):
    agree(program)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1]), (0, 1.0)
        ),
        lambda ox: ox.lax.while_loop(
            lambda c: c[0] < 3, lambda c: [c[0] + 1, c[1]], [0, np.ones(2)]
        ),
        lambda ox: ox.lax.while_loop(
            lambda c: c[0] < c[1], lambda c: (c[0] + 1, c[1]), (0, 3.0)
        ),
        lambda ox: ox.lax.fori_loop(0, 3, lambda i, c: (c[0] + 1, c[1]), (0, 1.0)),
        lambda ox: ox.lax.scan(lambda c, x: (c, x), (1.0, np.ones(2)), X),
        lambda ox: ox.jit(
            lambda: ox.lax.while_loop(
                lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1]), (0, 1.0)
            )
        )(),
        lambda ox: ox.grad(
            lambda y: ox.lax.fori_loop(0, 3, lambda i, c: (c[0] + 1, c[1]), (0, y))[1]
        )(1.0),
    ],
)
def test_loop_carries_passed_through_are_the_initial_values(program):
    agree(program)


# ---- NumPy scalars are strongly typed -------------------------------------------------
@pytest.mark.parametrize("enabled", [False, True])
@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.jnp.ones(3, F32) * np.float64(2),
        lambda ox: ox.jnp.ones(3, np.float16) * np.float64(2),
        lambda ox: ox.jnp.ones(3, np.float16) * np.float32(2),
        lambda ox: ox.jnp.ones(3, np.int8) * np.int64(2),
        lambda ox: ox.jnp.ones(3, np.int8) * np.int32(2),
        lambda ox: np.float64(2) * ox.jnp.ones(3, F32),
        lambda ox: ox.jnp.add(ox.jnp.ones(3, F32), np.float64(2)),
        lambda ox: ox.jnp.asarray(np.float64(2)),
        lambda ox: ox.jit(lambda x: x * np.float64(2))(ox.jnp.ones(3, F32)),
        lambda ox: ox.jnp.ones(3, F32) * 2.0,
    ],
)
def test_numpy_scalars_are_strong(program, enabled):
    with x64(enabled):
        agree(program)


# ---- named tuples: the same fields, in the same order, as JAX's -----------------------
def agree_named(program, *args):
    """`agree` for results that are named tuples, whose classes differ by
    system: the field names must match, then the fields as a plain tuple."""
    ours, theirs = run_both(program, *args)
    assert type(ours)._fields == type(theirs)._fields, (ours, theirs)
    found = differences(tuple(ours), tuple(theirs))
    assert not found, found


INTS = np.array([3, 1, 3, 2, 1, 1], np.int32)
M = np.array([[2.0, 1.0], [1.0, 3.0]], F32)


@pytest.mark.parametrize("enabled", [False, True])
@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.jnp.unique_counts(INTS),
        lambda ox: ox.jnp.unique_inverse(INTS),
        lambda ox: ox.jnp.unique_all(INTS),
        lambda ox: ox.jnp.linalg.eigh(M),
        lambda ox: ox.jnp.linalg.svd(M),
        lambda ox: ox.jnp.linalg.qr(M),
        lambda ox: ox.jnp.linalg.slogdet(M),
    ],
)
def test_named_tuple_results(program, enabled):
    with x64(enabled):
        agree_named(program)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.jnp.unique(INTS, return_counts=True),
        lambda ox: ox.jnp.unique(
            INTS, return_index=True, return_inverse=True, return_counts=True
        ),
        lambda ox: ox.jnp.unique(INTS, return_counts=True, size=5),
        lambda ox: ox.jnp.unique_values(INTS),
        lambda ox: ox.jit(lambda x: ox.jnp.unique(x, return_counts=True, size=4))(INTS),
    ],
)
def test_unique_with_x64(program):
    with x64():
        agree(program)
