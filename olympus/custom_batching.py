"""olympus.custom_batching: functions with their own vmap rule (JAX's
`jax.custom_batching`), for code that batches better by hand than vmap would
(a solver that handles a whole batch at once, a loop vmap would unroll).

>>> @olympus.custom_batching.custom_vmap
... def f(x):
...     return jnp.sin(x)
>>> @f.def_vmap
... def f_vmap(axis_size, in_batched, x):
...     return jnp.sin(x), in_batched[0]
>>> olympus.vmap(f)(jnp.zeros(2))
Array([0., 0.], dtype=float32)
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from olympus import lax
from olympus.tracer import core
from olympus.tracer.core import set_current_trace
from olympus.tracer.pytree import tree_flatten, tree_structure, tree_unflatten
from olympus.transforms.batching import BatchTrace, move_batch_axis, not_mapped


class CustomVmapRuleError(AttributeError):
    """A custom_vmap function was vmapped before `def_vmap` gave it a rule."""


class CustomVmapOutputError(TypeError):
    """A vmap rule's `out_batched` does not match the structure of its output."""


class custom_vmap:
    """`fun` with a vmap rule `rule(axis_size, in_batched, *args) -> (out,
    out_batched)`: args come with the batch axis first where `in_batched` (a
    pytree of bools like `args`) says so; `out_batched` says the same of `out`.

    The rule runs where `fun` is called directly under vmap (nested vmaps call
    it once per level). Under jit, grad and outside vmap `fun` itself runs;
    a jit inside the vmap batches its body by the ordinary rules
    (docs/differences.md).
    """

    def __init__(self, fun: Callable):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable | None = None

    def def_vmap(self, vmap_rule: Callable) -> Callable:
        """Sets the vmap rule; returns it (usable as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs) -> Any:
        if kwargs:  # as JAX: keyword arguments are bound to their positions
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
            args, kwargs = bound.args, bound.kwargs
        if self.vmap_rule is None:  # as JAX: checked at every call
            raise CustomVmapRuleError(
                f"No batching rule defined for custom_vmap function "
                f"{self.__name__} using def_vmap; define one with "
                f"@{self.__name__}.def_vmap"
            )
        trace = core.current_trace()
        if not isinstance(trace, BatchTrace) or kwargs:
            return self.fun(*args, **kwargs)
        return _apply_rule(self.vmap_rule, trace, args, self.__name__)


def _apply_rule(rule: Callable, trace: BatchTrace, args: tuple, name: str):
    leaves, tree = tree_flatten(args)
    vals, batched = [], []
    for x in leaves:
        val, dim = trace.unpack(x)
        mapped = dim is not not_mapped
        vals.append(move_batch_axis(val, trace.axis_size, dim, 0) if mapped else val)
        batched.append(mapped)
    with set_current_trace(trace.parent):
        out, out_batched = rule(
            trace.axis_size,
            list(tree_unflatten(tree, batched)),
            *tree_unflatten(tree, vals),
        )
    out_leaves, out_tree = tree_flatten(out)
    flags, flags_tree = tree_flatten(out_batched)
    if flags_tree != out_tree:
        if flags_tree.num_leaves == 1 and isinstance(flags[0], bool):
            flags = flags * len(out_leaves)  # one bool for every output
        else:
            raise CustomVmapOutputError(
                f"custom_vmap rule of {name}: out_batched {out_batched!r} must "
                f"have the structure of the output {out_tree} (one bool per array)"
            )
    packed = [trace.pack(v, 0 if b else not_mapped) for v, b in zip(out_leaves, flags)]
    return tree_unflatten(out_tree, packed)


def sequential_vmap(f: Callable) -> custom_vmap:
    """`f` as a custom_vmap whose vmap rule is a loop over the batch
    (lax.map): for functions whose vectorized form is worse than a loop."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        leaves, tree = tree_flatten(args)
        flags = tree_flatten(in_batched)[0]
        mapped = [x for x, b in zip(leaves, flags) if b]

        def one(mapped_example):
            it = iter(mapped_example)
            full = [next(it) if b else x for x, b in zip(leaves, flags)]
            return f.fun(*tree_unflatten(tree, full))

        out = lax.map(one, mapped)
        return out, tree_unflatten(
            tree_structure(out), [True] * len(tree_flatten(out)[0])
        )

    return f


__all__ = ["custom_vmap", "sequential_vmap"]
