"""The optimizer (olympus/optimizer): every table row, every pass, and
optimized == unoptimized over many programs.

Values are compared through the NumPy reference interpreter (bit for bit for
the algebraic rules, NaN and -0.0 included) and, where it matters, through
XLA. Every program a pass returns goes through the checker (also done by
tests/conftest.py on each ClosedOlympuspr built).
"""

from __future__ import annotations

import itertools
import os
import sys

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax, make_olympuspr
from olympus.backends.reference import evaluate
from olympus.ir import check_olympuspr
from olympus.ir.core import all_primitives as P
from olympus.optimizer import ALGEBRAIC_PASSES, PASSES, count_eqns, optimize
from olympus.optimizer import simplify as simplify_table
from olympus.optimizer import stable as stable_table
from olympus.optimizer.cse import cse
from olympus.optimizer.dce import dce
from olympus.optimizer.fold import fold
from olympus.optimizer.forward import forward
from olympus.optimizer.rules import table_pass
from olympus.optimizer.simplify import simplify
from olympus.stages import Traced

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fuzz"))
from program_generator import generate

simplify_rules = simplify_table.RULES
stable_rules = stable_table.RULES
f32 = np.float32


# ---- helpers ---------------------------------------------------------------------------
def checked(closed):
    check_olympuspr(closed)
    return closed


def names(closed, deep: bool = False) -> list[str]:
    """Primitive names of a program's equations (with `deep`, of its sub-programs too)."""
    from olympus.ir.core import subolympusprs

    out = []

    def walk(program):
        for eqn in program.eqns:
            out.append(eqn.primitive.name)
            if deep:
                for sub in subolympusprs(eqn.params):
                    walk(sub)

    walk(closed.olympuspr)
    return out


def run_xla(closed, *args) -> list:
    return [
        np.asarray(x) for x in Traced.from_olympuspr(closed).lower().compile()(*args)
    ]


def assert_identical(actual, expected) -> None:
    """Same dtype, shape and bits (NaN == NaN, -0.0 != 0.0)."""
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_array_equal(a, e)
        if np.issubdtype(a.dtype, np.floating):  # a NaN's sign bit means nothing
            numbers = ~np.isnan(e)
            np.testing.assert_array_equal(
                np.signbit(a)[numbers], np.signbit(e)[numbers]
            )


def assert_close(actual, expected, rtol=2e-5, atol=1e-6) -> None:
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


# ---- algebraic simplification: one case per table row --------------------------------
SPECIAL = np.array([1.5, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan], f32)
OTHER = np.array([3.0, 0.5, -0.0, 0.0, 2.0, np.nan, -1.0], f32)
INTS = np.array([3, -7, 0, 2**31 - 1, -(2**31), 5, -1], np.int32)
BOOLS = np.array([True, False, True, True, False, False, True])
M12 = np.arange(12, dtype=f32)
T234 = np.arange(24, dtype=f32).reshape(2, 3, 4)


def _bcast(s, shape):
    return lax.broadcast_in_dim(s, shape, ())


def _convert(x, dtype):
    return P["convert_element_type"].bind(x, new_dtype=np.dtype(dtype), weak_type=False)


SIMPLIFY_CASES = {
    "mul_one": (lambda x: lax.mul(x, f32(1)), [SPECIAL]),
    "div_one": (lambda x: lax.div(x, f32(1)), [SPECIAL]),
    "sub_zero": (lambda x: lax.sub(x, f32(0)), [SPECIAL]),
    "add_neg_zero": (lambda x: lax.add(x, f32(-0.0)), [SPECIAL]),
    "add_zero_int": (lambda i: lax.add(i, np.int32(0)), [INTS]),
    "mul_minus_one": (lambda x: lax.mul(x, f32(-1)), [SPECIAL]),
    "neg_zero_sub": (lambda x: lax.sub(f32(-0.0), x), [SPECIAL]),
    "zero_sub_int": (lambda i: lax.sub(np.int32(0), i), [INTS]),
    "add_neg": (lambda x, y: lax.add(x, lax.neg(y)), [SPECIAL, OTHER]),
    "sub_neg": (lambda x, y: lax.sub(x, lax.neg(y)), [SPECIAL, OTHER]),
    "neg_mul_neg": (lambda x, y: lax.mul(lax.neg(x), lax.neg(y)), [SPECIAL, OTHER]),
    "neg_div_neg": (lambda x, y: lax.div(lax.neg(x), lax.neg(y)), [SPECIAL, OTHER]),
    "neg_neg": (lambda x: lax.neg(lax.neg(x)), [SPECIAL]),
    "abs_neg": (lambda x: lax.abs(lax.neg(x)), [SPECIAL]),
    "abs_abs": (lambda x: lax.abs(lax.abs(x)), [SPECIAL]),
    "max_same": (lambda x: lax.max(x, x), [SPECIAL]),
    "min_same": (lambda x: lax.min(x, x), [SPECIAL]),
    "and_same": (lambda i: lax.bitwise_and(i, i), [INTS]),
    "or_same": (lambda i: lax.bitwise_or(i, i), [INTS]),
    "not_not": (lambda i: lax.bitwise_not(lax.bitwise_not(i)), [INTS]),
    "select_same": (lambda b, x: lax.select_n(b, x, x), [BOOLS, SPECIAL]),
    "pow_one": (lambda x: lax.integer_pow(x, 1), [SPECIAL]),
    "convert_same": (lambda x: _convert(x, f32), [SPECIAL]),
    "convert_round_trip": (
        lambda x: _convert(_convert(x, f32), np.float16),
        [SPECIAL.astype(np.float16)],
    ),
    "reshape_same": (
        lambda x: P["reshape"].bind(x, new_sizes=(7,), dimensions=None),
        [SPECIAL],
    ),
    "reshape_reshape": (lambda m: lax.reshape(lax.reshape(m, (3, 4)), (2, 6)), [M12]),
    "transpose_identity": (
        lambda t: P["transpose"].bind(t, permutation=(0, 1, 2)),
        [T234],
    ),
    "transpose_transpose": (
        lambda t: lax.transpose(lax.transpose(t, (1, 2, 0)), (1, 0, 2)),
        [T234],
    ),
    "broadcast_broadcast": (
        lambda x: lax.broadcast_in_dim(
            lax.broadcast_in_dim(x, (1, 7), (1,)), (3, 1, 7), (1, 2)
        ),
        [SPECIAL],
    ),
    "broadcast_reshape": (
        lambda x: lax.broadcast_in_dim(
            lax.reshape(x, (1, 7, 1)), (2, 1, 7, 3), (1, 2, 3)
        ),
        [SPECIAL],
    ),
    "transpose_dot": (
        lambda a, b: lax.transpose(
            lax.dot_general(a, b, (((2,), (2,)), ((0,), (0,)))), (0, 2, 1)
        ),
        [T234, np.linspace(-1, 1, 40, dtype=f32).reshape(2, 5, 4)],
    ),
    "broadcast_same": (
        lambda x: P["broadcast_in_dim"].bind(x, shape=(7,), broadcast_dimensions=(0,)),
        [SPECIAL],
    ),
    "expand_dims_reshape": (lambda t: lax.expand_dims(t, (0, 2)), [T234]),
}
SIMPLIFY_CASES["reduce_sum_no_axes"] = (
    lambda i: P["reduce_sum"].bind(i, axes=()),
    [INTS],
)
for _r in ("reduce_max", "reduce_min", "reduce_prod"):
    SIMPLIFY_CASES[f"{_r}_no_axes"] = (
        lambda x, _r=_r: P[_r].bind(x, axes=()),
        [SPECIAL],
    )
for _r in ("reduce_and", "reduce_or"):
    SIMPLIFY_CASES[f"{_r}_no_axes"] = (lambda b, _r=_r: P[_r].bind(b, axes=()), [BOOLS])
_BINARY_OPERANDS = {
    "and": (INTS, np.int32(6)),
    "or": (INTS, np.int32(6)),
    "xor": (INTS, np.int32(6)),
    "rem": (OTHER, f32(0.75)),
}
for _p in simplify_table._BROADCASTING:
    _arr, _s = _BINARY_OPERANDS.get(_p, (SPECIAL, f32(-0.5)))
    SIMPLIFY_CASES[f"{_p}_scalar_right"] = (
        lambda a, s, _p=_p: P[_p].bind(a, _bcast(s, (7,))),
        [_arr, _s],
    )
    SIMPLIFY_CASES[f"{_p}_scalar_left"] = (
        lambda s, a, _p=_p: P[_p].bind(_bcast(s, (7,)), a),
        [_s, _arr],
    )

