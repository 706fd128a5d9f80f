"""Mutable array references: `olympus.new_ref`, `olympus.Ref` and the
operations of JAX's `jax.ref` module (`get`, `set`, `swap`, `addupdate`,
`freeze`, `empty_ref`, `free_ref`).

A Ref is a box whose value is replaced by each write (olympus/tracer/refs.py
holds the box and how jit and control flow thread it through staged
programs); the operations here check what JAX checks (a write must match
the indexed shape and the dtype exactly) and compute the new value with
olympus.numpy, so a program using refs is an ordinary pure program.

Example:
  >>> r = olympus.new_ref(jnp.zeros(3))
  >>> @olympus.jit
  ... def add(r, y):
  ...     r[...] += y
  >>> add(r, 2.0)
  >>> r[...]
  Array([2., 2., 2.], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from olympus import numpy as jnp
from olympus.lax import elementwise as ew
from olympus.lax.custom_derivatives import stop_gradient
from olympus.tracer import refs
from olympus.tracer.core import Tracer, aval_of
from olympus.transforms.ad_util import is_zero
from olympus.transforms.batching import BatchTrace
from olympus.transforms.jvp import JVPTracer
from olympus.tracer.refs import (
    AbstractRef,
    Ref,
    RefAliasError,
    RefError,
    RefEscapeError,
    RefReturnError,
    RefScopeError,
    RefWriteError,
)


class RefInitError(TypeError):
    """`new_ref` of something that is not an array or scalar (a list, a Ref)."""


class RefIndexError(ValueError):
    """A static integer index outside the ref's shape (JAX's ValueError)."""


class RefUpdateError(ValueError):
    """A write whose value does not match the indexed shape or the ref's
    dtype (refs neither broadcast nor cast, as in JAX)."""


def new_ref(init_val, *, memory_space=None, kind=None) -> Ref:
    """A new mutable array reference holding `init_val`.

    Args:
      init_val: an array or scalar (its dtype and weak type are the ref's).
      memory_space: taken for JAX's signature (olympus has one).
      kind: taken for JAX's signature.

    Returns:
      A `Ref`: read it with `ref[idx]`, write with `ref[idx] = value`.

    Raises:
      RefInitError: init_val is a list, a tuple or a Ref.

    Example:
      >>> r = olympus.new_ref(1.0)
      >>> r[...] = r[...] * 3
      >>> r[...]
      Array(3., dtype=float32, weak_type=True)
    """
    if isinstance(init_val, (Ref, list, tuple, dict)) or init_val is None:
        raise RefInitError(
            f"new_ref: the initial value must be an array or scalar, got "
            f"{type(init_val).__name__}; pass jnp.asarray(value) (one Ref per "
            f"array)."
        )
    return refs.make_ref(jnp.asarray(init_val))


def empty_ref(ty, memory_space=None) -> Ref:
    """A new Ref of `ty`'s shape and dtype, to be written before it is read.

    Args:
      ty: a ShapeDtypeStruct (or array) giving the shape and dtype.
      memory_space: taken for JAX's signature (olympus has one).

    Returns:
      A Ref holding zeros (JAX leaves it uninitialized).

    Raises:
      AttributeError: ty has no shape or dtype.

    Example:
      >>> r = olympus.empty_ref(olympus.ShapeDtypeStruct((2,), jnp.float32))
      >>> r[...] = jnp.ones(2)
      >>> r[...]
      Array([1., 1.], dtype=float32)
    """
    return new_ref(jnp.zeros(ty.shape, ty.dtype))


def free_ref(ref: Ref) -> tuple:
    """JAX's `free_ref`: olympus has nothing to free.

    The value is garbage collected with the Ref.

    Args:
      ref: a Ref.

    Returns:
      An empty tuple, as JAX's.

    Raises:
      TypeError: ref is not a Ref.

    Example:
      >>> olympus.free_ref(olympus.new_ref(jnp.zeros(2)))
      ()
    """
    _check_ref(ref, "free_ref")
    return ()


def freeze(ref: Ref):
    """The ref's value as an immutable array, ending the ref's use.

    JAX says the ref is not to be used after; olympus does not enforce it.

    Args:
      ref: a Ref.

    Returns:
      Its value (an Array, or a tracer while tracing).

    Raises:
      TypeError: ref is not a Ref.

    Example:
      >>> r = olympus.new_ref(jnp.arange(3.0))
      >>> r[0] = jnp.float32(5)
      >>> olympus.freeze(r)
      Array([5., 1., 2.], dtype=float32)
    """
    return get(ref)


def get(ref: Ref, idx=None):
    """`ref[idx]`: the value at `idx`.

    Args:
      ref: a Ref.
      idx: an index as for arrays (ints, slices, arrays); None or `...`
        for all of it.

    Returns:
      The indexed value.

    Raises:
      RefIndexError: a static integer index is out of range.

    Example:
      >>> olympus.ref.get(olympus.new_ref(jnp.arange(3.0)), 1)
      Array(1., dtype=float32)
    """
    value = refs.read(_check_ref(ref, "get"))
    idx = _index(ref, idx)
    return value if idx is None else value[idx]


def swap(ref: Ref, idx, value, _function_name: str = "swap"):
    """Writes `value` at `idx` and returns the value that was there.

    Args:
      ref: a Ref.
      idx: an index as for `get`.
      value: the new value, of the indexed shape and the ref's dtype.
      _function_name: the operation named in errors (`set` passes its own).

    Returns:
      The value that was at `idx`.

    Raises:
      RefUpdateError: value's shape or dtype does not match (no broadcasting
        or casting, as in JAX).

    Example:
      >>> r = olympus.new_ref(jnp.zeros(2))
      >>> olympus.ref.swap(r, ..., jnp.ones(2))
      Array([0., 0.], dtype=float32)
    """
    return _update(ref, idx, value, _function_name, "swap", "set")


def set(ref: Ref, idx, value) -> None:  # noqa: A001  (JAX's name)
    """`ref[idx] = value`.

    Args:
      ref: a Ref.
      idx: an index as for `get`.
      value: the new value, of the indexed shape and the ref's dtype.

    Returns:
      None.

    Raises:
      RefUpdateError: value's shape or dtype does not match.

    Example:
      >>> r = olympus.new_ref(jnp.zeros(2))
      >>> olympus.ref.set(r, 1, jnp.float32(3))
      >>> r[...]
      Array([0., 3.], dtype=float32)
    """
    swap(ref, idx, value, "set")


def addupdate(ref: Ref, idx, x) -> None:
    """`ref[idx] += x` in one operation.

    Args:
      ref: a Ref.
      idx: an index as for `get`.
      x: what to add, of the indexed shape and the ref's dtype.

    Returns:
      None.

    Raises:
      RefUpdateError: x's shape or dtype does not match.

    Example:
      >>> r = olympus.new_ref(jnp.ones(2))
      >>> olympus.ref.addupdate(r, ..., jnp.ones(2))
      >>> r[...]
      Array([2., 2.], dtype=float32)
    """
    _update(ref, idx, x, "addupdate", "addupdate", "add")


def _update(ref: Ref, idx, value, what: str, checked_as: str, how: str):
    """Writes `value` at `idx` (`how`: "set" or "add", as `x.at[idx]`'s
    methods) after JAX's checks (named `checked_as`); returns the old value."""
    current = refs.read(_check_ref(ref, what))
    idx = _index(ref, idx)
    old = current if idx is None else current[idx]
    value = _checked_value(ref, old, value, checked_as)
    if idx is None:
        new = value if how == "set" else current + value
    else:
        new = getattr(current.at[idx], how)(value)
    refs.write(ref, _of_ref_type(ref, new))
    return old


