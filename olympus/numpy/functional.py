"""NumPy's in-place writers as functions returning a new array (put,
put_along_axis, place), value selection (extract, piecewise), and the
function-mapping helpers built on vmap (apply_along_axis, apply_over_axes,
vectorize).

Arrays are immutable, so, as in JAX, the writers refuse the default
`inplace=True` and ask for `inplace=False`.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy import creation, rearranging, shaping
from olympus.numpy import ufuncs as _uf
from olympus.numpy.compiled import jit_entry_points
from olympus.numpy.core import (
    astype,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    normalize_axis,
    to_operand,
)
from olympus.numpy.indexing import take
from olympus.numpy.reductions import cumsum
from olympus.numpy.setops import _compact_positions
from olympus.tracer.core import Tracer
from olympus.tracer.errors import ConcretizationTypeError
from olympus.numpy.ufunc_docs import RAISES_X, SIZE_ARGS, add_sections, append_args

__all__ = [
    "apply_along_axis",
    "apply_over_axes",
    "extract",
    "fill_diagonal",
    "piecewise",
    "place",
    "put",
    "put_along_axis",
    "vectorize",
]


class InplaceUpdateError(ValueError):
    """An in-place NumPy writer was called without inplace=False."""


class SignatureError(ValueError):
    """jnp.vectorize got a malformed signature or arguments that do not fit it."""


def _refuse_inplace(name: str, inplace: bool) -> None:
    if inplace:
        raise InplaceUpdateError(
            f"jnp.{name} cannot modify arrays in place: olympus arrays are immutable. "
            f"Pass inplace=False to get the updated array back instead."
        )


# ---- writers ------------------------------------------------------------------------
def _cyclic(values, n: int, dtype):
    """`values` flattened and repeated (or cut) to `n` entries, as np.put/np.place."""
    flat = shaping.ravel(astype(to_operand(values), dtype))
    m = aval_of(flat).shape[0]
    if m == 0:
        raise ValueError("jnp.put/place: values must not be empty")
    return rearranging.tile(flat, -(-n // m))[:n] if n else flat[:0]


def _index_mode(indices, n: int, mode, name: str, default: str):
    """Flat indices under np.put's mode: 'wrap' (mod n), 'clip' (into range,
    negatives to 0), 'drop' (out of range ignored). mode=None is JAX's
    default: negatives count from the end once, then `default` ('clip' or
    'drop') handles what is still out of range."""
    indices = astype(to_operand(indices), dtypes.int32)
    if mode == "wrap":
        return _uf.remainder(indices, n)
    if mode not in (None, "clip", "drop", "fill", "raise"):
        raise ValueError(
            f"jnp.{name}: mode={mode!r}; expected None, 'wrap', 'clip' or 'drop'"
        )
    if mode != "clip":
        indices = _uf.where(indices < 0, indices + n, indices)
    clip = mode == "clip" or (mode is None and default == "clip")
    return _uf.clip(indices, 0, n - 1) if clip else indices


def put(a, ind, v, mode=None, *, inplace: bool = True):
    """`a` with its flattened entries at `ind` replaced by `v`.

    `a` with its flattened entries at `ind` replaced by `v` (repeated as
    needed). By default (as JAX) negative indices count from the end and out-of-
    range ones clip; mode 'wrap' takes them modulo the size, 'drop' ignores
    them.

    Args:
      a: an array.
      ind: flat indices.
      v: the values (repeated as needed).
      mode: how out-of-range indices are treated: None or 'clip' (clipped),
        'wrap' (modulo the size) or 'drop'.
      inplace: must be False: olympus arrays are immutable, so True is refused.

    Returns:
      A new array of a's shape and dtype.

    Example:
      >>> jnp.put(jnp.zeros(4), jnp.array([1, 3]), 5.0, inplace=False)
      Array([0., 5., 0., 5.], dtype=float32)
    """
    _refuse_inplace("put", inplace)
    a = to_operand(a)
    flat = shaping.ravel(a)
    n = aval_of(flat).shape[0]
    index = shaping.ravel(_index_mode(ind, n, mode, "put", default="clip"))
    values = _cyclic(v, aval_of(index).shape[0], aval_of(a).dtype)
    return shaping.reshape(flat.at[index].set(values), aval_of(a).shape)


def put_along_axis(
    arr, indices, values, axis: int | None, inplace: bool = True, mode=None
):
    """`arr` with `values` written at `indices` along `axis`.

    `arr` with `values` written at `indices` along `axis` (the inverse of
    take_along_axis; the other axes broadcast). By default (as JAX) out-of-range
    indices are dropped; mode 'clip' or 'wrap' moves them in.

    Args:
      arr: an array.
      indices: an int array, as take_along_axis takes.
      values: the values to write, broadcasting against indices.
      axis: the axis (None: the flattened array).
      inplace: must be False: olympus arrays are immutable, so True is refused.
      mode: how out-of-range indices are treated: None or 'drop' (dropped),
        'clip' or 'wrap'.

    Returns:
      A new array of arr's shape and dtype.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      ValueError: axis is out of range for the array's rank.
      InplaceUpdateError: inplace is True: olympus arrays are immutable (a
        ValueError).

    Example:
      >>> jnp.put_along_axis(jnp.zeros((2, 2)), jnp.array([[1], [0]]), 5.0, axis=1, inplace=False)
      Array([[0., 5.],
             [5., 0.]], dtype=float32)
    """
    _refuse_inplace("put_along_axis", inplace)
    arr = to_operand(arr)
    if axis is None:
        return shaping.reshape(
            put_along_axis(
                shaping.ravel(arr),
                shaping.ravel(to_operand(indices)),
                values,
                0,
                inplace=False,
                mode=mode,
            ),
            aval_of(arr).shape,
        )
    indices = to_operand(indices)
    ndim = aval_of(arr).ndim
    if aval_of(indices).ndim != ndim:
        raise ValueError(
            f"jnp.put_along_axis: indices of shape {aval_of(indices).shape} must "
            f"have as many dimensions as arr {aval_of(arr).shape}"
        )
    axis = normalize_axis(axis, ndim)
    shape = broadcast_shapes(
        aval_of(indices).shape,
        tuple(1 if d == axis else s for d, s in enumerate(aval_of(arr).shape)),
    )
    index = []
    for d in range(ndim):
        if d == axis:
            index.append(
                broadcast_to(
                    _index_mode(
                        indices,
                        aval_of(arr).shape[axis],
                        mode,
                        "put_along_axis",
                        default="drop",
                    ),
                    shape,
                )
            )
        else:
            index.append(lax.broadcasted_iota(dtypes.int32, shape, d))
    values = broadcast_to(astype(to_operand(values), aval_of(arr).dtype), shape)
    return arr.at[tuple(index)].set(values)


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
    """`a` with its main diagonal set to `val`.

    `a` with its main diagonal set to `val` (repeated as needed); all axes of an
    N-d `a` must have one length. For tall 2-d arrays `wrap` restarts the
    diagonal every columns+1 rows, as np.fill_diagonal.

    Args:
      a: an array of rank >= 2, all axes equal for rank > 2.
      val: the value(s) to write.
      wrap: for tall matrices, whether the diagonal wraps after N columns.
      inplace: must be False: olympus arrays are immutable, so True is refused.

    Returns:
      A new array of a's shape and dtype.

    Example:
      >>> jnp.fill_diagonal(jnp.zeros((2, 2)), 1.0, inplace=False)
      Array([[1., 0.],
             [0., 1.]], dtype=float32)
    """
    _refuse_inplace("fill_diagonal", inplace)
    a = to_operand(a)
    shape = aval_of(a).shape
    if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) != 1):
        raise ValueError(
            f"jnp.fill_diagonal: a of shape {shape} must be 2-d, or have all "
            "dimensions of equal length"
        )
    if len(shape) == 2:
        step, end = shape[1] + 1, (aval_of(a).size if wrap else shape[1] * shape[1])
    else:
        step, end = 1 + int(np.sum(np.cumprod(shape[:-1]))), aval_of(a).size
    positions = np.arange(0, min(end, aval_of(a).size), step, dtype=np.int32)
    return put(a, positions, val, inplace=False)


def place(arr, mask, vals, *, inplace: bool = True):
    """`arr` with the entries where `mask` holds replaced, in order, by `vals`.

    `arr` with the entries where `mask` holds replaced, in order, by the values
    of `vals` (repeated cyclically), as np.place.

    Args:
      arr: an array.
      mask: a boolean array of arr's shape.
      vals: the values, repeated as needed.
      inplace: must be False: olympus arrays are immutable, so True is refused.

    Returns:
      A new array of arr's shape and dtype.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      InplaceUpdateError: inplace is True: olympus arrays are immutable (a
        ValueError).

    Example:
      >>> jnp.place(jnp.zeros(4), jnp.array([True, False, True, False]), jnp.array([1.0, 2.0]), inplace=False)
      Array([1., 0., 2., 0.], dtype=float32)
    """
    _refuse_inplace("place", inplace)
    arr = to_operand(arr)
    flat, flat_mask = (
        shaping.ravel(arr),
        shaping.ravel(astype(to_operand(mask), np.bool_)),
    )
    if aval_of(flat_mask).shape != aval_of(flat).shape:
        raise ValueError(
            f"jnp.place: mask of shape {aval_of(to_operand(mask)).shape} must "
            f"match arr {aval_of(arr).shape}"
        )
    values = shaping.ravel(astype(to_operand(vals), aval_of(arr).dtype))
    m = aval_of(values).shape[0]
    if m == 0:
        return arr
    slot = _uf.remainder(cumsum(astype(flat_mask, dtypes.int32)) - 1, m)
    picked = take(values, slot, mode="clip")
    return shaping.reshape(_uf.where(flat_mask, picked, flat), aval_of(arr).shape)


# ---- selection ----------------------------------------------------------------------
def extract(condition, arr, *, size: int | None = None, fill_value=0):
    """The entries of `arr` where `condition` holds, flattened, in order.

    The entries of `arr` (flattened) where `condition` holds, in order. Under a
    trace pass a static `size`: the first `size`, padded with fill_value.

    Args:
      condition: a boolean array of arr's size.
      arr: an array.

    Returns:
      A 1-D array.

    Example:
      >>> jnp.extract(jnp.array([True, False, True]), jnp.array([1, 2, 3]))
      Array([1, 3], dtype=int32)
    """
    keep = shaping.ravel(astype(to_operand(condition), np.bool_))
    flat = shaping.ravel(to_operand(arr))
    n = aval_of(flat).shape[0]
    keep = (
        keep[:n]
        if aval_of(keep).shape[0] >= n
        else shaping.concatenate([keep, lax.full((n - aval_of(keep).shape[0],), False)])
    )
    if size is None:
        if isinstance(keep, Tracer):
            raise ConcretizationTypeError(
                "jnp.extract: the size of the result depends on the values of a traced "
                "condition; under jit/vmap/grad pass a static size= (and fill_value=)"
            )
        size = int(np.asarray(keep).sum())
    if n == 0:
        return lax.full((int(size),), np.asarray(fill_value, aval_of(flat).dtype)[()])
    positions, count = _compact_positions(keep, int(size))
    valid = lax.iota(dtypes.int32, int(size)) < count
    picked = take(flat, positions, mode="clip")
    return _uf.where(valid, picked, astype(to_operand(fill_value), aval_of(flat).dtype))


def piecewise(x, condlist, funclist, *args, **kw):
    """A function defined piece by piece over conditions.

    A function defined piece by piece: where condlist[i] holds, funclist[i] (a
    function of x, or a constant); one extra entry in funclist gives the value
    where no condition holds (else 0). Later conditions win overlaps. Every
    piece is evaluated on all of x and the results are selected, so pieces
    should be defined (not raise) everywhere.

    Args:
      x: the input array.
      condlist: boolean arrays of x's shape.
      funclist: functions (or constants), one per condition, plus an optional
        default.
      *args: passed on to the functions.
      **kw: passed on to the functions.

    Returns:
      An array of x's shape and dtype.

    Example:
      >>> x = jnp.array([-1.0, 2.0])
      >>> jnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 10])
      Array([ 1., 20.], dtype=float32)
    """
    x = to_operand(x)
    condlist = _condition_list(condlist, aval_of(x).ndim)
    conditions = [
        broadcast_to(astype(to_operand(c), np.bool_), aval_of(x).shape)
        for c in condlist
    ]
    if len(funclist) not in (len(conditions), len(conditions) + 1):
        raise ValueError(
            f"jnp.piecewise: {len(funclist)} functions for {len(conditions)} "
            "conditions (expected as many, or one more for 'otherwise')"
        )

    def evaluate(piece):
        value = piece(x, *args, **kw) if callable(piece) else piece
        return broadcast_to(
            astype(to_operand(value), aval_of(x).dtype), aval_of(x).shape
        )

    if len(funclist) == len(conditions) + 1:
        anywhere = functools.reduce(
            _uf.logical_or, conditions, lax.full(aval_of(x).shape, False)
        )
        out = _uf.where(anywhere, creation.zeros_like(x), evaluate(funclist[-1]))
    else:
        out = creation.zeros_like(x)
    for condition, piece in zip(conditions, funclist):
        out = _uf.where(condition, evaluate(piece), out)
    return out


def _condition_list(condlist, ndim: int) -> list:
    """piecewise's conditions, read as NumPy does: one array (or a list of
    booleans for a 1-d x) is a single condition; a list or a stacked array
    with one more dimension than x holds several."""

    def rank(c):
        return c.ndim if hasattr(c, "ndim") else np.ndim(c)

    if not isinstance(condlist, (list, tuple)):
        return list(condlist) if rank(condlist) == ndim + 1 else [condlist]
    if condlist and ndim > 0 and rank(condlist[0]) == 0:
        return [condlist]
    return list(condlist)


# ---- mapping functions over axes ---------------------------------------------------------
def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    """`func1d` applied to every 1-d slice of `arr` along `axis`.

    func1d applied to every 1-d slice of `arr` along `axis` (by vmap); the
    result's dimensions from func1d take the place of `axis`.

    Args:
      func1d: a function of a 1-d array.
      axis: the axis of the slices.
      arr: an array.
      *args: passed on to func1d.
      **kwargs: passed on to func1d.

    Returns:
      The stacked results.

    Raises:
      TypeError: axis is out of range for the array's rank.

    Example:
      >>> jnp.apply_along_axis(jnp.sum, 1, jnp.arange(6).reshape(2, 3))
      Array([ 3, 12], dtype=int32)
    """
    from olympus.transforms.batching import vmap

    arr = to_operand(arr)
    ndim = aval_of(arr).ndim
    axis = normalize_axis(axis, ndim)
    fn = lambda v: func1d(v, *args, **kwargs)
    for _ in range(ndim - axis - 1):
        fn = vmap(fn, in_axes=-1, out_axes=-1)
    for _ in range(axis):
        fn = vmap(fn, in_axes=0, out_axes=0)
    return fn(arr)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, keeping the rank.

    func(a, axis) applied for each axis in turn; a result that lost the axis
    gets it back (size 1), so later axes keep their positions.

    Args:
      func: a function of (array, axis).
      a: an array or scalar.
      axes: the axes, in order.

    Returns:
      An array of a's rank.

    Raises:
      ValueError: func returns an array whose rank is neither a's nor one less.

    Example:
      >>> jnp.apply_over_axes(jnp.sum, jnp.ones((2, 3)), [0, 1])
      Array([[6.]], dtype=float32)
    """
    a = to_operand(a)
    for axis in [axes] if np.ndim(axes) == 0 else list(axes):
        axis = normalize_axis(axis, aval_of(a).ndim)
        b = to_operand(func(a, axis))
        if aval_of(b).ndim == aval_of(a).ndim - 1:
            b = shaping.expand_dims(b, axis)
        elif aval_of(b).ndim != aval_of(a).ndim:
            raise ValueError(
                f"jnp.apply_over_axes: func returned shape {aval_of(b).shape} "
                f"for input {aval_of(a).shape}; expected the same rank or "
                "one less"
            )
        a = b
    return a


