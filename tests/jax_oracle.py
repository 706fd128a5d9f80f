"""The tests' JAX oracle: one program run under olympus and under JAX 0.10.2, compared.

JAX's documented behaviour is olympus's spec, so a conformance test writes its
program once against a namespace and runs it on both systems:

    >>> from jax_oracle import agree  # tests/ is on sys.path
    >>> agree(lambda ox, x: ox.jit(ox.jnp.sum)(x), np.ones(3, np.float16))

`ox` has `jit`, `grad`, `vmap`, ... (the top-level API) and `jnp`, `lax`,
`random`, `nn`, `scipy`, `tree_util`, `dtypes`. Both results must agree in pytree
structure (container types), shape, dtype, weak type and value (NaN where NaN,
the sign of zeros, ints exact), or both runs must raise. jax is a test-only
dependency (the `[test]` extra); the olympus package never imports it.
"""

from __future__ import annotations

import contextlib
import types
from typing import Any, Callable

import jax
import jax.numpy as jjnp
import numpy as np

import olympus
import olympus.numpy as onp

jax.config.update("jax_platforms", "cpu")


def _namespace(name, top, jnp, lax, random, nn, scipy, tree_util, dtypes):
    ns = types.SimpleNamespace(
        name=name,
        jnp=jnp,
        numpy=jnp,
        lax=lax,
        random=random,
        nn=nn,
        scipy=scipy,
        tree_util=tree_util,
        dtypes=dtypes,
    )
    for attr in dir(top):
        if not attr.startswith("_") and not hasattr(ns, attr):
            setattr(ns, attr, getattr(top, attr))
    return ns


def _olympus_namespace():
    import olympus.nn
    import olympus.random
    import olympus.scipy
    import olympus.scipy.special
    import olympus.scipy.stats
    import olympus.scipy.linalg

    return _namespace(
        "olympus", olympus, onp, olympus.lax, olympus.random, olympus.nn,
        olympus.scipy, olympus.tree_util, olympus.dtypes,
    )  # fmt: skip


def _jax_namespace():
    import jax.nn
    import jax.random
    import jax.scipy
    import jax.scipy.linalg
    import jax.scipy.special
    import jax.scipy.stats

    return _namespace(
        "jax", jax, jjnp, jax.lax, jax.random, jax.nn, jax.scipy, jax.tree_util,
        jax.dtypes,
    )  # fmt: skip


OLYMPUS = _olympus_namespace()
JAX = _jax_namespace()


@contextlib.contextmanager
def x64(enabled: bool = True):
    """64-bit types on (or off) in both systems inside the block."""
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", enabled)
    try:
        with olympus.enable_x64(enabled):
            yield
    finally:
        jax.config.update("jax_enable_x64", before)


class Raised:
    """What a run that raised returns: the exception, for the comparison."""

    def __init__(self, error: BaseException):
        self.error = error

    def __repr__(self):
        return f"raised {type(self.error).__name__}: {str(self.error)[:300]}"


def run_both(program: Callable, *args, **kwargs) -> tuple[Any, Any]:
    """(olympus's result, JAX's result) of `program(ox, *args)`; a Raised for an error."""
    results = []
    for ns in (OLYMPUS, JAX):
        try:
            results.append(program(ns, *args, **kwargs))
        except Exception as e:  # the comparison decides whether raising is right
            results.append(Raised(e))
    return results[0], results[1]


def _is_array(x) -> bool:
    return isinstance(x, (olympus.Array, jax.Array, np.ndarray, np.generic))


def weak_type(x) -> bool:
    if isinstance(x, jax.Array):
        return bool(getattr(x, "weak_type", False))
    if isinstance(x, olympus.Array):
        return olympus.dtypes.is_weakly_typed(x)
    return False


def _default_tolerance(dtype: np.dtype) -> tuple[float, float]:
    table = {
        "float64": (1e-12, 1e-12),
        "complex128": (1e-12, 1e-12),
        "float32": (2e-6, 1e-6),
        "complex64": (2e-6, 1e-6),
        "float16": (2e-3, 1e-3),
        "bfloat16": (1.6e-2, 1e-2),
    }
    return table.get(dtype.name, (0.0, 0.0))


