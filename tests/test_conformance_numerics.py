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


# --- half-precision reductions accumulate in float32 ----------------------------

_HALVES = ["float16", "bfloat16"]


@pytest.mark.parametrize("dtype", _HALVES)
@pytest.mark.parametrize("name", ["sum", "mean", "var", "std", "prod", "nansum"])
def test_half_reductions_accumulate_in_float32(dtype, name):
    x = np.full(4096, 0.1, np.float32).astype(dtype)
    if name == "prod":
        x = np.full(64, 1.01, np.float32).astype(dtype)
    agree(lambda ox: getattr(ox.jnp, name)(ox.jnp.asarray(x)))
    agree(lambda ox: ox.jit(getattr(ox.jnp, name))(x))


def test_half_sum_is_exact_to_one_rounding():
    x = np.full(4096, 0.1, np.float16)
    ours, _ = agree(lambda ox: ox.jnp.sum(ox.jnp.asarray(x)))
    assert float(ours) == 409.5  # 408.2 when summed in float16 steps


def test_half_sum_in_the_interpreter_tier_matches_compiled():
    import olympus
    import olympus.numpy as jnp

    x = np.full(4096, 0.1, np.float16)
    tiered = olympus.jit(jnp.sum, tiered=True)(x)  # first call: interpreted
    compiled = olympus.jit(jnp.sum)(x)
    assert float(tiered) == float(compiled) == 409.5


@pytest.mark.parametrize("dtype", ["float16", "float32", None])
def test_mean_var_with_dtype_and_ddof(dtype):
    x = np.arange(12, dtype=np.float16).reshape(3, 4) * np.float16(0.1)
    agree(lambda ox: ox.jnp.mean(x, axis=1, dtype=dtype))
    agree(lambda ox: ox.jnp.var(x, axis=0, dtype=dtype, ddof=1))
    agree(lambda ox: ox.jnp.std(x, axis=1, ddof=4))  # count 0: NaN
    agree(lambda ox: ox.jnp.var(ox.jnp.ones(3), ddof=5))


# --- quantiles: every method JAX accepts, NaN propagation ------------------------

_ROWS = np.array(
    [[1.0, 5.0, 2.0, 8.0, 3.0], [4.0, np.nan, 0.0, 1.0, 1.0], [np.nan] * 5], np.float32
)
_QS = np.array([0.0, 0.1, 0.25, 0.5, 0.6, 1.0], np.float32)
_METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf"]


@pytest.mark.parametrize("method", _METHODS + ["hazen"])
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_methods(name, method):
    fn = lambda ox: getattr(ox.jnp, name)  # noqa: E731
    agree(lambda ox: fn(ox)(_ROWS, _QS, axis=1, method=method))
    agree(lambda ox: fn(ox)(_ROWS, 0.3, axis=1, method=method, keepdims=True))
    agree(lambda ox: ox.jit(lambda a: fn(ox)(a, _QS, axis=0, method=method))(_ROWS))


def test_median_and_percentile_as_jax():
    agree(lambda ox: (ox.jnp.median(_ROWS, axis=1), ox.jnp.nanmedian(_ROWS, axis=1)))
    agree(lambda ox: ox.jnp.median(_ROWS, axis=(0, 1), keepdims=True))
    agree(lambda ox: ox.jnp.percentile(np.arange(6), 30))
    agree(lambda ox: ox.jnp.nanpercentile(np.arange(6), np.array([30, 70])))
    agree(lambda ox: ox.jnp.median(np.array([3e38], np.float32)))  # midpoint: inf
    agree(lambda ox: ox.vmap(ox.jnp.median)(_ROWS))
    agree(lambda ox: ox.grad(lambda a: ox.jnp.quantile(a, 0.3))(_ROWS[0]))


def test_weighted_inverted_cdf():
    x, w = np.array([1.0, 2, np.nan, 4, 5]), np.array([1.0, 1, 1, 2, 1])
    agree(lambda ox: ox.jnp.nanquantile(x, 0.5, method="inverted_cdf", weights=w))
    agree(lambda ox: ox.jnp.quantile(x, 0.5, method="inverted_cdf", weights=w))
    agree(lambda ox: ox.jnp.quantile(x, 0.5, method="linear", weights=w))  # raises
    bad = np.array([1.0, -1, 1, 2, 1])  # a negative weight: NaN
    agree(
        lambda ox: ox.jnp.quantile(
            _ROWS[:2], np.array([0.2, 0.7]), axis=1, method="inverted_cdf", weights=bad
        )
    )