_UNARY_PARAMS = {
    "round": {"rounding_method": 0},
    "integer_pow": {"y": 3},
    "convert_element_type": {"new_dtype": np.dtype(np.float16), "weak_type": False},
}


def _column(x):
    return lax.reshape(x, (x.shape[0], 1))


for _u in simplify_table._UNARY:
    SIMPLIFY_CASES[f"{_u}_reshape"] = (
        lambda x, _u=_u: P[_u].bind(_column(x), **_UNARY_PARAMS.get(_u, {})),
        [INTS if _u == "not" else SPECIAL],
    )
for _p in simplify_table._BROADCASTING:
    _arr, _s = _BINARY_OPERANDS.get(_p, (SPECIAL, f32(-0.5)))
    SIMPLIFY_CASES[f"{_p}_reshape_scalar_right"] = (
        lambda a, s, _p=_p: P[_p].bind(_column(a), s),
        [_arr, _s],
    )
    SIMPLIFY_CASES[f"{_p}_reshape_scalar_left"] = (
        lambda s, a, _p=_p: P[_p].bind(s, _column(a)),
        [_s, _arr],
    )
    SIMPLIFY_CASES[f"{_p}_reshape_both"] = (
        lambda a, b, _p=_p: P[_p].bind(_column(a), _column(b)),
        [_arr, _arr[::-1].copy()],
    )


def test_reshape_with_other_readers_stays_put():
    closed = make_olympuspr(lambda x: (jnp.sin(_column(x)), _column(x) * 2.0))(SPECIAL)
    out = optimize(closed)
    assert count_eqns(out) <= count_eqns(closed)


def test_every_simplify_row_has_a_case():
    assert sorted(r.name for r in simplify_rules) == sorted(SIMPLIFY_CASES)


@pytest.mark.parametrize("rule", simplify_rules, ids=lambda r: r.name)
def test_simplify_row(rule):
    """The row fires on its pattern and the values stay bit for bit the same."""
    fun, args = SIMPLIFY_CASES[rule.name]
    closed = make_olympuspr(fun)(*args)
    rewritten = table_pass([rule])(closed)
    assert rewritten is not closed, f"{rule.name} did not fire"
    checked(rewritten)
    assert_identical(evaluate(rewritten, *args), evaluate(closed, *args))
    optimized = checked(optimize(closed))
    assert count_eqns(optimized) <= count_eqns(closed)  # x * -1 -> -x: as many
    assert_identical(evaluate(optimized, *args), evaluate(closed, *args))


@pytest.mark.parametrize(
    "fun, args",
    [
        (lambda x: lax.add(x, f32(0.0)), [SPECIAL]),  # -0.0 + 0.0 is +0.0
        (lambda x: lax.mul(x, f32(0.0)), [SPECIAL]),  # inf * 0 is NaN
        (lambda x: lax.sub(x, x), [SPECIAL]),  # inf - inf is NaN
        (lambda x: lax.sub(f32(0.0), x), [SPECIAL]),  # 0 - 0 is +0, -0 is -0
        (
            lambda z: lax.mul(z, np.complex64(1)),
            [np.array([complex(np.inf, 1)], np.complex64)],
        ),
        (
            lambda x: P["reshape"].bind(x, new_sizes=(3, 3), dimensions=(1, 0)),
            [np.arange(9, dtype=f32).reshape(3, 3)],
        ),  # a reshape with dimensions transposes
        (lambda x: P["reduce_sum"].bind(x, axes=()), [SPECIAL]),  # 0 + -0.0 is +0.0
    ],
)
def test_simplify_leaves_inexact_identities_alone(fun, args):
    closed = make_olympuspr(fun)(*args)
    assert simplify(closed) is closed


# ---- numerically stable rewrites: one case per table row ------------------------------
def _naive_softmax_loss(x):
    return jnp.sum(jnp.log(jnp.sum(jnp.exp(x), axis=-1)))


BIG = np.array([100.0, -100.0, 0.5, 30.0], f32)
# Softmax along axis 0 of a 2-D array: column 0 has x = 1000 (exp(x) = inf),
# column 2 x = -1000 beside 1000 (softmax 0); column 1 is ordinary.
X_SOFTMAX = np.array([[1000.0, 1.0, -1000.0], [999.0, 2.0, 1000.0]], f32)
T_SOFTMAX = np.array([[0.5, -1.0, 2.0], [1.5, 3.0, -0.25]], f32)


def _softmax_parts(x, axis):
    """softmax(x) = exp(x) / d, naively, and d (spread back when `axis` is set)."""
    total = jnp.sum(jnp.exp(x), axis=axis)
    d = total if axis is None else jnp.expand_dims(total, axis)
    return jnp.exp(x) / d, d


def _numerator(x, t, d):
    """(t / softmax(x)) / d: log's backward, then the division's numerator's."""
    return t / (jnp.exp(x) / d) / d


def _denominator(x, t, axis):
    """spread(sum(-(t / softmax) * (softmax / d))): the division's denominator's
    share, summed over the softmax's axis and spread back."""
    p, d = _softmax_parts(x, axis)
    total = jnp.sum(-(t / p) * (p / d), axis=axis)
    return total if axis is None else jnp.expand_dims(total, axis)


def _softmax_sum_term(x, t, axis):
    """sum(t) * softmax(x), in float64 NumPy."""
    keep = axis is not None
    p = np.exp(x - np.logaddexp.reduce(x, axis=axis, keepdims=keep))
    return np.sum(t, axis=axis, keepdims=keep) * p


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


