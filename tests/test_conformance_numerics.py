"""Numerics and gradients against JAX 0.10.2 (issue 32, part "numerics").

Each test runs one program under olympus and JAX through the oracle
(`tests/jax_oracle.py`) and asserts that they agree in structure, dtype, weak
type and value: integer division by zero, half-precision accumulation,
quantile methods, gradients at kinks, sorting's total order, and so on.
"""

from __future__ import annotations

import numpy as np
import pytest
from jax_oracle import agree

_SIGNED = ["int8", "int16", "int32"]
_UNSIGNED = ["uint8", "uint32"]


def _dividends(dtype):
    if dtype.startswith("u"):
        return np.array([5, 0, 7, 200, 1], dtype), np.array([0, 3, 0, 2, 0], dtype)
    x = np.array([5, -5, 0, 7, -128, 3, 1], dtype)
    return x, np.array([0, 3, 0, -2, -1, 2, 0], dtype)


# --- integer and float division -------------------------------------------------


@pytest.mark.parametrize("dtype", _SIGNED + _UNSIGNED + ["float32", "float16"])
def test_division_by_zero_and_signs(dtype):
    x, y = _dividends(dtype)
    zeros = np.zeros_like(x)
    agree(lambda ox: ox.jnp.floor_divide(x, zeros))
    agree(lambda ox: ox.jnp.remainder(x, zeros))
    agree(lambda ox: ox.jnp.divmod(x, y))
    agree(lambda ox: ox.jnp.fmod(x, y))
    agree(lambda ox: (ox.jnp.asarray(x) // y, ox.jnp.asarray(x) % y))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32"])
def test_division_jit_matches_eager(dtype):
    x, y = _dividends(dtype)
    ops = lambda ox: (
        lambda a, b: (a // b, a % b, ox.jnp.divmod(a, b), ox.jnp.fmod(a, b))
    )  # noqa: E731
    ours, _ = agree(lambda ox: ox.jit(ops(ox))(x, y))
    eager, _ = agree(lambda ox: ops(ox)(ox.jnp.asarray(x), ox.jnp.asarray(y)))
    for a, b in zip(ours[:2], eager[:2]):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_float_floor_divide_uses_the_exact_remainder():
    x = np.array([1.0, -1.0, 7.0, -0.0, np.inf, 5.0], np.float32)
    y = np.array([0.1, 0.1, -2.0, 3.0, 2.0, 0.0], np.float32)
    ours, _ = agree(lambda ox: ox.jnp.floor_divide(x, y))
    assert float(np.asarray(ours)[0]) == 9.0  # 1 // 0.1 as in Python
    agree(lambda ox: ox.jnp.divmod(x, y))
    agree(lambda ox: (ox.jnp.array([7.0, 3.0]) // 2, 7 % ox.jnp.array([0, 3])))
