"""Pytrees: flattening order, round trips, registration, and jit over pytrees."""

import collections
import dataclasses

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import tree_util

Point = collections.namedtuple("Point", ["x", "y"])


@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="layer", metadata={"static": True})


tree_util.register_dataclass(Params)


class Box:
    """A user class registered by hand: `scale` is static, `value` a child."""

    def __init__(self, value, scale):
        self.value, self.scale = value, scale

    def __repr__(self):  # a test id, the same in every process (pytest-xdist)
        return f"Box({self.value!r}, {self.scale!r})"


tree_util.register_pytree_node(
    Box,
    lambda b: ((b.value,), b.scale),
    lambda scale, children: Box(children[0], scale),
)


@tree_util.register_pytree_node_class
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __repr__(self):  # a test id, the same in every process (pytest-xdist)
        return f"Pair({self.a!r}, {self.b!r})"

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


TREES = [
    1.0,
    (1, 2),
    [1, [2, 3]],
    {"b": 1, "a": 2},
    None,
    (None, 1),
    Point(1, (2, 3)),
    Params(1, 2),
    {"p": Params([1, 2], None, name="x")},
    Box(1, 3),
    Pair(1, {"k": 2}),
    (),
    [],
    {},
    [(), {"z": None}],
]


def _same(a, b):
    """Structural equality that also sees through the user classes."""
    if isinstance(a, (Box, Pair)):
        return type(a) is type(b) and _same(vars(a), vars(b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return a == b


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_flatten_unflatten_round_trip(tree):
    leaves, treedef = tree_util.tree_flatten(tree)
    assert treedef.num_leaves == len(leaves)
    assert _same(tree_util.tree_unflatten(treedef, leaves), tree)


def test_leaf_order():
    assert tree_util.tree_leaves({"b": 1, "a": (2, 3), "c": [4]}) == [2, 3, 1, 4]
    assert tree_util.tree_leaves(Point(y=2, x=1)) == [1, 2]
    assert tree_util.tree_leaves(Params(w=1, b=2, name="n")) == [1, 2]
    assert tree_util.tree_leaves([None, 1, (None,)]) == [1]
    assert tree_util.tree_leaves(Box(7, scale=2)) == [7]


def test_arrays_are_leaves():
    x = jnp.ones(3)
    leaves = tree_util.tree_leaves({"x": x, "n": np.zeros(2)})
    assert leaves[1] is x and isinstance(leaves[0], np.ndarray)


def test_tree_structure_equality_and_hash():
    s1 = tree_util.tree_structure({"a": 1, "b": (2, 3)})
    s2 = tree_util.tree_structure({"b": (5, 6), "a": 4})
    s3 = tree_util.tree_structure({"a": 1, "b": [2, 3]})
    assert s1 == s2 and hash(s1) == hash(s2)
    assert s1 != s3
    assert tree_util.tree_structure(Params(1, 2, "a")) != tree_util.tree_structure(
        Params(1, 2, "b")
    )
    assert tree_util.tree_structure(Box(1, 2)) != tree_util.tree_structure(Box(1, 3))
    assert tree_util.treedef_is_leaf(tree_util.tree_structure(1.0))
    assert not tree_util.treedef_is_leaf(tree_util.tree_structure((1.0,)))
    assert "PyTreeDef" in repr(s1)


def test_tree_map():
    tree = {"a": (1, 2), "b": Point(3, [4])}
    assert tree_util.tree_map(lambda v: v * 10, tree) == {
        "a": (10, 20),
        "b": Point(30, [40]),
    }
    other = {"a": (5, 5), "b": Point(5, [5])}
    assert tree_util.tree_map(lambda u, v: u + v, tree, other) == {
        "a": (6, 7),
        "b": Point(8, [9]),
    }
    mapped = tree_util.tree_map(lambda v: -v, Params(1, 2, "k"))
    assert (mapped.w, mapped.b, mapped.name) == (-1, -2, "k")
    assert tree_util.tree_map(lambda v: v, None) is None


def test_tree_reduce_and_tree_all():
    tree = {"a": 1, "b": (2, 3)}
    assert tree_util.tree_reduce(lambda u, v: u * 10 + v, tree) == 123
    assert tree_util.tree_reduce(lambda u, v: u + v, tree, 10) == 16
    assert tree_util.tree_all([True, (1, {"k": True})])
    assert not tree_util.tree_all([True, (0,)])


def test_tree_map_structure_mismatch():
    with pytest.raises(ValueError, match="structures differ"):
        tree_util.tree_map(lambda u, v: u, (1, 2), [1, 2])
    with pytest.raises(ValueError, match="structures differ"):
        tree_util.tree_map(lambda u, v: u, {"a": 1}, {"b": 1})


def test_is_leaf():
    tree = [(1, 2), (3, 4)]
    leaves = tree_util.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), (3, 4)]
    summed = tree_util.tree_map(sum, tree, is_leaf=lambda x: isinstance(x, tuple))
    assert summed == [3, 7]


