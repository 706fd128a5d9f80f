"""Pytrees: nested containers whose leaves are arrays.

Tuples, lists, dicts (keys sorted), None, namedtuples and registered classes
(`register_pytree_node`, `register_dataclass`) are nodes; everything else is
a leaf. A `PyTreeDef` is hashable, so it can key the jit cache.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, NamedTuple


class _NodeType(NamedTuple):
    flatten: Callable  # node -> (children, aux_data)
    unflatten: Callable  # (aux_data, children) -> node


_registry: dict[type, _NodeType] = {}
_NO_INITIALIZER = object()


class PyTreeDef:
    """The shape of a pytree with its leaves taken out."""

    __slots__ = ("node_type", "aux", "children", "num_leaves", "_hash")

    def __init__(self, node_type, aux, children: tuple):
        self.node_type = node_type
        self.aux = aux
        self.children = children
        self.num_leaves = (
            1 if node_type is None else sum(c.num_leaves for c in children)
        )
        self._hash = hash((node_type, aux, children))

    def __eq__(self, other) -> bool:
        return (
            type(other) is PyTreeDef
            and self._hash == other._hash
            and self.node_type == other.node_type
            and self.aux == other.aux
            and self.children == other.children
        )

    def __hash__(self) -> int:
        return self._hash

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children)

    def unflatten(self, leaves) -> Any:
        return tree_unflatten(self, leaves)

    def __repr__(self) -> str:
        return f"PyTreeDef({_describe(self)})"


LEAF = PyTreeDef(None, None, ())


def _describe(treedef: PyTreeDef) -> str:
    if treedef.node_type is None:
        return "*"
    kids = ", ".join(_describe(c) for c in treedef.children)
    t = treedef.node_type
    if t is tuple:
        return f"({kids}{',' if len(treedef.children) == 1 else ''})"
    if t is list:
        return f"[{kids}]"
    if t is dict:
        return (
            "{"
            + ", ".join(
                f"{k!r}: {_describe(c)}" for k, c in zip(treedef.aux, treedef.children)
            )
            + "}"
        )
    if t is type(None):
        return "None"
    return f"{t.__name__}({kids})"


def _is_namedtuple(t: type) -> bool:
    return issubclass(t, tuple) and hasattr(t, "_fields")


def _node_children(x, t):
    """(children, aux, node_type) for a node, or None for a leaf."""
    node = _registry.get(t)
    if node is not None:
        children, aux = node.flatten(x)
        return children, aux, t
    if _is_namedtuple(t):
        return tuple(x), None, t
    return None


def _flatten(x, leaves: list, is_leaf) -> PyTreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    t = type(x)
    if t not in _registry and not issubclass(
        t, tuple
    ):  # a leaf (the common case, made quick)
        leaves.append(x)
        return LEAF
    found = _node_children(x, t)
    if found is None:
        leaves.append(x)
        return LEAF
    children, aux, t = found
    kids = []
    for (
        c
    ) in children:  # leaf children inline: a dict of 100 arrays is one call, not 101
        ct = type(c)
        if is_leaf is None and ct not in _registry and not issubclass(ct, tuple):
            leaves.append(c)
            kids.append(LEAF)
        else:
            kids.append(_flatten(c, leaves, is_leaf))
    return PyTreeDef(t, aux, tuple(kids))


def tree_flatten(tree, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """Leaves in a fixed order and the structure to rebuild the tree from them."""
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _unflatten(treedef: PyTreeDef, leaves) -> Any:
    t = treedef.node_type
    if t is None:
        return next(leaves)
    children = [_unflatten(c, leaves) for c in treedef.children]
    node = _registry.get(t)
    if node is not None:
        return node.unflatten(treedef.aux, children)
    return t(*children)  # namedtuple


def tree_unflatten(treedef: PyTreeDef, leaves) -> Any:
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(
            f"tree structure {treedef} has {treedef.num_leaves} leaves, "
            f"got {len(leaves)}"
        )
    return _unflatten(treedef, iter(leaves))


def tree_leaves(tree, is_leaf: Callable | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf: Callable | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.node_type is None


def tree_map(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    """Applies `f` leaf-wise; `rest` trees must have the structure of `tree`."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for other in rest:
        other_leaves, other_def = tree_flatten(other, is_leaf)
        if other_def != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef} vs {other_def}")
        others.append(other_leaves)
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))


