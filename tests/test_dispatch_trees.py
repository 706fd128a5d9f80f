"""jit's call path for container arguments (tuples, lists, dicts, None,
namedtuples) and keywords, against JAX: a cache hit keyed on jaxlib's
flatten of the arguments (`JitFunction._call_tree`) returns what the first
call, through the general path, returned, and takes only calls the general
path would send to the same program."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from jax_oracle import agree

Pair = collections.namedtuple("Pair", "w b")
X = np.arange(4, dtype=np.float32)
Y = np.linspace(-1.0, 1.0, 4, dtype=np.float32)


def _container_calls(ox, x, y):
    xs, ys = ox.device_put(x), ox.device_put(y)
    f = ox.jit(lambda p, v: p[0] * v - p[1])
    g = ox.jit(lambda p, v: p["w"] * v - p["b"] + sum(p.get("extra", [0.0])))
    h = ox.jit(lambda p, v, shape: (p.w * v - p.b).reshape(shape), static_argnums=2)
    k = ox.jit(lambda a, opt=None, scale=1.0: a * scale if opt is None else a - opt)
    outs = []
    for _ in range(2):  # the second round is all cache hits
        outs += [f((xs, ys), xs), f([ys, xs], ys), f((xs, xs), ys)]
        outs += [g({"w": xs, "b": ys}, xs), g({"b": xs, "w": ys}, xs)]
        outs += [g({"w": xs, "b": ys, "extra": [xs, ys]}, ys)]
        outs += [h(Pair(xs, ys), xs, (2, 2)), h(Pair(xs, ys), xs, (4,))]
        outs += [k(xs), k(xs, None), k(xs, opt=ys), k(xs, scale=2.0), k(a=xs, opt=ys)]
        outs += [f((xs, 2.0), xs), f((x, ys), xs)]  # a Python scalar, a NumPy leaf
    return outs


def test_container_hits_agree_with_jax():
    agree(_container_calls, X, Y)


def test_container_calls_hit_after_the_first():
    traces = []

    def step(params, batch):
        traces.append(1)
        return {k: v - 0.1 * batch.sum() for k, v in params.items()}

    f = olympus.jit(step)
    params = {"w": jnp.ones(3), "b": jnp.zeros(3)}
    batch = jnp.arange(3.0)
    for _ in range(3):
        params = f(params, batch)
    assert len(traces) == 1 and len(f._fast) == 1
    np.testing.assert_allclose(params["w"], 1.0 - 0.9, rtol=1e-6)


def test_container_hits_keep_the_slow_paths_errors():
    f = olympus.jit(lambda p: p[0] + p[1])
    x = jnp.arange(3.0)
    f((x, x)), f((x, x))
    dead = jnp.ones(3)
    dead.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f((x, dead))
    with pytest.raises(TypeError):
        f((x, "text"))
    g = olympus.jit(lambda d: sum(d.values()))
    with pytest.raises(TypeError):
        g({1: x, "a": x})  # keys that do not sort, as JAX


def test_registered_nodes_take_the_general_path():
    """A class registered with olympus's tree_util is a leaf to jaxlib's
    flatten: such calls are never fast hits and stay right."""

    class Box:
        def __init__(self, value):
            self.value = value

    olympus.tree_util.register_pytree_node(
        Box, lambda b: ((b.value,), None), lambda _, c: Box(*c)
    )
    f = olympus.jit(lambda b, y: b.value * y)
    x = jnp.arange(3.0)
    for k in range(3):
        np.testing.assert_allclose(f(Box(x + k), x), (x + k) * x)
    assert not f._fast


def test_the_same_array_twice_hits():
    f = olympus.jit(lambda p, v: p[0] * v + p[1])
    x, y = jnp.arange(3.0), jnp.ones(3)
    for _ in range(2):
        np.testing.assert_allclose(f((x, y), x), x * x + 1.0)
    assert len(f._fast) == 1
    np.testing.assert_allclose(f((y, x), y), 1.0 + x)  # other Arrays, same key


def test_a_namedtuple_flattened_its_own_way_is_never_a_hit():
    """jaxlib flattens a namedtuple by its fields; one registered with
    olympus in another order must not be keyed on jaxlib's order."""
    Rev = collections.namedtuple("Rev", "a b")
    olympus.tree_util.register_pytree_node(
        Rev, lambda r: ((r.b, r.a), None), lambda _, c: Rev(c[1], c[0])
    )
    f = olympus.jit(lambda r, v: r.a * v - r.b)
    x, y = jnp.arange(3.0), jnp.ones(3)
    for _ in range(2):  # the same Array in both fields: orders look alike
        np.testing.assert_allclose(f(Rev(x, x), x), x * x - x)
    np.testing.assert_allclose(f(Rev(x, y), x), x * x - 1.0)
    np.testing.assert_allclose(f(Rev(y, x), x), x - x)
    assert not f._fast
