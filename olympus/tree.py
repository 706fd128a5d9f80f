"""olympus.tree: the short names of olympus.tree_util (`olympus.tree.map`, as jax.tree)."""

import dataclasses

from olympus.tracer.pytree import (  # noqa: F401
    tree_transpose as transpose,
    tree_unflatten as unflatten,
)
from olympus.tracer.user_trees import (  # noqa: F401  (typed keys are leaves here)
    tree_all as all,  # noqa: A004
    tree_broadcast as broadcast,
    tree_flatten as flatten,
    tree_flatten_with_path as flatten_with_path,
    tree_leaves as leaves,
    tree_leaves_with_path as leaves_with_path,
    tree_map as map,  # noqa: A004
    tree_map_with_path as map_with_path,
    tree_reduce as reduce,
    tree_reduce_associative as reduce_associative,
    tree_structure as structure,
)


def static(**kwargs):
    """A dataclasses.field marked static (`metadata={"static": True}`), so
    register_dataclass makes it aux data rather than a child."""
    metadata = {**(kwargs.pop("metadata", None) or {}), "static": True}
    return dataclasses.field(metadata=metadata, **kwargs)
