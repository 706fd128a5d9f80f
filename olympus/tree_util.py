"""olympus.tree_util: pytrees, JAX's names."""

from olympus.tracer.pytree import (  # noqa: F401
    PyTreeDef,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    tree_all,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_reduce,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)