def _check_ref(ref, what: str) -> Ref:
    if not isinstance(ref, Ref):
        raise TypeError(
            f"olympus.ref.{what}: expected a Ref (from olympus.new_ref), got "
            f"{type(ref).__name__}"
        )
    return ref


def _index(ref: Ref, idx):
    """idx as a tuple, or None for the whole ref; RefIndexError for a static
    integer outside the shape."""
    if idx is None or idx is Ellipsis or idx == ():
        return None
    entries = idx if isinstance(idx, tuple) else (idx,)
    for entry, dim in zip(entries, ref.shape):
        if entry is Ellipsis or entry is None:
            break
        if isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
            if not -dim <= entry < dim:
                raise RefIndexError(f"Out of bound indexer: idx={entry}, dim={dim}.")
    return idx


def _checked_value(ref: Ref, old, value, what: str):
    value = value if isinstance(value, Tracer) else jnp.asarray(value)
    aval, want = aval_of(value), aval_of(old)
    if aval.shape != want.shape:
        raise RefUpdateError(
            f"Invalid shape for `{what}`. Ref shape: {ref.shape}. Expected "
            f"shape: {want.shape}. Value shape: {aval.shape}. Refs do not "
            f"broadcast: pass jnp.broadcast_to(value, {want.shape})."
        )
    if aval.dtype != ref.dtype:
        raise RefUpdateError(
            f"Invalid dtype for `{what}`. Ref dtype: {ref.dtype}. Value dtype: "
            f"{aval.dtype}. Cast it: value.astype({ref.dtype.name!r})."
        )
    return value


def _of_ref_type(ref: Ref, new):
    """`new` with the ref's weak type (a write keeps the ref's type)."""
    if aval_of(new).weak_type == ref.weak_type:
        return new
    return ew.convert_element_type_p.bind(
        new, new_dtype=ref.dtype, weak_type=ref.weak_type
    )


refs.operations.update(get=get, swap=swap, stop_gradient=stop_gradient)
refs.plain_values[JVPTracer] = lambda t: t.primal if is_zero(t.tangent) else None
refs.mapping_traces.append(BatchTrace)

__all__ = [
    "AbstractRef",
    "Ref",
    "RefAliasError",
    "RefError",
    "RefEscapeError",
    "RefIndexError",
    "RefInitError",
    "RefReturnError",
    "RefScopeError",
    "RefUpdateError",
    "RefWriteError",
    "addupdate",
    "empty_ref",
    "free_ref",
    "freeze",
    "get",
    "new_ref",
    "set",
    "swap",
]
