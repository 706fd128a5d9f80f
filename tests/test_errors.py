"""Errors name what went wrong, in which function, for which argument, at
which line of the user's code, and how to fix it."""

from __future__ import annotations

import functools
import inspect
import re

import numpy as np
import pytest

import olympus
from olympus import jit, lax
from olympus.errors import (
    ConcretizationTypeError,
    OlympusTypeError,
    TracerArrayConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

THIS_FILE = __file__
X = np.float32(1.5)


def _line_of(fn, text: str) -> int:
    """The line number in this file of the line of `fn` containing `text`."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def _assert_points_at(message: str, fn, text: str) -> None:
    assert f"{THIS_FILE}:{_line_of(fn, text)}" in message, message


# ---- concretization ------------------------------------------------------------
def branch_on_x(x):
    if x > 0:
        return x
    return -x


def int_of_x(x):
    return int(x) + 1


def float_of_x(x):
    return float(x) * 2.0


def test_if_on_a_traced_value():
    with pytest.raises(ConcretizationTypeError) as info:
        jit(branch_on_x)(X)
    message = str(info.value)
    assert "branch_on_x" in message
    assert re.search(r"argument\(s\) x\b", message)
    _assert_points_at(message, branch_on_x, "if x > 0")
    assert "static_argnums" in message and "lax.cond" in message
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("fn, text", [(int_of_x, "int(x)"), (float_of_x, "float(x)")])
def test_int_and_float_of_a_traced_value(fn, text):
    with pytest.raises(ConcretizationTypeError) as info:
        jit(fn)(X)
    message = str(info.value)
    assert fn.__name__ in message and re.search(r"argument\(s\) x\b", message)
    _assert_points_at(message, fn, text)
    assert "static_argnums" in message


def test_concretization_names_the_pytree_path():
    def loss(params):
        return params["w"] if params["w"][0] > 0 else params["b"]

    with pytest.raises(ConcretizationTypeError, match=r"params\['w'\] of .*loss"):
        jit(loss)({"w": np.ones(2, np.float32), "b": np.zeros(2, np.float32)})


def test_same_code_runs_eagerly():
    assert branch_on_x(np.float32(-2.0)) == 2.0
    assert int_of_x(olympus.numpy.asarray(np.float32(2.0))) == 3


# ---- shape and dtype errors ------------------------------------------------------
def add_mismatched_shapes(x, y):
    return lax.add(x, y)


@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
def test_shape_mismatch(use_jit):
    fn = jit(add_mismatched_shapes) if use_jit else add_mismatched_shapes
    with pytest.raises(OlympusTypeError) as info:
        fn(np.ones(3, np.float32), np.ones(4, np.float32))
    message = str(info.value)
    assert message.startswith("add") and "f32[3]" in message and "f32[4]" in message
    _assert_points_at(message, add_mismatched_shapes, "lax.add(x, y)")
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
def test_dtype_mismatch(use_jit):
    fn = jit(add_mismatched_shapes) if use_jit else add_mismatched_shapes
    with pytest.raises(OlympusTypeError) as info:
        fn(np.ones(3, np.float32), np.ones(3, np.int32))
    message = str(info.value)
    assert message.startswith("add") and "f32[3]" in message and "i32[3]" in message
    _assert_points_at(message, add_mismatched_shapes, "lax.add(x, y)")


def test_shape_rule_errors_name_their_primitive():
    def bad_matmul(a, b):
        return lax.dot_general(a, b, (((1,), (0,)), ((), ())))

    with pytest.raises(OlympusTypeError) as info:
        jit(bad_matmul)(np.ones((2, 3), np.float32), np.ones((4, 2), np.float32))
    message = str(info.value)
    assert (
        message.startswith("dot_general")
        and "f32[2,3]" in message
        and "f32[4,2]" in message
    )
    _assert_points_at(message, bad_matmul, "lax.dot_general")


def test_kind_errors():
    with pytest.raises(
        OlympusTypeError, match=r"sin requires floating-point operands, got i32"
    ):
        lax.sin(np.ones(3, np.int32))
    with pytest.raises(
        OlympusTypeError, match=r"reduce_sum: axis 2 is out of range for rank 2"
    ):
        jit(lambda x: lax.reduce_sum(x, (2,)))(np.ones((2, 3), np.float32))


# ---- static arguments --------------------------------------------------------------
def _counting(fn):
    traces = []

    @functools.wraps(fn)  # keeps the signature, which static_argnames reads
    def counted(*args, **kwargs):
        traces.append(1)
        return fn(*args, **kwargs)

    return counted, traces


def power(x, n):
    return lax.integer_pow(x, n) if n > 0 else x  # Python branch on a static int


def test_static_argnums_branches_in_python_and_retraces_only_on_new_values():
    counted, traces = _counting(power)
    f = jit(counted, static_argnums=1)
    x = np.float32(2.0)
    assert float(f(x, 3)) == 8.0
    assert float(f(np.float32(3.0), 3)) == 27.0  # same static value, same avals: cached
    assert len(traces) == 1
    assert float(f(x, 0)) == 2.0  # new static value: one new trace
    assert len(traces) == 2
    assert float(f(x, 3)) == 8.0 and float(f(x, 0)) == 2.0
    assert len(traces) == 2


def test_static_argnames():
    counted, traces = _counting(power)
    f = jit(counted, static_argnames="n")
    x = np.float32(2.0)
    assert float(f(x, n=2)) == 4.0
    assert float(f(x, n=2)) == 4.0
    assert len(traces) == 1
    assert float(f(x, n=4)) == 16.0
    assert len(traces) == 2
    # static_argnames also covers the argument given by position
    assert float(f(x, 4)) == 16.0


def test_unhashable_static_argument():
    f = jit(power, static_argnums=1)
    with pytest.raises(ValueError, match="hashable"):
        f(X, [1, 2])


def test_without_static_argnums_the_branch_fails():
    with pytest.raises(ConcretizationTypeError, match=r"argument\(s\) n of power"):
        jit(power)(X, 3)


# ---- escaped tracers, NumPy on tracers, indexing Python lists ------------------------
def test_escaped_tracer_names_where_it_was_made_and_used():
    saved = []

    def leak(x):
        saved.append(lax.sin(x))
        return x

    jit(leak)(X)
    for use in (
        lambda: lax.cos(saved[0]),
        lambda: jit(lambda x: lax.add(x, saved[0]))(X),
    ):
        with pytest.raises(UnexpectedTracerError) as info:
            use()
        message = str(info.value)
        assert "jit of" in message and "leak" in message
        _assert_points_at(message, leak, "saved.append")
        assert f"used at {THIS_FILE}:" in message


def test_numpy_function_on_a_tracer():
    def numpy_inside(x):
        return np.sin(x)

    with pytest.raises(TracerArrayConversionError) as info:
        jit(numpy_inside)(X)
    assert "olympus.numpy" in str(info.value)
    _assert_points_at(str(info.value), numpy_inside, "np.sin(x)")


def test_indexing_a_python_list_with_a_tracer():
    def pick(i):
        return [1.0, 2.0, 3.0][i]

    with pytest.raises(TracerIntegerConversionError) as info:
        jit(pick)(np.int32(1))
    message = str(info.value)
    assert re.search(r"argument\(s\) i of .*pick", message)
    _assert_points_at(message, pick, "[i]")
    assert isinstance(info.value, ConcretizationTypeError)
