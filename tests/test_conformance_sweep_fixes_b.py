"""Regression tests for the op-by-op sweep's differences fixed in part B of
issue 32 (ufuncs, float bits, joining, sorting, set ops, lax ops), each
checked against JAX 0.10.2 through the oracle, eagerly and, where the
function traces, under jit and vmap."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from jax_oracle import agree, x64

BF16 = ml_dtypes.bfloat16
EDGE = [np.nan, 1.0, -0.0, np.inf, 0.5, -2.5, -np.inf, 0.0, -7.0, 3.25]


def agree_traced(fn, *args, vmap: bool = True):
    """fn agrees with JAX eagerly, under jit and (over a stack of 2) vmap."""
    agree(lambda ox, *a: fn(ox, *a), *args)
    agree(lambda ox, *a: ox.jit(lambda *b: fn(ox, *b))(*a), *args)
    if vmap:
        stacked = [np.stack([a, a]) for a in args]
        agree(lambda ox, *a: ox.vmap(lambda *b: fn(ox, *b))(*a), *stacked)


# ---- numpy/float_math.py, numpy/float_bits.py ------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32, np.int8])
def test_angle_of_a_0d_real_computes_in_the_default_float_as_jax(dtype):
    agree_traced(lambda ox, z: ox.jnp.angle(z), np.asarray(-2.5).astype(dtype))
    agree(lambda ox, z: ox.jnp.angle(z, deg=True), np.array([-1, 2], dtype))
    agree(lambda ox: ox.jnp.angle(1.0))
    with x64():
        agree(lambda ox, z: ox.jnp.angle(z), np.asarray(-1, dtype))


def test_ldexp_clips_a_wide_exponent_before_narrowing_as_jax():
    x = np.array([1.0, -7.0, 0.5, 2.0], np.float64)
    n = np.array([2**62, -(2**62), 2**40 + 3, -5], np.int64)
    with x64():
        agree_traced(lambda ox, x, n: ox.jnp.ldexp(x, n), x, n)
        agree(lambda ox, x, n: ox.jnp.ldexp(x, n), x.astype(np.float32), n.astype(np.uint64))  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32, np.int32])
def test_modf_fraction_is_x_minus_its_integral_part_as_jax(dtype):
    x = np.array(EDGE, np.float32).astype(dtype) if dtype != np.int32 else np.array([-7, 0, 3, -1], dtype)  # fmt: skip
    agree_traced(lambda ox, x: ox.jnp.modf(x), x)


def test_spacing_of_float16_steps_toward_plus_infinity_as_jax():
    x = np.array(EDGE + [-65504.0, 65504.0, -6e-8], np.float16)
    agree_traced(lambda ox, x: ox.jnp.spacing(x), x)
    agree(lambda ox, x: ox.jnp.spacing(x), x.astype(np.float32))


# ---- numpy/ufuncs.py ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["round", "around"])
def test_round_refuses_bool_and_negative_integer_decimals_as_jax(name):
    agree(lambda ox, x: getattr(ox.jnp, name)(x), np.array([True, False]))
    agree(lambda ox, x: getattr(ox.jnp, name)(x, -1), np.array([15, 25], np.int8))
    agree(lambda ox, x: getattr(ox.jnp, name)(x, 2), np.array([15, 25], np.int8))


@pytest.mark.parametrize("decimals", [-1, 2, 6])
def test_round_of_float16_scales_in_float32_as_jax(decimals):
    x = np.array([1.2345, -655.5, 60000.0, np.nan, -0.0], np.float16)
    agree_traced(lambda ox, x: ox.jnp.round(x, decimals), x)
    agree(lambda ox, x: ox.jnp.round(x, 40), np.array([1.25], np.float32))


@pytest.mark.parametrize("name", ["power", "pow"])
def test_integer_power_uses_the_exponents_low_six_bits_as_jax(name):
    base = np.array([0, 1, -1, 2, -7, 100, 2, 0, 3, -2], np.int64)
    exp = np.array([2, -7, 100, 2**63 - 1, -(2**63), 3, 64, 64, 65, -1], np.int64)
    with x64():
        agree_traced(lambda ox, a, b: getattr(ox.jnp, name)(a, b), base, exp)
    agree_traced(
        lambda ox, a, b: getattr(ox.jnp, name)(a, b),
        base.astype(np.int8),
        np.array([2, -7, 100, 127, -128, 3, 64, 64, 65, -1], np.int8),
    )


def test_select_needs_a_condition_as_jax():
    agree(lambda ox: ox.jnp.select([], []))
    agree(lambda ox, c: ox.jnp.select(c, c), np.zeros(0, np.int8))
    c, x = np.array([True, False, True]), np.array([1.0, 2.0, 3.0], np.float32)
    agree_traced(lambda ox, c, x: ox.jnp.select([c, ~c], [x, -x], 7.0), c, x)


def test_sign_refuses_bool_and_square_makes_it_int32_as_jax():
    b = np.array([True, False])
    agree(lambda ox, b: ox.jnp.sign(b), b)
    agree_traced(lambda ox, b: ox.jnp.square(b), b)
    agree(lambda ox: ox.jnp.square(True))
    agree(lambda ox, b: ox.jnp.power(b, 3), b)
    with x64():
        agree(lambda ox, b: ox.jnp.square(b), b)
        agree(lambda ox, b: ox.jnp.power(b, 2), b)


@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32])
def test_hypot_of_edge_values_as_jax(dtype):
    x = np.array(EDGE, np.float32).astype(dtype)
    agree_traced(lambda ox, a, b: ox.jnp.hypot(a, b), x, x[::-1].copy())


# ---- numpy/joining.py -------------------------------------------------------------
@pytest.mark.parametrize("obj", [2, -9, (0, 2), (5, -5, 1), slice(0, 3)])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_insert_clips_positions_and_places_values_as_jax(obj, axis):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    obj = np.array(obj) if isinstance(obj, tuple) else obj  # JAX refuses lists
    if axis == 0 and isinstance(obj, np.ndarray) and len(obj) == 3:
        values = np.int32(9)
    else:
        values = np.array([7.5, 8.5, 9.5][: 3 if axis != 0 else 1], np.float32)
    agree(lambda ox, a: ox.jnp.insert(a, obj, values, axis=axis), a)


def test_insert_wants_integer_positions_as_jax():
    a = np.arange(3, dtype=np.uint8)
    agree(lambda ox, a: ox.jnp.insert(a, np.array([True, False]), 5), a)
    agree(lambda ox, a: ox.jnp.insert(a, np.array([], np.float32), a), a)
    agree(lambda ox, a: ox.jnp.insert(a, np.uint8(2), np.array([4, 5], np.uint8)), a)
    agree(lambda ox, a: ox.jnp.insert(a, np.array([[1]]), 5), a)
    agree(lambda ox, a: ox.jit(lambda a: ox.jnp.insert(a, np.array([1, 9]), 5))(a), a)


def test_compress_wants_a_1d_condition_and_allows_false_extras_as_jax():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for condition in (np.array([1, 0, 2, 0, 0, 0, 0, 0], np.int8), np.array([0, 1])):
        for axis in (None, -1):
            agree(lambda ox, c, a: ox.jnp.compress(c, a, axis=axis), condition, a)
    agree(lambda ox, a: ox.jnp.compress(np.array([0, 0, 0, 1]), a, axis=1), a)
    agree(lambda ox, a: ox.jnp.compress(np.ones((2, 3), bool), a), a)
    agree(lambda ox, a: ox.jnp.compress(np.array(True), a), a)
    c = np.array([True, False, True])
    for size in (1, 4):
        agree_traced(
            lambda ox, c, a: ox.jnp.compress(c, a, axis=1, size=size, fill_value=-1),
            c, a, vmap=False,
        )  # fmt: skip


def test_trim_zeros_trims_every_axis_as_jax():
    x = np.array([[0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]], np.int8)
    for trim in ("fb", "f", "B", "x"):
        for axis in (None, 1, (0, 1)):
            agree(lambda ox, x: ox.jnp.trim_zeros(x, trim, axis=axis), x)
    agree(lambda ox, x: ox.jnp.trim_zeros(x), np.float32(0))
    agree(lambda ox, x: ox.jnp.trim_zeros(x), np.zeros((2, 3), np.float32))
    agree(lambda ox, x: ox.jnp.trim_zeros(x), np.array([0.0, -0.0, 1, 0, 2, 0]))


def test_choose_rollaxis_and_vsplit_as_jax():
    choices = [np.array([1.0, 2.0, 3.0]), np.array([-1.0, -2.0, -3.0])]
    agree(lambda ox, a: ox.jnp.choose(a, choices), np.array([0.0, 1.0, 1.0]))
    agree(lambda ox, a: ox.jnp.choose(a, choices), np.array([True, False, True]))
    agree_traced(lambda ox, a: ox.jnp.choose(a, choices, mode="wrap"), np.array([0, 3, -1]))  # fmt: skip
    agree(lambda ox, a: ox.jnp.rollaxis(a, 0), np.float32(1))
    agree(lambda ox, a: ox.jnp.rollaxis(a, 2, 0), np.zeros((2, 3, 4)))
    agree(lambda ox, a: ox.jnp.vsplit(a, 2), np.arange(4.0))
    agree(lambda ox, a: ox.jnp.vsplit(a, [1]), np.arange(6.0).reshape(3, 2))
    agree(lambda ox, a: ox.jnp.vsplit(a, 1), np.float32(1))


# ---- numpy/sorting.py, numpy/setops.py --------------------------------------------
@pytest.mark.parametrize("name", ["partition", "argpartition"])
@pytest.mark.parametrize(
    "x",
    [
        np.array([3.0, np.nan, -0.0, 1, 0.0, 1, -np.inf], np.float32),
        np.array([3, 0, 255, 1, 0, 7], np.uint8),
        np.array([[3, -1, 4], [1, 5, -9]], np.int32),
    ],
)
def test_partition_orders_as_jax(name, x):
    for kth in (0, 2, -1):
        agree(lambda ox, x: getattr(ox.jnp, name)(x, kth), x)
    agree_traced(lambda ox, x: getattr(ox.jnp, name)(x, 1, axis=0), x, vmap=False)
    agree(lambda ox, x: ox.vmap(lambda r: getattr(ox.jnp, name)(r, 1))(x), x)
    agree(lambda ox, x: getattr(ox.jnp, name)(x, np.array(1)), x)  # not static
    agree(lambda ox, x: getattr(ox.jnp, name)(x, 9), x)


def test_partition_refuses_bool_complex_and_0d_as_jax():
    agree(lambda ox, x: ox.jnp.partition(x, 1), np.array([True, False]))
    agree(lambda ox, x: ox.jnp.argpartition(x, 0), np.array([1j, 2]))
    agree(lambda ox, x: ox.jnp.partition(x, 0), np.float32(1))


def test_lexsort_of_0d_keys_and_its_index_dtype_as_jax():
    keys = np.array([[1, 0, 1], [2, 2, 1]], np.int8)
    agree(lambda ox, k: ox.jnp.lexsort(k), np.array([3, 1, 2], np.int8))
    agree_traced(lambda ox, k: ox.jnp.lexsort(k), keys, vmap=False)
    agree(lambda ox, k: ox.jnp.lexsort(k, axis=0), keys)
    agree(lambda ox: ox.jnp.lexsort([]))
    agree(lambda ox, k: ox.jnp.lexsort([k[0], k[0, :2]]), keys)
    with x64():
        agree(lambda ox, k: ox.jnp.lexsort(k), keys)


@pytest.mark.parametrize("dtype", [np.float16, BF16, np.int8, np.bool_])
def test_sort_complex_of_real_input_as_jax(dtype):
    x = np.array(EDGE, np.float32).astype(dtype)
    agree_traced(lambda ox, x: ox.jnp.sort_complex(x), x)
    with x64():
        agree(lambda ox, x: ox.jnp.sort_complex(x), x.astype(np.float64))
        agree(lambda ox, x: ox.jnp.sort_complex(x), np.array([3, 1], np.int32))


def test_setxor1d_keeps_a_nan_of_each_array_as_jax():
    a = np.array([np.nan, 1, -0.0, np.nan], np.float32)
    for b in (np.array([np.inf, 0.5, np.nan]), np.array([1.0, 2.0]), np.zeros(0)):
        agree(lambda ox, a, b: ox.jnp.setxor1d(a, b), a, b.astype(np.float32))
        agree(lambda ox, a, b: ox.jnp.setxor1d(b, a), a, b.astype(np.float32))
    agree(lambda ox, a: ox.jnp.setxor1d(a, a[:2]), np.array([3, 1, 3], np.int8))


@pytest.mark.parametrize(
    "name", ["unique_all", "unique_counts", "unique_inverse", "unique_values"]
)
def test_unique_results_are_jaxs_namedtuples(name):
    x = np.array([[3.0, np.nan, 1.0], [1.0, np.nan, -0.0]], np.float32)
    agree(lambda ox, x: getattr(ox.jnp, name)(x), x)
    if name != "unique_values":
        agree(lambda ox, x: getattr(ox.jnp, name)(x)._fields, x)
    agree(lambda ox, x: ox.jit(lambda y: getattr(ox.jnp, name)(y, size=4))(x), x)


# ---- numpy/reductions.py, products.py, linalg.py, indexing.py, arrays.py ----------
def test_products_of_bools_as_jax():
    b, c = np.array([True, False, True]), np.array([True, True, False])
    for name in ("dot", "inner", "vecdot", "kron"):
        agree(lambda ox, b, c: getattr(ox.jnp, name)(b, c), b, c)
        agree(lambda ox, b, c: getattr(ox.jnp, name)(b, c), b[0], c[0])
    agree(lambda ox, b, c: ox.jnp.vecdot(b, c), b[:0], c[:0])
    agree(lambda ox, b, c: ox.jnp.vecdot(b, c), np.stack([b, c]), c)
    agree(lambda ox, b: ox.jnp.dot(b, True, preferred_element_type=np.int32), b[1])
    agree_traced(lambda ox, b, c: ox.jnp.vecdot(b, c), b, c)


def test_argwhere_of_a_0d_array_has_the_default_int_dtype_as_jax():
    agree(lambda ox, x: ox.jnp.argwhere(x), np.float32(2))
    with x64():
        agree(lambda ox, x: ox.jnp.argwhere(x), np.float64(2))
        agree(lambda ox, x: ox.jnp.argwhere(x), np.int64(0))
        agree(lambda ox, x: ox.jnp.argwhere(x), np.array([[0, 2], [1, 0]]))


def test_take_with_bool_empty_and_wide_indices_as_jax():
    a = np.array([1.0, np.nan, -0.0], np.float32)
    agree(lambda ox, a, i: ox.jnp.take(a, i), a, np.array([True, False]))
    agree(lambda ox, a, i: ox.jnp.take(a, i), a[:0], np.zeros(0, np.float32))
    agree(lambda ox, a, i: ox.jnp.take(a, i), a[:0], np.array([0]))
    agree(lambda ox, a, i: ox.jnp.take(a, i), a, np.zeros((2, 0), np.int8))
    agree(lambda ox, a, i: ox.jnp.take(a, i), a, np.array([1.0]))
    agree(lambda ox, a: ox.jnp.take(a, np.zeros((0,), np.int32), axis=1), np.ones((2, 3)))  # fmt: skip
    wide = np.array([2**62, -(2**62), 2**32 + 1, -1, 2, -4], np.int64)
    with x64():
        for mode in (None, "clip", "fill", "wrap"):
            agree_traced(lambda ox, a, i: ox.jnp.take(a, i, mode=mode), a, wide, vmap=False)  # fmt: skip
        agree(lambda ox, a, i: ox.jnp.take(a, i), np.arange(3), wide)


def test_roll_by_bool_shifts_as_jax():
    a = np.array([1, 2, 3], np.int8)
    agree(lambda ox, a, s: ox.jnp.roll(a, s), a, np.array([True, False, True]))
    agree(lambda ox, a, s: ox.jnp.roll(a, s), a, np.array(True))
    agree(lambda ox, a, s: ox.jit(ox.jnp.roll)(a, s), a, np.array(True))
    agree(lambda ox, a, s: ox.jnp.roll(a, s), a[:0], np.zeros(0, bool))


# ---- lax/ops.py: max, min, clamp and select (the lowering and the reference tier) ---
def _on_every_tier(fn, *args):
    """fn agrees with JAX eagerly and under jit, and the reference interpreter
    gives jit's values."""
    agree_traced(lambda ox, *a: fn(ox, *a), *args, vmap=False)
    import olympus
    from jax_oracle import OLYMPUS
    from olympus.test_util import reference_call

    jitted = np.asarray(olympus.jit(lambda *a: fn(OLYMPUS, *a))(*args))
    reference = np.asarray(reference_call(lambda *a: fn(OLYMPUS, *a), *args))
    assert reference.dtype == jitted.dtype
    np.testing.assert_array_equal(reference, jitted)


