"""`jax.extend.linear_util` under olympus: a function wrapped for tracing.

olympus traces plain Python functions, so `wrap_init` only records the function
and its keyword params; `call_wrapped` calls it.
"""

from __future__ import annotations

from typing import Any, Callable


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

    >>> safe_map(lambda a, b: a + b, [1, 2], [3, 4])
    [4, 6]
    """
    sequences = [list(s) for s in sequences]
    for i, s in enumerate(sequences[1:], start=2):
        if len(s) != len(sequences[0]):
            relation = "longer" if len(s) > len(sequences[0]) else "shorter"
            raise ValueError(f"safe_map() argument {i} is {relation} than argument 1")
    return list(map(f, *sequences))


__all__ = ["WrappedFun", "safe_map", "wrap_init"]