# --- softmax, log_softmax, logsumexp at their edges -----------------------------

_NONE, _FIRST = np.array([False, False]), np.array([True, False])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_masks_and_infinities(name):
    fn = lambda ox: getattr(ox.nn, name)  # noqa: E731
    x = np.array([1.0, 2.0], np.float32)
    agree(lambda ox: fn(ox)(x, where=_NONE))  # softmax: 0s, not NaN
    agree(lambda ox: fn(ox)(x, where=_FIRST))
    agree(lambda ox: ox.grad(lambda v: fn(ox)(v, where=_FIRST)[0])(x))
    agree(lambda ox: fn(ox)(np.array([np.inf, 1.0])))  # NaN, as JAX
    agree(lambda ox: fn(ox)(np.array([-np.inf, -np.inf])))
    agree(lambda ox: ox.grad(lambda v: fn(ox)(v)[2])(np.array([-np.inf, 0.0, 1.0])))
    agree(lambda ox: fn(ox)(np.zeros((2, 0), np.float32)))


def test_logsumexp_edges():
    lse = lambda ox: ox.scipy.special.logsumexp  # noqa: E731
    x = np.array([1.0, 2.0], np.float32)
    agree(lambda ox: lse(ox)(np.zeros((2, 0), np.float32), axis=1))  # -inf
    agree(lambda ox: ox.nn.logsumexp(np.zeros((0,), np.float32)))
    agree(lambda ox: lse(ox)(x, where=_NONE))
    agree(lambda ox: lse(ox)(x, b=np.array([1.0, -1.0])))  # negative: NaN
    agree(lambda ox: lse(ox)(x, b=np.array([1.0, -1.0]), return_sign=True))
    agree(lambda ox: lse(ox)(x, b=np.array([0.0, 0.0]), return_sign=True))
    agree(lambda ox: lse(ox)(np.array([np.inf, 1.0]), b=np.array([0.0, 1.0])))
    agree(lambda ox: lse(ox)(np.array([np.inf, -np.inf])))
    agree(lambda ox: lse(ox)(np.array([1, 2]), b=2))
    agree(lambda ox: lse(ox)(np.array([1 + 1j, 2 - 1j], np.complex64)))
    agree(lambda ox: ox.grad(lse(ox), argnums=(0, 1))(x, np.array([0.0, 2.0])))
    agree(lambda ox: ox.grad(lambda v: lse(ox)(v, where=_FIRST))(x))
    agree(lambda ox: ox.nn.logmeanexp(x, where=_NONE))


# --- sorting: JAX's canonical total order ---------------------------------------

_SORTABLE = np.array(
    [1.0, 0.0, -0.0, np.nan, 2.0, -np.inf, -np.nan, 1.0, 0.0], np.float32
)


@pytest.mark.parametrize("stable", [True, False])
@pytest.mark.parametrize("descending", [True, False])
def test_sort_and_argsort_ties_zeros_and_nans(stable, descending):
    kw = dict(stable=stable, descending=descending)
    agree(lambda ox: ox.jnp.sort(_SORTABLE, **kw))
    agree(lambda ox: ox.jnp.argsort(_SORTABLE, **kw))
    agree(lambda ox: ox.jnp.argsort(np.array([3, 1, 3, 2, 1]), **kw))
    square = _SORTABLE.reshape(3, 3)
    agree(lambda ox: ox.jit(lambda a: ox.jnp.argsort(a, axis=0, **kw))(square))


def test_lax_sort_total_order_in_every_tier():
    agree(lambda ox: ox.lax.sort(_SORTABLE))  # -0.0 ties 0.0; -NaN sorts last
    agree(lambda ox: ox.lax.sort_key_val(_SORTABLE, np.arange(9)))
    agree(lambda ox: ox.vmap(lambda a: ox.jnp.argsort(a, descending=True))(_SORTABLE.reshape(3, 3)))  # fmt: skip
    import olympus

    tiered = olympus.jit(olympus.lax.sort, tiered=True)(_SORTABLE)  # interpreted
    compiled = olympus.jit(olympus.lax.sort)(_SORTABLE)
    np.testing.assert_array_equal(np.signbit(tiered), np.signbit(compiled))