def tree_reduce(function: Callable, tree, initializer=_NO_INITIALIZER, is_leaf=None):
    """Folds `function` over the leaves, left to right (functools.reduce)."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree, is_leaf: Callable | None = None) -> bool:
    """True when every leaf is truthy."""
    return all(tree_leaves(tree, is_leaf))


def register_pytree_node(
    node_type: type, flatten_func: Callable, unflatten_func: Callable
):
    """`flatten_func(x) -> (children, aux)`, `unflatten_func(aux, children) -> x`."""
    if node_type in _registry:
        raise ValueError(f"{node_type.__name__} is already registered as a pytree node")
    _registry[node_type] = _NodeType(flatten_func, unflatten_func)
    return node_type


def register_pytree_node_class(cls: type) -> type:
    """Decorator for classes with `tree_flatten` and classmethod `tree_unflatten`."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(cls=None, data_fields=None, meta_fields=None):
    """Registers a dataclass: data fields are children, meta fields are static.

    Without explicit field lists, fields with `metadata={"static": True}` are
    meta fields and all others data fields. Usable as a decorator.
    """
    if cls is None:
        return lambda c: register_dataclass(c, data_fields, meta_fields)
    if data_fields is None:
        fields = [f for f in dataclasses.fields(cls) if f.init]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields or ())

    def flatten(x):
        aux = tuple(getattr(x, name) for name in meta_fields)
        return [getattr(x, name) for name in data_fields], aux

    def unflatten(aux, children):
        kwargs = dict(zip(meta_fields, aux))
        kwargs.update(zip(data_fields, children))
        return cls(**kwargs)

    register_pytree_node(cls, flatten, unflatten)
    _dataclass_data_fields[cls] = data_fields
    return cls


_dataclass_data_fields: dict[type, tuple] = {}


def _dict_flatten(d: dict):
    keys = sorted(d)
    return [d[k] for k in keys], tuple(keys)


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)))
register_pytree_node(type(None), lambda _: ((), None), lambda _, c: None)


# ---- key paths: where a leaf sits, for error messages ----------------------
def _child_keys(treedef: PyTreeDef) -> list[str]:
    t = treedef.node_type
    if t is dict:
        return [f"[{k!r}]" for k in treedef.aux]
    if t in (tuple, list):
        return [f"[{i}]" for i in range(len(treedef.children))]
    if _is_namedtuple(t):
        return [f".{name}" for name in t._fields]
    if t in _dataclass_data_fields:
        return [f".{name}" for name in _dataclass_data_fields[t]]
    return [f"<{i}>" for i in range(len(treedef.children))]


def tree_paths(tree, prefix: str = "") -> list[str]:
    """A readable path (`x['w'][0]`) for each leaf, in flatten order."""
    treedef = tree_structure(tree)
    paths: list[str] = []
    _collect_paths(treedef, prefix, paths)
    return paths


def _collect_paths(treedef: PyTreeDef, prefix: str, out: list) -> None:
    if treedef.node_type is None:
        out.append(prefix)
        return
    for key, child in zip(_child_keys(treedef), treedef.children):
        _collect_paths(child, prefix + key, out)


# ---- key paths as objects (JAX's tree_flatten_with_path) --------------------
class SequenceKey(NamedTuple):
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx}]"


class DictKey(NamedTuple):
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


class GetAttrKey(NamedTuple):
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


class FlattenedIndexKey(NamedTuple):
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def _key_objects(treedef: PyTreeDef) -> list:
    t = treedef.node_type
    if t is dict:
        return [DictKey(k) for k in treedef.aux]
    if t in (tuple, list):
        return [SequenceKey(i) for i in range(len(treedef.children))]
    if _is_namedtuple(t):
        return [GetAttrKey(name) for name in t._fields]
    if t in _dataclass_data_fields:
        return [GetAttrKey(name) for name in _dataclass_data_fields[t]]
    return [FlattenedIndexKey(i) for i in range(len(treedef.children))]


def tree_flatten_with_path(tree, is_leaf: Callable | None = None):
    """Like tree_flatten, with each leaf paired with its key path (a tuple of keys)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    paths: list = []
    _collect_key_paths(treedef, (), paths)
    return list(zip(paths, leaves)), treedef


def _collect_key_paths(treedef: PyTreeDef, prefix: tuple, out: list) -> None:
    if treedef.node_type is None:
        out.append(prefix)
        return
    for key, child in zip(_key_objects(treedef), treedef.children):
        _collect_key_paths(child, prefix + (key,), out)


def tree_leaves_with_path(tree, is_leaf: Callable | None = None) -> list:
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    """tree_map where `f` also receives each leaf's key path first."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [tree_flatten(r, is_leaf)[0] for r in rest]
    return treedef.unflatten(
        f(path, leaf, *xs) for (path, leaf), *xs in zip(pairs, *others)
    )


def keystr(path: tuple) -> str:
    """A key path as text: (DictKey('w'), SequenceKey(0)) -> "['w'][0]"."""
    return "".join(str(key) for key in path)


class Partial(functools.partial):
    """A functools.partial that is a pytree: bound arguments are leaves and the
    function is static, so it can be passed into and returned from jit."""


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)