def test_bool_max_min_and_clamp_are_or_and_as_jax():
    x = np.array([True, False, True, False])
    y = np.array([True, True, False, False])
    _on_every_tier(lambda ox, x, y: ox.lax.max(x, y), x, y)
    _on_every_tier(lambda ox, x, y: ox.lax.min(x, y), x, y)
    _on_every_tier(lambda ox, x, y: ox.lax.clamp(y, x, np.bool_(True)), x, y)
    _on_every_tier(lambda ox, x, y: ox.lax.clamp(np.bool_(False), x, y), x, y)
    agree(lambda ox, x, y: ox.lax.max(x, y), x[0], y[0])
    agree(lambda ox, x, y: ox.vmap(ox.lax.min)(x, y), x, y)


PREDICATES = {
    np.int8: [0, 1, -1, 2, -128, 127, 5],
    np.int32: [0, 1, -1, 2, -(2**31), 2**31 - 1, 5],
    np.uint8: [0, 1, 2, 255, 3, 0, 1],
}


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8])
def test_select_with_an_integer_predicate_takes_the_nearest_case_as_jax(dtype):
    pred = np.array(PREDICATES[dtype], dtype)
    on_true = np.arange(len(pred), dtype=np.float32)
    on_false = -on_true - 1
    select = lambda ox, p, t, f: ox.lax.select(p, t, f)  # noqa: E731
    _on_every_tier(select, pred, on_true, on_false)
    cases = [on_false, on_true, on_true * 10]
    _on_every_tier(lambda ox, p, *c: ox.lax.select_n(p, *c), pred, *cases)
    agree(
        lambda ox, *a: ox.vmap(lambda *b: select(ox, *b))(*a), pred, on_true, on_false
    )


