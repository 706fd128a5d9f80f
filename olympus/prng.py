"""Typed PRNG key arrays: keys whose element type is a key, not a pair of words.

`random.key(seed)` gives a `PRNGKeyArray` of shape `()` and dtype `key<fry>`
wrapping the key's uint32 words (`random.key_data`), so a batch of `n` keys
has shape `(n,)` rather than `(n, 2)`. It is a pytree node whose one leaf is
that `uint32[..., 2]` array, so keys pass through `jit`, `vmap`, `grad` (an
integer leaf: never differentiated), `scan`/`fori_loop` carries and `cond`
operands, and come back typed. To the tree functions a user calls
(`olympus.tree_util`, `olympus.tree`) a key array is one leaf, as JAX's are
(`tracer.user_trees.register_opaque_leaf`), so a library's `tree_map` over a
state holding keys meets the keys. Keys are not numbers: arithmetic on them,
or passing them to numeric `olympus.numpy` functions, raises
`KeyArrayTypeError`; `==` and `!=` compare keys elementwise, and the jnp
functions that only move, pick or repeat elements (`stack`, `where`,
`reshape`, `take`, `zeros_like`, ...) take them, as JAX's.

    >>> k = olympus.random.key(0)
    >>> k.shape, str(k.dtype), olympus.random.key_data(k).shape
    ((), 'key<fry>', (2,))
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from olympus import lax
from olympus.backends.xla.array import register_array_type
from olympus.lax.key_arrays import KeyArrayTypeError, holds_keys, moving_keys
from olympus.lax.key_arrays import register as register_key_array
from olympus.tracer.functions import ShapeDtypeStruct
from olympus.tracer.pytree import register_pytree_node, tree_map
from olympus.tracer.user_trees import register_opaque_leaf

KEY_WORDS = 2  # a threefry2x32 key is two uint32 words


class prng_key:  # lower case: named like NumPy's abstract scalar types, as JAX does)
    """The abstract type of every key dtype: `jnp.issubdtype(k.dtype, prng_key)`."""


class KeyDtype:
    """The element type of a typed key array; prints as `key<fry>`."""

    impl = "threefry2x32"
    name = "key<fry>"
    type = prng_key
    extended = True  # not a NumPy dtype (ShapeDtypeStruct keeps it as it is)
    itemsize = 4 * KEY_WORDS

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return isinstance(other, KeyDtype) and other.impl == self.impl

    def __hash__(self) -> int:
        return hash((KeyDtype, self.impl))


key_dtype = KeyDtype()


def _not_numeric(operation: str):
    def refuse(self, *args, **kwargs):
        raise KeyArrayTypeError(
            f"{operation} is not defined on typed PRNG key arrays (dtype {key_dtype}); "
            f"keys are not numbers. Use random.split / random.fold_in to derive keys, "
            f"or random.key_data(k) for the raw uint32 words"
        )

    return refuse


class PRNGKeyArray:
    """An array of PRNG keys: `shape` is the batch shape, `data` the
    `uint32[*shape, 2]` words (a concrete Array or a tracer)."""

    __slots__ = ("data",)
    __array_priority__ = 100  # so NumPy defers `np_array + key` to us (and we refuse)
    hidden_trailing_dims = 1  # vmap's negative in_axes/out_axes skip the words axis

    def __init__(self, data):
        self.data = data

    @property
    def shape(self) -> tuple:
        return tuple(self.data.shape[:-1])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def dtype(self) -> KeyDtype:
        return key_dtype

    @property
    def itemsize(self) -> int:
        return 4 * KEY_WORDS

    @property
    def nbytes(self) -> int:
        return self.itemsize * self.size

    def __eq__(self, other):
        """Elementwise: keys are equal where all their words are (broadcasting)."""
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return (self.data == other.data).all(axis=-1)

    def __ne__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return (self.data != other.data).any(axis=-1)

    __hash__ = None  # unhashable, as JAX's key arrays and every array

    def transpose(self, *axes) -> PRNGKeyArray:
        """The key dimensions permuted; each key's words stay last."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        order = tuple(axes) or tuple(reversed(range(self.ndim)))
        order = tuple(a % self.ndim if self.ndim else a for a in order)
        return PRNGKeyArray(self.data.transpose((*order, self.ndim)))

    @property
    def T(self) -> PRNGKeyArray:
        return self.transpose()

    def squeeze(self, axis=None) -> PRNGKeyArray:
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        return PRNGKeyArray(self.data.squeeze(tuple(a % self.ndim for a in axes)))

    def copy(self) -> PRNGKeyArray:
        return PRNGKeyArray(self.data.copy())

    def flatten(self) -> PRNGKeyArray:
        return self.reshape(-1)

    def swapaxes(self, axis1: int, axis2: int) -> PRNGKeyArray:
        order = list(range(self.ndim))
        order[axis1], order[axis2] = order[axis2], order[axis1]
        return self.transpose(order)

    def block_until_ready(self) -> PRNGKeyArray:
        self.data.block_until_ready()
        return self

    # where the keys live: their words' placement, the words' axis dropped;
    # one entry per key dimension (`P(None,)` for unsplit keys), as JAX's
    @property
    def sharding(self):
        words = self.data.sharding
        spec = getattr(words, "spec", None)
        if spec is None or len(spec) == self.ndim:
            return words
        entries = (*spec, *(None,) * (self.ndim - len(spec)))[: self.ndim]
        return type(words)(words.mesh, type(spec)(*entries))

    def devices(self) -> set:
        return self.data.devices()

    @property
    def is_fully_addressable(self) -> bool:
        return self.data.is_fully_addressable

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a scalar PRNG key array (shape ())")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a scalar PRNG key array (shape ())")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, index) -> PRNGKeyArray:
        """Indexes the key dimensions; the words of each key stay together."""
        return PRNGKeyArray(self.data[self._words_index(index)])

    def _words_index(self, index) -> tuple:
        """`index` into the keys as an index into their words (all of each key's)."""
        index = index if isinstance(index, tuple) else (index,)
        counted = [i for i in index if i is not None and i is not Ellipsis]
        if len(counted) > self.ndim:
            raise IndexError(
                f"too many indices for a PRNG key array of shape {self.shape}: {len(counted)}"
            )
        if any(i is Ellipsis for i in index):
            return (*index, slice(None))
        return (*index, Ellipsis, slice(None))

    @property
    def at(self) -> _KeyUpdates:
        """`keys.at[index].set(other_keys)` and `.get()`, as JAX's key arrays."""
        return _KeyUpdates(self)

    def reshape(self, *shape) -> PRNGKeyArray:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return PRNGKeyArray(self.data.reshape((*shape, KEY_WORDS)))

    def ravel(self) -> PRNGKeyArray:
        return self.reshape(-1)

    def __array__(self, dtype=None, copy=None):
        raise KeyArrayTypeError(
            f"a typed PRNG key array (dtype {key_dtype}) is not a numeric array: it cannot "
            f"be passed to numeric olympus.numpy functions or converted to a NumPy array; "
            f"use random.key_data(keys) for its uint32 words"
        )

    def __repr__(self) -> str:
        if type(self.data).__name__ == "Array":
            words = np.asarray(self.data)
            return f"Array({self.shape}, dtype={key_dtype}) overlaying:\n{words}"
        return (
            f"PRNGKeyArray({self.shape}, dtype={key_dtype}) overlaying:\n{self.data!r}"
        )


