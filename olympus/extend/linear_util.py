"""`jax.extend.linear_util` (and `jax.api_util`) under olympus: a function
wrapped for tracing, and flattening it over pytrees.

olympus traces plain Python functions, so `wrap_init` only records the function
and its keyword params; `call_wrapped` calls it. `flatten_fun` makes a wrapped
function of pytrees one of leaves, as JAX's does for libraries that trace it
themselves (numpyro's provenance, flax's lazy init).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, NamedTuple

from olympus.tree_util import tree_flatten, tree_unflatten


class WrappedFun:
    """`f` with fixed keyword `params`; what JAX's tracing entry points take."""

    __slots__ = ("f", "params", "debug_info")

    def __init__(self, f: Callable, params: dict, debug_info: Any = None):
        self.f = f
        self.params = params
        self.debug_info = debug_info

    def call_wrapped(self, *args):
        return self.f(*args, **self.params)

    @property
    def __name__(self) -> str:
        return getattr(self.f, "__name__", type(self.f).__name__)

    def __repr__(self) -> str:
        return f"WrappedFun({self.__name__})"


def wrap_init(
    f: Callable, params: dict | None = None, *, debug_info=None
) -> WrappedFun:
    """`f` ready to be called as `wrapped.call_wrapped(*args)`.

    >>> from olympus.extend.linear_util import wrap_init
    >>> wrap_init(lambda x, k: x * k, {"k": 3}).call_wrapped(2)
    6
    """
    return WrappedFun(f, dict(params or {}), debug_info)


def safe_map(f: Callable, *sequences) -> list:
    """`list(map(f, *sequences))` whose sequences must be equally long
    (`jax.api_util.safe_map`, which program interpreters such as distrax's use).

    >>> from olympus.extend.linear_util import safe_map
    >>> safe_map(lambda a, b: a + b, [1, 2], [3, 4])
    [4, 6]
    """
    sequences = [list(s) for s in sequences]
    for i, s in enumerate(sequences[1:], start=2):
        if len(s) != len(sequences[0]):
            relation = "longer" if len(s) > len(sequences[0]) else "shorter"
            raise ValueError(f"safe_map() argument {i} is {relation} than argument 1")
    return list(map(f, *sequences))


class DebugInfo(NamedTuple):
    """What a library traced, for its messages (JAX's `api_util.debug_info`)."""

    traced_for: str
    func_src_info: str
    arg_names: tuple
    result_paths: Any = None


def debug_info(
    traced_for: str, fun: Callable, args: tuple, kwargs: dict, **options
) -> DebugInfo:
    """`fun`'s name and source line and its arguments' names (from its
    signature where it has one); `options` (static_argnums, ...) are accepted
    and not needed."""
    name = getattr(fun, "__qualname__", type(fun).__name__)
    code = getattr(fun, "__code__", None)
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code else ""
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
        names = tuple(bound.arguments)
    except (TypeError, ValueError):
        names = tuple(f"args[{i}]" for i in range(len(args))) + tuple(kwargs)
    return DebugInfo(traced_for, name + where, names)


class OutTreeNotReadyError(RuntimeError):
    """`flatten_fun`'s out_tree() read before the flattened function ran."""


def _out_tree(store: dict) -> Callable:
    def out_tree():
        if "tree" not in store:
            raise OutTreeNotReadyError(
                "out_tree() of flatten_fun: call the flattened function first; "
                "its output's tree is known only once it has run"
            )
        return store["tree"]

    return out_tree


def flatten_fun(fun: WrappedFun, in_tree) -> tuple[WrappedFun, Callable]:
    """`fun` as a function of leaves that `in_tree` unflattens to `(args,
    kwargs)`, returning its output's leaves; `out_tree()` gives the output's
    tree once it has run."""
    store: dict = {}

    def flat(*leaves):
        args, kwargs = tree_unflatten(in_tree, leaves)
        out, store["tree"] = tree_flatten(fun.f(*args, **kwargs, **fun.params))
        return out

    return WrappedFun(flat, {}, fun.debug_info), _out_tree(store)


def flatten_fun_nokwargs(fun: WrappedFun, in_tree) -> tuple[WrappedFun, Callable]:
    """`flatten_fun` for a tree of positional arguments only."""
    store: dict = {}

    def flat(*leaves):
        args = tree_unflatten(in_tree, leaves)
        out, store["tree"] = tree_flatten(fun.f(*args, **fun.params))
        return out

    return WrappedFun(flat, {}, fun.debug_info), _out_tree(store)


__all__ = [
    "DebugInfo",
    "OutTreeNotReadyError",
    "WrappedFun",
    "debug_info",
    "flatten_fun",
    "flatten_fun_nokwargs",
    "safe_map",
    "wrap_init",
]
