"""`jax.interpreters.batching` under olympus: vmap's rule table, JAX's signature.

JAX's batching rule is `rule(batched_args, batch_dims, **params) -> (out,
out_dim)`; olympus's also receives the axis size first. `primitive_batchers`
is a view of olympus's `batch_rules` that converts between the two on the way
in and out, so a library's rule lands in the table vmap reads.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Callable, Iterator

import numpy as np

from olympus.ir.core import Primitive
from olympus.transforms.batching import (  # noqa: F401
    batch_rules,
    not_mapped,
    rule_axis_name,
)


def _from_jax(rule: Callable, primitive: Primitive) -> Callable:
    def olympus_rule(axis_size, vals, dims, **params):
        if all(d is not_mapped for d in dims):  # as JAX: the rule sees a batch
            out = primitive.bind(*vals, **params)
            unmapped = [not_mapped] * len(out) if primitive.multiple_results else None
            return out, unmapped
        return rule(vals, dims, **params)

    olympus_rule.jax_rule = rule
    return olympus_rule


def _to_jax(rule: Callable) -> Callable:
    jax_rule = getattr(rule, "jax_rule", None)
    if jax_rule is not None:
        return jax_rule

    def as_jax(vals, dims, **params):
        size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
        return rule(size, list(vals), list(dims), **params)

    return as_jax


class _BatchRulesView(MutableMapping):
    """What JAX's batching tables share: olympus's one table of batch rules
    behind them (deleting, iterating and counting need no conversion)."""

    def __delitem__(self, primitive: Primitive) -> None:
        del batch_rules[primitive]

    def __iter__(self) -> Iterator[Primitive]:
        return iter(batch_rules)

    def __len__(self) -> int:
        return len(batch_rules)


class PrimitiveBatchers(_BatchRulesView):
    """`primitive -> rule(batched_args, batch_dims, **params)` over olympus's table."""

    def __getitem__(self, primitive: Primitive) -> Callable:
        return _to_jax(batch_rules[primitive])

    def __setitem__(self, primitive: Primitive, rule: Callable) -> None:
        batch_rules[primitive] = _from_jax(rule, primitive)


primitive_batchers = PrimitiveBatchers()


class AxisPrimitiveBatchers(_BatchRulesView):
    """`primitive -> rule(axis_size, axis_name, trace_type, batched_args,
    batch_dims, **params)`: JAX's rules that need the vmap's size and name
    (`trace_type` is None, as JAX now passes)."""

    def __getitem__(self, primitive: Primitive) -> Callable:
        rule = batch_rules[primitive]
        return getattr(rule, "jax_axis_rule", None) or (
            lambda size, name, trace_type, vals, dims, **params: rule(
                size, list(vals), list(dims), **params
            )
        )

    def __setitem__(self, primitive: Primitive, rule: Callable) -> None:
        def olympus_rule(axis_size, vals, dims, **params):
            name = rule_axis_name()
            return rule(axis_size, name, None, vals, dims, **params)

        olympus_rule.jax_axis_rule = rule
        batch_rules[primitive] = olympus_rule


axis_primitive_batchers = AxisPrimitiveBatchers()


def moveaxis(x, src: int, dst: int):
    """`x` with its axis `src` moved to `dst` (JAX's `batching.moveaxis`)."""
    from olympus import numpy as jnp

    return jnp.moveaxis(x, src, dst)


def bdim_at_front(x, bdim: int | None, size: int):
    """`x` with its batch axis first, broadcasting an unbatched `x` to `size`."""
    from olympus import numpy as jnp

    if bdim is not_mapped:
        return jnp.broadcast_to(x, (size,) + np.shape(x))
    return jnp.moveaxis(x, bdim, 0)


__all__ = [
    "axis_primitive_batchers",
    "bdim_at_front",
    "moveaxis",
    "not_mapped",
    "primitive_batchers",
]
