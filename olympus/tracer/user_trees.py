"""The pytree functions as users call them: opaque types are leaves.

A type registered with `register_opaque_leaf` is a pytree node to olympus's
transformations (jit, vmap, grad and the loops flatten it to its children,
so its data is traced as ordinary arrays) but one leaf to the tree functions
a user or a library calls (`olympus.tree_util`, `olympus.tree`): JAX's typed
PRNG key arrays are leaves, and optax's or flax's `tree_map` over a state
holding a key must meet the key, not its uint32 words.

    >>> k = olympus.random.key(0)
    >>> olympus.tree_util.tree_leaves({"k": k})[0] is k
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Callable

from olympus.tracer import pytree
from olympus.tracer.pytree import PyTreeDef

_opaque_types: tuple = ()


def register_opaque_leaf(cls: type) -> type:
    """Makes `cls`, a registered pytree node, a leaf of the user's tree
    functions; transformations keep flattening it."""
    global _opaque_types
    if not pytree.is_tree_node(cls):
        raise TypeError(f"{cls.__name__} is not a registered pytree node")
    _opaque_types = (*_opaque_types, cls)
    return cls


def _is_opaque(x) -> bool:
    return isinstance(x, _opaque_types)


def _users(is_leaf: Callable | None) -> Callable | None:
    """`is_leaf` that also stops at opaque types."""
    if not _opaque_types:
        return is_leaf
    if is_leaf is None:
        return _is_opaque
    return lambda x: isinstance(x, _opaque_types) or is_leaf(x)


def tree_flatten(tree, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """Leaves in a fixed order and the structure to rebuild the tree from them."""
    return pytree.tree_flatten(tree, _users(is_leaf))


def tree_leaves(tree, is_leaf: Callable | None = None) -> list:
    return pytree.tree_leaves(tree, _users(is_leaf))


def tree_structure(tree, is_leaf: Callable | None = None) -> PyTreeDef:
    return pytree.tree_structure(tree, _users(is_leaf))


def tree_map(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    """Applies `f` leaf-wise; `tree`'s structure must be a prefix of each of
    `rest` (as JAX: a leaf of `tree` meets a whole subtree of the others)."""
    return pytree.tree_map(f, tree, *rest, is_leaf=_users(is_leaf))


def tree_reduce(
    function: Callable, tree, initializer=pytree._NO_INITIALIZER, is_leaf=None
):
    """Folds `function` over the leaves, left to right (functools.reduce)."""
    return pytree.tree_reduce(function, tree, initializer, _users(is_leaf))


def tree_all(tree, is_leaf: Callable | None = None) -> bool:
    """True when every leaf is truthy."""
    return pytree.tree_all(tree, _users(is_leaf))


def tree_flatten_with_path(tree, is_leaf: Callable | None = None):
    """Like tree_flatten, with each leaf paired with its key path (a tuple of keys)."""
    return pytree.tree_flatten_with_path(tree, _users(is_leaf))


def tree_leaves_with_path(tree, is_leaf: Callable | None = None) -> list:
    return pytree.tree_leaves_with_path(tree, _users(is_leaf))


def tree_map_with_path(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    """tree_map where `f` also receives each leaf's key path first."""
    return pytree.tree_map_with_path(f, tree, *rest, is_leaf=_users(is_leaf))


def all_leaves(iterable, is_leaf: Callable | None = None) -> bool:
    """Whether every item of `iterable` is a leaf (None is a node, not a leaf)."""
    return pytree.all_leaves(iterable, _users(is_leaf))


def tree_broadcast(prefix_tree, full_tree, is_leaf: Callable | None = None):
    """`prefix_tree`'s leaves repeated over the matching subtrees of `full_tree`."""
    return pytree.tree_broadcast(prefix_tree, full_tree, _users(is_leaf))


def tree_reduce_associative(
    operation: Callable, tree, *, identity=pytree._NO_IDENTITY, is_leaf=None
):
    """Reduces the leaves with an associative `operation` in a balanced tree
    (logarithmic depth), so a long reduction stays shallow to differentiate."""
    return pytree.tree_reduce_associative(
        operation, tree, identity=identity, is_leaf=_users(is_leaf)
    )


def is_tree_node(typ: type) -> bool:
    """Whether values of type `typ` are pytree nodes (not leaves)."""
    return pytree.is_tree_node(typ) and not issubclass(typ, _opaque_types)


class UsersRegistry(Mapping):
    """The pytree node registry as a user sees it (`type(x) in registry`, as
    flax.nnx asks JAX's): the registered node types less the opaque ones."""

    def __getitem__(self, t):
        if t in _opaque_types:
            raise KeyError(t)
        return pytree._registry[t]

    def __iter__(self):
        return (t for t in pytree._registry if t not in _opaque_types)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, t) -> bool:
        return t in pytree._registry and t not in _opaque_types
