"""Helpers for olympus's tests: seeded inputs and comparisons against references.

Every test that checks a value goes through one of these, so tolerances,
low-precision handling and the jit-vs-eager contract live in one place:

    rng = np.random.default_rng(0)
    x = rand_normal(rng, (3,), np.float32)
    check_against_numpy(lax.sin, np.sin, (x,))
    check_jit_matches_eager(lambda x: lax.sin(x) * 2.0, (x,))
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from olympus.ir import dtypes

# ---- seeded random inputs ----------------------------------------------------


def rand_normal(rng: np.random.Generator, shape: Sequence[int], dtype=np.float32) -> np.ndarray:
    """Standard-normal values (complex dtypes get normal real and imaginary parts)."""
    dtype = np.dtype(dtype)
    values = rng.standard_normal(tuple(shape))
    if dtypes.is_complex(dtype):
        values = values + 1j * rng.standard_normal(tuple(shape))
    return np.asarray(values).astype(dtype)


def rand_uniform(rng, shape, dtype=np.float32, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """Uniform values in [low, high)."""
    return np.asarray(rng.uniform(low, high, tuple(shape))).astype(dtype)


def rand_positive(rng, shape, dtype=np.float32) -> np.ndarray:
    """Values in [0.5, 2.5): safe for log, sqrt, rsqrt and division."""
    return rand_uniform(rng, shape, dtype, 0.5, 2.5)


def rand_int(rng, shape, dtype=np.int32, low: int = -5, high: int = 6) -> np.ndarray:
    """Integers in [low, high) (low is raised to 0 for unsigned dtypes)."""
    dtype = np.dtype(dtype)
    if dtypes.is_unsigned_int(dtype):
        low = max(low, 0)
    return np.asarray(rng.integers(low, high, tuple(shape))).astype(dtype)


def rand_nonzero_int(rng, shape, dtype=np.int32) -> np.ndarray:
    """Integers in [-5, 5] without 0: safe divisors."""
    values = rand_int(rng, shape, dtype, 1, 6)
    if dtypes.is_signed_int(np.dtype(dtype)):
        values = values * np.where(rng.integers(0, 2, tuple(shape)) == 1, 1, -1).astype(dtype)
    return values


def rand_bool(rng, shape) -> np.ndarray:
    return np.asarray(rng.integers(0, 2, tuple(shape))).astype(np.bool_)


def rand_like(rng, shape, dtype) -> np.ndarray:
    """A generic generator: normal floats/complex, small ints, random bools."""
    dtype = np.dtype(dtype)
    if dtype == dtypes.bool_:
        return rand_bool(rng, shape)
    if dtypes.is_integer(dtype):
        return rand_int(rng, shape, dtype)
    return rand_normal(rng, shape, dtype)


# ---- tolerances --------------------------------------------------------------
_TOLERANCES = {  # dtype -> (rtol, atol)
    dtypes.bfloat16: (2e-2, 2e-2),
    dtypes.float16: (2e-3, 2e-3),
    dtypes.float32: (2e-5, 1e-6),
    dtypes.complex64: (2e-5, 1e-6),
    dtypes.float64: (1e-12, 1e-14),
    dtypes.complex128: (1e-12, 1e-14),
}


def tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) for comparing results of `dtype`; exact for ints and bools."""
    return _TOLERANCES.get(np.dtype(dtype), (0.0, 0.0))


_LOW_PRECISION = (dtypes.bfloat16, dtypes.float16)


def _reference_input(x):
    """NumPy computes bf16/f16 badly or not at all: the reference sees f32."""
    x = np.asarray(x) if isinstance(x, (np.ndarray, np.generic)) else x
    if isinstance(x, np.ndarray) and x.dtype in _LOW_PRECISION:
        return x.astype(np.float32)
    return x


def assert_allclose(actual, expected, rtol=None, atol=None, check_dtypes=True, err_msg=""):
    """Compares an olympus result with a reference: shape, dtype, then values.

    The expected dtype is canonicalised (float64 means float32 unless x64 is
    on), and the tolerance is the one of the result's dtype unless given.
    """
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (
        f"{err_msg} shape {actual.shape} != expected {expected.shape}"
    )
    if check_dtypes:
        want = dtypes.canonicalize_dtype(expected.dtype)
        assert actual.dtype == want, f"{err_msg} dtype {actual.dtype} != expected {want}"
    default_rtol, default_atol = tolerance(actual.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if actual.dtype in _LOW_PRECISION:
        actual = actual.astype(np.float32)
    np.testing.assert_allclose(
        actual, expected.astype(actual.dtype), rtol=rtol, atol=atol, err_msg=err_msg
    )


def check_against_numpy(
    olympus_fn: Callable,
    numpy_fn: Callable,
    args: Sequence,
    rtol: float | None = None,
    atol: float | None = None,
    check_dtypes: bool = True,
) -> None:
    """Asserts `olympus_fn(*args)` equals `numpy_fn(*args)` within the dtype's tolerance.

    Low-precision inputs (bf16, f16) reach `numpy_fn` as float32; its result is
    then expected in the low-precision dtype. Multiple outputs compare pairwise.
    """
    actual = olympus_fn(*args)
    expected = numpy_fn(*map(_reference_input, args))
    low = [np.asarray(a).dtype for a in args if np.asarray(a).dtype in _LOW_PRECISION]
    actual_list = actual if isinstance(actual, (tuple, list)) else [actual]
    expected_list = expected if isinstance(expected, (tuple, list)) else [expected]
    assert len(actual_list) == len(expected_list), "different numbers of outputs"
    for i, (a, e) in enumerate(zip(actual_list, expected_list)):
        e = np.asarray(e)
        if low and np.asarray(a).dtype in _LOW_PRECISION and e.dtype in (np.float32, np.float64):
            e = e.astype(np.asarray(a).dtype)
        assert_allclose(a, e, rtol, atol, check_dtypes, err_msg=f"output {i}:")


def check_jit_matches_eager(fn: Callable, args: Sequence, rtol=None, atol=None, **jit_kwargs) -> None:
    """Asserts `jit(fn)` gives eager `fn`'s results and that a second call with
    arguments of the same types does not trace `fn` again (it hits the cache)."""
    from olympus.api import jit
    from olympus.tracer.pytree import tree_flatten

    traces = []

    def counted(*a, **k):
        traces.append(1)
        return fn(*a, **k)

    jitted = jit(counted, **jit_kwargs)
    eager = tree_flatten(fn(*args))[0]
    first = tree_flatten(jitted(*args))[0]
    second = tree_flatten(jitted(*args))[0]
    assert len(traces) == 1, f"jit traced {len(traces)} times for two identical calls"
    assert len(first) == len(eager), "jit and eager return different numbers of outputs"
    for i, (e, a, b) in enumerate(zip(eager, first, second)):
        e = np.asarray(e)
        assert_allclose(a, e, rtol, atol, err_msg=f"jit output {i} vs eager:")
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg="second jit call")