_DIMS = r"\((?:\w+(?:,\s*\w+)*)?\)"
_SIGNATURE = re.compile(
    rf"^\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*->\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*$"
)


def _parse_signature(signature: str):
    """'(m,n),(n)->(m)' -> ([('m','n'), ('n',)], [('m',)])."""
    if not _SIGNATURE.match(signature):
        raise SignatureError(
            f"jnp.vectorize: signature {signature!r} is not of the form "
            "'(m,n),(n)->(m)'"
        )
    inputs, outputs = signature.split("->")

    def groups(text):
        return [
            tuple(d.strip() for d in g.split(",") if d.strip())
            for g in re.findall(r"\(([^)]*)\)", text)
        ]

    return groups(inputs), groups(outputs)


def vectorize(pyfunc, *, excluded=frozenset(), signature: str | None = None):
    """`pyfunc` made to broadcast over leading dimensions, by vmap.

    `pyfunc` (written for scalars, or for the core shapes of `signature`) made
    to broadcast over leading dimensions, by vmap.

    Args:
      pyfunc: the function, written for scalars or for the core shapes of
        signature.
      excluded: positions or names of arguments passed through unvectorized.
      signature: a generalized-ufunc signature such as '(n),(n)->()' (None:
        scalar elementwise).

    Returns:
      A function taking and returning arrays, like NumPy's vectorize.

    Raises:
      ValueError: signature does not parse, or the arguments' core shapes do not
        fit it (when the result is called).

    Example:
      >>> f = jnp.vectorize(lambda a, b: a @ b, signature='(n),(n)->()')
      >>> f(jnp.ones((4, 3)), jnp.ones(3))
      Array([3., 3., 3., 3.], dtype=float32)
    """
    # Output core dimensions need no checking: vmap lays the loop axes in front.
    core_in = None if signature is None else _parse_signature(signature)[0]

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        fixed = {i: a for i, a in enumerate(args) if i in excluded}
        fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}
        mapped_kw = {k: v for k, v in kwargs.items() if k not in excluded}
        names = list(mapped_kw)
        mapped = [to_operand(a) for i, a in enumerate(args) if i not in excluded]
        mapped += [to_operand(mapped_kw[k]) for k in names]
        cores = core_in or [()] * len(mapped)
        if len(cores) != len(mapped):
            raise SignatureError(
                f"jnp.vectorize: signature {signature!r} has {len(cores)} "
                f"inputs, got {len(mapped)} arrays"
            )
        _check_core_sizes(mapped, cores, signature)

        def call(*arrays):
            positional = iter(arrays[: len(arrays) - len(names)])
            full = [
                fixed[i] if i in fixed else next(positional) for i in range(len(args))
            ]
            keywords = dict(zip(names, arrays[len(arrays) - len(names) :]), **fixed_kw)
            return pyfunc(*full, **keywords)

        return _broadcast_map(call, mapped, cores)

    return wrapped