def test_cumlogsumexp_of_an_empty_integer_axis_as_jax():
    for shape, axis in (((0,), 0), ((0, 3), 0), ((3, 0), 1), ((3, 0), 0), ((2,), 0)):
        agree(lambda ox, x: ox.lax.cumlogsumexp(x, axis=axis), np.zeros(shape, np.int8))
    agree(lambda ox, x: ox.jit(ox.lax.cumlogsumexp)(x), np.zeros(0, np.int32))
    agree(lambda ox, x: ox.lax.cumlogsumexp(x), np.zeros(0, bool))


# ---- issue 32's other items ---------------------------------------------------------
def test_jit_of_grad_with_integer_inputs_gives_host_float0_zeros_as_jax():
    x, n = np.ones(3, np.float32), np.arange(3)
    f = lambda x, n: (x * n).sum()  # noqa: E731
    both = lambda ox: ox.jit(ox.grad(f, argnums=(0, 1), allow_int=True))  # noqa: E731
    agree(lambda ox, x, n: both(ox)(x, n), x, n)
    agree(lambda ox, x, n: [both(ox)(x, n) for _ in range(3)], x, n)  # cached calls
    agree(lambda ox, x, n: ox.jit(lambda x, n: both(ox)(x, n))(x, n), x, n)
    agree(
        lambda ox, n: ox.jit(ox.grad(lambda n: 1.0 * n, allow_int=True))(n), np.int32(3)
    )
    agree(
        lambda ox, x, n: ox.jit(ox.value_and_grad(f, (0, 1), allow_int=True))(x, n),
        x, np.arange(3000).reshape(1000, 3),
    )  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_cumsum_rounds_as_jax_on_every_tier(dtype):
    """One reduce_window, as JAX: XLA's rewrite (blocks of 16) fixes the
    order of the additions; the reference rule adds in that order too."""
    x = (np.random.default_rng(0).standard_normal((3, 70)) * 10).astype(dtype)
    for axis, reverse in ((1, False), (1, True), (0, True)):
        run = lambda ox, x: ox.lax.cumsum(x, axis, reverse=reverse)  # noqa: E731
        _on_every_tier(run, x)
        agree(lambda ox, x: ox.vmap(lambda r: run(ox, r[None])[0])(x), x, rtol=0, atol=0)  # fmt: skip
    agree(lambda ox, x: ox.jnp.cumsum(x), x, rtol=0, atol=0)
    agree(lambda ox, x: ox.jit(ox.jnp.cumsum)(x, axis=1), x, rtol=0, atol=0)
    agree(lambda ox, x: ox.grad(lambda y: ox.jnp.cumsum(y).sum())(x), x[0].astype(np.float32))  # fmt: skip


