"""olympus.caches: every cache registers where it is defined, and
`olympus.clear_caches()` empties them all through the registry."""

import gc
import weakref

import ml_dtypes
import pytest
import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import caches, lax
from olympus.backends import interpreted


def _fill_every_cache(jitted):
    x = np.ones(3, np.float32)
    jitted(x)  # a NumPy argument: ndarray avals
    jitted(x)  # its hit (C++ dispatcher): the ndarray dtypes it takes as they are
    y = jnp.ones(2)
    jnp.sin(y)  # an eager op on an Array: the eager fast path
    jnp.sin(y)  # its second call: olympus.numpy's direct path
    olympus.grad(lambda v: jnp.sum(jitted(v)))(
        x
    )  # pjit executables, transformed programs
    lax.fori_loop(0, 3, lambda i, c: c + 1.0, jnp.zeros(2))  # eager control flow
    jnp.unique(jnp.array([1, 2, 2]))  # jnp set-operation jits
    jnp.histogram(jnp.arange(5.0), bins=2)  # jnp statistics jits
    np.asarray(jnp.ones(2, ml_dtypes.bfloat16))  # bitcast executables
    olympus.debug.print("{}", 1)  # ordered-effect analyses
    auto = (olympus.sharding.AxisType.Auto,)
    mesh = olympus.make_mesh((1,), ("i",), axis_types=auto)  # shard_map executables
    P = olympus.sharding.PartitionSpec
    per_device = olympus.shard_map(lambda v: lax.psum(v, "i"), mesh, P("i"), P())
    per_device(x)
    square = np.ones((128, 128), np.float32)
    closed = olympus.make_olympuspr(lambda a: a @ a)(square)
    interpreted.interpret(closed, [square])  # the interpreter tier's memory
    return per_device  # keeps its traced body, the key of its executable, alive


def test_clear_caches_empties_every_registered_cache_and_jit_retraces(capsys):
    traces = []

    def f(v):
        traces.append(1)
        return jnp.sin(v) * 2.0

    jitted = olympus.jit(f)
    kept = _fill_every_cache(jitted)  # noqa: F841
    registered = caches.registered()
    assert {
        "eager executables",
        "pjit executables",
        "transformed programs",
        "control flow",
        "ndarray avals",
    } <= set(registered)
    assert all(len(cache) for cache in registered.values()), {
        name: len(cache) for name, cache in registered.items()
    }
    count = len(traces)
    jitted(np.ones(3, np.float32))
    assert len(traces) == count  # a cache hit

    olympus.clear_caches()
    assert {name: len(cache) for name, cache in registered.items()} == dict.fromkeys(
        registered, 0
    )
    assert not jitted._cache and not jitted._fast and not jitted._traced
    np.testing.assert_allclose(
        jitted(np.ones(3, np.float32)), 2 * np.sin(np.ones(3)), rtol=1e-6
    )
    assert len(traces) == count + 1  # traced again


def test_jit_functions_register_weakly():
    jitted = olympus.jit(lambda v: v + 1.0)
    jitted(np.ones(2, np.float32))
    ref = weakref.ref(jitted)
    del jitted
    gc.collect()
    assert ref() is None  # the registry does not keep a dropped function alive
    olympus.clear_caches()


def test_register_returns_the_cache_and_clear_all_empties_it():
    cache = caches.register("test cache", caches.BoundedCache(2))
    try:
        for key in (1, 2, 3):
            cache[key] = key
        assert list(cache) == [2, 3]
        caches.clear_all()
        assert not cache
    finally:
        caches._caches.pop("test cache")


def test_shape_rules_are_remembered_for_plain_params_only():
    """Tracing asks a shape rule once per (primitive, operand types, params);
    an error is raised every time; params that differ only in type (2 and
    2.0) are asked apart; a param holding a function is never kept; an
    option change forgets every result."""
    from olympus.ir.core import Primitive, ShapedArray
    from olympus.tracer import staging
    from olympus.tracer.errors import OlympusTypeError

    calls = []

    def rule(x, *, y, fun=None):
        calls.append(y)
        if y < 0:
            raise TypeError("counted_thing: y must not be negative")
        return x

    counted_p = Primitive("counted_thing")
    counted_p.def_abstract_eval(rule)
    f32 = ShapedArray((3,), np.float32)

    def shape(**params):
        return staging.abstract_eval(counted_p, [f32], params, None)

    assert shape(y=2) is f32 and shape(y=2) is f32
    assert calls == [2]
    shape(y=2.0)
    assert calls == [2, 2.0]
    for _ in range(2):
        with pytest.raises(OlympusTypeError, match="must not be negative"):
            shape(y=-1)
    assert calls == [2, 2.0, -1, -1]

    def helper(v):
        return v

    shape(y=3, fun=helper)
    shape(y=3, fun=helper)
    assert calls[-2:] == [3, 3]  # not remembered
    ref = weakref.ref(helper)
    del helper
    gc.collect()
    assert ref() is None

    with olympus.config.override("olympus_debug_nans", True):
        shape(y=2)  # the option change forgot it
    assert calls[-1] == 2 and len(calls) == 7
    shape(y=2)  # so did leaving the override
    assert len(calls) == 8 and staging._shapes
    olympus.clear_caches()
    assert not staging._shapes