class _KeyUpdates:
    """`keys.at`: indexing it gives the updates of those keys."""

    __slots__ = ("keys",)

    def __init__(self, keys: PRNGKeyArray):
        self.keys = keys

    def __getitem__(self, index) -> _KeyUpdate:
        return _KeyUpdate(self.keys, self.keys._words_index(index))


class _KeyUpdate:
    """`keys.at[index]`: only `set` (of keys) and `get`; keys have no arithmetic."""

    __slots__ = ("keys", "index")

    def __init__(self, keys: PRNGKeyArray, index: tuple):
        self.keys, self.index = keys, index

    def get(self, **kwargs) -> PRNGKeyArray:
        return PRNGKeyArray(self.keys.data.at[self.index].get(**kwargs))

    def set(self, values, **kwargs) -> PRNGKeyArray:
        if not isinstance(values, PRNGKeyArray):
            raise KeyArrayTypeError(
                f"keys.at[...].set: the new values must be typed PRNG keys, got a "
                f"{type(values).__name__}; wrap raw words with random.wrap_key_data"
            )
        return PRNGKeyArray(self.keys.data.at[self.index].set(values.data, **kwargs))

    def __getattr__(self, name: str):
        if name in ("add", "multiply", "mul", "divide", "power", "min", "max", "apply"):
            return _not_numeric(f"keys.at[...].{name}").__get__(self)
        raise AttributeError(name)