def differences(
    ours, theirs, *, rtol=None, atol=None, check_weak_type=True, check_zero_sign=True,
    path="result",
) -> list[str]:  # fmt: skip
    """Every way `ours` (olympus) and `theirs` (JAX) differ, as readable lines."""
    if isinstance(ours, Raised) or isinstance(theirs, Raised):
        if isinstance(ours, Raised) and isinstance(theirs, Raised):
            return []
        return [f"{path}: olympus {ours!r} but JAX {theirs!r}"]
    if _is_array(ours) or _is_array(theirs):
        return _leaf_differences(
            ours, theirs, rtol, atol, check_weak_type, check_zero_sign, path
        )
    if isinstance(ours, (tuple, list)) or isinstance(theirs, (tuple, list)):
        if _container_kind(ours) != _container_kind(theirs) or len(ours) != len(theirs):
            return [f"{path}: olympus {type(ours).__name__} of {_len(ours)}, "
                    f"JAX {type(theirs).__name__} of {_len(theirs)}"]  # fmt: skip
        found = []
        for i, (a, b) in enumerate(zip(ours, theirs)):
            found += differences(
                a, b, rtol=rtol, atol=atol, check_weak_type=check_weak_type,
                check_zero_sign=check_zero_sign, path=f"{path}[{i}]",
            )  # fmt: skip
        return found
    if isinstance(ours, dict) or isinstance(theirs, dict):
        if type(ours) is not type(theirs) or list(ours) != list(theirs):
            return [f"{path}: olympus {ours!r:.200} but JAX {theirs!r:.200}"]
        found = []
        for k in ours:
            found += differences(
                ours[k], theirs[k], rtol=rtol, atol=atol,
                check_weak_type=check_weak_type, check_zero_sign=check_zero_sign,
                path=f"{path}[{k!r}]",
            )  # fmt: skip
        return found
    if isinstance(ours, (bool, int, float, complex, str, type(None))):
        same = ours == theirs or (
            isinstance(ours, float) and np.isnan(ours) and np.isnan(theirs)
        )
        if type(ours) is not type(theirs) or not same:
            return [f"{path}: olympus {ours!r} ({type(ours).__name__}), "
                    f"JAX {theirs!r} ({type(theirs).__name__})"]  # fmt: skip
        return []
    if ours != theirs:
        return [f"{path}: olympus {ours!r} but JAX {theirs!r}"]
    return []


def _container_kind(x):
    """A container's type as the two systems can share it: a namedtuple by
    its class name and fields (each system defines its own class)."""
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return ("namedtuple", type(x).__name__, type(x)._fields)
    return type(x)


def _len(x):
    try:
        return len(x)
    except TypeError:
        return "?"


def _leaf_differences(ours, theirs, rtol, atol, check_weak, check_zero_sign, path):
    found = []
    if not (_is_array(ours) and _is_array(theirs)):
        return [f"{path}: olympus {type(ours).__name__} {ours!r:.100}, "
                f"JAX {type(theirs).__name__} {theirs!r:.100}"]  # fmt: skip
    a, b = np.asarray(ours), np.asarray(theirs)
    if a.shape != b.shape:
        found.append(f"{path}: shape {a.shape} (olympus) vs {b.shape} (JAX)")
    if a.dtype != b.dtype:
        found.append(f"{path}: dtype {a.dtype} (olympus) vs {b.dtype} (JAX)")
    if check_weak and weak_type(ours) != weak_type(theirs):
        found.append(f"{path}: weak_type {weak_type(ours)} (olympus) "
                     f"vs {weak_type(theirs)} (JAX)")  # fmt: skip
    if found:
        return found
    default_rtol, default_atol = _default_tolerance(a.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if a.dtype.kind in "fc" or a.dtype.name == "bfloat16" or "float8" in a.dtype.name:
        wide = np.complex128 if a.dtype.kind == "c" else np.float64
        x, y = a.astype(wide), b.astype(wide)
        ok = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
        if check_zero_sign and a.dtype.kind == "f":
            zeros = (x == 0) & (y == 0)
            ok &= ~zeros | (np.signbit(x) == np.signbit(y))
    else:
        ok = a == b
    if not np.all(ok):
        bad = np.argwhere(~np.asarray(ok))[:4]
        shown = ", ".join(
            f"{tuple(int(i) for i in idx)}: {a[tuple(idx)]!r} vs {b[tuple(idx)]!r}"
            for idx in bad
        )
        found.append(f"{path}: values differ (olympus vs JAX) at {shown}")
    return found


def agree(program: Callable, *args, rtol=None, atol=None, check_weak_type=True,
          check_zero_sign=True, **kwargs):  # fmt: skip
    """Assert that `program(ox, *args)` behaves the same under olympus and JAX."""
    ours, theirs = run_both(program, *args, **kwargs)
    found = differences(
        ours, theirs, rtol=rtol, atol=atol, check_weak_type=check_weak_type,
        check_zero_sign=check_zero_sign,
    )  # fmt: skip
    if found:
        raise AssertionError("olympus and JAX 0.10.2 differ:\n  " + "\n  ".join(found))
    return ours, theirs