STABLE_CASES = {
    # name: (function, args, expected (float64 NumPy), the naive value is not finite)
    "softplus": (
        lambda x: jnp.log(1 + jnp.exp(x)),
        [BIG],
        lambda x: np.logaddexp(0, x),
        True,
    ),
    "softplus_log1p": (
        lambda x: jnp.log1p(jnp.exp(x)),
        [BIG],
        lambda x: np.logaddexp(0, x),
        True,
    ),
    "log_sigmoid": (
        lambda x: jnp.log(lax.logistic(x)),
        [np.array([-200.0, 1.0, 50.0], f32)],
        lambda x: -np.logaddexp(0, -x),
        True,
    ),
    "log1p": (
        lambda x: jnp.log(1 + x),
        [np.array([1e-10, 0.5, -0.25], f32)],
        np.log1p,
        False,
    ),
    "expm1": (
        lambda x: jnp.exp(x) - 1,
        [np.array([1e-10, 0.5, -0.25], f32)],
        np.expm1,
        False,
    ),
    "logistic": (
        lambda x: 1 / (1 + jnp.exp(-x)),
        [BIG],
        lambda x: 1 / (1 + np.exp(-x)),
        False,
    ),
    "logistic_ratio": (
        lambda x: jnp.exp(x) / (1 + jnp.exp(x)),
        [BIG],
        lambda x: 1 / (1 + np.exp(-x)),
        True,
    ),
    "logistic_grad": (
        olympus.grad(lambda x: jnp.sum(jnp.log(1 + jnp.exp(x)))),
        [BIG],
        lambda x: 1 / (1 + np.exp(-x)),
        True,
    ),
    "logistic_complement": (
        lambda x: 1 - lax.logistic(x),
        [np.array([50.0, 1.0, -200.0], f32)],
        lambda x: _sigmoid(-x),
        False,
    ),
    "logistic_ratio_grad": (
        lambda x: (lax.logistic(x) / (1 + jnp.exp(x))) * jnp.exp(x),
        [BIG],
        lambda x: _sigmoid(x) ** 2,
        True,
    ),
    "logistic_ratio_grad_scaled": (
        olympus.grad(lambda x: jnp.sum(1 / (1 + jnp.exp(-x)))),
        [BIG],
        lambda x: _sigmoid(x) * _sigmoid(-x),
        True,
    ),
    "logistic_ratio_grad_neg": (
        olympus.grad(lambda x: 1 / (1 + jnp.exp(-x))),
        [np.float32(-200.0)],
        lambda x: _sigmoid(x) * _sigmoid(-x),
        True,
    ),
    "log_sigmoid_grad": (
        olympus.grad(lambda x: jnp.sum(jnp.log(lax.logistic(x)))),
        [np.array([-200.0, 1.0, 50.0], f32)],
        lambda x: _sigmoid(-x),
        True,
    ),
    "log_sigmoid_grad_neg": (
        lambda x: -(1 / lax.logistic(x)) * (lax.logistic(x) * lax.logistic(-x)),
        [np.array([-200.0, 1.0, 50.0], f32)],
        lambda x: -_sigmoid(-x),
        True,
    ),
    "hypot": (
        lambda x, y: jnp.sqrt(x * x + y * y),
        [
            np.array([3e20, 0.0, 0.0, 3.0], f32),
            np.array([4e20, 0.0, -1e-30, -4.0], f32),
        ],
        np.hypot,
        True,
    ),
    "hypot_pow": (
        lambda x, y: jnp.sqrt(x**2 + y**2),
        [
            np.array([3e20, 0.0, np.inf, 3.0], f32),
            np.array([4e20, 0.0, np.inf, -4.0], f32),
        ],
        np.hypot,
        True,
    ),
    "log_softmax": (
        lambda x: jnp.log(jnp.exp(x) / jnp.sum(jnp.exp(x), axis=-1, keepdims=True)),
        [np.array([[1000.0, 999.0, 0.0], [1.0, 2.0, 3.0]], f32)],
        lambda x: x - np.logaddexp.reduce(x, axis=-1, keepdims=True),
        True,
    ),
    "log_softmax_scalar": (
        lambda x: jnp.log(jnp.exp(x) / jnp.sum(jnp.exp(x))),
        [np.array([1000.0, 999.0, 0.0], f32)],
        lambda x: x - np.logaddexp.reduce(x),
        True,
    ),
    "logsumexp": (
        lambda x: jnp.log(jnp.sum(jnp.exp(x))),
        [np.array([1000.0, 1000.0, 999.0], f32)],
        lambda x: np.logaddexp.reduce(x),
        True,
    ),
    "softmax_grad": (
        olympus.grad(_naive_softmax_loss),
        [np.array([[1000.0, 999.0], [1.0, 2.0]], f32)],
        lambda x: np.exp(x - np.logaddexp.reduce(x, axis=-1, keepdims=True)),
        True,
    ),
    "softmax_grad_scalar": (
        lambda x: lax.mul(lax.div(f32(1), jnp.sum(jnp.exp(x))), jnp.exp(x)),
        [np.array([1000.0, 999.0, 1.0], f32)],
        lambda x: np.exp(x - np.logaddexp.reduce(x)),
        True,
    ),
    # The reverse mode of log(softmax(x)), written out as reverse mode writes it
    # (t the cotangent, d = sum(exp(x)) spread back over x's shape).
    "log_softmax_grad_numerator": (
        lambda x, t: _numerator(x, t, _softmax_parts(x, 0)[1]) * jnp.exp(x),
        [X_SOFTMAX, T_SOFTMAX],
        lambda x, t: t,
        True,
    ),
    "log_softmax_grad_denominator": (
        lambda x, t: _denominator(x, t, 0) * jnp.exp(x),
        [X_SOFTMAX, T_SOFTMAX],
        lambda x, t: -_softmax_sum_term(x, t, 0),
        True,
    ),
    "log_softmax_grad_denominator_scalar": (
        lambda x, t: _denominator(x, t, None) * jnp.exp(x),
        [X_SOFTMAX[0], T_SOFTMAX[0]],
        lambda x, t: -_softmax_sum_term(x, t, None),
        True,
    ),
    "log_softmax_grad": (
        lambda x, t: (
            (_numerator(x, t, _softmax_parts(x, 0)[1]) + _denominator(x, t, 0))
            * jnp.exp(x)
        ),
        [X_SOFTMAX, T_SOFTMAX],
        lambda x, t: t - _softmax_sum_term(x, t, 0),
        True,
    ),
    "log_softmax_grad_scalar": (
        lambda x, t: (
            (_numerator(x, t, _softmax_parts(x, None)[1]) + _denominator(x, t, None))
            * jnp.exp(x)
        ),
        [X_SOFTMAX[0], T_SOFTMAX[0]],
        lambda x, t: t - _softmax_sum_term(x, t, None),
        True,
    ),
}


def test_every_stable_row_has_a_case():
    assert sorted(r.name for r in stable_rules) == sorted(STABLE_CASES)


@pytest.mark.parametrize("rule", stable_rules, ids=lambda r: r.name)
def test_stable_row(rule):
    """The row fires; the naive program is inf/NaN (or inaccurate) where the
    optimized one is right; both agree on ordinary inputs."""
    fun, args, expected, naive_not_finite = STABLE_CASES[rule.name]
    closed = make_olympuspr(fun)(*args)
    simplified = optimize(closed, ALGEBRAIC_PASSES)  # e.g. keepdims reshapes gone
    assert table_pass([rule])(simplified) is not simplified, f"{rule.name} did not fire"
    optimized = checked(optimize(closed))
    want = expected(*[a.astype(np.float64) for a in args])
    (naive,) = evaluate(closed, *args)
    (got,) = evaluate(optimized, *args)
    if naive_not_finite:
        assert not np.all(np.isfinite(naive))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-30)
    (on_xla,) = run_xla(optimized, *args)
    assert np.all(np.isfinite(on_xla)) or not np.all(np.isfinite(want))
    ordinary = [np.linspace(-2, 2, a.size).reshape(a.shape).astype(f32) for a in args]
    assert_close(evaluate(optimized, *ordinary), evaluate(closed, *ordinary))


def test_stable_rewrite_keeps_source_line():
    closed = make_olympuspr(lambda x: jnp.log(1 + jnp.exp(x)))(BIG)  # this line
    line = closed.eqns[-1].source_info.line
    optimized = optimize(closed)
    assert {e.source_info.line for e in optimized.eqns} == {line}


# Gradients of naive code (issue 14, item 3): with the optimizer off (what JAX
# computes too) inf or NaN; on, the closed form's finite value.
NAIVE_GRADIENTS = {
    # name: (naive function, x, the gradient's closed form (float64 NumPy))
    "log(1 + exp(x))": (
        lambda x: jnp.log(1 + jnp.exp(x)),
        [100.0, -100.0, 0.5],
        _sigmoid,
    ),
    "log1p(exp(x))": (lambda x: jnp.log1p(jnp.exp(x)), [100.0, -100.0, 0.5], _sigmoid),
    "log(logistic(x))": (
        lambda x: jnp.log(lax.logistic(x)),
        [-200.0, 1.0, 50.0],
        lambda x: _sigmoid(-x),
    ),
    "1 / (1 + exp(-x))": (
        lambda x: 1 / (1 + jnp.exp(-x)),
        [100.0, -100.0, 0.5],
        lambda x: _sigmoid(x) * _sigmoid(-x),
    ),
    "exp(x) / (1 + exp(x))": (
        lambda x: jnp.exp(x) / (1 + jnp.exp(x)),
        [100.0, -100.0, 0.5],
        lambda x: _sigmoid(x) * _sigmoid(-x),
    ),
    "log(1 / (1 + exp(-x)))": (
        lambda x: jnp.log(1 / (1 + jnp.exp(-x))),
        [100.0, -100.0, 0.5],
        lambda x: _sigmoid(-x),
    ),
    "log(sum(exp(x)))": (
        lambda x: jnp.log(jnp.sum(jnp.exp(x))),
        [1000.0, 1000.0, 999.0],
        lambda x: np.exp(x - np.logaddexp.reduce(x)),
    ),
    "3 * log(sum(exp(x), axis))": (
        lambda x: 3 * jnp.log(jnp.sum(jnp.exp(x), axis=1)),
        [[1000.0, 1000.0, 999.0], [1.0, 2.0, 3.0]],
        lambda x: 3 * np.exp(x - np.logaddexp.reduce(x, axis=1, keepdims=True)),
    ),
}