def test_unflatten_wrong_leaf_count():
    treedef = tree_util.tree_structure((1, 2))
    with pytest.raises(ValueError, match="2 leaves"):
        tree_util.tree_unflatten(treedef, [1])


def test_register_twice_is_an_error():
    with pytest.raises(ValueError, match="already registered"):
        tree_util.register_pytree_node(Box, lambda b: ((), None), lambda a, c: None)


def test_register_dataclass_with_explicit_fields():
    @dataclasses.dataclass
    class State:
        step: int
        value: object

    tree_util.register_dataclass(State, data_fields=["value"], meta_fields=["step"])
    leaves, treedef = tree_util.tree_flatten(State(step=3, value=(1, 2)))
    assert leaves == [1, 2]
    rebuilt = tree_util.tree_unflatten(treedef, [5, 6])
    assert rebuilt == State(step=3, value=(5, 6))


# ---- jit over pytrees --------------------------------------------------------------
def test_jit_dict_in_dict_out():
    x = np.arange(3, dtype=np.float32)

    @olympus.jit
    def f(d):
        return {"sum": d["a"] + d["b"], "pair": (d["a"] * 2, [d["b"]])}

    out = f({"a": x, "b": jnp.ones(3)})
    assert set(out) == {"sum", "pair"} and isinstance(out["pair"][1], list)
    np.testing.assert_allclose(np.asarray(out["sum"]), x + 1)
    np.testing.assert_allclose(np.asarray(out["pair"][0]), x * 2)
    np.testing.assert_allclose(np.asarray(out["pair"][1][0]), np.ones(3))


def test_jit_namedtuple_and_none():
    f = olympus.jit(lambda p, unused: Point(p.y, p.x * 3))
    out = f(Point(jnp.ones(2), 2.0), None)
    assert isinstance(out, Point)
    np.testing.assert_allclose(np.asarray(out.y), [3, 3])
    assert float(out.x) == 2.0
    assert olympus.jit(lambda x: (x, None))(1.0)[1] is None


def test_jit_registered_dataclass_with_static_field():
    traces = []

    @olympus.jit
    def layer(p, x):
        traces.append(p.name)
        return Params(p.w @ x + p.b, p.b, name=p.name + "!")

    p = Params(jnp.ones((2, 3)), jnp.arange(2.0), name="dense")
    out = layer(p, jnp.ones(3))
    assert isinstance(out, Params) and out.name == "dense!"
    np.testing.assert_allclose(np.asarray(out.w), [3, 4])
    layer(Params(jnp.zeros((2, 3)), jnp.ones(2), name="dense"), jnp.ones(3))
    assert traces == ["dense"]  # same structure and static field: cached
    layer(Params(jnp.zeros((2, 3)), jnp.ones(2), name="other"), jnp.ones(3))
    assert traces == ["dense", "other"]  # a new static field value retraces


def test_jit_user_registered_nodes():
    f = olympus.jit(lambda b, p: Box(b.value * b.scale + p.a, b.scale))
    out = f(Box(jnp.arange(3.0), 2.0), Pair(1.0, None))
    assert isinstance(out, Box) and out.scale == 2.0
    np.testing.assert_allclose(np.asarray(out.value), [1, 3, 5])


