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


__all__ = ["WrappedFun", "wrap_init"]