@pytest.mark.parametrize("name", NAIVE_GRADIENTS)
def test_gradient_of_naive_code_is_finite(name):
    fun, x, closed_form = NAIVE_GRADIENTS[name]
    x = np.array(x, f32)
    grad = olympus.jit(olympus.grad(lambda x: jnp.sum(fun(x))))
    with olympus.config.override("olympus_optimize", False):
        naive = np.asarray(grad(x))
    assert not np.all(np.isfinite(naive)), naive
    got = np.asarray(grad(x))
    assert np.all(np.isfinite(got)), got
    np.testing.assert_allclose(
        got, closed_form(x.astype(np.float64)), rtol=1e-5, atol=1e-30
    )


# Hand-written log-softmax along an axis (issue 14): each spelling's value and
# gradient at large x, against a float64 NumPy reference computed stably.
LOG_SOFTMAX_SPELLINGS = {
    "log(exp(x) / sum(exp(x), axis, keepdims))": lambda x, a: jnp.log(
        jnp.exp(x) / jnp.sum(jnp.exp(x), axis=a, keepdims=True)
    ),
    "log(exp(x) / expand_dims(sum(exp(x), axis)))": lambda x, a: jnp.log(
        jnp.exp(x) / jnp.expand_dims(jnp.sum(jnp.exp(x), axis=a), a)
    ),
    "log(e / e.sum(axis, keepdims)), e = exp(x)": lambda x, a: (
        lambda e: jnp.log(e / e.sum(axis=a, keepdims=True))
    )(jnp.exp(x)),
    "x - log(sum(exp(x), axis, keepdims))": lambda x, a: (
        x - jnp.log(jnp.sum(jnp.exp(x), axis=a, keepdims=True))
    ),
    "log(nn.softmax(x, axis))": lambda x, a: jnp.log(olympus.nn.softmax(x, axis=a)),
    "-y * log(nn.softmax(x, axis))": lambda x, a: (
        -_LABELS[x.ndim] * jnp.log(olympus.nn.softmax(x, axis=a))
    ),
    "-sum(y * log(softmax(x)), axis)": lambda x, a: (
        -jnp.sum(
            _LABELS[x.ndim]
            * jnp.log(jnp.exp(x) / jnp.sum(jnp.exp(x), axis=a, keepdims=True)),
            axis=a,
        )
    ),
}
_LABELS = {
    1: np.array([0.0, 0.25, 0.75], f32),
    2: np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 0.5]], f32),
}
_LARGE = {
    1: np.array([1000.0, 0.0, -1000.0], f32),
    2: np.array([[1000.0, 0.0, -1000.0], [1.0, 2.0, 3.0]], f32),
}
_AXES = [(1, 0), (1, -1), (2, 0), (2, 1), (2, -1)]


def _stable_log_softmax_value_and_grad(name, x, axis, w):
    """float64 NumPy: the spelling's value and the gradient of sum(w * value)."""
    ls = x - np.logaddexp.reduce(x, axis=axis, keepdims=True)
    p = np.exp(ls)
    y = _LABELS[x.ndim].astype(np.float64)
    if name.startswith("-sum"):
        w_full = -y * np.expand_dims(w, axis)
        return -np.sum(y * ls, axis=axis), w_full - p * w_full.sum(axis, keepdims=True)
    if name.startswith("-y"):
        return -y * ls, -y * w + p * np.sum(y * w, axis, keepdims=True)
    return ls, w - p * w.sum(axis, keepdims=True)


@pytest.mark.parametrize("ndim, axis", _AXES)
@pytest.mark.parametrize("name", LOG_SOFTMAX_SPELLINGS)
def test_gradient_of_hand_written_log_softmax_is_finite_and_right(name, ndim, axis):
    fun = LOG_SOFTMAX_SPELLINGS[name]
    x = _LARGE[ndim]
    out_shape = np.shape(np.asarray(olympus.jit(lambda x: fun(x, axis))(x)))
    w = np.linspace(-1.5, 2.0, int(np.prod(out_shape))).reshape(out_shape).astype(f32)
    value = olympus.jit(lambda x: fun(x, axis))
    grad = olympus.jit(olympus.grad(lambda x: jnp.sum(fun(x, axis) * w)))
    want_value, want_grad = _stable_log_softmax_value_and_grad(
        name, x.astype(np.float64), axis, w.astype(np.float64)
    )
    np.testing.assert_allclose(value(x), want_value, rtol=1e-5, atol=1e-4)
    got = np.asarray(grad(x))
    assert np.all(np.isfinite(got)), got
    np.testing.assert_allclose(got, want_grad, rtol=1e-5, atol=1e-5)
    if not name.startswith("x -"):  # that spelling is stable as written
        with olympus.config.override("olympus_optimize", False):
            assert not np.all(np.isfinite(np.asarray(grad(x))))
    # At ordinary x: the optimized gradient is the naive one's and the closed
    # form's, and central differences of the value agree (float32: eps 1e-2).
    ordinary = np.linspace(-2.0, 1.5, x.size).reshape(x.shape).astype(f32)
    with olympus.config.override("olympus_optimize", False):
        naive = np.asarray(grad(ordinary))
    np.testing.assert_allclose(grad(ordinary), naive, rtol=1e-5, atol=1e-6)
    _, closed_form = _stable_log_softmax_value_and_grad(
        name, ordinary.astype(np.float64), axis, w.astype(np.float64)
    )
    np.testing.assert_allclose(naive, closed_form, rtol=1e-5, atol=1e-6)
    loss = olympus.jit(lambda x: jnp.sum(fun(x, axis) * w))
    eps = 1e-2
    for i in np.ndindex(x.shape):
        up, down = ordinary.copy(), ordinary.copy()
        up[i] += eps
        down[i] -= eps
        difference = (float(loss(up)) - float(loss(down))) / (2 * eps)
        np.testing.assert_allclose(difference, naive[i], rtol=1e-3, atol=1e-3)


def test_gradient_of_naive_hypot_is_right():
    """Off, x * x overflows and the gradient is x / inf = 0; on, x / hypot."""
    x, y = np.array([3e20, 1.0], f32), np.array([6e20, 2.0], f32)
    grad = olympus.jit(olympus.grad(lambda x, y: jnp.sum(jnp.sqrt(x**2 + y**2))))
    with olympus.config.override("olympus_optimize", False):
        assert np.asarray(grad(x, y))[0] == 0.0
    np.testing.assert_allclose(grad(x, y), [1 / np.sqrt(5.0)] * 2, rtol=1e-6)


# Naive code inside a checkpoint (issue 14): reverse mode splits it into the
# forward, the recomputation (`remat(f)`) and the transposed part; the fuse
# pass puts the recomputation with the cotangent work, so the rows above see
# the gradient's whole product. Each function acts along the last axis, so it
# also runs on one row of a scan or lax.map; each comes with its value and the
# gradient of sum(w * value) in float64 NumPy, computed stably.
def _log_softmax64(x):
    return x - np.logaddexp.reduce(x, axis=-1, keepdims=True)


CHECKPOINTED = {
    "log(1 + exp(x))": (
        lambda x: jnp.log(1 + jnp.exp(x)),
        lambda x, w: (np.logaddexp(0.0, x), w * _sigmoid(x)),
    ),
    "1 / (1 + exp(-x))": (
        lambda x: 1 / (1 + jnp.exp(-x)),
        lambda x, w: (_sigmoid(x), w * _sigmoid(x) * _sigmoid(-x)),
    ),
    "log(sum(exp(x), -1))": (
        lambda x: jnp.log(jnp.sum(jnp.exp(x), axis=-1)),
        lambda x, w: (
            np.logaddexp.reduce(x, axis=-1),
            np.expand_dims(w, -1) * np.exp(_log_softmax64(x)),
        ),
    ),
    "log(exp(x) / sum(exp(x), -1, keepdims))": (
        lambda x: jnp.log(jnp.exp(x) / jnp.sum(jnp.exp(x), axis=-1, keepdims=True)),
        lambda x, w: (
            _log_softmax64(x),
            w - np.exp(_log_softmax64(x)) * w.sum(-1, keepdims=True),
        ),
    ),
}


def _rows(apply):
    """f applied to each row of x by a scan (a loop body holding the remat)."""

    def run(f, x):
        def body(carry, row):
            return carry, apply(f)(row)

        return lax.scan(body, 0.0, x)[1]

    return run