# A typed key array is an olympus.Array, as JAX's are jax.Array instances.
register_array_type(PRNGKeyArray)

for _name in (
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "divmod",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
):
    setattr(PRNGKeyArray, f"__{_name}__", _not_numeric(f"'{_name}'"))
    setattr(PRNGKeyArray, f"__r{_name}__", _not_numeric(f"'{_name}'"))
for _name in (
    "neg",
    "pos",
    "abs",
    "invert",
    "lt",
    "le",
    "gt",
    "ge",
    "float",
    "int",
    "complex",
):
    setattr(PRNGKeyArray, f"__{_name}__", _not_numeric(f"'{_name}'"))
del _name

# The one leaf is the words array; unflatten does not check it, since pytree
# machinery rebuilds nodes around tracers, batch axes and other placeholders.
register_pytree_node(
    PRNGKeyArray, lambda k: ((k.data,), None), lambda _, c: PRNGKeyArray(c[0])
)
register_opaque_leaf(PRNGKeyArray)
register_key_array(PRNGKeyArray)


# ---- the jnp functions JAX defines on key arrays ------------------------------------
# olympus.numpy hands key arrays here: each works on the words, which stay last.
def _all_keys(keys, name: str) -> list:
    keys = list(keys)
    if not keys:
        raise ValueError(f"jnp.{name}: need at least one array")
    if not all(isinstance(k, PRNGKeyArray) for k in keys):
        kinds = sorted({type(k).__name__ for k in keys})
        raise KeyArrayTypeError(
            f"jnp.{name}: cannot join typed PRNG key arrays with other arrays "
            f"(got {', '.join(kinds)}); wrap raw words with random.wrap_key_data first"
        )
    return keys


def _key_axis(axis: int, ndim: int, name: str) -> int:
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(
            f"jnp.{name}: axis {axis} is out of bounds for key arrays of rank {ndim}"
        )
    return axis % ndim


def _no_dtype(name: str, out, dtype) -> None:
    if out is not None or dtype is not None:
        raise KeyArrayTypeError(
            f"jnp.{name} of typed PRNG key arrays takes no out= or dtype= (got "
            f"out={out!r}, dtype={dtype!r}): keys keep their key dtype"
        )


def stack(keys, axis: int = 0, out=None, dtype=None) -> PRNGKeyArray:
    """jnp.stack of key arrays of one shape: a new key axis at `axis`."""
    _no_dtype("stack", out, dtype)
    keys = _all_keys(keys, "stack")
    ndim = keys[0].ndim + 1
    axis = _key_axis(axis, ndim, "stack")
    words = [lax.expand_dims(k.data, (axis,)) for k in keys]
    return PRNGKeyArray(lax.concatenate(words, axis))


