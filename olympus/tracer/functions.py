"""Tracing Python functions of pytrees: their arguments' names, static
arguments fixed, flattening to functions of leaves, tracing into a program.

jit, make_olympuspr, the differentiation API and custom derivatives all take
user functions of pytrees; this is the one place that turns them into the flat
functions that traces run.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any

from olympus.ir import dtypes
from olympus.ir.core import ClosedOlympuspr, ShapedArray, ShapeProperties
from olympus.tracer.core import Tracer, aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.tracer.refs import Ref, check_no_refs
from olympus.tracer.pytree import tree_flatten, tree_paths, tree_unflatten
from olympus.tracer.staging import DebugInfo, function_name, trace_to_olympuspr


class ShapeDtypeStruct(ShapeProperties):
    """Shape and dtype of an array without its data (and, optionally, the
    sharding it is meant to have, kept for code that reads it back)."""

    __slots__ = ("dtype", "shape", "weak_type", "sharding")

    def __init__(self, shape, dtype, weak_type: bool = False, *, sharding=None):
        self.shape = tuple(shape)
        # an extended dtype (a typed PRNG key's) is kept as it is
        extended = getattr(dtype, "extended", False)
        self.dtype = dtype if extended else dtypes.canonicalize_dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding

    @classmethod
    def like(cls, x) -> ShapeDtypeStruct:
        """The ShapeDtypeStruct of `x` (an array, a scalar, or another struct)."""
        aval = x.aval if isinstance(x, ShapeDtypeStruct) else aval_of(x)
        sharding = x.sharding if isinstance(x, ShapeDtypeStruct) else None
        return cls(aval.shape, aval.dtype, aval.weak_type, sharding=sharding)

    def update(self, **kwargs) -> ShapeDtypeStruct:
        """A copy with some of shape, dtype, weak_type, sharding replaced."""
        fields = {k: getattr(self, k) for k in self.__slots__}
        fields.update(kwargs)
        sharding = fields.pop("sharding")
        return ShapeDtypeStruct(**fields, sharding=sharding)

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        laid = "" if self.sharding is None else f", sharding={self.sharding!r}"
        return (
            f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak}{laid})"
        )

    def __eq__(self, other) -> bool:
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype) == (
            other.shape,
            other.dtype,
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))


# ---- argument names ---------------------------------------------------------
def positional_names(fun: Callable) -> list[str] | None:
    """Names of fun's positional parameters, None if it has no signature.

    A plain function reads them off its code object: inspect.signature costs
    about a fifth of tracing a small closure, and jit traces one per call site."""
    if type(fun) is types.FunctionType and not (
        "__wrapped__" in fun.__dict__ or "__signature__" in fun.__dict__
    ):
        code = fun.__code__
        return list(code.co_varnames[: code.co_argcount])
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in kinds]


def arg_names(fun: Callable, n_args: int) -> list[str]:
    """A name for each of n_args positional arguments (`args[i]` past fun's own)."""
    positional = positional_names(fun) or []
    return [
        positional[i] if i < len(positional) else f"args[{i}]" for i in range(n_args)
    ]


def arg_paths(fun: Callable, args: tuple, kwargs: dict) -> tuple:
    """A readable path (`params['w']`) for each leaf of (args, kwargs)."""
    paths: list[str] = []
    for name, arg in zip(arg_names(fun, len(args)), args):
        paths += tree_paths(arg, name)
    for key in sorted(kwargs):
        paths += tree_paths(kwargs[key], key)
    return tuple(paths)


# ---- static arguments ---------------------------------------------------------
def dynamic_argnums(n_args: int, static_argnums: Sequence[int]) -> tuple[int, ...]:
    """The positions among n_args that static_argnums does not name (negative
    numbers count from the end; numbers out of range name nothing)."""
    static = {
        i % n_args if i < 0 else i for i in static_argnums if -n_args <= i < n_args
    }
    return tuple(i for i in range(n_args) if i not in static)


def argnums_partial(
    fun: Callable,
    dyn_argnums: Sequence[int],
    args: tuple,
    static_kwargs: dict | None = None,
) -> tuple[Callable, tuple]:
    """(`fun` as a function of the arguments at dyn_argnums only, those arguments).

    The other positional arguments, and static_kwargs, stay fixed to their
    values here: this is how static arguments of jit, non-differentiable
    arguments of custom derivatives and argnums of grad are taken out of a
    trace. Keyword arguments of the call pass through. `fun` comes back as is
    when nothing is fixed."""
    dyn_args = tuple(args[i] for i in dyn_argnums)
    if not static_kwargs and tuple(dyn_argnums) == tuple(range(len(args))):
        return fun, dyn_args
    fixed_kwargs = static_kwargs or {}

    def dyn_fun(*dyn, **kwargs):
        full = list(args)
        for i, x in zip(dyn_argnums, dyn):
            full[i] = x
        return fun(*full, **kwargs, **fixed_kwargs)

    dyn_fun.__qualname__ = function_name(fun)
    return dyn_fun, dyn_args


# ---- flattening and tracing -----------------------------------------------------
def flatten_fun(fun: Callable, in_tree) -> tuple[Callable, dict]:
    """`fun` as a function of the leaves of its positional arguments (which
    `in_tree` unflattens to a tuple of), returning its output's leaves; the
    output's tree lands in `store["tree"]` when it runs."""
    store: dict = {}

    def flat_fun(*leaves):
        out_leaves, store["tree"] = tree_flatten(fun(*tree_unflatten(in_tree, leaves)))
        return out_leaves

    return flat_fun, store


def check_output_leaf(x, what: str):
    """`x`, a leaf of what a traced function (`what`: jit's function, a cond
    branch, a scan body) returned, where it is an array or a scalar; a Ref
    raises RefReturnError (a ValueError, as JAX's), anything else
    OlympusTypeError."""
    if isinstance(x, Ref):
        check_no_refs(x, what)
    if isinstance(x, (Tracer, bool, int, float, complex)) or hasattr(x, "__array__"):
        return x
    raise OlympusTypeError(
        f"{what} returned a {type(x).__name__} ({x!r:.40}); it must return "
        f"arrays, scalars or pytrees of them"
    )


def trace_pytree_function(
    fun: Callable, args: tuple, kwargs: dict, transform: str
) -> tuple[ClosedOlympuspr, Any, Any]:
    """Traces `fun(*args, **kwargs)` on abstract values of its leaves.

    Returns (closed olympuspr over the flat leaves, input treedef, output treedef).
    """
    leaves, in_tree = tree_flatten((args, kwargs))
    name = function_name(fun)
    flat_fun, store = flatten_fun(lambda a, k: fun(*a, **k), in_tree)

    def checked_fun(*tracers):
        return [check_output_leaf(x, name) for x in flat_fun(*tracers)]

    debug = DebugInfo(transform, name, arg_paths(fun, args, kwargs))
    olympuspr, consts, _ = trace_to_olympuspr(
        checked_fun, [aval_of(x) for x in leaves], debug
    )
    return ClosedOlympuspr(olympuspr, consts), in_tree, store["tree"]