_policies = olympus.ad_checkpoint.checkpoint_policies
REMAT_FORMS = {
    "checkpoint(f)": lambda f, x: olympus.checkpoint(f)(x),
    "checkpoint(f, policy=dots_saveable)": lambda f, x: (
        olympus.ad_checkpoint.checkpoint(f, policy=_policies.dots_saveable)(x)
    ),
    "checkpoint(f, policy=nothing_saveable)": lambda f, x: olympus.checkpoint(
        f, policy=_policies.nothing_saveable
    )(x),
    # Everything saved: no recomputation; the forward part only made residuals.
    "checkpoint(f, policy=everything_saveable)": lambda f, x: olympus.checkpoint(
        f, policy=_policies.everything_saveable
    )(x),
    "scan(remat(f)) over rows": _rows(olympus.remat),
    "lax.map(checkpoint(f)) over rows": lambda f, x: lax.map(olympus.checkpoint(f), x),
}
X_CHECKPOINTED = np.array([[100.0, -100.0, 0.5], [30.0, 1.0, -3.0]], f32)


@pytest.mark.parametrize("form", REMAT_FORMS)
@pytest.mark.parametrize("name", CHECKPOINTED)
def test_gradient_of_naive_code_in_a_checkpoint_is_finite_and_right(name, form):
    fun, reference = CHECKPOINTED[name]
    wrap = REMAT_FORMS[form]
    x = X_CHECKPOINTED
    out_shape = np.shape(np.asarray(olympus.jit(fun)(x)))
    w = np.linspace(-1.5, 2.0, int(np.prod(out_shape))).reshape(out_shape).astype(f32)
    value = olympus.jit(lambda x: wrap(fun, x))
    loss = lambda x: jnp.sum(wrap(fun, x) * w)  # noqa: E731
    grad = olympus.jit(olympus.grad(loss))
    want_value, want_grad = reference(x.astype(np.float64), w.astype(np.float64))
    np.testing.assert_allclose(value(x), want_value, rtol=1e-5, atol=1e-6)
    got = np.asarray(grad(x))
    assert np.all(np.isfinite(got)), got
    np.testing.assert_allclose(got, want_grad, rtol=1e-5, atol=1e-6)
    with olympus.config.override("olympus_optimize", False):
        assert not np.all(np.isfinite(np.asarray(grad(x))))
    # Nothing runs twice: the optimized program has no more exp than the traced.
    closed = make_olympuspr(olympus.grad(loss))(x)
    out = checked(optimize(closed))
    assert names(out, deep=True).count("exp") <= names(closed, deep=True).count("exp")
    # At ordinary x: the optimized gradient is the naive one's and the closed
    # form's, and central differences of the value agree (float32: eps 1e-2).
    ordinary = np.linspace(-2.0, 1.5, x.size).reshape(x.shape).astype(f32)
    with olympus.config.override("olympus_optimize", False):
        naive = np.asarray(grad(ordinary))
    np.testing.assert_allclose(grad(ordinary), naive, rtol=1e-5, atol=1e-6)
    _, closed_form = reference(ordinary.astype(np.float64), w.astype(np.float64))
    np.testing.assert_allclose(naive, closed_form, rtol=1e-5, atol=1e-6)
    total = olympus.jit(loss)
    eps = 1e-2
    for i in np.ndindex(x.shape):
        up, down = ordinary.copy(), ordinary.copy()
        up[i] += eps
        down[i] -= eps
        difference = (float(total(up)) - float(total(down))) / (2 * eps)
        np.testing.assert_allclose(difference, naive[i], rtol=1e-3, atol=1e-3)


def test_value_and_gradient_of_naive_code_in_a_checkpoint():
    """value_and_grad: the forward keeps the primal value; the recomputation
    (not the forward) fuses with the transposed part, the forward's stable
    row and the gradient's are each recorded."""
    f = olympus.checkpoint(lambda x: jnp.log(1 + jnp.exp(x)))
    loss = olympus.value_and_grad(lambda x: jnp.sum(jnp.tanh(f(x))))
    value, grad = olympus.jit(loss)(BIG)
    x = BIG.astype(np.float64)
    np.testing.assert_allclose(value, np.sum(np.tanh(np.logaddexp(0, x))), rtol=1e-6)
    want = (1 - np.tanh(np.logaddexp(0, x)) ** 2) * _sigmoid(x)
    np.testing.assert_allclose(grad, want, rtol=1e-5, atol=1e-30)
    optimized = make_olympuspr(loss, optimize=True)(BIG)
    calls = [e for e in optimized.eqns if e.primitive.name == "checkpoint"]
    assert len(calls) == 2
    forward, fused = calls
    assert fused.params["name"] == f"remat(transpose(lin({forward.params['name']})))"
    # The recomputation still reads the barrier, not the forward's values.
    barrier = [e for e in optimized.eqns if e.primitive.name == "optimization_barrier"]
    assert barrier and set(barrier[0].outvars) & set(fused.invars)
    from olympus.ir.serialize import walk_eqns

    rules = {
        str(p.eqns[i].source_info.rewrite)
        for p, i in walk_eqns(optimized)
        if p.eqns[i].source_info.rewrite is not None
    }
    assert "stable: log(1 + exp(x)) -> softplus" in rules
    assert "stable: (s / (1 + exp(u))) * exp(u) -> logistic_ratio_grad" in rules


def test_a_checkpoint_that_saves_everything_is_inlined():
    """With every residual saved there is no recomputation to keep apart: the
    forward and transposed parts are inlined (nothing computed twice), and
    value_and_grad of naive code is finite and right."""
    f = olympus.checkpoint(
        lambda x: jnp.sin(jnp.sin(x)), policy=_policies.everything_saveable
    )
    loss = olympus.value_and_grad(lambda x: jnp.sum(f(x)))
    closed = make_olympuspr(loss)(np.ones(3, f32))
    out = checked(optimize(closed))
    assert names(out, deep=True).count("sin") <= names(closed, deep=True).count("sin")
    assert "checkpoint" in names(closed) and "checkpoint" not in names(out)
    assert_close(evaluate(out, np.ones(3, f32)), evaluate(closed, np.ones(3, f32)))
    softplus = olympus.checkpoint(
        lambda x: jnp.log(1 + jnp.exp(x)), policy=_policies.everything_saveable
    )
    loss = olympus.jit(olympus.value_and_grad(lambda x: jnp.sum(jnp.tanh(softplus(x)))))
    value, grad = loss(BIG)
    x = BIG.astype(np.float64)
    np.testing.assert_allclose(value, np.sum(np.tanh(np.logaddexp(0, x))), rtol=1e-6)
    want = (1 - np.tanh(np.logaddexp(0, x)) ** 2) * _sigmoid(x)
    np.testing.assert_allclose(grad, want, rtol=1e-5, atol=1e-30)
    with olympus.config.override("olympus_optimize", False):
        assert not np.all(np.isfinite(np.asarray(loss(BIG)[1])))


def test_stable_rewrites_can_be_left_out():
    closed = make_olympuspr(lambda x: jnp.log(1 + jnp.exp(x)))(BIG)
    assert names(optimize(closed, ALGEBRAIC_PASSES)) == ["exp", "add", "log"]
    assert "log1p" in names(optimize(closed))


# ---- dead-code elimination ------------------------------------------------------------
def test_dce_removes_dead_code_but_keeps_debug_print():
    def f(x):
        unused = jnp.sin(x) * 2.0  # noqa: F841
        olympus.debug.print("x = {}", x)
        return x + 1.0

    closed = make_olympuspr(f)(f32(1.0))
    out = checked(dce(closed))
    assert names(out) == ["debug_callback", "add"]
    assert dce(out) is out


def test_dce_prunes_pjit_outputs_and_inputs():
    @olympus.jit
    def inner(a, b):
        return jnp.sin(a), jnp.cos(b) * 3.0

    closed = make_olympuspr(lambda a, b: inner(a, b)[0])(f32(1.0), f32(2.0))
    out = checked(dce(closed))
    (call,) = out.eqns
    sub = call.params["olympuspr"].olympuspr
    assert len(call.outvars) == 1 and len(call.invars) == 1
    assert [e.primitive.name for e in sub.eqns] == ["sin"]
    assert_identical(
        evaluate(out, f32(1.0), f32(2.0)), evaluate(closed, f32(1.0), f32(2.0))
    )


