"""Pytrees: nested containers whose leaves are arrays.

Tuples, lists, dicts (keys sorted), None, namedtuples and registered classes
(`register_pytree_node`, `register_dataclass`) are nodes; everything else is
a leaf. A `PyTreeDef` is hashable, so it can key the jit cache.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any, Callable, NamedTuple


class _NodeType(NamedTuple):
    flatten: Callable  # node -> (children, aux_data)
    unflatten: Callable  # (aux_data, children) -> node


_registry: dict[type, _NodeType] = {}
_NO_INITIALIZER = object()


class _Children(tuple):
    """A treedef's child structures: a tuple inside olympus, and callable as
    JAX's `treedef.children()` (a list) so libraries written for JAX work."""

    __slots__ = ()

    def __call__(self) -> list:
        return list(self)


def _aux_hash(aux) -> int:
    """A node's aux data in its treedef's hash. Unhashable aux data (a dict,
    as a flatten function may return) counts by its type only, as JAX's
    treedefs hash it; equality still compares it, so jit caches stay exact."""
    try:
        return hash(aux)
    except TypeError:
        return hash(type(aux))


class PyTreeDef:
    """The shape of a pytree with its leaves taken out."""

    __slots__ = ("node_type", "aux", "children", "num_leaves", "_hash")

    def __init__(self, node_type, aux, children: tuple):
        self.node_type = node_type
        self.aux = aux
        self.children = _Children(children)
        self.num_leaves = (
            1 if node_type is None else sum(c.num_leaves for c in children)
        )
        # Hashed on first use, as JAX: a node's aux data (equinox's modules
        # hold dicts) need be hashable only where the treedef is hashed.
        self._hash = None

    def __eq__(self, other) -> bool:
        return (
            type(other) is PyTreeDef
            and (self._hash is None or other._hash is None or self._hash == other._hash)
            and self.node_type == other.node_type
            and self.aux == other.aux
            and self.children == other.children
        )

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.node_type, _aux_hash(self.aux), self.children))
        return self._hash

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children)

    def unflatten(self, leaves) -> Any:
        return tree_unflatten(self, leaves)

    def node_data(self) -> tuple | None:
        """(node type, aux data) of the root, None for a leaf (as JAX)."""
        return None if self.node_type is None else (self.node_type, self.aux)

    def flatten_up_to(self, tree) -> list:
        """The subtrees of `tree` at this treedef's leaves (it must be a prefix)."""
        out: list = []
        _flatten_up_to(self, tree, out)
        return out

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with `inner` at each of its leaves."""
        if self.node_type is None:
            return inner
        kids = tuple(c.compose(inner) for c in self.children)
        return PyTreeDef(self.node_type, self.aux, kids)

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
    """Applies `f` leaf-wise; `tree`'s structure must be a prefix of each of
    `rest` (as JAX: a leaf of `tree` meets a whole subtree of the others)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for other in rest:
        try:
            others.append(treedef.flatten_up_to(other))
        except TreePrefixError:
            other_def = tree_structure(other)
            raise ValueError(
                f"tree_map: structures differ: {treedef} vs {other_def} (the first "
                f"tree's structure must be a prefix of the others')"
            ) from None
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
# collections' dicts are nodes, as in JAX: an OrderedDict keeps its insertion
# order, a defaultdict sorts its keys and keeps its default_factory.
register_pytree_node(
    collections.OrderedDict,
    lambda d: (list(d.values()), tuple(d)),
    lambda keys, c: collections.OrderedDict(zip(keys, c)),
)
register_pytree_node(
    collections.defaultdict,
    lambda d: (_dict_flatten(d)[0], (d.default_factory, tuple(sorted(d)))),
    lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)),
)


def _dict_keys(treedef: PyTreeDef) -> tuple | None:
    """The keys of a dict-like node, in its children's order (else None)."""
    if treedef.node_type in (dict, collections.OrderedDict):
        return treedef.aux
    if treedef.node_type is collections.defaultdict:
        return treedef.aux[1]
    return None


