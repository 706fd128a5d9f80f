"""`with_sharding_constraint`: asks XLA's partitioner to lay a value out so.

Inside jit it lowers to a Shardy `sdy.sharding_constraint` (the partitioner
moves data as needed); eagerly it is `device_put`. The value is unchanged, so
its derivative is itself on tangents, its transpose constrains the cotangent
the same way, and under vmap the batch dimension is left unsplit.
"""

from __future__ import annotations

from olympus.backends.xla.array import put
import functools
import inspect

from olympus.backends.xla.sharding import (
    NamedSharding,
    PartitionSpec,
    mesh_in_scope,
    named_sharding_of,
    spelled_for_rank,
)
from olympus.backends.xla.spmd import sdy_sharding
from olympus.lax.base import define_primitive
from olympus.tracer.core import user_source_info
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.transforms.batching import batch_rules
from olympus.transforms.jvp import defjvp_linear
from olympus.transforms.linearize import transpose_rules


def _abstract_eval(x, *, sharding):
    # the rank is checked; a spec that does not divide a dimension is fine
    # inside a program (XLA pads, as in JAX); eagerly device_put refuses it
    sharding._tiling(len(x.shape), "with_sharding_constraint")
    return x


def _lower(ctx, x, *, sharding):
    if not ctx.emitter.spmd or sharding.num_devices == 1:
        return x  # a program on one device: nothing to lay out
    attr = f"sharding = {sdy_sharding(sharding, ctx.aval_out.ndim)}"
    return ctx.op("sdy.sharding_constraint", [x], attr)


sharding_constraint_p = define_primitive("sharding_constraint", _abstract_eval, _lower)
sharding_constraint_p.def_impl(lambda x, *, sharding: put(x, sharding))
defjvp_linear(sharding_constraint_p)
transpose_rules[sharding_constraint_p] = lambda ct, x, *, sharding: [
    sharding_constraint_p.bind(ct, sharding=sharding)
]


def _batch(axis_size, vals, dims, *, sharding):
    (x,), (dim,) = vals, dims
    if dim is None:
        return sharding_constraint_p.bind(x, sharding=sharding), None
    ndim = len(x.shape) - 1
    parts = [sharding.spec[d] if d < len(sharding.spec) else None for d in range(ndim)]
    parts.insert(dim, None)
    batched = NamedSharding(sharding.mesh, PartitionSpec(*parts))
    return sharding_constraint_p.bind(x, sharding=batched), dim


batch_rules[sharding_constraint_p] = _batch


def with_sharding_constraint(x, shardings):
    """`x` constrained to the layout `shardings` gives.

    `x` (a pytree) laid out as `shardings` (one NamedSharding, or a pytree of
    them matching `x`) says, wherever XLA's partitioner can see it.

    Args:
      x: a pytree of arrays.
      shardings: a NamedSharding, or a pytree of them matching x.

    Returns:
      x, laid out as shardings says.

    Raises:
      TypeError: shardings is not a NamedSharding (or a pytree of them).

    Example:
      >>> mesh = olympus.make_mesh((1,), ('x',))
      >>> s = olympus.sharding.NamedSharding(mesh, olympus.P('x'))
      >>> lax.with_sharding_constraint(jnp.arange(2.0), s)
      Array([0., 1.], dtype=float32)
    """
    leaves, tree = tree_flatten(x)
    if isinstance(shardings, (NamedSharding, PartitionSpec)):
        per_leaf = [shardings] * len(leaves)
    else:
        per_leaf, _ = tree_flatten(
            shardings, is_leaf=lambda s: isinstance(s, PartitionSpec)
        )
    mesh = mesh_in_scope()
    if mesh is not None:  # a bare PartitionSpec means the mesh set_mesh set
        per_leaf = [
            NamedSharding(mesh, s) if isinstance(s, PartitionSpec) else s
            for s in per_leaf
        ]
    if len(per_leaf) != len(leaves) or not all(
        isinstance(s, NamedSharding) for s in per_leaf
    ):
        site = user_source_info()
        raise TypeError(
            f"with_sharding_constraint takes a NamedSharding (a mesh and a "
            f"PartitionSpec; a bare PartitionSpec inside `with set_mesh(mesh)`) "
            f"or a pytree of them matching its {len(leaves)} values, "
            f"got {shardings!r}" + (f" (at {site})" if site is not None else "")
        )
    outs = [sharding_constraint_p.bind(v, sharding=s) for v, s in zip(leaves, per_leaf)]
    return tree_unflatten(tree, outs)


def accepts_out_sharding(fn):
    """`fn` (an array-creating function) with JAX's keyword `out_sharding=`:
    a PartitionSpec (on the mesh of `set_mesh`) or NamedSharding the result
    is laid out as (placed eagerly, constrained under jit)."""

    @functools.wraps(fn)
    def with_out_sharding(*args, out_sharding=None, **kwargs):
        out = fn(*args, **kwargs)
        if out_sharding is None:
            return out
        sharding = named_sharding_of(out_sharding, f"jnp.{fn.__name__}")
        sharding = spelled_for_rank(sharding, len(out.shape))
        return sharding_constraint_p.bind(out, sharding=sharding)

    signature = inspect.signature(fn)
    keyword = inspect.Parameter(
        "out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None
    )
    with_out_sharding.__signature__ = signature.replace(
        parameters=[*signature.parameters.values(), keyword]
    )
    return with_out_sharding