def test_dce_prunes_cond_outputs():
    def f(p, x, y):
        a, _unused = lax.cond(
            p, lambda x, y: (x * 2.0, jnp.sin(y)), lambda x, y: (x, jnp.cos(y)), x, y
        )
        return a

    args = (True, f32(1.5), f32(2.0))
    closed = make_olympuspr(f)(*args)
    out = checked(dce(closed))
    (cond,) = [e for e in out.eqns if e.primitive.name == "cond"]
    assert len(cond.outvars) == 1 and len(cond.invars) == 2  # index and x
    assert "sin" not in names(out, deep=True) and "cos" not in names(out, deep=True)
    for p in (True, False):
        assert_identical(evaluate(out, p, *args[1:]), evaluate(closed, p, *args[1:]))


def test_dce_prunes_scan_carries_and_ys():
    def f(c0, xs):
        def step(carry, x):
            a, b = carry
            return (a + x, b * 2.0), (jnp.sin(x), a)

        (a, _), (_, hist) = lax.scan(step, (c0, c0), xs)
        return a, hist

    args = (f32(0.5), np.arange(4, dtype=f32))
    closed = make_olympuspr(f)(*args)
    out = checked(dce(closed))
    (scan,) = out.eqns
    assert scan.params["num_carry"] == 1 and len(scan.outvars) == 2
    assert "sin" not in names(out, deep=True) and "mul" not in names(out, deep=True)
    assert_identical(evaluate(out, *args), evaluate(closed, *args))


def test_dce_prunes_while_carries_the_test_does_not_read():
    def f(x):
        def body(c):
            i, a, b = c
            return i + 1, a * 2.0, b + jnp.sin(a)

        return lax.while_loop(lambda c: c[0] < 3, body, (0, x, x))[1]

    closed = make_olympuspr(f)(f32(1.5))
    out = checked(dce(closed))
    (loop,) = out.eqns
    assert len(loop.outvars) == 2  # i (read by the test) and a
    assert "sin" not in names(out, deep=True)
    assert_identical(evaluate(out, f32(1.5)), evaluate(closed, f32(1.5)))


def test_dce_keeps_effects_inside_loops():
    def f(xs):
        def step(c, x):
            olympus.debug.print("{}", c)
            return c + x, jnp.sin(x)

        return lax.scan(step, f32(0.0), xs)[1]

    closed = make_olympuspr(f)(np.arange(3, dtype=f32))
    out = checked(optimize(closed))
    assert "debug_callback" in names(out, deep=True)


# ---- common-subexpression elimination -------------------------------------------------
def _demo_loss(w, x):
    h = jnp.tanh(x @ w)
    return jnp.mean(h * h)


DEMO_ARGS = (np.linspace(-1.0, 1.0, 12).reshape(4, 3).astype(f32), np.ones((2, 4), f32))


def _count(closed, name, operands=None) -> int:
    return sum(
        1
        for e in closed.eqns
        if e.primitive.name == name and (operands is None or operands(e.invars))
    )


def test_cse_merges_the_demo_duplicate_square():
    closed = make_olympuspr(olympus.grad(_demo_loss))(*DEMO_ARGS)
    square = lambda xs: xs[0] is xs[1]
    assert _count(closed, "mul", square) == 2
    out = checked(cse(closed))
    assert _count(out, "mul", square) == 1
    assert_identical(evaluate(out, *DEMO_ARGS), evaluate(closed, *DEMO_ARGS))


def test_cse_commutative_operands():
    closed = make_olympuspr(lambda x, y: lax.mul(x, y) + lax.mul(y, x))(
        f32(2.0), f32(3.0)
    )
    out = checked(cse(closed))
    assert names(out) == ["mul", "add"]


def test_cse_never_merges_effects():
    def f(x):
        olympus.debug.print("{}", x)
        olympus.debug.print("{}", x)
        return x

    out = checked(optimize(make_olympuspr(f)(f32(1.0))))
    assert names(out).count("debug_callback") == 2


def test_cse_keeps_rematerialisation():
    """The backward pass of a checkpoint recomputes the forward inside its
    own sub-program: that is never merged with the forward computation."""
    f = olympus.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    loss = olympus.value_and_grad(lambda x: jnp.sum(f(x)))
    closed = make_olympuspr(loss)(np.ones(3, f32))
    out = checked(optimize(closed))
    calls = [e for e in out.eqns if e.primitive.name == "checkpoint"]
    remat = [e for e in calls if e.params["name"].startswith("remat(")]
    assert len(calls) >= 2 and remat
    assert "sin" in [e.primitive.name for e in remat[0].params["olympuspr"].eqns]
    assert names(out, deep=True).count("sin") == names(closed, deep=True).count("sin")
    assert_close(evaluate(out, np.ones(3, f32)), evaluate(closed, np.ones(3, f32)))


# ---- folding and forwarding -----------------------------------------------------------
def test_fold_turns_the_demo_division_into_a_literal():
    closed = make_olympuspr(olympus.grad(_demo_loss))(*DEMO_ARGS)
    literal_div = lambda xs: all(hasattr(x, "val") for x in xs)
    assert _count(closed, "div", literal_div) == 1
    out = checked(fold(closed))
    assert _count(out, "div", literal_div) == 0
    assert_identical(evaluate(out, *DEMO_ARGS), evaluate(closed, *DEMO_ARGS))


def test_fold_keeps_dtype_and_weak_type():
    closed = make_olympuspr(lambda x: x * (lax.div(2.0, 8.0) + 1))(f32(3.0))
    out = checked(fold(closed))
    assert names(out) == ["mul"]
    lit = out.eqns[0].invars[1]
    assert lit.aval == closed.eqns[-1].invars[1].aval and float(lit.val) == 1.25


def test_fold_leaves_transcendentals_and_division_by_zero():
    closed = make_olympuspr(
        lambda x: x + jnp.exp(f32(1.0)) + lax.div(np.int32(1), np.int32(0)).astype(f32)
    )(f32(1.0))
    assert "exp" in names(fold(closed)) and "div" in names(fold(closed))


def test_forward_pjit_pass_through():
    @olympus.jit
    def inner(a, b):
        return a, b * 2.0

    closed = make_olympuspr(lambda a, b: inner(a, b)[0] + 1.0)(f32(1.0), f32(2.0))
    out = checked(optimize(closed))
    assert names(out) == ["add"]
    assert_identical(
        evaluate(out, f32(1.0), f32(2.0)), evaluate(closed, f32(1.0), f32(2.0))
    )


def test_forward_loop_invariant_carry():
    def f(k, xs):
        return lax.scan(lambda c, x: ((c[0], c[1] + x * c[0]), None), (k, f32(0)), xs)[
            0
        ]

    args = (f32(2.0), np.arange(3, dtype=f32))
    closed = make_olympuspr(f)(*args)
    out = checked(forward(closed))
    assert out.olympuspr.outvars[0] is out.olympuspr.invars[0]
    assert_identical(evaluate(out, *args), evaluate(closed, *args))


def test_forward_literal_operands_into_sub_programs():
    @olympus.jit
    def inner(x, k):
        return x * k

    closed = make_olympuspr(lambda x: inner(x, 1.0))(f32(3.0))
    assert [type(x).__name__ for x in closed.eqns[0].invars] == ["Var", "Literal"]
    out = checked(optimize(closed))
    assert out.eqns == [] and out.olympuspr.outvars == out.olympuspr.invars

    def f(p, x):
        return lax.cond(p, lambda x, k: x * k, lambda x, k: x - k, x, f32(0.0))

    closed = make_olympuspr(f)(True, f32(2.5))
    out = checked(optimize(closed))
    (cond,) = [e for e in out.eqns if e.primitive.name == "cond"]
    false_fun, true_fun = cond.params["branches"]
    assert len(cond.invars) == 2 and names(false_fun) == []  # x - 0.0 is x
    assert names(true_fun) == ["mul"]  # x * 0.0 is not 0
    for p in (True, False):
        assert_identical(evaluate(out, p, f32(2.5)), evaluate(closed, p, f32(2.5)))


