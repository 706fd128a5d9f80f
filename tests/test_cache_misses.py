"""olympus_explain_cache_misses: each jit recompilation is logged (logger
"olympus", WARNING) with what changed and the caller's file:line."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import olympus

HERE = __file__


@pytest.fixture
def explained(caplog):
    """The messages logged while the option is on."""
    olympus.config.update("olympus_explain_cache_misses", True)
    caplog.set_level(logging.WARNING, logger="olympus")
    try:
        yield lambda: [r.getMessage() for r in caplog.records if r.name == "olympus"]
    finally:
        olympus.config.update("olympus_explain_cache_misses", False)


def _line_of(text: str) -> int:
    with open(HERE) as f:
        return next(
            i for i, line in enumerate(f, 1) if text in line and "_line_of" not in line
        )


def test_first_compile_and_hits_say_nothing(explained):
    f = olympus.jit(lambda x: x + 1.0)
    f(np.ones(3, np.float32))
    f(np.ones(3, np.float32))
    assert explained() == []


def test_shape_change_names_the_leaf_and_the_callers_line(explained):
    def step(params, x):
        return params["w"] * x

    f = olympus.jit(step)
    f({"w": np.ones(3, np.float32)}, 1.0)
    f({"w": np.ones(4, np.float32)}, 1.0)  # the recompiling call
    (message,) = explained()
    assert message.startswith("jit(step) recompiles for a call at ")
    assert f"{HERE}:{_line_of('# the recompiling call')}" in message
    assert "params['w']: shape (3,) -> (4,)" in message


def test_dtype_change(explained):
    f = olympus.jit(lambda x: x * 2)
    f(np.ones(2, np.float32))
    f(np.ones(2, np.int32))
    (message,) = explained()
    assert "x: dtype float32 -> int32" in message and "shape" not in message


def test_weak_type_change(explained):
    f = olympus.jit(lambda x, y: x * y)
    f(np.ones(2, np.float32), 2.0)
    f(np.ones(2, np.float32), np.float32(2.0))
    (message,) = explained()
    assert "y: weak type True -> False" in message


def test_static_argument_change(explained):
    f = olympus.jit(lambda x, n: x * n, static_argnums=1)
    f(np.ones(2, np.float32), 2)
    f(np.ones(2, np.float32), 3)
    (message,) = explained()
    assert "static n: 2 -> 3" in message


def test_tree_structure_change(explained):
    f = olympus.jit(lambda t: t["a"])
    f({"a": 1.0})
    f({"a": 1.0, "b": 2.0})
    (message,) = explained()
    assert "tree structure of the arguments" in message and "'b'" in message


def test_closest_previous_signature_is_compared(explained):
    f = olympus.jit(lambda x, y: x.sum() + y)
    f(np.ones(2, np.float32), np.ones(5, np.float32))
    f(np.ones(3, np.int32), np.ones(5, np.float32))
    f(np.ones(3, np.int32), np.ones(6, np.float32))  # one change from the second
    last = explained()[-1]
    assert "y: shape (5,) -> (6,)" in last and "x:" not in last
    assert "closest of 2 compiled signature(s)" in last


def test_inside_a_transform(explained):
    f = olympus.jit(lambda x: (x * x).sum())
    g = olympus.grad(f)
    g(np.ones(2, np.float32))
    out = g(np.ones(3, np.float32))
    np.testing.assert_allclose(np.asarray(out), [2.0, 2.0, 2.0])
    assert any("x: shape (2,) -> (3,)" in m for m in explained())


def test_off_by_default(caplog):
    caplog.set_level(logging.WARNING, logger="olympus")
    f = olympus.jit(lambda x: x - 1.0)
    f(np.ones(2, np.float32))
    f(np.ones(3, np.float32))
    assert not [r for r in caplog.records if "recompiles" in r.getMessage()]


def test_switching_the_optimizer_recompiles_and_says_so(explained):
    traces = []

    def f(x):
        traces.append(1)
        return x * 1.0

    jitted = olympus.jit(f)
    jitted(np.ones(3, np.float32))
    with olympus.config.override("olympus_optimize", False):
        jitted(np.ones(3, np.float32))
    assert len(traces) == 2
    assert "olympus_optimize: True -> False" in explained()[-1]