# ---- key paths: where a leaf sits, for error messages ----------------------
def _child_keys(treedef: PyTreeDef) -> list[str]:
    t = treedef.node_type
    if _dict_keys(treedef) is not None:
        return [f"[{k!r}]" for k in _dict_keys(treedef)]
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
def _key_type(name: str, field: str, annotation, form: str, doc: str) -> type:
    """A key-path entry type (JAX's): a NamedTuple of one field, printed as
    `form` shows it (keystr joins these)."""
    key_type = NamedTuple(name, [(field, annotation)])
    key_type.__str__ = lambda self: form.format(self[0])
    key_type.__doc__ = doc
    return key_type


SequenceKey = _key_type(
    "SequenceKey", "idx", int, "[{}]", "A list's or tuple's child: its index."
)
DictKey = _key_type("DictKey", "key", Any, "[{!r}]", "A dict's child: its key.")
GetAttrKey = _key_type(
    "GetAttrKey", "name", str, ".{}", "A namedtuple's or dataclass's field: its name."
)
FlattenedIndexKey = _key_type(
    "FlattenedIndexKey",
    "key",
    int,
    "[<flat index {}>]",
    "A child of a node registered without keys: its place in the flattening.",
)


def _key_objects(treedef: PyTreeDef) -> list:
    t = treedef.node_type
    if _dict_keys(treedef) is not None:
        return [DictKey(k) for k in _dict_keys(treedef)]
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
    if _keyed_flatten:  # a class registered with keys names its own children
        _collect_value_key_paths(tree, (), is_leaf, paths)
    else:
        _collect_key_paths(treedef, (), paths)
    return list(zip(paths, leaves)), treedef


def _collect_value_key_paths(x, prefix: tuple, is_leaf, out: list) -> None:
    t = type(x)
    if (is_leaf is not None and is_leaf(x)) or not is_tree_node(t):
        out.append(prefix)
        return
    children, _, t = _node_children(x, t)
    children = list(children)
    for key, child in zip(_keys_of_node(x, t, len(children)), children):
        _collect_value_key_paths(child, prefix + (key,), is_leaf, out)


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


# ---- JAX's wider tree_util API ----------------------------------------------
class TreePrefixError(ValueError):
    """A tree is not a prefix of another (flatten_up_to, tree_broadcast)."""


KeyEntry = Any  # one step of a key path: SequenceKey, DictKey, GetAttrKey, ...
KeyPath = tuple  # a tuple of KeyEntry, as tree_flatten_with_path gives


def _flatten_up_to(treedef: PyTreeDef, tree, out: list) -> None:
    if treedef.node_type is None:
        out.append(tree)
        return
    found = _node_children(tree, type(tree)) if type(tree) is not type(None) else None
    if type(tree) is type(None) and treedef.node_type is type(None):
        return
    if found is None or found[2] is not treedef.node_type or found[1] != treedef.aux:
        raise TreePrefixError(
            f"flatten_up_to: {treedef} is not a prefix of the tree "
            f"{tree_structure(tree)}; pass a tree whose top levels match it"
        )
    children = list(found[0])
    if len(children) != len(treedef.children):
        raise TreePrefixError(
            f"flatten_up_to: {treedef} has {len(treedef.children)} children "
            f"where the tree has {len(children)}"
        )
    for sub, child in zip(treedef.children, children):
        _flatten_up_to(sub, child, out)


def treedef_tuple(treedefs) -> PyTreeDef:
    """The structure of a tuple whose elements have the structures `treedefs`."""
    return PyTreeDef(tuple, None, tuple(treedefs))


def treedef_children(treedef: PyTreeDef) -> list:
    """The structures of the root's children."""
    return list(treedef.children)


