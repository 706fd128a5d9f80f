"""Helpers for olympus's tests: seeded inputs and comparisons against references.

Every test that checks a value goes through one of these, so tolerances,
low-precision handling and the jit-vs-eager contract live in one place:

    >>> from olympus.test_util import check_against_numpy, check_jit_matches_eager
    >>> from olympus.test_util import rand_normal
    >>> rng = np.random.default_rng(0)
    >>> x = rand_normal(rng, (3,), np.float32)
    >>> check_against_numpy(lax.sin, np.sin, (x,))
    >>> check_jit_matches_eager(lambda x: lax.sin(x) * 2.0, (x,))
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from olympus.ir import dtypes

# ---- seeded random inputs ----------------------------------------------------


def rand_normal(
    rng: np.random.Generator, shape: Sequence[int], dtype=np.float32
) -> np.ndarray:
    """Standard-normal values (complex dtypes get normal real and imaginary parts)."""
    dtype = np.dtype(dtype)
    values = rng.standard_normal(tuple(shape))
    if dtypes.is_complex(dtype):
        values = values + 1j * rng.standard_normal(tuple(shape))
    return np.asarray(values).astype(dtype)


def rand_uniform(
    rng, shape, dtype=np.float32, low: float = -1.0, high: float = 1.0
) -> np.ndarray:
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
        values = values * np.where(rng.integers(0, 2, tuple(shape)) == 1, 1, -1).astype(
            dtype
        )
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


def assert_allclose(
    actual, expected, rtol=None, atol=None, check_dtypes=True, err_msg=""
):
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
        assert actual.dtype == want, (
            f"{err_msg} dtype {actual.dtype} != expected {want}"
        )
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
        if (
            low
            and np.asarray(a).dtype in _LOW_PRECISION
            and e.dtype in (np.float32, np.float64)
        ):
            e = e.astype(np.asarray(a).dtype)
        assert_allclose(a, e, rtol, atol, check_dtypes, err_msg=f"output {i}:")


def reference_call(fun: Callable, *args, **kwargs):
    """`fun(*args)` computed by tracing it to an olympuspr and interpreting that
    with NumPy (olympus.backends.reference); the outputs keep `fun`'s pytree
    structure."""
    from olympus.api import make_olympuspr
    from olympus.backends.reference import evaluate
    from olympus.tree_util import tree_flatten, tree_unflatten

    closed, out_shape = make_olympuspr(fun, return_shape=True)(*args, **kwargs)
    leaves, _ = tree_flatten((args, kwargs))
    outs = evaluate(closed, *leaves)
    _, out_tree = tree_flatten(out_shape)
    return tree_unflatten(out_tree, outs)


def check_reference_against_numpy(
    olympus_fn: Callable, numpy_fn: Callable, args: Sequence, **tolerances
) -> None:
    """check_against_numpy with `olympus_fn` traced once and run by the NumPy
    reference interpreter: the semantics of many cases without an XLA compile
    for each (test XLA itself with jit-vs-eager and gradient checks)."""
    check_against_numpy(
        lambda *a: reference_call(olympus_fn, *a), numpy_fn, args, **tolerances
    )


def check_jit_matches_eager(
    fn: Callable, args: Sequence, rtol=None, atol=None, **jit_kwargs
) -> None:
    """Asserts `jit(fn)` gives eager `fn`'s results and that a second call with
    arguments of the same types does not trace `fn` again (it hits the cache).

    The second call passes the arguments as device Arrays, so it also goes
    through jit's fast path for Array arguments.
    """
    from olympus.api import device_put, jit
    from olympus.tracer.pytree import tree_flatten

    traces = []

    def counted(*a, **k):
        traces.append(1)
        return fn(*a, **k)

    jitted = jit(counted, **jit_kwargs)
    eager = tree_flatten(fn(*args))[0]
    first = tree_flatten(jitted(*args))[0]
    second = tree_flatten(jitted(*device_put(tuple(args))))[0]
    assert len(traces) == 1, f"jit traced {len(traces)} times for two identical calls"
    assert len(first) == len(eager), "jit and eager return different numbers of outputs"
    for i, (e, a, b) in enumerate(zip(eager, first, second)):
        if hasattr(e, "weak_type") and hasattr(a, "weak_type"):
            assert e.weak_type == a.weak_type, (
                f"jit output {i}: weak_type differs from eager"
            )
        e = np.asarray(e)
        assert_allclose(a, e, rtol, atol, err_msg=f"jit output {i} vs eager:")
        np.testing.assert_array_equal(
            np.asarray(a), np.asarray(b), err_msg="second jit call"
        )


# ---- gradients against finite differences --------------------------------------
def _float_leaves(tree) -> tuple[list, object]:
    from olympus.tree_util import tree_flatten

    leaves, treedef = tree_flatten(tree)
    return [np.asarray(x) if not hasattr(x, "aval") else x for x in leaves], treedef


def _is_float(x) -> bool:
    return dtypes.is_inexact(np.asarray(x).dtype)


def _random_like(rng, leaves) -> list:
    return [
        rng.standard_normal(np.shape(x)).astype(np.asarray(x).dtype)
        if _is_float(x)
        else np.zeros(np.shape(x), np.asarray(x).dtype)
        for x in leaves
    ]


def _inner_product(xs, ys) -> float:
    return float(
        sum(
            np.vdot(np.asarray(x, np.float64), np.asarray(y, np.float64)).real
            for x, y in zip(xs, ys)
            if _is_float(x)
        )
    )


def _numerical_jvp(f, args, tangents, eps) -> list:
    """Central differences along `tangents`, leaf by leaf of f's output."""
    from olympus.tree_util import tree_flatten, tree_unflatten

    leaves, treedef = tree_flatten(args)

    def shifted(sign):
        moved = [
            np.asarray(x) + sign * eps * t if _is_float(x) else x
            for x, t in zip(leaves, tangents)
        ]
        moved = [
            m.astype(np.asarray(x).dtype) if _is_float(x) else m
            for m, x in zip(moved, leaves)
        ]
        return [
            np.asarray(o, np.float64)
            for o in tree_flatten(f(*tree_unflatten(treedef, moved)))[0]
        ]

    return [(p - m) / (2 * eps) for p, m in zip(shifted(+1), shifted(-1))]


