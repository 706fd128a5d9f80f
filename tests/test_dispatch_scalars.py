"""jit's call path for Python scalars passed as dynamic arguments, against
JAX: a value seen twice becomes a `__call__` hit keyed on its type and value
(its buffer made once), and every hit returns what the general path returns:
weak types, bool/int/float/complex promotion, the sign of zero, NaN."""

from __future__ import annotations

import math

import numpy as np

import olympus
import olympus.numpy as jnp
from jax_oracle import agree, x64

X = np.linspace(-1.0, 2.0, 4, dtype=np.float32)
VALUES = [2.0, 2, True, 2.0, 0.0, -0.0, 1 + 2j, complex(1.0, -0.0), 3, math.nan]


def _scalar_calls(ox, x):
    xs = ox.device_put(x)
    f = ox.jit(lambda a, s: a * s)
    g = ox.jit(lambda s, a: 1.0 / (s + 0 * a))  # the sign of a zero shows
    h = ox.jit(lambda a, s, n: a * s + n, static_argnums=2)
    outs = []
    for _ in range(3):  # the second and third rounds hit
        outs += [f(xs, v) for v in VALUES]
        outs += [g(v, xs) for v in (0.0, -0.0, 2.0)]
        outs += [h(xs, 0.5, 1), h(xs, 0.5, 2), h(xs, 3, 1)]
    return outs


def test_scalar_hits_agree_with_jax():
    agree(_scalar_calls, X)


def test_scalar_hits_agree_with_jax_under_x64():
    with x64():
        agree(_scalar_calls, X)


def test_a_value_seen_twice_is_a_hit_and_a_new_one_is_not():
    traces = []

    def scaled(a, s):
        traces.append(1)
        return a * s

    f = olympus.jit(scaled)
    x = jnp.arange(3.0)
    for k in range(4):
        np.testing.assert_allclose(f(x, 0.5), x * 0.5)
    assert len(f._fast) == 1  # remembered on the second call
    for k in range(5):  # a new value every call: none remembered
        np.testing.assert_allclose(f(x, 1.0 + k), x * (1.0 + k))
    assert len(f._fast) == 1 and len(traces) == 1
    for _ in range(2):
        np.testing.assert_allclose(f(x, -0.0), x * -0.0)
    assert len(f._fast) == 1  # a float zero is never keyed by value
    f.clear_cache()
    assert not f._fast and not f._scalar_keys