def is_tree_node(typ: type) -> bool:
    """Whether values of type `typ` are pytree nodes (not leaves)."""
    return typ in _registry or _is_namedtuple(typ)


def all_leaves(iterable, is_leaf: Callable | None = None) -> bool:
    """Whether every item of `iterable` is a leaf (None is a node, not a leaf)."""
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def flatten_one_level(tree) -> tuple[tuple, Any]:
    """(children, aux data) of the root node; a leaf raises ValueError."""
    found = _node_children(tree, type(tree))
    if found is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return tuple(found[0]), found[1]


def flatten_one_level_with_keys(tree) -> tuple[tuple, Any]:
    """((key, child) pairs, aux data) of the root node."""
    children, aux = flatten_one_level(tree)
    keys = _keys_of_node(tree, type(tree), len(children))
    return tuple(zip(keys, children)), aux


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef, pytree_to_transpose):
    """A tree of structure outer∘inner turned into one of structure inner∘outer."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)[0]
        inner_treedef = tree_structure(first)
    inner_size, outer_size = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        raise TypeError(
            f"tree_transpose: mismatch\n{treedef}\n != \n"
            f"{outer_treedef.compose(inner_treedef)}"
        )
    rows = [flat[i * inner_size : (i + 1) * inner_size] for i in range(outer_size)]
    return inner_treedef.unflatten(outer_treedef.unflatten(col) for col in zip(*rows))


def tree_broadcast(prefix_tree, full_tree, is_leaf: Callable | None = None):
    """`prefix_tree`'s leaves repeated over the matching subtrees of `full_tree`."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = prefix_def.flatten_up_to(full_tree)
    return prefix_def.unflatten(
        tree_map(lambda _, leaf=leaf: leaf, sub, is_leaf=is_leaf)
        for leaf, sub in zip(prefix_leaves, subtrees)
    )


_NO_IDENTITY = object()


def tree_reduce_associative(
    operation: Callable, tree, *, identity=_NO_IDENTITY, is_leaf=None
):
    """Reduces the leaves with an associative `operation` in a balanced tree
    (logarithmic depth), so a long reduction stays shallow to differentiate."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_IDENTITY:
            raise ValueError(
                "tree_reduce_associative: the tree has no leaves; pass identity="
            )
        return identity
    while len(leaves) > 1:
        pairs = [operation(a, b) for a, b in zip(leaves[::2], leaves[1::2])]
        leaves = pairs + leaves[len(pairs) * 2 :]
    return leaves[0]


def register_static(cls: type) -> type:
    """Registers `cls` as a node with no children: its instances are static
    (hashed into a treedef) rather than leaves."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable,
    unflatten_func: Callable,
    flatten_func: Callable | None = None,
):
    """Like register_pytree_node, with `flatten_with_keys(x) -> ((key, child)
    pairs, aux)` naming each child in key paths."""

    def flatten_from_keys(x):
        pairs, aux = flatten_with_keys(x)
        return [child for _, child in pairs], aux

    register_pytree_node(nodetype, flatten_func or flatten_from_keys, unflatten_func)
    _keyed_flatten[nodetype] = flatten_with_keys
    return nodetype


def register_pytree_with_keys_class(cls: type) -> type:
    """Decorator for classes with `tree_flatten_with_keys` and `tree_unflatten`
    (and optionally `tree_flatten`)."""
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(
        cls,
        lambda x: x.tree_flatten_with_keys(),
        cls.tree_unflatten,
        (lambda x: x.tree_flatten()) if flatten is not None else None,
    )
    return cls


_keyed_flatten: dict[type, Callable] = {}


def _keys_of_node(node, t: type, count: int) -> list:
    keyed = _keyed_flatten.get(t)
    if keyed is not None:
        return [key for key, _ in keyed(node)[0]]
    _, aux, t = _node_children(node, t)
    children = (LEAF,) * count
    return _key_objects(PyTreeDef(t, aux, children))
