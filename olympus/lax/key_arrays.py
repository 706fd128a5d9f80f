"""Typed PRNG key arrays in the functions that only move, pick or repeat
elements (lax.select, lax.concatenate, dynamic_slice, jnp.reshape, take,
roll, ...), as JAX's key dtypes allow.

olympus.prng registers its key array class here. Such a function, handed
key arrays, runs on the int32 positions of the keys in a table of all their
words and then looks its result's rows up: it keeps its own rules for
shapes, axes and indices (traced ones too), and keys never meet arithmetic.

    >>> ks = olympus.random.split(olympus.random.key(0), 4)
    >>> olympus.lax.dynamic_slice(ks, (1,), (2,)).shape
    (2,)
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from olympus.lax.ops import concatenate, reshape
from olympus.tracer.errors import OlympusTypeError

_key_types: tuple = ()
_BY_NAME = inspect.Parameter.POSITIONAL_OR_KEYWORD


class KeyArrayTypeError(OlympusTypeError):
    """A typed PRNG key array was used where a numeric array is expected."""


def register(cls: type) -> type:
    """Makes instances of `cls` (with `.data`, the words, last axis, and
    `cls(words)`) key arrays to the wrapped functions."""
    global _key_types
    _key_types = (*_key_types, cls)
    return cls


def holds_keys(value) -> bool:
    """Whether `value` (an operand, or a list of them) holds a key array."""
    if isinstance(value, (list, tuple)):
        return any(holds_keys(v) for v in value)
    return isinstance(value, _key_types)


def _positions(value, keys: list, name: str):
    """`value` with each key array replaced by the int32 positions of its keys
    in the table; `keys` collects them."""
    if isinstance(value, _key_types):
        start = sum(k.size for k in keys)
        keys.append(value)
        return np.arange(start, start + value.size, dtype=np.int32).reshape(value.shape)
    if isinstance(value, (list, tuple)):
        return type(value)(_positions(v, keys, name) for v in value)
    raise KeyArrayTypeError(
        f"{name}: cannot mix typed PRNG key arrays with other arrays (got a "
        f"{type(value).__name__}); wrap raw words with random.wrap_key_data first"
    )


def _look_up(out, table, make):
    if isinstance(out, (list, tuple)):
        return type(out)(_look_up(o, table, make) for o in out)
    return make(table[out])


def _names(params: list, operands) -> list[str]:
    """The keyword names of the operand positions `operands` that have one."""
    return [
        params[i].name
        for i in operands
        if isinstance(i, int) and i < len(params) and params[i].kind is _BY_NAME
    ]


def moving_keys(numeric, *operands):
    """`numeric`, whose `operands` (argument positions, or keyword names) may
    hold key arrays: all of them, then, or it raises KeyArrayTypeError."""
    name = f"{numeric.__module__.split('.')[1]}.{numeric.__name__}"
    # an operand given by position may come by keyword (jnp.broadcast_to(array=k))
    params = list(inspect.signature(numeric).parameters.values())
    operands = tuple(dict.fromkeys((*operands, *_names(params, operands))))

    @functools.wraps(numeric)
    def moved(*args, **kwargs):
        places = [i for i in operands if isinstance(i, int) and i < len(args)]
        places += [i for i in operands if isinstance(i, str) and i in kwargs]
        held = [args[i] if isinstance(i, int) else kwargs[i] for i in places]
        if not _key_types or not any(holds_keys(v) for v in held):
            return numeric(*args, **kwargs)
        args, keys = list(args), []
        for i in places:
            if isinstance(i, int):
                args[i] = _positions(args[i], keys, name)
            else:
                kwargs[i] = _positions(kwargs[i], keys, name)
        words = keys[0].data.shape[-1]
        rows = [reshape(k.data, (k.size, words)) for k in keys]
        table = rows[0] if len(rows) == 1 else concatenate(rows, 0)
        return _look_up(numeric(*args, **kwargs), table, type(keys[0]))

    return moved