def test_sort_complex_and_top_k():
    z = np.array([1 + 2j, 1 - 1j, 5j, np.nan + 0j, -0.0 + 1j, 1j], np.complex64)
    agree(lambda ox: ox.jnp.sort_complex(z))
    agree(lambda ox: ox.jnp.sort(z, descending=True))
    signed = np.append(_SORTABLE, np.float32(-0.0))
    for k in (1, 4, 10):
        agree(lambda ox: ox.lax.top_k(signed, k))  # total order: NaN first, 0 > -0
    agree(lambda ox: ox.lax.top_k(np.array([3, 1, 3, -5], np.int8), 3))


# --- float to int conversion saturates in every tier -----------------------------

_TO_INT = np.array(
    [np.nan, np.inf, -np.inf, 3e9, -3e9, 300.0, -5.0, 2.7, -2.7, 255.9, -0.5],
    np.float32,
)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "uint32", "bool"])
@pytest.mark.parametrize("source", ["float32", "float16"])
def test_float_to_int_saturates_in_the_interpreter_tier(source, dtype):
    import olympus

    x = _TO_INT.astype(source)
    convert = lambda a: a.astype(dtype)  # noqa: E731
    interpreted = olympus.jit(convert, tiered=True)(x)  # the first call interprets
    compiled = olympus.jit(convert)(x)
    np.testing.assert_array_equal(np.asarray(interpreted), np.asarray(compiled))
    agree(lambda ox: ox.jit(convert)(x))
    agree(lambda ox: ox.jnp.asarray(x).astype(dtype))


# --- a vmapped cond differentiates only the branch each example takes -----------


def test_vmapped_cond_gradient_has_no_untaken_nan():
    def program(ox):
        branchy = lambda x: ox.lax.cond(x > 0, ox.jnp.sqrt, lambda x: x, x)  # noqa: E731
        return ox.grad(lambda xs: ox.vmap(branchy)(xs).sum())(ox.jnp.array([-1.0, 4.0]))

    ours, _ = agree(program)
    np.testing.assert_allclose(np.asarray(ours), [1.0, 0.25])
    agree(
        lambda ox: ox.vmap(
            ox.grad(lambda x: ox.lax.cond(x > 0, ox.jnp.sqrt, lambda x: x, x))
        )(ox.jnp.array([-1.0, 4.0]))
    )

    def switch(ox):
        branches = [ox.jnp.sqrt, ox.jnp.log, lambda x: x]
        f = lambda x, i: ox.lax.switch(i, branches, x)  # noqa: E731
        xs, idx = ox.jnp.array([-1.0, 4.0, 2.0]), ox.jnp.array([2, 0, 1])
        return ox.grad(lambda xs: ox.vmap(f)(xs, idx).sum())(xs)

    agree(switch)


# --- det and slogdet of singular matrices ----------------------------------------

_SINGULAR2 = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
_SINGULAR3 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], np.float32)


def test_det_gradient_of_a_singular_matrix_is_the_adjugate():
    ours, _ = agree(lambda ox: ox.grad(ox.jnp.linalg.det)(_SINGULAR2))
    np.testing.assert_array_equal(np.asarray(ours), [[4.0, -2.0], [-2.0, 1.0]])
    agree(lambda ox: ox.grad(ox.jnp.linalg.det)(_SINGULAR3))
    agree(lambda ox: ox.grad(lambda a: ox.jnp.linalg.slogdet(a)[1])(_SINGULAR2))
    batch = np.random.RandomState(0).normal(size=(2, 3, 3)).astype(np.float32)
    agree(lambda ox: ox.vmap(ox.jnp.linalg.det)(batch))
    agree(lambda ox: ox.grad(lambda a: ox.jnp.linalg.det(a).sum())(batch), rtol=1e-4)


def test_singular_det_and_slogdet_signs_are_positive_zero():
    singular4 = np.array(
        [[1, 2, 3, 4], [2, 4, 6, 8], [1, 0, 1, 0], [0, 1, 1, 2]], np.float32
    )
    for m in (_SINGULAR3, singular4):
        agree(lambda ox: ox.jnp.linalg.det(m))
        agree(lambda ox: tuple(ox.jnp.linalg.slogdet(m)))