def _grad_tolerances(args, eps, atol, rtol):
    leaves = [x for x in _float_leaves(args)[0] if _is_float(x)]
    wide = any(np.asarray(x).dtype in (np.float64, np.complex128) for x in leaves)
    default_eps, default_tol = (1e-6, 1e-5) if wide else (1e-3, 2e-2)
    return (
        default_eps if eps is None else eps,
        default_tol if atol is None else atol,
        default_tol if rtol is None else rtol,
    )


def check_grads(
    f: Callable,
    args: Sequence,
    order: int,
    modes=("fwd", "rev"),
    atol=None,
    rtol=None,
    eps=None,
    seed: int = 0,
) -> None:
    """Checks f's derivatives up to `order` against central finite differences.

    "fwd" compares jvp(f) with the numerical directional derivative; "rev"
    checks that <t, vjp(f)(ct)> = <jvp(f)(t), ct> with the numerical jvp. For
    order > 1 the same checks run on the jvp and vjp functions themselves.
    Float64 arguments (with x64 enabled) allow tight tolerances; float32 ones
    get eps=1e-3 and 2e-2 tolerances.
    """
    import olympus

    args = tuple(args)
    eps, atol, rtol = _grad_tolerances(args, eps, atol, rtol)
    rng = np.random.default_rng(seed)
    leaves, treedef = _float_leaves(args)
    from olympus.tree_util import tree_flatten, tree_unflatten

    tangents = _random_like(rng, leaves)
    tangent_tree = tree_unflatten(treedef, tangents)
    if "fwd" in modes:
        _, t_out = olympus.jvp(f, args, tuple(tangent_tree))
        expected = _numerical_jvp(f, args, tangents, eps)
        for got, want in zip(tree_flatten(t_out)[0], expected):
            np.testing.assert_allclose(
                np.asarray(got, np.float64),
                want,
                atol=atol,
                rtol=rtol,
                err_msg="jvp does not match finite differences",
            )
    out, pullback = olympus.vjp(f, *args)
    out_leaves, out_tree = tree_flatten(out)
    cts = _random_like(rng, [np.asarray(o) for o in out_leaves])
    ct_tree = tree_unflatten(out_tree, cts)
    if "rev" in modes:
        cts_in = tree_flatten(pullback(ct_tree))[0]
        got = _inner_product(tangents, cts_in)
        want = _inner_product(_numerical_jvp(f, args, tangents, eps), cts)
        np.testing.assert_allclose(
            got,
            want,
            atol=atol,
            rtol=rtol,
            err_msg="vjp does not match finite differences",
        )
    if order > 1:
        if "fwd" in modes:

            def f_jvp(*primals):
                return olympus.jvp(f, primals, tuple(tangent_tree))[1]

            check_grads(f_jvp, args, order - 1, modes, atol, rtol, eps, seed + 1)
        if "rev" in modes:

            def f_vjp(*primals):
                return olympus.vjp(f, *primals)[1](ct_tree)

            check_grads(f_vjp, args, order - 1, modes, atol, rtol, eps, seed + 1)