def _check_core_sizes(arrays, cores, signature) -> None:
    sizes: dict = {}
    for x, core in zip(arrays, cores):
        shape = aval_of(x).shape
        if len(shape) < len(core):
            raise SignatureError(
                f"jnp.vectorize: an argument of shape {shape} has fewer "
                f"dimensions than its core {core} in {signature!r}"
            )
        for name, size in zip(core, shape[len(shape) - len(core) :]):
            if sizes.setdefault(name, size) != size:
                raise SignatureError(
                    f"jnp.vectorize: dimension {name!r} of {signature!r} "
                    f"has sizes {sizes[name]} and {size}"
                )


def _broadcast_map(call, arrays, cores):
    """call vmapped over the broadcast loop dimensions of all arrays."""
    from olympus.transforms.batching import vmap

    loops = [
        aval_of(x).shape[: aval_of(x).ndim - len(c)] for x, c in zip(arrays, cores)
    ]
    loop_shape = broadcast_shapes(*loops)
    arrays = [
        broadcast_to(x, loop_shape + aval_of(x).shape[len(loop) :])
        for x, loop in zip(arrays, loops)
    ]
    fn = call
    for _ in loop_shape:
        fn = vmap(fn)
    return fn(*arrays)


# Docstring sections the functions above share with their families (ufunc_docs).
append_args((extract,), SIZE_ARGS)
add_sections(
    (put, fill_diagonal),
    """Raises:
  ArrayLikeTypeError: an argument is a list or other non-array (convert it
    with jnp.asarray).
  InplaceUpdateError: inplace is True: olympus arrays are immutable (a
    ValueError).""",
)
add_sections((extract, piecewise), RAISES_X)


# Writers whose every call is one compiled program; their options static.
_STATIC_OPTIONS = {
    "put": ("mode", "inplace"),
    "put_along_axis": ("axis", "inplace", "mode"),
    "place": ("inplace",),
    "fill_diagonal": ("wrap", "inplace"),
}


jit_entry_points(globals(), _STATIC_OPTIONS)