# --- scatter max/min: ties split the cotangent -----------------------------------


@pytest.mark.parametrize("op", ["max", "min"])
def test_scatter_extremum_ties_split_the_cotangent(op):
    def single(ox):
        f = lambda x, u: getattr(x.at[ox.jnp.array([0])], op)(u).sum()  # noqa: E731
        return ox.grad(f, argnums=(0, 1))(ox.jnp.array([1.0, 2.0]), ox.jnp.array([1.0]))

    ours, _ = agree(single)
    np.testing.assert_array_equal(np.asarray(ours[0]), [0.5, 1.0])
    np.testing.assert_array_equal(np.asarray(ours[1]), [0.5])
    weights = np.array([1.0, 2.0, 3.0], np.float32)
    for u in ([1.0, 1.0, 5.0, -3.0], [np.nan, 1.0, 2.0, 3.0], [3.0, 3.0, 3.0, 3.0]):

        def several(ox, u=np.array(u, np.float32)):
            where = ox.jnp.array([0, 0, 1, 2])
            f = lambda x, u: (getattr(x.at[where], op)(u) * weights).sum()  # noqa: E731
            return ox.grad(f, argnums=(0, 1))(np.array([1.0, 2.0, 3.0], np.float32), u)

        agree(several)


# --- the optimizer's stable rows give JAX's stable functions' values -------------

_FAR = np.array([-200.0, -100.0, -30.0, 0.0, 30.0, 100.0, 200.0], np.float32)


def test_optimized_naive_sigmoid_and_its_gradient_match_jax_nn_sigmoid():
    def program(ox):
        if ox.name == "jax":  # JAX's own stable function is the reference
            sigmoid = ox.nn.sigmoid
        else:  # the naive formula, which olympus's optimizer rewrites
            sigmoid = lambda x: 1 / (1 + ox.jnp.exp(-x))  # noqa: E731
        value = ox.jit(sigmoid)(_FAR)
        grads = ox.jit(ox.vmap(ox.grad(sigmoid)))(_FAR)
        summed = ox.jit(ox.grad(lambda x: sigmoid(x).sum()))(_FAR)
        return value, grads, ox.jit(ox.grad(sigmoid))(_FAR[0]), summed

    # At x = 30 JAX's s * (1 - s) rounds to 0 where olympus keeps 9.4e-14
    # (docs/differences.md); NaN or inf would still fail.
    agree(program, atol=1e-12)


def test_optimized_naive_hypot_matches_jnp_hypot():
    x = np.array([3e20, 0.0, 3.0, 1e-30, np.inf], np.float32)
    y = np.array([4e20, 0.0, -4.0, 0.0, 1.0], np.float32)

    def program(ox):
        if ox.name == "jax":
            return ox.jit(ox.jnp.hypot)(x, y)
        return ox.jit(lambda a, b: ox.jnp.sqrt(a**2 + b**2))(x, y)

    agree(program)


# --- gradients at kinks, as JAX defines them ------------------------------------

_KINKS = np.array([0.0, -0.0, 6.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, -6.0], np.float32)  # fmt: skip
_UNARY = [
    ("jnp", "abs"), ("jnp", "sqrt"), ("jnp", "sign"), ("jnp", "square"),
    ("jnp", "fabs"), ("jnp", "arctanh"), ("jnp", "exp2"), ("jnp", "log1p"),
    ("jnp", "cbrt"), ("jnp", "arccosh"),
    ("nn", "relu"), ("nn", "relu6"), ("nn", "sigmoid"), ("nn", "softplus"),
    ("nn", "silu"), ("nn", "gelu"), ("nn", "elu"), ("nn", "celu"), ("nn", "selu"),
    ("nn", "leaky_relu"), ("nn", "hard_tanh"), ("nn", "hard_sigmoid"),
    ("nn", "hard_silu"), ("nn", "squareplus"), ("nn", "mish"), ("nn", "log_sigmoid"),
    ("nn", "soft_sign"), ("nn", "sparse_plus"), ("nn", "sparse_sigmoid"),
]  # fmt: skip


