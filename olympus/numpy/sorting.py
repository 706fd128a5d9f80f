"""jnp.sort, argsort and lexsort: each one stable `sort` primitive."""

from __future__ import annotations

from olympus import lax
from olympus.ir import dtypes
from olympus.lax.sorting import descending_key
from olympus.numpy.core import aval_of, to_operand

__all__ = ["argsort", "lexsort", "sort"]


def _along(a, axis):
    """`a` and the axis to sort: None sorts the flattened array, as NumPy."""
    a = to_operand(a)
    if axis is None:
        return lax.reshape(a, (aval_of(a).size,)), 0
    if aval_of(a).ndim == 0:
        raise ValueError("sort of a 0-d array needs axis=None")
    return a, int(axis) % aval_of(a).ndim


def sort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
         descending: bool = False):
    """`a` sorted along `axis` (NaNs last, as NumPy).

    >>> jnp.sort(jnp.array([3, 1, 2]))  # [1, 2, 3]
    """
    del kind, order
    a, axis = _along(a, axis)
    if not descending:
        return lax.sort(a, dimension=axis, is_stable=stable)
    _, out = lax.sort((descending_key(a), a), dimension=axis, is_stable=stable, num_keys=1)
    return out


def argsort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
            descending: bool = False):
    """The indices that sort `a` along `axis`; equal entries keep their order.

    >>> jnp.argsort(jnp.array([3, 1, 2]))  # [1, 2, 0]
    """
    del kind, order
    a, axis = _along(a, axis)
    key = descending_key(a) if descending else a
    order_ = lax.broadcasted_iota(dtypes.int32, aval_of(a).shape, axis)
    _, indices = lax.sort((key, order_), dimension=axis, is_stable=True, num_keys=1)
    return indices


def lexsort(keys, axis: int = -1):
    """Indices that sort by the last key first, then the one before it, ...

    >>> jnp.lexsort((jnp.array([1, 0]), jnp.array([0, 0])))  # [1, 0]
    """
    keys = [to_operand(k) for k in keys]
    shape = aval_of(keys[0]).shape
    axis = int(axis) % len(shape)
    order_ = lax.broadcasted_iota(dtypes.int32, shape, axis)
    *_, indices = lax.sort((*reversed(keys), order_), dimension=axis, is_stable=True,
                           num_keys=len(keys))
    return indices