_RANK3 = np.array([[1, 2, 3, 4], [2, 4, 6, 8], [1, 0, 1, 0], [0, 1, 1, 2]], np.float32)
_RANK4 = np.vstack([np.eye(5, dtype=np.float32)[:4], 2 * np.eye(5, dtype=np.float32)[:1]])  # fmt: skip


def test_det_gradient_at_singular_matrices_of_size_4_and_more_as_jax():
    det_grad = lambda ox, a: ox.grad(lambda a: ox.jnp.linalg.det(a).sum())(a)  # noqa: E731
    compiled = {}  # one jitted gradient per system: a compile per shape

    def jitted(ox, a):
        if ox.name not in compiled:
            compiled[ox.name] = ox.jit(lambda a: det_grad(ox, a))
        return compiled[ox.name](a)

    rank2 = _RANK3.copy()
    rank2[2] = 3 * rank2[0]
    for a in (_RANK3, rank2, np.zeros((4, 4), np.float32)):  # one compile
        agree(jitted, a)
    agree(det_grad, _RANK4)
    batch = np.stack([np.random.RandomState(1).normal(size=(5, 5)), _RANK4])
    agree(lambda ox, a: ox.vmap(ox.grad(ox.jnp.linalg.det))(a), batch.astype(np.float32), rtol=1e-4, atol=1e-5)  # fmt: skip
    agree(lambda ox, a: ox.jvp(ox.jnp.linalg.det, (a,), (a,)), batch[0], rtol=1e-4)
    agree(jitted, np.array([[3.0]], np.float32))
    with x64():
        agree(jitted, _RANK4.astype(np.float64))


@pytest.mark.parametrize(
    "args",
    [([1, 2, 3], 1, 9), ("arange", [0, 2], 5), ("arange", 1, [7, 8])],
    ids=["arr", "obj", "values"],
)
def test_insert_refuses_lists_as_jax(args):
    """jnp.insert takes no Python list in any argument (JAX's TypeError)."""
    arr, obj, values = args
    agree(
        lambda ox: ox.jnp.insert(
            ox.jnp.arange(3) if arr == "arange" else arr, obj, values
        )
    )