@pytest.mark.parametrize("module,name", _UNARY)
def test_unary_gradients_at_kinks(module, name):
    def program(ox):
        f = getattr(getattr(ox, module), name)
        return ox.vmap(ox.grad(f))(_KINKS)

    agree(program)
    # squareplus(-inf) is 0 in olympus's stable form, NaN in JAX's (differences.md)
    x = _KINKS[_KINKS != -np.inf] if name == "squareplus" else _KINKS
    agree(lambda ox: getattr(getattr(ox, module), name)(x))


_LEFT = np.array([0.0, 1.0, np.inf, -np.inf, 0.0, 2.0, np.nan, -0.0], np.float32)
_RIGHT = np.array([0.0, 1.0, np.inf, -np.inf, 1.0, -2.0, 1.0, 0.0], np.float32)


@pytest.mark.parametrize(
    "name", ["maximum", "minimum", "logaddexp", "logaddexp2", "fmax", "fmin",
             "arctan2", "copysign", "true_divide", "hypot"],
)  # fmt: skip
def test_binary_gradients_at_ties_and_infinities(name):
    def program(ox):
        f = getattr(ox.jnp, name)
        return ox.vmap(ox.grad(f, argnums=(0, 1)))(_LEFT, _RIGHT)

    agree(program)
    agree(lambda ox: getattr(ox.jnp, name)(_LEFT, _RIGHT))


def test_clip_and_reduction_gradients_with_ties():
    agree(lambda ox: ox.vmap(ox.grad(lambda x: ox.jnp.clip(x, 0.0, 6.0)))(_KINKS))
    clamp = lambda ox: lambda lo, x, hi: ox.lax.clamp(lo, x, hi)  # noqa: E731
    bounds = (np.zeros_like(_KINKS), _KINKS, np.full_like(_KINKS, 6.0))
    agree(lambda ox: ox.grad(lambda *a: clamp(ox)(*a).sum(), (0, 1, 2))(*bounds))
    ties = np.array([1.0, 3.0, 3.0], np.float32)
    agree(lambda ox: ox.grad(ox.jnp.max)(ties))
    agree(lambda ox: ox.grad(ox.jnp.min)(ties[::-1].copy()))
    agree(lambda ox: ox.grad(ox.jnp.ptp)(np.array([1.0, 1.0, 3.0, 3.0], np.float32)))
    agree(lambda ox: ox.grad(ox.jnp.prod)(np.array([0.0, 2.0, 0.0], np.float32)))
    agree(lambda ox: ox.grad(lambda x: ox.lax.cummax(x).sum())(ties))


# --- the grid: reductions x dtypes x edge values ---------------------------------

_REDUCTIONS = ["sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin",
               "cumsum", "cumprod", "nansum", "nanmean", "all", "any", "ptp", "average"]  # fmt: skip
_GRID_DTYPES = ["float16", "bfloat16", "float32", "int8", "uint8", "int32", "bool"]
_EDGES = ["plain", "nan", "inf", "negzero", "empty"]


def _grid_values(dtype, edge):
    import ml_dtypes

    base = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    if edge == "nan":
        base[0, 1] = np.nan
    elif edge == "inf":
        base[1, 0], base[0, 2] = np.inf, -np.inf
    elif edge == "negzero":
        base[:] = -0.0
    elif edge == "empty":
        base = base[:, :0]
    if dtype == "bool":
        return base != 0
    if dtype in ("int8", "uint8", "int32"):
        base = np.abs(base) if dtype == "uint8" else base
        return base.astype(dtype)
    return base.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)


@pytest.mark.parametrize("name", _REDUCTIONS)
def test_reduction_grid(name):
    for dtype in _GRID_DTYPES:
        for edge in _EDGES:
            if edge in ("nan", "inf", "negzero") and dtype not in _HALVES + ["float32"]:
                continue
            x = _grid_values(dtype, edge)
            for axis in (None, 1) if edge == "plain" else (1,):
                agree(lambda ox: getattr(ox.jnp, name)(x, axis=axis))


def test_weak_types_survive_the_stable_forms():
    for name in ("hypot", "logaddexp", "logaddexp2"):
        agree(lambda ox: getattr(ox.jnp, name)(0.0, 1.0))  # Python floats: weak
        agree(lambda ox: getattr(ox.jnp, name)(np.float32(0.0), 1.0))
    agree(lambda ox: ox.nn.hard_tanh(1.0))
    agree(lambda ox: ox.nn.hard_tanh(np.array([2, -3, 0])))
