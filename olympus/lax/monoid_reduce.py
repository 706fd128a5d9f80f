"""`lax.reduce` and `lax.reduce_window` for the computations JAX itself
recognises as monoids: add, mul, max, min, and, or, xor.

`computation` is traced on scalars; when each output is one of those
operations applied to the matching pair of inputs, the reduction runs as the
dedicated primitive (reduce_sum, reduce_max, ..., reduce_window_sum,
reduce_window_max, or strided slices combined elementwise for the windows
the window primitives do not cover). Any other computation raises
`ReduceComputationError`: olympus has no general reduce primitive (an XLA
reduce with an arbitrary body), so it has no derivative or batching rule to
offer for one.

An init value that is not the monoid's identity is combined once into each
result, as XLA does (padding and the holes of a base dilation add nothing).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ShapedArray, Var
from olympus.lax import ops
from olympus.lax.convolution import padtype_to_pads
from olympus.lax.reductions import identity_element
from olympus.lax.windowed import reduce_window_max, reduce_window_sum
from olympus.tracer.core import Tracer, aval_of
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.tracer.staging import trace_to_olympuspr


class ReduceComputationError(TypeError):
    """`lax.reduce` / `lax.reduce_window` got a computation that is not one of
    the monoids olympus reduces with (add, mul, max, min, and, or, xor)."""


# primitive name -> (identity kind, elementwise op, whole-axis reduction)
_MONOIDS = {
    "add": ("sum", ops.add, ops.reduce_sum),
    "mul": ("prod", ops.mul, ops.reduce_prod),
    "max": ("max", ops.max, ops.reduce_max),
    "min": ("min", ops.min, ops.reduce_min),
    "and": ("and", ops.bitwise_and, ops.reduce_and),
    "or": ("or", ops.bitwise_or, ops.reduce_or),
    "xor": ("xor", ops.bitwise_xor, ops.reduce_xor),
}
_SUPPORTED = (
    "lax.add, lax.mul, lax.max, lax.min, lax.bitwise_and, lax.bitwise_or, "
    "lax.bitwise_xor (or the same operators on the two arguments)"
)


def _monoids(api: str, computation: Callable, dtypes_: list, tree) -> list[str]:
    """The monoid (a key of _MONOIDS) that `computation` applies to each leaf."""
    n = len(dtypes_)
    avals = [ShapedArray((), d) for d in dtypes_] * 2

    def flat(*args):
        x, y = tree_unflatten(tree, args[:n]), tree_unflatten(tree, args[n:])
        outs, out_tree = tree_flatten(computation(x, y))
        if out_tree != tree:
            raise ReduceComputationError(
                f"lax.{api}: computation returned {out_tree}, not the operands' "
                f"structure {tree}"
            )
        return outs

    program, _, _ = trace_to_olympuspr(flat, avals)
    producers = {id(e.outvars[0]): e for e in program.eqns if len(e.outvars) == 1}
    found = []
    for i, out in enumerate(program.outvars):
        eqn = producers.get(id(out)) if isinstance(out, Var) else None
        pair = {id(program.invars[i]), id(program.invars[n + i])}
        if (
            eqn is None
            or eqn.primitive.name not in _MONOIDS
            or {id(v) for v in eqn.invars} != pair
            or len(eqn.invars) != 2
        ):
            raise ReduceComputationError(
                f"lax.{api}: olympus reduces only with the monoids {_SUPPORTED} "
                f"applied to the two arguments; got a computation whose program is\n"
                f"{program}"
            )
        found.append(eqn.primitive.name)
    if len(program.eqns) != n:
        raise ReduceComputationError(
            f"lax.{api}: the computation does more than one monoid operation per "
            f"operand ({_SUPPORTED}); its program is\n{program}"
        )
    return found


def _init_leaf(api: str, init, dtype):
    """The init value as a scalar of the operand's dtype."""
    if isinstance(init, (bool, int, float, complex)):
        return np.asarray(init, dtype)[()]
    aval = aval_of(init)
    if aval.shape != ():
        raise ReduceComputationError(
            f"lax.{api}: init values must be scalars, got {aval.str_short()}"
        )
    if aval.dtype != dtype:
        if not aval.weak_type:
            raise ReduceComputationError(
                f"lax.{api}: init value {aval.str_short()} does not match the "
                f"operand dtype {dtypes.short_name(dtype)}"
            )
        init = ops.convert_element_type(init, dtype)
    return init


def _is_identity(init, kind: str, dtype) -> bool:
    if isinstance(init, Tracer):
        return False
    value = np.asarray(init)
    return bool(value == identity_element(kind, dtype))


def _leaves(api: str, operands, init_values):
    xs, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise ReduceComputationError(
            f"lax.{api}: init_values {init_tree} must have the structure of the "
            f"operands {tree}"
        )
    dtypes_ = [aval_of(x).dtype for x in xs]
    inits = [_init_leaf(api, v, d) for v, d in zip(inits, dtypes_)]
    return xs, inits, dtypes_, tree


