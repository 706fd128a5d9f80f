"""`pure_callback`: a Python function of host arrays inside traced code.

    def host_sort(x):                      # any NumPy code
        return np.sort(x, kind="stable")

    @olympus.jit
    def f(x):
        return olympus.pure_callback(host_sort, olympus.ShapeDtypeStruct(x.shape, x.dtype), x)

The callback is taken to be pure: its result depends on its arguments only,
so a compiled program may call it once, several times or (its result unused)
not at all, and in any order data allows. Side effects belong in
`olympus.debug.callback`, which is ordered.

`pure_callback_p` holds the Python function in its `callback` parameter, as
`debug_callback` does, so it stays out of `olympus.ir.core.all_primitives`
(a program holding a Python function cannot be written as text). Eagerly it
calls the function at once; compiled, it lowers to XLA's CPU host-callback
custom call (backends/xla/host_callback.py) without an ordering token.
Differentiation raises `CallbackDifferentiationError` (wrap the callback in
`custom_jvp` / `custom_vjp`); `vmap` follows `vmap_method`, as JAX's does.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from olympus.backends.reference.table import reference_rules
from olympus.backends.xla.host_callback import (
    emit_io_host_callback,
    emit_pure_host_callback,
)
from olympus.backends.xla.lowering import lowering_rules
from olympus.ir import dtypes
from olympus.ir.core import Primitive, ShapedArray, all_primitives, register_param_type
from olympus.ir.effects import ordered_effect_primitives
from olympus import numpy as jnp
from olympus.api import device_put
from olympus.lax import ops as lax
from olympus.lax.control_flow.scan import map as lax_map
from olympus.tracer.core import user_source_info
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.transforms.batching import batch_rules, batch_to_front, not_mapped
from olympus.transforms.jvp import jvp_rules

__all__ = [
    "CallbackDifferentiationError",
    "CallbackResultError",
    "CallbackVmapError",
    "io_callback",
    "pure_callback",
]

VMAP_METHODS = (
    "sequential",
    "sequential_unrolled",
    "expand_dims",
    "broadcast_all",
    "legacy_vectorized",
)


class CallbackResultError(TypeError):
    """A pure callback returned values other than `result_shape_dtypes` said:
    another tree, shape or dtype (64-bit results are narrowed first when x64
    is off, as any NumPy input is)."""


class CallbackDifferentiationError(ValueError):
    """`grad`/`jvp` reached a pure callback, whose derivative olympus cannot know."""


class CallbackVmapError(NotImplementedError):
    """`vmap` reached a pure callback called without `vmap_method`, or an
    ordered io_callback (whose calls have no per-example order)."""


pure_callback_p = Primitive("pure_callback", multiple_results=True)
all_primitives["pure_callback"] = pure_callback_p  # prints and parses (not runs)


@register_param_type
class ResultType(NamedTuple):
    """One result's type in the `result_types` param, printed and parsed
    back as `ResultType(shape=(3,), dtype='float32')`."""

    shape: tuple
    dtype: str

    @classmethod
    def of(cls, aval: ShapedArray) -> ResultType:
        return cls(tuple(aval.shape), aval.dtype.name)

    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, np.dtype(self.dtype))


class PureFunction:
    """The `callback` param (of pure_callback and io_callback): the user's
    function on flat NumPy arrays, hashable by identity, printed by its name."""

    __slots__ = ("function", "in_tree", "out_tree", "__name__", "_by_types")

    def __init__(self, function: Callable, in_tree, out_tree, name: str):
        self.function, self.in_tree, self.out_tree = function, in_tree, out_tree
        self.__name__ = name
        self._by_types: dict = {}  # result types -> the host-callback callable

    def __call__(self, result_types: tuple, *arrays) -> list[np.ndarray]:
        args, kwargs = tree_unflatten(self.in_tree, [np.asarray(a) for a in arrays])
        results, tree = tree_flatten(self.function(*args, **kwargs))
        if tree != self.out_tree:
            raise CallbackResultError(
                f"pure_callback {self.__name__} returned a {tree}, "
                f"but result_shape_dtypes is a {self.out_tree}"
            )
        return [
            _checked(r, t.aval(), i, self.__name__)
            for i, (r, t) in enumerate(zip(results, result_types))
        ]

    def for_types(self, result_types: tuple) -> Callable:
        """The callable a compiled program calls (one per result signature,
        kept: host-callback ids live as long as the process)."""
        found = self._by_types.get(result_types)
        if found is None:
            found = self._by_types[result_types] = lambda *arrays: tuple(
                self(result_types, *arrays)
            )
        return found

    def __repr__(self) -> str:
        return self.__name__


def _checked(result, aval: ShapedArray, index: int, name: str) -> np.ndarray:
    value = np.asarray(result)
    dtype = dtypes.canonicalize_dtype(value.dtype)
    if value.shape != aval.shape or dtype != aval.dtype:
        raise CallbackResultError(
            f"pure_callback {name}: result {index} is {dtype.name}{list(value.shape)}, "
            f"but result_shape_dtypes says {aval.dtype.name}{list(aval.shape)}"
        )
    return np.asarray(value, dtype=aval.dtype, order="C")


def _abstract_eval(*avals, callback, result_types, vmap_method):
    return [t.aval() for t in result_types]


def _impl(*args, callback, result_types, vmap_method):
    return [device_put(r) for r in callback(result_types, *args)]


def _reference(*args, callback, result_types, vmap_method):
    """The NumPy interpreter's rule (reference and tiered execution); copies,
    as a callback may return (a view of) an operand the interpreter reuses."""
    return [np.array(r) for r in callback(result_types, *args)]


def _lower(ctx, *operands, callback, result_types, vmap_method):
    avals = [t.aval() for t in result_types]
    return emit_pure_host_callback(
        ctx.emitter, callback.for_types(result_types), operands, avals
    )


def _jvp(primals, tangents, *, callback, result_types, vmap_method=None, ordered=None):
    where = user_source_info()
    what = "pure_callback" if ordered is None else "io_callback"
    raise CallbackDifferentiationError(
        f"{what} {callback.__name__}"
        + (f" at {where}" if where is not None else "")
        + ": olympus cannot differentiate a Python callback; give it a derivative "
        "with olympus.custom_jvp or olympus.custom_vjp"
    )


def _batch(axis_size, vals, dims, *, callback, result_types, vmap_method):
    if vmap_method is None:
        raise CallbackVmapError(
            f"vmap of pure_callback {callback.__name__}: say how the callback "
            f"batches with vmap_method= one of {', '.join(map(repr, VMAP_METHODS))}"
        )
    params = dict(callback=callback, vmap_method=vmap_method)
    out_dims = [0] * len(result_types)
    if vmap_method.startswith("sequential"):
        return _sequential(axis_size, vals, dims, result_types, params), out_dims
    batched = tuple(ResultType((axis_size, *t.shape), t.dtype) for t in result_types)
    args = []
    for v, d in zip(vals, dims):
        if d is not not_mapped:
            args.append(batch_to_front(v, axis_size, d))
        elif vmap_method == "legacy_vectorized":
            args.append(v)
        else:
            shape = (axis_size if vmap_method == "broadcast_all" else 1, *np.shape(v))
            args.append(lax.broadcast_in_dim(v, shape, tuple(range(1, len(shape)))))
    return pure_callback_p.bind(*args, result_types=batched, **params), out_dims


def _sequential(axis_size, vals, dims, result_types, params) -> list:
    """One call per example: a loop (`lax.map`), or unrolled."""
    mapped = [d is not not_mapped for d in dims]
    moved = [
        batch_to_front(v, axis_size, d) for v, d, m in zip(vals, dims, mapped) if m
    ]
    fixed = [v for v, m in zip(vals, mapped) if not m]

    def one(xs):
        it_x, it_f = iter(xs), iter(fixed)
        args = [next(it_x) if m else next(it_f) for m in mapped]
        return pure_callback_p.bind(*args, result_types=result_types, **params)

    if params["vmap_method"] == "sequential":
        return list(lax_map(one, moved))
    examples = [one([x[i] for x in moved]) for i in range(axis_size)]
    return _stacked(examples, len(result_types))


def _stacked(examples: list, count: int) -> list:
    """The callbacks' per-example results (lists of `count` arrays) as one
    batched list, example-major."""
    return [jnp.stack([e[j] for e in examples]) for j in range(count)]


pure_callback_p.def_abstract_eval(_abstract_eval)
pure_callback_p.def_impl(_impl)
reference_rules["pure_callback"] = _reference
lowering_rules[pure_callback_p] = _lower
batch_rules[pure_callback_p] = _batch


# ---- io_callback: a callback with side effects ----------------------------------
io_callback_p = Primitive("io_callback", multiple_results=True)
all_primitives["io_callback"] = io_callback_p
# Every io_callback is ordered, `ordered=False` ones too (a stronger promise
# than JAX's): each runs once per execution, in program order, is never
# dropped or merged, and runs with the compiled program (not the interpreter
# tier).
ordered_effect_primitives.add(io_callback_p)


def _io_abstract_eval(*avals, callback, result_types, ordered):
    return [t.aval() for t in result_types]


def _io_impl(*args, callback, result_types, ordered):
    return _impl(*args, callback=callback, result_types=result_types, vmap_method=None)


def _io_reference(*args, callback, result_types, ordered):
    return _reference(
        *args, callback=callback, result_types=result_types, vmap_method=None
    )


def _io_lower(ctx, *operands, callback, result_types, ordered):
    avals = [t.aval() for t in result_types]
    return emit_io_host_callback(
        ctx.emitter, callback.for_types(result_types), operands, avals
    )


def _io_batch(axis_size, vals, dims, *, callback, result_types, ordered):
    """Unordered: one call per example, in batch order; ordered: refused (as
    in JAX: the examples' calls would have no program order of their own)."""
    if ordered:
        raise CallbackVmapError(
            f"vmap of io_callback {callback.__name__} with ordered=True: an ordered "
            f"callback cannot be batched; use ordered=False"
        )
    vals = [
        v if d is not_mapped else batch_to_front(v, axis_size, d)
        for v, d in zip(vals, dims)
    ]
    examples = [
        io_callback_p.bind(
            *(v if d is not_mapped else v[i] for v, d in zip(vals, dims)),
            callback=callback,
            result_types=result_types,
            ordered=ordered,
        )
        for i in range(axis_size)
    ]
    outs = _stacked(examples, len(result_types))
    return outs, [0] * len(outs)


io_callback_p.def_abstract_eval(_io_abstract_eval)
io_callback_p.def_impl(_io_impl)
reference_rules["io_callback"] = _io_reference
lowering_rules[io_callback_p] = _io_lower
jvp_rules[pure_callback_p] = jvp_rules[io_callback_p] = _jvp  # both refuse
batch_rules[io_callback_p] = _io_batch


def io_callback(
    callback: Callable,
    result_shape_dtypes: Any,
    *args,
    sharding=None,
    ordered: bool = False,
    **kwargs,
):
    """Calls `callback(*args, **kwargs)` on NumPy arrays for its side effects
    (writing a file, logging, reading a sensor) and returns its results,
    arrays of `result_shape_dtypes`; under jit it runs once per call of the
    compiled program, in program order (olympus orders `ordered=False`
    callbacks too). Not differentiable; `vmap` calls it once per example
    (unordered only, as in JAX).

    >>> seen = []
    >>> def record(x):
    ...     seen.append(float(x))
    ...     return np.float32(len(seen))
    >>> f = olympus.jit(lambda x: olympus.experimental.io_callback(
    ...     record, olympus.ShapeDtypeStruct((), jnp.float32), x * 2))
    >>> f(1.0), f(2.0), seen
    (Array(1., dtype=float32), Array(2., dtype=float32), [2.0, 4.0])
    """
    return _bind_callback(
        io_callback_p,
        callback,
        result_shape_dtypes,
        args,
        kwargs,
        ordered=bool(ordered),
    )


def _bind_callback(primitive, callback, result_shape_dtypes, args, kwargs, **params):
    leaves, in_tree = tree_flatten((args, kwargs))
    structs, out_tree = tree_flatten(result_shape_dtypes)
    result_types = tuple(ResultType.of(_result_aval(s)) for s in structs)
    name = getattr(callback, "__name__", type(callback).__name__)
    outs = primitive.bind(
        *[jnp.asarray(x) for x in leaves],
        callback=PureFunction(callback, in_tree, out_tree, name),
        result_types=result_types,
        **params,
    )
    return tree_unflatten(out_tree, outs)


def pure_callback(
    callback: Callable,
    result_shape_dtypes: Any,
    *args,
    sharding=None,
    vmap_method: str | None = None,
    **kwargs,
):
    """Calls a Python function on NumPy arrays from inside traced code.

    For host code that olympus cannot trace (SciPy, a C extension): the
    callback runs eagerly, or from the compiled program, and its results
    re-enter as arrays. It must be pure (no side effects), since olympus may
    call it fewer or more times than the program does, or not at all when
    its result is unused.

    Args:
      callback: a function taking NumPy arrays and returning NumPy arrays.
      result_shape_dtypes: a pytree of objects with `.shape` and `.dtype`
        (e.g. ShapeDtypeStruct) describing what `callback` returns.
      *args: array arguments passed (as NumPy arrays) to `callback`.
      sharding: taken for JAX's signature; callbacks run on the host.
      vmap_method: how vmap calls it: "sequential" (one call per example),
        "sequential_unrolled", "expand_dims" (one call; unbatched arguments
        get a leading axis of size 1), "broadcast_all" (unbatched arguments
        broadcast to the batch), or "legacy_vectorized".
      **kwargs: keyword arguments passed to `callback`.

    Returns:
      Arrays of the structure, shapes and dtypes of `result_shape_dtypes`.

    Raises:
      CallbackResultError: `callback` returned values whose structure, shape
        or dtype differ from `result_shape_dtypes`.
      CallbackVmapError: vmap reached the callback without a `vmap_method`.
      CallbackDifferentiationError: the callback was differentiated (wrap it
        in custom_jvp or custom_vjp).

    Example:
      >>> x = jnp.arange(4.0)
      >>> olympus.jit(lambda x: olympus.pure_callback(
      ...     np.cumsum, olympus.ShapeDtypeStruct(x.shape, x.dtype), x))(x)
      Array([0., 1., 3., 6.], dtype=float32)
    """
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise ValueError(
            f"pure_callback: vmap_method must be one of "
            f"{', '.join(map(repr, VMAP_METHODS))} or None, got {vmap_method!r}"
        )
    return _bind_callback(
        pure_callback_p,
        callback,
        result_shape_dtypes,
        args,
        kwargs,
        vmap_method=vmap_method,
    )


def _result_aval(struct) -> ShapedArray:
    shape, dtype = getattr(struct, "shape", None), getattr(struct, "dtype", None)
    if shape is None or dtype is None:
        raise TypeError(
            f"pure_callback: each leaf of result_shape_dtypes needs .shape and .dtype "
            f"(olympus.ShapeDtypeStruct), got {type(struct).__name__} {struct!r:.60}"
        )
    return ShapedArray(tuple(shape), dtypes.canonicalize_dtype(dtype))
