"""lax.top_k as one primitive lowered to `chlo.top_k` (JAX's lowering, so XLA
never sorts the whole axis), checked against JAX with its derivative, its
batching rule and its reference rule."""

import numpy as np
import pytest

import olympus
from jax_oracle import agree
from olympus import lax
from olympus.backends.reference import evaluate

EDGES = np.float32([np.nan, 1.0, -0.0, np.inf, 0.0, -np.nan, -np.inf, 0.5, 1.0, -2.5])
GRID = np.random.default_rng(0).normal(size=(3, 5, 4)).astype(np.float32)


def test_lowers_to_chlo_top_k_without_a_sort():
    text = olympus.jit(lambda x: lax.top_k(x, 2, axis=1)).lower(GRID).as_text()
    assert "chlo.top_k" in text and "stablehlo.sort" not in text
    assert text.count("stablehlo.transpose") == 3  # axis 1 swapped with the last


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint8])
def test_edge_values_ties_and_signs_agree_with_jax(dtype):
    x = (
        EDGES.astype(dtype)
        if np.dtype(dtype).kind == "f"
        else np.arange(10, dtype=dtype) % 4
    )
    agree(lambda ox, x: ox.lax.top_k(x, 6), x)
    agree(lambda ox, x: ox.jit(lambda x: ox.lax.top_k(x, 10))(x), x)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_every_axis_under_jit_grad_and_vmap_agrees_with_jax(axis):
    def program(ox, x):
        values = lambda x: ox.lax.top_k(x, 2, axis=axis)[0]  # noqa: E731
        return (
            ox.lax.top_k(x, 2, axis=axis),
            ox.jit(lambda x: ox.lax.top_k(x, 2, axis=axis))(x),
            ox.grad(lambda x: (values(x) ** 2).sum())(x),
            ox.vmap(lambda x: ox.lax.top_k(x, 1, axis=axis), in_axes=2)(x),
        )

    agree(program, GRID)


def test_k_zero_and_the_whole_axis_agree_with_jax():
    agree(lambda ox, x: ox.lax.top_k(x, 0), GRID)
    agree(lambda ox, x: ox.lax.top_k(x, 4), GRID)


def test_bad_k_or_axis_raises_as_jax():
    with pytest.raises(ValueError, match="k=6 is out of range"):
        lax.top_k(GRID, 6)
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        lax.top_k(GRID, 1, axis=3)


def test_reference_rule_matches_the_compiled_program():
    x = np.tile(EDGES, (2, 1))
    closed = olympus.make_olympuspr(lambda x: lax.top_k(x, 7, axis=1))(x)
    assert [e.primitive.name for e in closed.olympuspr.eqns] == ["top_k"]
    want = olympus.jit(lambda x: lax.top_k(x, 7, axis=1))(x)
    for g, w in zip(evaluate(closed, x), want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_approx_max_and_min_k_rank_nan_as_jax(dtype, k):
    """JAX's CPU fallback compares with a plain > (<), so where NaN lands
    depends on k (for k = 1 a reduce, else an unstable sort): olympus emits
    the same program."""
    x = EDGES.astype(dtype)
    agree(lambda ox, x: ox.lax.approx_max_k(x, k), x)
    agree(lambda ox, x: ox.lax.approx_min_k(x, k), x)
    agree(lambda ox, x: ox.jit(lambda x: ox.lax.approx_max_k(x, k))(x), x)


def test_approx_k_along_an_axis_under_grad_and_vmap_agrees_with_jax():
    def program(ox, x):
        def top(x):
            return ox.lax.approx_max_k(x, 2, reduction_dimension=1)[0]

        return (
            ox.lax.approx_min_k(x, 1, reduction_dimension=0),
            ox.grad(lambda x: (top(x) ** 2).sum())(x),
            ox.vmap(lambda x: ox.lax.approx_max_k(x, 3), in_axes=2)(x),
        )

    agree(program, GRID)


def test_approx_k_reference_rule_matches_the_compiled_program():
    x = GRID[0]
    for k in (1, 3):
        closed = olympus.make_olympuspr(lambda x: lax.approx_min_k(x, k))(x)
        want = olympus.jit(lambda x: lax.approx_min_k(x, k))(x)
        for g, w in zip(evaluate(closed, x), want):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