def test_forward_scan_over_a_broadcast_scalar():
    """grad of sum(ys) scans over a broadcast 1.0: the 1.0 goes into the body."""

    def loss(w, xs):
        return jnp.sum(lax.scan(lambda c, x: (c, jnp.sin(x * w)), f32(0), xs)[1])

    args = (f32(0.5), np.arange(6, dtype=f32))
    closed = make_olympuspr(olympus.grad(loss))(*args)
    out = checked(optimize(closed))
    scans = [e for e in out.eqns if e.primitive.name == "scan"]
    assert all(
        x.aval.ndim > 0 or i < e.params["num_consts"] + e.params["num_carry"]
        for e in scans
        for i, x in enumerate(e.invars)
    )
    assert "broadcast_in_dim" not in names(out)
    assert_close(evaluate(out, *args), evaluate(closed, *args))
    assert_close(run_xla(out, *args), run_xla(closed, *args))


# ---- recursion into sub-programs ------------------------------------------------------
def _has_mul_by_one(closed) -> bool:
    from olympus.ir.core import subolympusprs

    def walk(program):
        for eqn in program.eqns:
            if eqn.primitive.name == "mul" and any(
                getattr(x, "val", None) == 1 for x in eqn.invars
            ):
                return True
            if any(walk(s) for s in subolympusprs(eqn.params)):
                return True
        return False

    return walk(closed.olympuspr)


@pytest.mark.parametrize(
    "kind", ["cond", "scan", "while", "pjit", "checkpoint", "custom_jvp"]
)
def test_passes_recurse_into_sub_programs(kind):
    body = lambda x: jnp.sin(x * f32(1.0))
    custom = olympus.custom_jvp(body)
    custom.defjvp(lambda p, t: (body(p[0]), t[0]))
    funs = {
        "cond": lambda x: lax.cond(x > 0, body, lambda x: x, x),
        "scan": lambda x: lax.scan(lambda c, _: (body(c), None), x, None, length=2)[0],
        "while": lambda x: lax.while_loop(
            lambda c: c < 5.0, lambda c: body(c) + c + 2.0, x
        ),
        "pjit": olympus.jit(body),
        "checkpoint": olympus.checkpoint(body),
        "custom_jvp": custom,
    }
    closed = make_olympuspr(funs[kind])(f32(0.5))
    assert _has_mul_by_one(closed)
    out = checked(optimize(closed))
    assert not _has_mul_by_one(out)
    assert_identical(evaluate(out, f32(0.5)), evaluate(closed, f32(0.5)))
    assert_identical(run_xla(out, f32(0.5)), run_xla(closed, f32(0.5)))


# ---- optimized == unoptimized over many programs --------------------------------------
def _mlp_loss(params, x, y):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)


def _mlp_args():
    rng = np.random.default_rng(0)
    sizes = [3, 8, 8, 2]
    params = [
        (rng.normal(size=(m, n)).astype(f32), rng.normal(size=(n,)).astype(f32))
        for m, n in itertools.pairwise(sizes)
    ]
    return (
        params,
        rng.normal(size=(5, 3)).astype(f32),
        rng.normal(size=(5, 2)).astype(f32),
    )


def test_grad_of_an_mlp():
    params, x, y = _mlp_args()
    closed = make_olympuspr(olympus.grad(_mlp_loss))(params, x, y)
    leaves = olympus.tree_util.tree_leaves((params, x, y))
    out = checked(optimize(closed))
    assert count_eqns(out) < count_eqns(closed)
    assert_close(evaluate(out, *leaves), evaluate(closed, *leaves))
    assert_close(run_xla(out, *leaves), run_xla(closed, *leaves), rtol=1e-5)


def test_seed_programs():
    import test_seeds as seeds

    a, b = np.arange(8, dtype=f32), np.linspace(0, 1, 8).astype(f32)
    for fun, args in [
        (seeds.func1, (a, b)),
        (seeds.func3, (a, b)),
        (seeds.func4, ((a, b),)),
        (seeds.func12, (f32(2.0),)),
        (olympus.grad(seeds.func1), (a, b)),
        (olympus.grad(lambda x: jnp.sum(seeds.func12(x))), (f32(2.0),)),
    ]:
        closed = make_olympuspr(fun)(*args)
        leaves = olympus.tree_util.tree_leaves(args)
        out = checked(optimize(closed))
        assert_close(evaluate(out, *leaves), evaluate(closed, *leaves))


def _fuzz_programs(seed):
    program = generate(seed)
    fun, args = program.function(), program.arguments()
    yield make_olympuspr(fun)(*args), args
    idx = program.float_inputs()
    if idx and program.reverse_differentiable():

        def scalar(*floats):
            full = list(args)
            for i, v in zip(idx, floats):
                full[i] = v
            return sum(jnp.sum(o) for o in olympus.tree_util.tree_leaves(fun(*full)))

        floats = [args[i] for i in idx]
        grad = olympus.grad(scalar, argnums=tuple(range(len(floats))))
        yield make_olympuspr(grad)(*floats), floats


@pytest.mark.parametrize("seed", range(24))
def test_fuzz_programs_keep_their_values(seed):
    """Random programs (tests/fuzz) and their gradients: optimized == unoptimized
    through the reference interpreter, and through XLA for every third seed."""
    for closed, args in _fuzz_programs(seed):
        out = checked(optimize(closed))
        assert optimize(out, verify=True) is out  # one round reached the fixed point
        assert count_eqns(out) <= count_eqns(closed)
        assert [v.aval for v in out.olympuspr.invars] == [
            v.aval for v in closed.olympuspr.invars
        ]
        assert out.out_avals == closed.out_avals
        assert_close(
            evaluate(out, *args), evaluate(closed, *args), rtol=2e-4, atol=2e-4
        )
        if seed % 3 == 0:
            assert_close(
                run_xla(out, *args), run_xla(closed, *args), rtol=2e-4, atol=2e-4
            )


def _layernorm_loss(gamma, beta, x):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return jnp.sum(((x - mean) / jnp.sqrt(var + 1e-5) * gamma + beta) ** 2)


def test_optimize_reaches_a_fixed_point():
    closed = make_olympuspr(olympus.grad(_demo_loss))(*DEMO_ARGS)
    out = optimize(closed)
    assert optimize(out, verify=True) is out
    args = (
        np.ones(8, f32),
        np.zeros(8, f32),
        np.linspace(-1, 1, 32, dtype=f32).reshape(4, 8),
    )
    norm = make_olympuspr(olympus.grad(_layernorm_loss, argnums=(0, 1, 2)))(*args)
    norm_out = checked(optimize(norm))
    assert optimize(norm_out, verify=True) is norm_out
    assert "reshape" not in names(norm_out)  # the keepdims reshapes are absorbed
    assert_close(evaluate(norm_out, *args), evaluate(norm, *args))
    for run in PASSES.values():
        assert run(out) is out


# ---- provenance and forwarding --------------------------------------------------------
def test_rewritten_equations_remember_the_rule_and_what_they_replaced():
    closed = make_olympuspr(lambda x: jnp.log(1 + jnp.exp(x)))(BIG)  # the line
    line = closed.eqns[-1].source_info.line
    optimized = optimize(closed)
    rewrite = optimized.eqns[-1].source_info.rewrite
    assert str(rewrite) == "stable: log(1 + exp(x)) -> softplus"
    assert rewrite.replaced == [
        "b:f32[4] = exp x",
        "c:f32[4] = add 1.0:f32[] b",
        "d:f32[4] = log c",
    ]
    text = optimized.pretty(source_info=True)
    for row in text.splitlines()[1:-1]:
        assert row.endswith(
            f"test_optimizer.py:{line} (<lambda>)"
            " rewritten by stable: log(1 + exp(x)) -> softplus"
        ), row
    assert "rewritten" not in str(optimized)
    assert (
        "rewritten by stable: log(1 + exp(x)) -&gt; softplus" in optimized._repr_html_()
    )
    assert 'title="replaced:\nb:f32[4] = exp x' in optimized._repr_html_()
    # The source line is still equal to the user's (NaN provenance compares lines).
    assert optimized.eqns[-1].source_info == closed.eqns[-1].source_info
    # The text parses back, the rule with it (the replaced equations are not in
    # the text: `ir.load` brings them back, see the next test).
    parsed = olympus.ir.parse(text)
    assert str(parsed) == str(optimized)
    assert parsed.pretty(source_info=True) == text
    assert str(parsed.eqns[-1].source_info.rewrite) == str(rewrite)
    assert parsed.eqns[-1].source_info == optimized.eqns[-1].source_info