def concatenate(keys, axis: int | None = 0, dtype=None) -> PRNGKeyArray:
    """jnp.concatenate of key arrays along an existing key axis (None: flat)."""
    _no_dtype("concatenate", None, dtype)
    keys = _all_keys(keys, "concatenate")
    if axis is None:
        keys, axis = [k.ravel() for k in keys], 0
    if keys[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = _key_axis(axis, keys[0].ndim, "concatenate")
    return PRNGKeyArray(lax.concatenate([k.data for k in keys], axis))


def where(condition, x, y) -> PRNGKeyArray:
    """jnp.where(condition, x, y) of two key arrays: the keys of `x` where
    `condition`, else of `y`, all three broadcast together."""
    keys = _all_keys((x, y), "where")
    cond_shape = tuple(np.shape(condition))
    if hasattr(condition, "aval"):
        cond_shape = tuple(condition.aval.shape)
    shape = tuple(np.broadcast_shapes(cond_shape, x.shape, y.shape))
    words = [_broadcast_words(k.data, k.ndim, shape) for k in keys]
    condition = lax.convert_element_type(condition, np.bool_)
    dims = tuple(range(len(shape) - len(cond_shape), len(shape)))
    condition = lax.broadcast_in_dim(condition, (*shape, KEY_WORDS), dims)
    return PRNGKeyArray(lax.select(condition, *words))


def _broadcast_words(data, ndim: int, shape: tuple):
    """A key array's words broadcast to keys of `shape` (words last)."""
    dims = (*range(len(shape) - ndim, len(shape)), len(shape))
    return lax.broadcast_in_dim(data, (*shape, KEY_WORDS), dims)


def joining_keys(numeric, keyed):
    """The jnp joining function `numeric` (stack, concatenate), handing a
    list or tuple that holds key arrays to `keyed`."""

    @functools.wraps(numeric)
    def join(arrays, *args, **kwargs):
        if isinstance(arrays, (list, tuple)) and any(
            isinstance(a, PRNGKeyArray) for a in arrays
        ):
            return keyed(arrays, *args, **kwargs)
        return numeric(arrays, *args, **kwargs)

    return join


def selecting_keys(numeric, keyed):
    """jnp.where (`numeric`), handing a choice between key arrays to `keyed`."""

    @functools.wraps(numeric)
    def select(condition, *args, **kwargs):
        if any(isinstance(a, PRNGKeyArray) for a in args):
            return keyed(condition, *args, **kwargs)
        return numeric(condition, *args, **kwargs)

    return select


def words_like(numeric):
    """jnp.zeros_like / ones_like / empty_like / full_like, which JAX defines on
    key arrays word by word: a key of all zeros, all ones, or the fill value."""

    first = next(iter(inspect.signature(numeric).parameters))  # a, or prototype

    @functools.wraps(numeric)
    def like(*args, shape=None, **kwargs):
        if not args and first not in kwargs:
            return numeric(*args, shape=shape, **kwargs)  # numeric's TypeError
        a, args = (args[0], args[1:]) if args else (kwargs.pop(first), ())
        if not isinstance(a, PRNGKeyArray):
            return numeric(a, *args, shape=shape, **kwargs)
        args = [x.data if isinstance(x, PRNGKeyArray) else x for x in args]
        kwargs = {
            k: v.data if isinstance(v, PRNGKeyArray) else v for k, v in kwargs.items()
        }
        if shape is not None:
            shape = (*((shape,) if isinstance(shape, int) else shape), KEY_WORDS)
        return PRNGKeyArray(numeric(a.data, *args, shape=shape, **kwargs))

    return like


def comparing_keys(numeric, keyed):
    """jnp.equal / not_equal / array_equal (`numeric`), comparing two key
    arrays with `keyed`."""

    @functools.wraps(numeric)
    def compare(a, b, *args, **kwargs):
        if isinstance(a, PRNGKeyArray) and isinstance(b, PRNGKeyArray):
            return keyed(a, b)
        return numeric(a, b, *args, **kwargs)

    return compare


def words_equal(numeric):
    """`numeric(a, b)` (jnp.array_equal) of two key arrays' words."""
    return lambda a, b: numeric(a.data, b.data)


def arrays_of_keys(numeric):
    """jnp.array / asarray, which make a key array of a (nested) list of keys."""

    first = next(iter(inspect.signature(numeric).parameters))  # object, or a

    @functools.wraps(numeric)
    def make(*args, **kwargs):
        if not args and first not in kwargs:
            return numeric(*args, **kwargs)  # numeric's TypeError
        obj, args = (args[0], args[1:]) if args else (kwargs.pop(first), ())
        if isinstance(obj, (list, tuple)) and holds_keys(obj):
            return moving_keys(numeric, 0)(obj, *args, **kwargs)
        return numeric(obj, *args, **kwargs)

    return make


# ---- eval_shape's structs of keys -------------------------------------------------
def keys_from_structs(tree):
    """`tree` with each ShapeDtypeStruct of a key dtype as a key array over a
    uint32 struct of its words, which tracing takes."""

    def keys(x):
        if isinstance(x, ShapeDtypeStruct) and isinstance(x.dtype, KeyDtype):
            return PRNGKeyArray(ShapeDtypeStruct((*x.shape, KEY_WORDS), np.uint32))
        return x

    return tree_map(keys, tree)


def structs_of_keys(tree):
    """`tree` with each key array as a ShapeDtypeStruct of dtype key<fry> (what
    JAX's eval_shape gives for a key)."""
    return tree_map(
        lambda x: (
            ShapeDtypeStruct(x.shape, key_dtype) if isinstance(x, PRNGKeyArray) else x
        ),
        tree,
        is_leaf=lambda x: isinstance(x, PRNGKeyArray),
    )
