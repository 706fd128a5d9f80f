"""olympus.tree: the short names of olympus.tree_util (`olympus.tree.map`, as jax.tree)."""

from olympus.tracer.pytree import (  # noqa: F401
    tree_all as all,  # noqa: A004
    tree_flatten as flatten,
    tree_flatten_with_path as flatten_with_path,
    tree_leaves as leaves,
    tree_leaves_with_path as leaves_with_path,
    tree_map as map,  # noqa: A004
    tree_map_with_path as map_with_path,
    tree_reduce as reduce,
    tree_structure as structure,
    tree_unflatten as unflatten,
)
