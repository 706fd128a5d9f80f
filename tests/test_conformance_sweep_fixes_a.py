"""Differences the op-by-op sweep (tests/test_conformance_sweep.py) found in
array construction, statistics, polynomials, nan-functions and index tricks,
fixed: each test runs the sweep's kind of call (and the edge cases behind the
fix) under olympus and JAX 0.10.2 and checks they agree, eagerly and, where
the function traces, under jit and vmap."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from jax_oracle import agree, x64

BF16 = ml_dtypes.bfloat16


# ---- construction: arange, linspace, meshgrid ------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        (np.int8(3),),  # the bounds' dtype, not the default int
        (np.uint8(7),),
        (np.float16(2.5),),
        (np.array(np.nan, BF16),),  # JAX's length of NaN in bfloat16 is 0
        (np.float32(np.nan),),  # ... and in float32 an error
        (np.True_,),  # no bool iota
        (np.array([1, 2]),),  # not a scalar
        (1 + 2j,),
        (1, 7, 2),
        (-2, 3, 1, np.uint8),
        (0.5, 3.0, 0.3),
        (np.float16(1), np.float16(3), np.float16(0.1)),  # computed in float32
        (np.int8(-7), np.int8(100), np.int8(3)),
        (5, 1, -1),
    ],
)
def test_arange_dtype_and_values_as_jax(args):
    agree(lambda ox, *a: ox.jnp.arange(*a), *args)


def test_arange_under_jit_and_x64_as_jax():
    agree(lambda ox: ox.jit(lambda: ox.jnp.arange(np.int8(2), 9, 3))())
    with x64():
        agree(lambda ox, n: ox.jnp.arange(n), np.int64(4))
        agree(lambda ox, n: ox.jnp.arange(n), np.float64(2.5))


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((np.float16(0), np.float16(1)), {}),  # float16 stays float16
        ((np.array(np.nan, BF16), np.array(1, BF16)), {}),
        ((np.int8(3), np.int8(-7)), {}),
        ((0, 10), dict(num=4, dtype=np.int32)),  # floored, as JAX
        ((0, 5), dict(num=4, dtype=np.bool_)),
        ((np.array([1.0, 2.0]), np.array([[3.0], [4.0]])), dict(num=3, axis=-1)),
        ((1.0, 2.0), dict(num=1)),
        ((1.0, 2.0), dict(num=0, retstep=True)),
        ((1.0, 2.0), dict(num=1, endpoint=False, retstep=True)),
        ((1.0, 2.0), dict(num=5, endpoint=False, retstep=True)),
        ((-np.inf, np.inf), dict(num=4)),
        ((1.0, 2.0), dict(num=-1)),
    ],
)
def test_linspace_dtype_and_values_as_jax(args, kwargs):
    agree(lambda ox, *a: ox.jnp.linspace(*a, **kwargs), *args)


def test_linspace_under_jit_and_vmap_as_jax():
    a, b = np.float16(1), np.float16(3)
    agree(lambda ox, a, b: ox.jit(lambda a, b: ox.jnp.linspace(a, b, 5))(a, b), a, b)
    ends = np.array([2.0, 4.0], np.float32)
    agree(lambda ox, e: ox.vmap(lambda e: ox.jnp.linspace(0.0, e, 3))(e), ends)


@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_meshgrid_takes_only_1d_arrays_as_jax(shape):
    agree(lambda ox, x: ox.jnp.meshgrid(x), np.ones(shape, np.float32))
    agree(lambda ox, x: ox.jnp.meshgrid(x, x, indexing="ij"), np.ones(shape))


def test_meshgrid_of_vectors_as_jax():
    a, b = np.arange(3.0), np.arange(2, dtype=np.int8)
    for kwargs in ({}, dict(indexing="ij"), dict(sparse=True)):
        agree(lambda ox, a, b: ox.jnp.meshgrid(a, b, **kwargs), a, b)
    agree(lambda ox, a, b: ox.jit(lambda a, b: ox.jnp.meshgrid(a, b, a))(a, b), a, b)