def test_save_and_load_keep_the_rewrite_record(tmp_path):
    """A loaded optimized program shows its provenance as the saved one did:
    the rule, the replaced equations, the backward mark; sub-programs too."""

    def f(x):
        with olympus.named_scope("act"):
            y = olympus.checkpoint(lambda x: jnp.log(1 + jnp.exp(x)))(x)
        return jnp.sum(y) + jnp.sum(jnp.log(1 + jnp.exp(x)))

    optimized = make_olympuspr(olympus.value_and_grad(f), optimize=True)(BIG)
    path = tmp_path / "optimized.olympuspr"
    olympus.ir.save(optimized, path)
    loaded = olympus.ir.load(path)

    def marks(closed):
        from olympus.ir.serialize import walk_eqns

        return [
            (
                p.eqns[i].source_info.backward,
                repr(p.eqns[i].source_info.rewrite),
                p.eqns[i].source_info.scope,
            )
            for p, i in walk_eqns(closed)
        ]

    text = optimized.pretty(source_info=True)
    assert "rewritten by stable: log(1 + exp(x)) -> softplus" in text
    assert "rewritten by stable: (1 / (1 + exp(x))) * exp(x) -> logistic_grad" in text
    assert loaded.pretty(source_info=True) == text
    assert marks(loaded) == marks(optimized)
    rewritten = [(b, scope) for b, r, scope in marks(loaded) if r != "None"]
    assert (True, "") in rewritten  # in the backward pass
    # every rewritten equation, sub-programs' too, prints its rule
    assert len(rewritten) == sum(" rewritten by " in row for row in text.splitlines())
    assert any(
        " rewritten by " in row for row in text.splitlines() if row.startswith(" " * 10)
    )
    assert loaded._repr_html_() == optimized._repr_html_()  # the replaced tooltip
    assert_close(evaluate(loaded, BIG), evaluate(optimized, BIG))


def test_provenance_in_a_grad_program_keeps_the_backward_mark():
    closed = make_olympuspr(olympus.grad(lambda x: jnp.sum(jnp.log(1 + jnp.exp(x)))))(
        BIG
    )
    optimized = optimize(closed)
    (eqn,) = [e for e in optimized.eqns if e.primitive.name == "logistic"]
    assert eqn.source_info.backward
    assert "-> logistic_grad\n" in optimized.pretty(source_info=True)
    again = eqn.source_info.as_backward()
    assert again.backward and again.rewrite is eqn.source_info.rewrite
    scoped = again._replace(scope="layer")  # what transforms that copy a line do
    assert (
        scoped.backward and scoped.rewrite is again.rewrite and scoped.scope == "layer"
    )
    assert str(scoped).endswith("(<lambda>) [layer]")


def test_a_named_scope_and_a_rewrite_print_together_and_parse_back():
    def f(x):
        with olympus.named_scope("act"):
            return jnp.log(1 + jnp.exp(x))

    optimized = make_olympuspr(f, optimize=True)(BIG)
    text = optimized.pretty(source_info=True)
    assert "(f) [act] rewritten by stable: log(1 + exp(x)) -> softplus" in text
    assert str(olympus.ir.parse(text)) == str(optimized)


def test_inspect_optimized_source_shows_the_rule(tmp_path, capsys):
    from olympus.inspect_cli import main

    path = tmp_path / "naive.py"
    path.write_text(
        "import olympus.numpy as jnp\n\ndef f(x):\n    return jnp.log(1 + jnp.exp(x))\n"
    )
    argv = [
        "inspect",
        f"{path}:f",
        "--args",
        "np.ones(3)",
        "--stage",
        "optimized",
        "--source",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "naive.py:4 (f) rewritten by stable: log(1 + exp(x)) -> softplus" in out


def test_forwarding_finds_a_rewritten_value_under_its_old_name():
    from olympus.backends.stepping import ProgramStepper
    from olympus.optimizer import forwarding

    def f(x):
        y = x * 1.0  # simplified away: y is x
        s = jnp.sin(y) + jnp.sin(y)  # the second sin merged into the first
        return s * jnp.log(1 + jnp.exp(x))  # log(...) -> softplus

    x = np.array([0.5, 2.0], f32)
    closed = make_olympuspr(f)(x)
    optimized = optimize(closed)
    where = forwarding(closed, optimized)
    assert where["b"] == "a" and where["c"] == where["d"] == "b"
    old = ProgramStepper(closed, [x])
    old.run_all()
    new = ProgramStepper(optimized, [x])
    new.run_all()
    for name, value in old.values.items():
        if name in where:
            np.testing.assert_allclose(new.values[where[name]], value, rtol=1e-6)
    assert len(where) == len(closed.eqns) + 1 - 2  # all but exp x and 1 + exp x


def test_debug_print_of_a_fused_intermediate_prints_its_value(capsys):
    def f(x):
        e = jnp.exp(x)
        olympus.debug.print("e = {}", e)
        olympus.debug.print("one_plus = {}", 1 + e)
        return jnp.log(1 + e)

    optimized = make_olympuspr(f, optimize=True)(f32(100.0))
    assert "log1p" in names(optimized)
    out = olympus.jit(f)(f32(100.0))
    assert float(out) == 100.0
    assert capsys.readouterr().out == "e = inf\none_plus = inf\n"


def test_dce_of_one_sub_program_called_twice_prints_and_parses_back():
    """A jitted function called twice, each call using another output: dce
    prunes its program once per call, and the copies must not share Vars
    (found by the widened fuzzer of issue 16, seed 2)."""
    import numpy as np

    import olympus
    import olympus.numpy as jnp
    from olympus.ir import parse
    from olympus.optimizer import optimize

    g = olympus.jit(lambda x: (jnp.sin(x), jnp.cos(x) * 2.0))
    closed = olympus.make_olympuspr(lambda x: g(x)[0] + g(x * 2.0)[1])(np.float32(1.0))
    pruned = optimize(closed, passes=["dce"])
    text = str(pruned)
    assert str(parse(text, list(pruned.consts))) == text


def _tagged_softplus(x):
    e = olympus.ad_checkpoint.checkpoint_name(jnp.exp(x), "e")
    return jnp.log(1 + e)


@pytest.mark.parametrize(
    "policy", ["save_only_these_names", "save_any_names_but_these", "everything"]
)
def test_a_saved_tag_in_a_checkpoint_is_computed_once(policy):
    """A tagged exp that the policy saves is a residual: neither the traced
    nor the optimized gradient recomputes it (one exp, the forward's), and
    the optimized gradient is the unoptimized one at ordinary x."""
    chosen = {
        "save_only_these_names": _policies.save_only_these_names("e"),
        "save_any_names_but_these": _policies.save_any_names_but_these("other"),
        "everything": _policies.everything_saveable,
    }[policy]
    f = olympus.checkpoint(_tagged_softplus, policy=chosen)
    loss = lambda x: jnp.sum(f(x))  # noqa: E731
    x = np.linspace(-2.0, 1.5, 4).astype(f32)
    closed = make_olympuspr(olympus.grad(loss))(x)
    out = checked(optimize(closed))
    assert names(closed, deep=True).count("exp") == 1
    assert names(out, deep=True).count("exp") <= 1
    grad = olympus.jit(olympus.grad(loss))
    with olympus.config.override("olympus_optimize", False):
        naive = np.asarray(grad(x))
    np.testing.assert_allclose(naive, _sigmoid(x.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(grad(x), naive, rtol=1e-6)


def test_gradient_of_a_tagged_exp_in_a_checkpoint_saving_everything_is_finite():
    """everything_saveable with a tagged exp: the transposed part reads the
    saved tag for both factors of exp(x) / (1 + exp(x)), so the pair is
    inlined and the stable row sees the whole product (before, one factor
    read exp's output and the other the tag: NaN at x = 100)."""
    f = olympus.checkpoint(_tagged_softplus, policy=_policies.everything_saveable)
    grad = olympus.jit(olympus.grad(lambda x: jnp.sum(f(x))))
    got = np.asarray(grad(BIG))
    want = _sigmoid(BIG.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-30)
    with olympus.config.override("olympus_optimize", False):
        assert not np.all(np.isfinite(np.asarray(grad(BIG))))