def reduce(
    operands,
    init_values,
    computation: Callable,
    dimensions: Sequence[int],
    out_sharding=None,
):
    """Reduces `operands` over `dimensions` with a monoid `computation`.

    JAX's lax.reduce restricted to the monoids olympus has primitives for:
    add, mul, max, min, and, or, xor. `init_values` must be the monoid's
    identity for the result to be well defined.

    Args:
      operands: an array or a pytree of arrays.
      init_values: the starting value(s), matching operands.
      computation: lax.add, lax.mul, lax.max, lax.min, lax.bitwise_and,
        lax.bitwise_or or lax.bitwise_xor.
      dimensions: the dimensions to reduce.
      out_sharding: the results' layout (a PartitionSpec on the `set_mesh`
        mesh or a NamedSharding; None: what the operands' types say).

    Returns:
      The reduced array(s).

    Raises:
      ReduceComputationError: `computation` is not one of the monoids (use
        a scan for general reductions).

    Example:
      >>> lax.reduce(np.float32([[1, 2], [3, 4]]), 0.0, lax.add, (1,))
      Array([3., 7.], dtype=float32)
    """
    if out_sharding is not None:
        from olympus.lax import sharding

        return sharding.laid_out_as(
            lambda: reduce(operands, init_values, computation, dimensions),
            out_sharding,
            "lax.reduce",
        )
    xs, inits, dtypes_, tree = _leaves("reduce", operands, init_values)
    dims = tuple(int(d) for d in dimensions)
    outs = []
    for x, init, monoid in zip(
        xs, inits, _monoids("reduce", computation, dtypes_, tree)
    ):
        kind, combine, reduce_axes = _MONOIDS[monoid]
        out = reduce_axes(x, dims)
        if not _is_identity(init, kind, aval_of(x).dtype):
            out = combine(out, init)
        outs.append(out)
    return tree_unflatten(tree, outs)


def _ints(values, ndim: int, default: int = 1) -> tuple:
    return (default,) * ndim if values is None else tuple(int(v) for v in values)


def reduce_window(
    operand,
    init_value,
    computation: Callable,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding="VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
):
    """Reduces each window of `operand` with a monoid `computation`.

    Pooling's primitive (max pooling, sum pooling). Padding ('VALID',
    'SAME', 'SAME_LOWER' or (lo, hi) pairs) and the holes of `base_dilation`
    add nothing; `init_value` enters each window once.

    Args:
      operand: an array or a pytree of arrays.
      init_value: the starting value(s) (the monoid's identity).
      computation: lax.add, lax.mul, lax.max, lax.min or a bitwise monoid.
      window_dimensions: the window size per dimension.
      window_strides: the stride per dimension (None: 1).
      padding: 'VALID', 'SAME', 'SAME_LOWER' or (lo, hi) pairs.
      base_dilation: input dilation per dimension (None: 1).
      window_dilation: window dilation per dimension (None: 1).

    Returns:
      The array of window results.

    Raises:
      OlympusTypeError: the window description does not fit the rank.

    Example:
      >>> lax.reduce_window(np.float32([1, 5, 3, 4]), -np.inf, lax.max, (2,), (2,), "VALID")
      Array([5., 4.], dtype=float32)
    """
    xs, inits, dtypes_, tree = _leaves("reduce_window", operand, init_value)
    monoids = _monoids("reduce_window", computation, dtypes_, tree)
    outs = [
        _window_leaf(
            x,
            init,
            monoid,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        )
        for x, init, monoid in zip(xs, inits, monoids)
    ]
    return tree_unflatten(tree, outs)


def _window_leaf(x, init, monoid, window, strides, padding, base, dilation):
    shape = aval_of(x).shape
    ndim = len(shape)
    window = _ints(window, ndim)
    strides, base, dilation = (_ints(v, ndim) for v in (strides, base, dilation))
    if not len(window) == len(strides) == len(base) == len(dilation) == ndim:
        raise ReduceComputationError(
            f"lax.reduce_window: need one window size, stride and dilation per axis "
            f"of {aval_of(x).str_short()}, got window {window}, strides {strides}"
        )
    extent = tuple((w - 1) * r + 1 for w, r in zip(window, dilation))
    if isinstance(padding, str):  # as JAX: the undilated operand, the dilated window
        padding = padtype_to_pads(shape, extent, strides, padding)
    config = [(int(lo), int(hi), b - 1) for (lo, hi), b in zip(padding, base)]
    kind, combine, _ = _MONOIDS[monoid]
    dtype = aval_of(x).dtype
    identity = _is_identity(init, kind, dtype)
    fill = identity_element(kind, dtype)[()]
    padded = ops.pad(x, fill, config) if any(any(c) for c in config) else x
    undilated = all(r == 1 for r in dilation)
    if undilated and monoid == "add":
        out = reduce_window_sum(padded, window, strides, "VALID")
    elif undilated and monoid == "max":
        out = reduce_window_max(padded, window, strides, "VALID")
    elif undilated and monoid == "min" and dtypes.is_float(dtype):
        out = ops.neg(reduce_window_max(ops.neg(padded), window, strides, "VALID"))
    else:
        out = _window_by_slices(padded, combine, window, strides, dilation, extent)
    return out if identity else combine(out, init)


def _window_by_slices(x, combine, window, strides, dilation, extent):
    """Each window offset as one strided slice, the slices combined elementwise."""
    shape = aval_of(x).shape
    out_shape = [(d - e) // s + 1 for d, e, s in zip(shape, extent, strides)]
    if any(n <= 0 for n in out_shape):
        raise ReduceComputationError(
            f"lax.reduce_window: window extent {extent} does not fit the padded "
            f"operand of shape {shape}"
        )
    out = None
    for offset in itertools.product(*(range(w) for w in window)):
        starts = [o * r for o, r in zip(offset, dilation)]
        limits = [b + (n - 1) * s + 1 for b, n, s in zip(starts, out_shape, strides)]
        piece = ops.slice(x, starts, limits, strides)
        out = piece if out is None else combine(out, piece)
    return out
