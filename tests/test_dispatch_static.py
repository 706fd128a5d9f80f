"""jit's call path with static arguments, against JAX: a static value is
compared by its type and `__eq__` (2 and 2.0 are two signatures, (2,) and
(2.0,) one), and a cache hit (`JitFunction.__call__`'s fast path) returns
what the first call, through the general path, returned."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from jax_oracle import agree

INTS = np.arange(4, dtype=np.int32)


def _static_calls(ox, x):
    traces = []

    def scaled(a, s):
        traces.append(s)
        return a * s

    def first_scaled(a, s):
        traces.append(s)
        return a * s[0]

    f = ox.jit(scaled, static_argnums=1)
    g = ox.jit(scaled, static_argnames="s")
    h = ox.jit(first_scaled, static_argnums=1)
    outs = []
    for _ in range(2):  # the second round is all cache hits
        outs += [f(x, 2), f(x, 2.0), f(x, True), f(x, 1), g(x, s=2), g(x, s=2.0)]
        outs += [h(x, (2,)), h(x, (2.0,))]
    return outs, len(traces)


def test_static_arguments_of_other_types_are_other_signatures():
    agree(_static_calls, INTS)


def test_static_hits_agree_with_jax_for_arrays_and_positions():
    def program(ox, x, y):
        f = ox.jit(lambda a, n, b: a * n + b, static_argnums=1)
        xs, ys = ox.device_put(x), ox.device_put(y)
        return [f(xs, n, ys) for n in (1, 2, 1, 2, 3.5, 3.5)]

    agree(program, INTS.astype(np.float32), np.ones(4, np.float32))


def test_changed_static_type_is_named_by_explain_cache_misses(caplog):
    f = olympus.jit(lambda a, s: a * s, static_argnums=1)
    x = jnp.arange(3)
    f(x, 2)
    with olympus.config.override("olympus_explain_cache_misses", True):
        with caplog.at_level("WARNING", logger="olympus"):
            assert f(x, 2.0).dtype == np.float32
    assert "2 (int) -> 2.0 (float)" in caplog.text


@pytest.mark.parametrize("value", [[2.0], {"a": 1}])
def test_unhashable_static_values_raise_on_every_call(value):
    f = olympus.jit(lambda a, s: a, static_argnums=1)
    x = jnp.arange(3.0)
    f(x, 2.0), f(x, 2.0)
    for _ in range(2):
        with pytest.raises(ValueError, match="hashable"):
            f(x, value)


def test_a_static_array_position_never_hits_another_arrays_entry():
    """An Array where a static argument is expected is not hashable (JAX's
    error), also after a hit for a static value filled the fast cache."""
    f = olympus.jit(lambda a, s: a * 2, static_argnums=1)
    x = jnp.arange(3.0)
    f(x, 2.0), f(x, 2.0)
    with pytest.raises((TypeError, ValueError)):
        f(x, x)


def _keyword_calls(ox, x, y):
    traces = []

    def affine(a, b, scale=1.0, shift=0):
        traces.append((scale, shift))
        return a * scale + b + shift

    f = ox.jit(affine, static_argnames=("scale", "shift"))
    xs, ys = ox.device_put(x), ox.device_put(y)
    outs = []
    for _ in range(2):  # the second round is all cache hits
        outs += [
            f(xs, b=ys),
            f(xs, b=ys, scale=2),
            f(xs, b=ys, scale=2.0),
            f(xs, shift=3, b=ys, scale=2.0),  # keywords in another order
            f(xs, scale=2.0, b=ys, shift=3),
            f(b=ys, a=xs),
            f(xs, b=y),  # a NumPy keyword argument
            f(xs, b=1.5),  # a Python scalar: a dynamic argument
            f(xs, ys, shift=True),
        ]
    return outs, len(traces)


def test_keyword_hits_agree_with_jax():
    agree(_keyword_calls, np.arange(4, dtype=np.float32), np.ones(4, np.float32))


def test_keyword_hits_keep_the_slow_paths_errors():
    f = olympus.jit(lambda a, b, s=1: a * s + b, static_argnames="s")
    x, y = jnp.arange(3.0), jnp.ones(3)
    for _ in range(2):
        np.testing.assert_allclose(f(x, b=y, s=2), [1.0, 3.0, 5.0])
    assert len(f._fast) == 1
    with pytest.raises(ValueError, match="hashable"):
        f(x, b=y, s=[2])
    dead = jnp.ones(3)
    dead.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x, b=dead, s=2)
    with pytest.raises(TypeError):
        f(x, c=y, s=2)  # no parameter c