def test_jit_retraces_on_new_structure():
    traces = []

    @olympus.jit
    def total(tree):
        traces.append(1)
        return sum(tree_util.tree_leaves(tree))

    assert float(total({"a": 1.0, "b": 2.0})) == 3.0
    assert float(total({"a": 3.0, "b": 4.0})) == 7.0
    assert len(traces) == 1
    assert float(total({"a": 1.0, "b": 2.0, "c": 3.0})) == 6.0
    assert float(total([1.0, 2.0])) == 3.0
    assert len(traces) == 3


def test_jit_kwargs_pytrees():
    f = olympus.jit(lambda x, *, scale: tree_util.tree_map(lambda v: v * scale["s"], x))
    out = f([jnp.ones(2), (jnp.ones(1),)], scale={"s": 3.0})
    np.testing.assert_allclose(np.asarray(out[1][0]), [3.0])


# ---- key paths, olympus.tree, Partial ----------------------------------------------
def test_flatten_with_path_and_keystr():
    tree = {"w": [1, (2, 3)], "p": Point(4, None), "d": Params(5, 6)}
    pairs, treedef = tree_util.tree_flatten_with_path(tree)
    assert [(tree_util.keystr(p), leaf) for p, leaf in pairs] == [
        ("['d'].w", 5),
        ("['d'].b", 6),
        ("['p'].x", 4),
        ("['w'][0]", 1),
        ("['w'][1][0]", 2),
        ("['w'][1][1]", 3),
    ]
    assert pairs[0][0] == (tree_util.DictKey("d"), tree_util.GetAttrKey("w"))
    assert treedef == tree_util.tree_structure(tree)
    assert [p for p, _ in tree_util.tree_leaves_with_path([7])] == [
        (tree_util.SequenceKey(0),)
    ]
    named = tree_util.tree_map_with_path(
        lambda p, v, w: (tree_util.keystr(p), v + w), (1, [2]), (10, [20])
    )
    assert named == (("[0]", 11), [("[1][0]", 22)])


def test_tree_module_short_names():
    tree = {"a": 1, "b": (2, 3)}
    assert olympus.tree.map(lambda v: v + 1, tree) == {"a": 2, "b": (3, 4)}
    assert olympus.tree.leaves(tree) == [1, 2, 3]
    leaves, treedef = olympus.tree.flatten(tree)
    assert olympus.tree.unflatten(treedef, leaves) == tree
    assert olympus.tree.structure(tree) == treedef
    assert olympus.tree.reduce(lambda u, v: u + v, tree) == 6 and olympus.tree.all(tree)


def test_partial_crosses_jit():
    scaled_add = tree_util.Partial(
        lambda a, b, scale=1.0: (a + b) * scale, jnp.ones(2), scale=3.0
    )
    out = olympus.jit(lambda f, x: f(x))(scaled_add, jnp.arange(2.0))
    np.testing.assert_allclose(np.asarray(out), [3.0, 6.0])
    adder = olympus.jit(lambda s: tree_util.Partial(jnp.add, s))(jnp.ones(2))
    assert isinstance(adder, tree_util.Partial)
    np.testing.assert_allclose(np.asarray(adder(1.0)), [2.0, 2.0])
    assert tree_util.tree_leaves(scaled_add)[1] == 3.0


def test_key_types_print_and_compare_as_jax():
    """The four key types come from one factory (issue 30); each prints,
    reprs and reads its field as JAX's."""
    import jax.tree_util as jtu

    for name, value in [
        ("SequenceKey", 2),
        ("DictKey", "w"),
        ("GetAttrKey", "x"),
        ("FlattenedIndexKey", 3),
    ]:
        ours, theirs = getattr(tree_util, name)(value), getattr(jtu, name)(value)
        assert (str(ours), repr(ours)) == (str(theirs), repr(theirs))
        field = {"SequenceKey": "idx", "GetAttrKey": "name"}.get(name, "key")
        assert getattr(ours, field) == value
        assert ours == getattr(tree_util, name)(value) and hash(ours) is not None
    path = (tree_util.DictKey(1), tree_util.FlattenedIndexKey(0))
    assert tree_util.keystr(path) == jtu.keystr(
        (jtu.DictKey(1), jtu.FlattenedIndexKey(0))
    )
