"""The public API that libraries written for JAX (optax, flax, equinox, chex,
numpyro, distrax, ...) reach for, checked against JAX 0.10.2."""

import dataclasses
import importlib
import types
import typing

import numpy as np
import pytest
from jax_oracle import OLYMPUS, agree, x64

import jax
import olympus
import olympus.numpy as jnp


def mod(ox, name: str):
    """`ox`'s submodule `name` (olympus.flatten_util or jax.flatten_util)."""
    return importlib.import_module(f"{ox.name}.{name}")


# ---- typing -----------------------------------------------------------------
def test_typing_has_jax_typing_names():
    import jax.typing
    import olympus.typing

    public = {n for n in dir(jax.typing) if not n.startswith("_")}
    assert public <= set(dir(olympus.typing))
    assert olympus.Array in typing.get_args(olympus.typing.ArrayLike)
    assert np.dtype in typing.get_args(olympus.typing.DTypeLike)


# ---- flatten_util -----------------------------------------------------------
TREE = {"w": np.ones((2, 3), np.float32), "b": (np.arange(3.0, dtype=np.float32),)}
MIXED = {"a": np.arange(3, dtype=np.int32), "b": np.ones(2, np.float16), "c": 2.5}


@pytest.mark.parametrize("tree", [TREE, MIXED, {}, [np.int8(3), np.uint8(4)]])
def test_ravel_pytree_values_and_dtypes(tree):
    def program(ox, tree):
        flat, unravel = mod(ox, "flatten_util").ravel_pytree(tree)
        return flat, unravel(flat)

    agree(program, tree)


def test_ravel_pytree_x64_mixed():
    with x64():
        agree(lambda ox, t: mod(ox, "flatten_util").ravel_pytree(t)[0], MIXED)


def test_ravel_pytree_under_jit_and_grad():
    def program(ox, tree):
        ravel = mod(ox, "flatten_util").ravel_pytree

        def loss(t):
            flat, _ = ravel(t)
            return ox.jnp.sum(flat**2)

        flat, unravel = ravel(tree)
        rebuilt = ox.jit(unravel)(flat * 2)
        return ox.jit(lambda t: ravel(t)[0])(tree), ox.grad(loss)(tree), rebuilt

    agree(program, TREE)


def test_unravel_rejects_another_dtype():
    from olympus.flatten_util import UnravelDTypeError, ravel_pytree

    flat, unravel = ravel_pytree(MIXED)
    with pytest.raises(UnravelDTypeError, match="expected dtype float32"):
        unravel(flat.astype(jnp.int32))


# ---- tree_util and tree -----------------------------------------------------
def test_tree_module_has_every_jax_tree_name():
    assert {n for n in dir(jax.tree) if not n.startswith("_")} <= set(dir(olympus.tree))
    missing = {n for n in dir(jax.tree_util) if not n.startswith("_")} - set(
        dir(olympus.tree_util)
    )
    assert missing <= {"default_registry"}


NESTED = {"a": (1.0, 2.0), "b": [3.0], "c": None}


def test_pytreedef_methods():
    def program(ox, tree):
        tu = ox.tree_util
        treedef = tu.tree_structure(tree)
        kids = treedef.children()
        return (
            [k.num_leaves for k in kids],
            treedef.num_leaves,
            treedef.num_nodes,
            treedef.node_data()[0].__name__,
            tu.tree_structure(1.0).node_data(),
            [k.num_nodes for k in tu.treedef_children(treedef)],
            tu.treedef_tuple(kids).num_leaves,
            tu.treedef_tuple(kids).unflatten([1, 2, 3]),
        )

    agree(program, NESTED)


def test_tree_transpose_broadcast_reduce_associative():
    def program(ox, tree):
        tu = ox.tree_util
        pairs = [(1, 2), (3, 4), (5, 6)]
        outer = tu.tree_structure([0, 0, 0])
        inner = tu.tree_structure((0, 0))
        return (
            tu.tree_transpose(outer, inner, pairs),
            ox.tree.transpose(outer, None, pairs),
            ox.tree.broadcast({"a": 1, "b": 2}, {"a": (0, 0), "b": [0, 0, 0]}),
            ox.tree.reduce_associative(lambda x, y: x + y, [1, 2, 3, 4, 5]),
            ox.tree.reduce_associative(lambda x, y: x + y, [], identity=0),
            tu.all_leaves([1, 2.0]),
            tu.all_leaves([1, (2,)]),
            tu.flatten_one_level({"b": 1, "a": 2}),
            tu.is_tree_node(tuple),
            tu.is_tree_node(int),
        )

    agree(program, NESTED)


def test_tree_transpose_mismatch_raises():
    def program(ox):
        tu = ox.tree_util
        outer = tu.tree_structure([0, 0])
        return tu.tree_transpose(outer, tu.tree_structure((0, 0)), [(1, 2), (3,)])

    agree(program)


class _Keyed:
    def __init__(self, x, y):
        self.x, self.y = x, y


def test_register_pytree_with_keys_and_static():
    tu = olympus.tree_util
    tu.register_pytree_with_keys(
        _Keyed,
        lambda k: (((tu.GetAttrKey("x"), k.x), (tu.GetAttrKey("y"), k.y)), None),
        lambda aux, kids: _Keyed(*kids),
    )
    pairs, treedef = tu.tree_flatten_with_path({"k": _Keyed(1, 2)})
    assert [tu.keystr(p) for p, _ in pairs] == ["['k'].x", "['k'].y"]
    assert [leaf for _, leaf in pairs] == [1, 2]

    @tu.register_static
    class Static:
        def __hash__(self):
            return 0

        def __eq__(self, other):
            return type(other) is Static

    leaves, treedef = tu.tree_flatten((Static(), 1.0))
    assert leaves == [1.0]
    assert isinstance(treedef.unflatten([2.0])[0], Static)


def test_register_pytree_with_keys_class_and_tree_static_field():
    tu = olympus.tree_util

    @tu.register_pytree_with_keys_class
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten_with_keys(self):
            return ((tu.GetAttrKey("a"), self.a), (tu.GetAttrKey("b"), self.b)), None

        @classmethod
        def tree_unflatten(cls, aux, kids):
            return cls(*kids)

    out = olympus.jit(lambda p: Pair(p.b, p.a))(Pair(1.0, 2.0))
    assert (float(out.a), float(out.b)) == (2.0, 1.0)
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Pair(1, 2))]
    assert paths == [".a", ".b"]

    @tu.register_dataclass
    @dataclasses.dataclass
    class Layer:
        w: float
        name: str = olympus.tree.static(default="dense")

    leaves, treedef = tu.tree_flatten(Layer(1.0))
    assert leaves == [1.0] and treedef.unflatten([3.0]).name == "dense"


# ---- Device and Array as types ----------------------------------------------
def test_device_class_and_attributes():
    def program(ox):
        d = ox.devices()[0]
        assert isinstance(d, ox.Device)
        return d.id, d.platform, d.device_kind, d.process_index, d.host_id

    agree(program)
    assert not isinstance("cpu", olympus.Device)


def test_tracers_are_arrays_inside_transforms():
    def program(ox, x):
        seen = []

        def f(y):
            seen.append(isinstance(y, ox.Array))
            return ox.jnp.sum(y * 2.0)

        ox.jit(f)(x)
        ox.grad(f)(x)
        ox.vmap(f)(x)
        eager = isinstance(ox.jnp.asarray(x), ox.Array)
        return seen, eager, isinstance(x, ox.Array), isinstance(1.0, ox.Array)

    agree(program, np.ones((2, 3), np.float32))
    assert issubclass(type(jnp.ones(1)), olympus.Array)
    with pytest.raises(TypeError, match="asarray"):
        olympus.Array()


# ---- lax: primitives under JAX's names, broadcast_shapes, pswapaxes ---------
def test_every_jax_primitive_name_olympus_defines_is_bound():
    from olympus.lax.jax_names import JAX_PRIMITIVE_NAMES

    jax_names = {n for n in dir(jax.lax) if n.endswith("_p")}
    for name in JAX_PRIMITIVE_NAMES:
        assert f"{name}_p" in jax_names
        assert getattr(olympus.lax, f"{name}_p").name == getattr(
            jax.lax, f"{name}_p"
        ).name.replace("-", "_")


def test_primitive_bind_eager_jit_grad_vmap():
    def program(ox, x, y):
        lax = ox.lax

        def f(a, b):
            return lax.add_p.bind(
                lax.div_p.bind(a, lax.exp_p.bind(b)),
                lax.max_p.bind(a, lax.neg_p.bind(b)),
            )

        return (
            f(x, y),
            ox.jit(f)(x, y),
            ox.grad(lambda a, b: ox.jnp.sum(f(a, b)))(x, y),
            ox.vmap(f)(x, y),
        )

    agree(program, np.linspace(0, 1, 4, dtype=np.float32), np.ones(4, np.float32))


def test_expanded_primitives_bind_as_jax():
    """conj_p, square_p, cumsum_p, top_k_p, split_p, ... (distrax keys tables
    by conj_p): bound with JAX's params, eagerly and under jit, grad, vmap."""

    def program(ox, x):
        lax = ox.lax

        def f(a):
            parts = lax.split_p.bind(a, sizes=(1, 3), axis=0)
            top = lax.top_k_p.bind(a, k=2, axis=0)
            return (
                lax.cumsum_p.bind(a, axis=0, reverse=True)
                + lax.cummax_p.bind(a, axis=0, reverse=False)
                + lax.cumlogsumexp_p.bind(a, axis=0, reverse=False)
                + lax.square_p.bind(a)
                + lax.exp2_p.bind(a, accuracy=None)
                + top[0].sum()
                + parts[1].sum()
            )

        conj = lax.conj_p.bind(a := x + 1j * x, input_dtype=a.dtype)
        return (
            conj,
            lax.conj_p.bind(x, input_dtype=x.dtype),
            f(x),
            ox.jit(f)(x),
            ox.grad(lambda a: f(a).sum())(x),
            ox.vmap(f)(ox.jnp.stack([x, -x])),
            lax.top_k_p.bind(x, k=3, axis=0),
            lax.nextafter_p.bind(x, x + 1),
        )

    agree(program, np.array([0.5, -1.0, 2.0, 0.25], np.float32))


def _jaxpr_of(ox, f, *args):
    """(open program, consts) of `f`: make_jaxpr under JAX, make_olympuspr here."""
    closed = (ox.make_jaxpr if ox.name == "jax" else ox.make_olympuspr)(f)(*args)
    return closed.jaxpr, closed.consts


WINDOW = dict(
    window_dimensions=(2,),
    window_strides=(1,),
    padding=((0, 1),),
    base_dilation=(1,),
    window_dilation=(1,),
)


def test_jax_primitives_olympus_lacked_bind_as_jax():
    """copy_p, stage_p, tile_p, stack_p, unstack_p, scatter_sub_p, reduce_p,
    reduce_window_p, reduce_window_min_p, approx_top_k_p, device_put_p: bound
    with JAX's params, eagerly and under jit, grad and vmap."""

    def program(ox, x):
        lax = ox.lax
        jaxpr, consts = _jaxpr_of(ox, lax.max, x[0], x[0])
        numbers = lax.ScatterDimensionNumbers((), (0,), (0,))

        def f(a):
            (low,) = lax.reduce_window_p.bind(
                a, -ox.jnp.inf, jaxpr=jaxpr, consts=consts, **WINDOW
            )
            (total,) = lax.reduce_p.bind(
                a, 0.0, computation=lax.add, jaxpr=None, dimensions=(0,)
            )
            top, index = lax.approx_top_k_p.bind(
                a, k=2, reduction_dimension=0, recall_target=0.95, is_max_k=False,
                reduction_input_size_override=-1, aggregate_to_topk=True,
            )  # fmt: skip
            parts = lax.unstack_p.bind(lax.stack_p.bind(a, -a, axis=1), axis=1)
            (put,) = lax.device_put_p.bind(
                a, devices=(None,), srcs=(None,), copy_semantics=(None,)
            )
            sub = lax.scatter_sub_p.bind(
                a, ox.jnp.array([[1]]), a[:1], dimension_numbers=numbers,
                indices_are_sorted=True, unique_indices=True, mode=None,
                update_jaxpr=None, update_consts=(),
            )  # fmt: skip
            return (
                lax.reduce_window_min_p.bind(a, **WINDOW)
                + low
                + total
                + top.sum()
                + index.sum()
                + parts[1]
                + lax.copy_p.bind(put)
                + lax.stage_p.bind(a)
                + lax.tile_p.bind(a, reps=(2,))[2:]
                + sub
            )

        return (
            f(x),
            ox.jit(f)(x),
            ox.grad(lambda a: f(a).sum())(x),
            ox.vmap(f)(ox.jnp.stack([x, -x, x * 2])),
            lax.stage_p.bind(2.0),
        )

    agree(program, np.array([0.5, -1.0, 2.0, 0.25], np.float32))


def test_reduce_p_with_several_operands():
    def program(ox, x, i):
        def both(a, b):
            return a[0] + b[0], ox.lax.max(a[1], b[1])

        make = ox.make_jaxpr if ox.name == "jax" else ox.make_olympuspr
        flat = make(lambda a0, a1, b0, b1: both((a0, a1), (b0, b1)))(
            x[0], i[0], x[0], i[0]
        )
        return ox.lax.reduce_p.bind(
            x, i, 0.0, 0, computation=both, jaxpr=flat, dimensions=(0,)
        )

    agree(program, np.float32([1, 2, 3]), np.int32([4, -1, 7]))


@pytest.mark.parametrize(
    "dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]
)
def test_mulhi_is_the_high_half_of_the_product(dtype):
    info = np.iinfo(dtype)
    small = [-3, -1] if info.min < 0 else [2, 3]
    x = np.array(
        [info.min, info.min + 1, *small, 0, 1, 7, info.max // 2 + 1, info.max], dtype
    )
    a, b = np.meshgrid(x, x)

    def program(ox, a, b):
        return (
            ox.lax.mulhi_p.bind(a, b),
            ox.jit(ox.vmap(ox.lax.mulhi))(a, b),
            ox.lax.mulhi(a, np.array(3, a.dtype)),
        )

    agree(program, a, b)


def test_mulhi_refuses_mixed_or_float_operands():
    agree(lambda ox: ox.lax.mulhi(np.int8([1]), np.int16([1])))
    agree(lambda ox: ox.lax.mulhi(np.float32([1]), np.float32([1])))
    with pytest.raises(TypeError, match="convert_element_type"):
        olympus.lax.mulhi(np.float32([1]), np.float32([1]))


def test_total_order_comparisons():
    """eq_to_p, le_to_p, lt_to_p: XLA's total order (-NaN < -inf < -0 < +0 <
    inf < NaN), the comparisons of lax.sort's comparator."""
    edges = np.float32([-np.nan, -np.inf, -1, -0.0, 0.0, 1, np.inf, np.nan])
    a, b = np.meshgrid(edges, edges)

    def program(ox, a, b):
        lax = ox.lax
        return (
            lax.eq_to_p.bind(a, b),
            lax.le_to_p.bind(a, b),
            lax.lt_to_p.bind(a, b),
            ox.jit(lambda p, q: lax.lt_to_p.bind(p, q))(a, b),
        )

    agree(program, a, b)
    i, j = np.meshgrid(np.arange(-2, 3), np.arange(-2, 3))
    agree(lambda ox: (ox.lax.lt_to_p.bind(i, j), ox.lax.eq_to_p.bind(i, j)))
    agree(lambda ox: ox.lax.eq_to_p.bind(a + 1j * b, b + 1j * a))


def test_stack_unstack_and_stage_as_jax():
    def program(ox, x):
        lax = ox.lax
        return (
            lax.stack([x, x + 1], axis=-1),
            lax.unstack(x, axis=1),
            lax.unstack(x, axis=-2),
            lax.stage(x),
            lax.stage(3),
            ox.jit(lambda y: lax.stack(lax.unstack(y)))(x),
        )

    agree(program, np.arange(6, dtype=np.float32).reshape(2, 3))
    agree(lambda ox: ox.lax.unstack(np.ones(3), axis=1))


def test_program_walking_names():
    """What distrax's inverting interpreter reads: ClosedJaxpr.literals,
    Primitive.call_primitive, extend.core.primitives, api_util.safe_map."""

    def program(ox, x):
        core = mod(ox, "extend.core")
        jax_side = ox.name == "jax"
        safe_map = mod(ox, "api_util" if jax_side else "extend.linear_util").safe_map
        make = ox.make_jaxpr if jax_side else ox.make_olympuspr
        closed = make(lambda a: ox.jnp.exp(a) * x)(1.0)
        eqn = closed.jaxpr.eqns[0]
        flags = eqn.primitive.call_primitive, hasattr(eqn.primitive, "map_primitive")
        named = core.primitives.exp_p is ox.lax.exp_p, core.primitives.jit_p.name[-3:]
        return closed.literals, flags, named, safe_map(lambda a, b: a + b, x, x)

    agree(program, np.array([0.5, 2.0], np.float32))
    with pytest.raises(ValueError, match="argument 2 is longer"):
        mod(OLYMPUS, "extend.linear_util").safe_map(max, [1], [1, 2])


def test_registered_proxy_type_is_an_array():
    """tfp's JAX substrate registers NumpyVariable (a wrapt.ObjectProxy around
    an array) in interpreters.xla's tables; its values act as the array."""
    wrapt = pytest.importorskip("wrapt")
    from olympus.interpreters import xla

    class Variable(wrapt.ObjectProxy):
        pass

    from olympus.extend import core

    for tables, avals in ((xla, core), (jax.interpreters.xla, jax.core)):
        handler = tables.canonicalize_dtype_handlers[np.ndarray]  # as tfp does
        tables.canonicalize_dtype_handlers[Variable] = handler
        avals.pytype_aval_mappings[Variable] = avals.pytype_aval_mappings[np.ndarray]
    assert (
        xla.canonicalize_dtype_handlers[Variable]
        is (xla.canonicalize_dtype_handlers[np.ndarray])
    )

    def program(ox, x):
        v = Variable(ox.jnp.asarray(x))
        f = lambda a: ox.jnp.sum(ox.jnp.sin(a) * 2)  # noqa: E731
        return v + 1, ox.jit(f)(v), ox.grad(f)(v), ox.vmap(ox.jnp.cos)(v)

    agree(program, np.array([0.5, -1.0, 2.0], np.float32))


@pytest.mark.parametrize(
    "shapes", [((2, 1), (3,)), ((), (4, 1, 5)), ((1,), (1,)), ((2, 3), (4,)), ()]
)
def test_broadcast_shapes(shapes):
    agree(lambda ox: ox.lax.broadcast_shapes(*shapes))


def test_pswapaxes_in_shard_map():
    x = np.arange(6.0, dtype=np.float32).reshape(1, 6)
    mesh = olympus.make_mesh((1,), ("d",), axis_types=(olympus.sharding.AxisType.Auto,))
    spec = olympus.sharding.PartitionSpec("d")
    out = olympus.shard_map(
        lambda v: olympus.lax.pswapaxes(v, "d", 0),
        mesh=mesh,
        in_specs=spec,
        out_specs=spec,
    )(x)
    np.testing.assert_array_equal(out, x)
    grouped = olympus.shard_map(  # groups: tests/test_collective_groups.py
        lambda v: olympus.lax.pswapaxes(v, "d", 0, axis_index_groups=[[0]]),
        mesh=mesh,
        in_specs=spec,
        out_specs=spec,
    )(x)
    np.testing.assert_array_equal(grouped, x)


# ---- keyword arguments of the core transforms -------------------------------
X3 = np.array([0.5, -1.0, 2.0], np.float32)


def test_cond_operand_keyword_and_fori_loop_unroll():
    def program(ox, x):
        lax = ox.lax
        eager = lax.cond(True, lambda v: v + 1, lambda v: v - 1, operand=x)
        jitted = ox.jit(
            lambda p, v: lax.cond(p, lambda a: a * 2, lambda a: -a, operand=v)
        )(False, x)
        loop = lax.fori_loop(0, 4, lambda i, v: v * 2 + i, x, unroll=2)
        jit_loop = ox.jit(
            lambda v: lax.fori_loop(0, 5, lambda i, c: c + i, v, unroll=True)
        )(x)
        return eager, jitted, loop, jit_loop

    agree(program, X3)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox, x: ox.jit(
            lambda n: ox.lax.fori_loop(0, n, lambda i, v: v, x, unroll=2)
        )(3),
        lambda ox, x: ox.lax.cond(True, lambda v: v, lambda v: v, x, operand=x),
        lambda ox, x: ox.grad(ox.jnp.sum, reduce_axes=("i",))(x),
        lambda ox, x: ox.jacrev(lambda v: v, holomorphic=True)(x),
    ],
)
def test_bad_keyword_uses_raise_in_both(program):
    agree(program, X3)


def test_jacobian_and_linearize_keywords():
    def program(ox, x, z):
        sq = lambda v: v**2
        primal, f_jvp, aux = ox.linearize(
            lambda v: (ox.jnp.sin(v), v * 3), x, has_aux=True
        )
        return (
            ox.jacfwd(sq, holomorphic=True)(z),
            ox.jacrev(sq, holomorphic=True)(z),
            ox.hessian(lambda v: ox.jnp.sum(v**3), holomorphic=True)(z),
            ox.jacrev(lambda v: v * 2.0, allow_int=True)(np.float32(1.0)),
            ox.grad(ox.jnp.sum, reduce_axes=())(x),
            ox.vjp(ox.jnp.sin, x, reduce_axes=())[0],
            (primal, f_jvp(x), aux),
        )

    agree(program, X3, (X3 + 1j).astype(np.complex64))


def test_vmap_sum_match_and_spmd_axis_name():
    def program(ox, x):
        summed = ox.vmap(lambda v: v * 2, out_axes=None, sum_match=True)(x)
        named = ox.vmap(lambda v: v * 2, spmd_axis_name="d")(x)
        return summed, named

    agree(program, X3)


def test_checkpoint_static_argnames_and_custom_vjp_nondiff_argnames():
    def program(ox, x):
        f = ox.checkpoint(lambda v, n: v**n, static_argnames="n")
        h = ox.custom_vjp(lambda v, k: v * k, nondiff_argnames=("k",))
        h.defvjp(lambda v, k: (v * k, None), lambda k, res, g: (g * k * 10,))
        g = ox.custom_jvp(lambda v, k: v * k, nondiff_argnames=("k",))
        g.defjvp(lambda k, p, t: (p[0] * k, t[0] * k * 10))
        return (
            ox.grad(lambda v: ox.jnp.sum(f(v, n=3)))(x),
            ox.grad(lambda v: ox.jnp.sum(f(v, 2)))(x),
            ox.grad(lambda v: ox.jnp.sum(h(v, 2.0)))(x),
            ox.jvp(lambda v: g(v, 3.0), (x,), (x,)),
        )

    agree(program, X3)


def test_jit_keywords():
    def program(ox, x):
        dev = ox.devices()[0]
        f = ox.jit(lambda v: v * 2, keep_unused=True, inline=True, device=dev)
        g = ox.jit(keep_unused=True)(lambda v, unused: v + 1)
        h = ox.jit(lambda v: v - 1, backend="cpu")
        return f(x), g(x, x), h(x)

    agree(program, X3)
    agree(lambda ox: ox.jit(lambda v: v, device=ox.devices()[0], backend="cpu"))
    with pytest.raises(olympus.api.JitPlacementError, match="XLA_FLAGS"):
        olympus.jit(lambda v: v, compiler_options={"xla_cpu_enable_fast_math": True})


def test_shape_dtype_struct_like_update_sharding():
    def program(ox, x):
        s = ox.ShapeDtypeStruct.like(x)
        t = s.update(shape=(4, 2))
        u = ox.ShapeDtypeStruct((3,), np.float32, sharding=None)
        out = ox.eval_shape(lambda v: v * 2, u)
        return s.shape, str(s.dtype), s.ndim, s.size, t.shape, u.sharding, out.shape

    agree(program, np.ones((2, 3), np.float32))


# ---- __jax_array__ ----------------------------------------------------------
class _Wrapped:
    """An object written for JAX: it converts itself through __jax_array__."""

    def __init__(self, ns, value):
        self.ns, self.value = ns, value

    def __jax_array__(self):
        return self.ns.jnp.asarray(self.value)


def test_jax_array_protocol_in_array_and_asarray():
    def program(ox, x):
        w = _Wrapped(ox, x)
        return (
            ox.jnp.asarray(w),
            ox.jnp.array(w, dtype=ox.jnp.float16),
            ox.jit(lambda v: ox.jnp.asarray(_Wrapped(ox, v)) * 2)(x),
        )

    agree(program, X3)


def test_jax_array_protocol_in_jnp_functions_too():
    # JAX 0.10.2 refuses __jax_array__ outside array/asarray; olympus's jnp
    # functions convert their operands with asarray, so they take it (the
    # behaviour of older JAX; docs/differences.md)
    out = jnp.sin(_Wrapped(types.SimpleNamespace(jnp=jnp), X3))
    np.testing.assert_allclose(out, np.sin(X3), rtol=1e-6)


@pytest.mark.parametrize("use", ["lax_add", "jit_arg"])
def test_jax_array_protocol_elsewhere_raises_in_both(use):
    def program(ox, x):
        w = _Wrapped(ox, x)
        if use == "lax_add":
            return ox.lax.add(w, w)
        return ox.jit(lambda v: v * 2)(w)

    agree(program, X3)


# ---- custom_batching --------------------------------------------------------
def _custom_vmap_program(ox, x, y, calls):
    cb = mod(ox, "custom_batching")

    @cb.custom_vmap
    def f(a, b):
        return a + b

    @f.def_vmap
    def rule(axis_size, in_batched, a, b):
        calls.append((ox.name, axis_size, list(in_batched)))
        return a * 100 + b, any(in_batched)

    return (
        f(x[0], y[0]),
        ox.vmap(f)(x, y),
        ox.vmap(f, in_axes=(0, None))(x, y[0]),
        ox.jit(ox.vmap(f))(x, y),
        ox.vmap(ox.vmap(f))(x[None], y[None]),
        ox.jit(f)(x, y),
    )


def test_custom_vmap_rule_runs_under_vmap():
    calls: list = []
    agree(_custom_vmap_program, X3, X3 + 1, calls=calls)
    ours = [c[1:] for c in calls if c[0] == "olympus"]
    theirs = [c[1:] for c in calls if c[0] == "jax"]
    assert ours == theirs and len(ours) == 4


def test_custom_vmap_without_rule_and_sequential_vmap():
    def program(ox, x):
        cb = mod(ox, "custom_batching")
        g = cb.sequential_vmap(lambda a, s: ox.jnp.sum(a) * s)
        return ox.vmap(g, in_axes=(0, None))(x.reshape(3, 1) * x, 2.0)

    agree(program, X3)
    agree(lambda ox, x: mod(ox, "custom_batching").custom_vmap(lambda a: a)(x), X3)
    bare = olympus.custom_batching.custom_vmap(lambda a: a * 2)
    with pytest.raises(olympus.custom_batching.CustomVmapRuleError, match="def_vmap"):
        olympus.vmap(bare)(X3)


# ---- scipy ------------------------------------------------------------------
def sp(ox, name: str):
    return mod(ox, f"scipy.{name}")


EI_POINTS = np.array(
    [
        -30,
        -5,
        -1.5,
        -1,
        -0.5,
        -1e-3,
        0,
        1e-3,
        0.5,
        1,
        3,
        10,
        19.9,
        20.1,
        40,
        80,
        100,
        np.nan,
    ],
    np.float32,
)


def test_expi_values_and_gradient():
    agree(lambda ox, x: ox.jit(sp(ox, "special").expi)(x), EI_POINTS, rtol=3e-6)
    agree(lambda ox, x: sp(ox, "special").expi(x), EI_POINTS[:4], rtol=3e-6)
    agree(lambda ox: ox.grad(sp(ox, "special").expi)(2.0))
    with x64():  # jit: one compile instead of eager loops
        agree(
            lambda ox, x: ox.jit(sp(ox, "special").expi)(x),
            EI_POINTS.astype(np.float64),
            rtol=1e-12,
        )


def test_multigammaln():
    a = np.array([[2.5, 3.0], [4.0, 10.5]], np.float32)
    agree(lambda ox, a: sp(ox, "special").multigammaln(a, 3), a)
    agree(
        lambda ox, a: ox.grad(lambda v: sp(ox, "special").multigammaln(v, 2))(a[0, 0]),
        a,
    )
    agree(lambda ox: sp(ox, "special").multigammaln(3.5, 1))


@pytest.mark.parametrize(
    "norm, n, axis", [(None, None, -1), ("ortho", 4, 0), (None, 7, 0), ("ortho", 7, -1)]
)
def test_dct_idct(norm, n, axis):
    x = np.random.RandomState(0).randn(3, 5).astype(np.float32)

    def program(ox, x):
        f = sp(ox, "fft")
        return (
            f.dct(x, n=n, axis=axis, norm=norm),
            f.idct(x, n=n, axis=axis, norm=norm),
            f.idct(f.dct(x, norm=norm), norm=norm),
        )

    agree(program, x, atol=2e-6)


def test_dct_complex_int_and_errors():
    agree(lambda ox, x: sp(ox, "fft").dct(x), np.arange(4))
    agree(
        lambda ox, x: sp(ox, "fft").dct(x * (1 + 2j)),
        np.arange(4.0, dtype=np.float32),
        atol=3e-6,
    )
    agree(lambda ox, x: sp(ox, "fft").dct(x, type=3), np.arange(4.0))
    agree(lambda ox, x: sp(ox, "fft").idct(x, norm="forward"), np.arange(4.0))


@pytest.mark.parametrize(
    "c, r",
    [
        (np.array([1, 2, 3]), None),
        (np.array([1, 2, 3]), np.array([-1, -2])),
        (np.array([1, 2 + 1j, 1 + 2j], np.complex64), None),
        (np.arange(6).reshape(2, 3), np.arange(4.0, dtype=np.float32)),
        (5.0, None),
    ],
)
def test_toeplitz(c, r):
    agree(lambda ox, c, r: sp(ox, "linalg").toeplitz(c, r), c, r)


# ---- numpy_dtype_promotion --------------------------------------------------
PROMOTION_CASES = [
    (np.int32(1), 2),
    (np.float32(1), 2),
    (np.float32(1), 2.0),
    (np.float16(1), 2.0),
    (np.uint8(1), 2),
    (np.complex64(1), 2.0),
    (np.bool_(True), 2),
    (np.int32(1), 1j),
    (np.float32(1), 1j),
    (np.int32(1), np.float32(1)),
    (np.float16(1), np.float32(1)),
    (np.int32(1), True),
    (2, 2.0),
]


@pytest.mark.parametrize("mode", ["standard", "strict"])
@pytest.mark.parametrize("a, b", PROMOTION_CASES)
def test_numpy_dtype_promotion(mode, a, b):
    def program(ox, a, b):
        a = ox.jnp.asarray(a) if isinstance(a, np.generic) else a
        b = ox.jnp.asarray(b) if isinstance(b, np.generic) else b
        with ox.numpy_dtype_promotion(mode):
            return ox.jnp.add(a, b), ox.jit(lambda x, y: x * y)(a, b)

    agree(program, a, b)


def test_numpy_dtype_promotion_bad_mode_and_promote_types():
    agree(lambda ox: ox.numpy_dtype_promotion("loose").__enter__())

    def program(ox):
        with ox.numpy_dtype_promotion("strict"):
            return ox.jnp.promote_types(np.int32, np.float32)

    agree(program)


# ---- ad_checkpoint.print_saved_residuals, debug.breakpoint ------------------
def _residual_kinds(ox, f, *args):
    """What print_saved_residuals says, without source lines (JAX adds columns)."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        mod(ox, "ad_checkpoint").print_saved_residuals(f, *args)
    return sorted(
        line.split(" from <")[0].split(" from /")[0]
        for line in out.getvalue().splitlines()
    )


def test_print_saved_residuals():
    def program(ox, x, y):
        def f(a, b):
            return ox.jnp.sum(ox.jnp.sin(a) * b)

        return _residual_kinds(ox, f, x, y), _residual_kinds(ox, ox.checkpoint(f), x, y)

    agree(program, X3, X3)


def test_debug_breakpoint_stops_eagerly_and_in_jit(monkeypatch, capsys):
    import io

    def f(x):
        y = jnp.sin(x)
        olympus.debug.breakpoint()
        return y * 2

    monkeypatch.setattr("sys.stdin", io.StringIO("p y\nc\n"))
    olympus.jit(f)(np.arange(3.0, dtype=np.float32))
    monkeypatch.setattr("sys.stdin", io.StringIO("p x\nc\n"))
    f(jnp.arange(2.0))
    shown = capsys.readouterr().out
    assert "0.84147096" in shown and "olympus.debug.breakpoint at" in shown
    assert "Array([0., 1.], dtype=float32)" in shown


# ---- experimental.checkify --------------------------------------------------
def _checked(ox, x, i, errors="user_checks", wrap=lambda g: g):
    ck = mod(ox, "experimental.checkify")

    def f(v, k):
        ck.check(v[0] > 0, "v[0] must be positive, got {}", v[0])
        return ox.jnp.log(v) / k

    x, i = ox.jnp.asarray(x), ox.jnp.asarray(i)  # JAX's checkify leaves NumPy untraced
    err, out = wrap(ck.checkify(f, errors=getattr(ck, errors)))(x, i)
    return err.get(), out


@pytest.mark.parametrize(
    "x, i, errors",
    [
        (np.array([-1.0, 2.0], np.float32), 1, "user_checks"),
        (np.array([1.0, 2.0], np.float32), 1, "user_checks"),
        (np.array([1.0, 2.0], np.float32), 0, "all_checks"),
        (np.array([1.0, -2.0], np.float32), 1, "float_checks"),
        (np.array([1.0, -2.0], np.float32), 1, "nan_checks"),
        (np.array([-1.0, -2.0], np.float32), 0, "div_checks"),
    ],
)
def test_checkify_eager_and_jit(x, i, errors):
    agree(_checked, x, np.int32(i), errors=errors)
    agree(lambda ox, x, i: _checked(ox, x, i, errors, wrap=ox.jit), x, np.int32(i))


def test_checkify_under_jit_and_vmap():
    xs = np.array([[1.0, 2.0], [-3.0, 1.0], [-4.0, 1.0]], np.float32)
    agree(lambda ox, x: _checked(ox, x, np.int32(1), wrap=ox.jit), xs[1])
    agree(lambda ox, x: _checked(ox, x, np.ones(3, np.int32), wrap=ox.vmap), xs)
    agree(
        lambda ox, x: _checked(
            ox, x, np.ones(3, np.int32), wrap=lambda g: ox.jit(ox.vmap(g))
        ),
        xs,
    )


def test_checkify_index_and_integer_division():
    def program(ox, i, d):
        ck = mod(ox, "experimental.checkify")
        i, d = ox.jnp.asarray(i), ox.jnp.asarray(d)
        e1, _ = ck.checkify(lambda k: ox.jnp.arange(3)[k], errors=ck.index_checks)(i)
        e2, _ = ck.checkify(lambda a, b: a // b, errors=ck.div_checks)(i, d)
        return e1.get(), e2.get()

    agree(program, np.int32(5), np.int32(0))
    agree(program, np.int32(1), np.int32(2))


def test_checkify_throw_and_unfunctionalized_check():
    from olympus.experimental import checkify as ck

    def program(ox, x):
        c = mod(ox, "experimental.checkify")
        err, _ = c.checkify(lambda v: c.check(v > 0, "bad {}", v))(ox.jnp.asarray(x))
        try:
            err.throw()
        except c.JaxRuntimeError as e:
            return str(e)

    agree(program, np.float32(-2.0))
    agree(
        lambda ox, x: mod(ox, "experimental.checkify").check(x > 0, "eager"),
        np.float32(-1),
    )
    agree(
        lambda ox, x: ox.jit(
            lambda v: mod(ox, "experimental.checkify").check(v > 0, "m")
        )(x),
        np.float32(1),
    )
    with pytest.raises(ck.CheckNotFunctionalizedError, match="checkify"):
        olympus.jit(lambda v: ck.check(v > 0, "m"))(np.float32(1))
    assert ck.all_checks == ck.user_checks | ck.automatic_checks


# checks inside control flow: branch outputs and loop carries, as JAX's checkify
def _control_flow_checks(ox, name, *args, errors="user_checks", wrap="eager"):
    ck, lax, np_ = mod(ox, "experimental.checkify"), ox.lax, ox.jnp

    def in_cond(x):
        def big(v):
            ck.check(v < 5, "too big {}", v)
            return v + 1

        def small(v):
            ck.check(v > -5, "too small {}", v)
            return v - 1

        return lax.cond(x > 0, big, small, x)

    def in_switch(i, x):
        def one(v):
            ck.check(v < 0, "branch 1 got {}", v)
            return v * 2

        return lax.switch(i, [lambda v: v, one, lambda v: v + 3], x)

    def in_scan(x):
        def body(c, a):
            ck.check(a < 2, "step {} carry {}", a, c)
            return c * 2, c + a

        return lax.scan(body, x, np_.arange(5.0))

    def in_fori(n, x):
        def body(i, c):
            ck.check(i < 2, "i={} c={}", i, c)
            return c + 1.0

        return lax.fori_loop(0, 5, body, x), lax.fori_loop(0, n, body, x)

    def in_while(x):
        def cond(c):
            ck.check(c < 4, "cond c={}", c)
            return c < 6

        def body(c):
            ck.check(c < 3, "body c={}", c)
            return c + 1

        return lax.while_loop(cond, body, x)

    def cond_in_scan(x):
        def body(c, a):
            def fails(v):
                ck.check(v < 0, "inner {} {}", v, a)
                return v

            return lax.cond(a > 2, fails, lambda v: v + 1, c), a

        return lax.scan(body, x, np_.arange(5.0))

    def first_in_time(x):  # the later check fails first: JAX reports it
        def body(c, a):
            ck.check(a < 3, "early {}", a)
            ck.check(a < 1, "late {}", a)
            return c + 1, c

        return lax.scan(body, x, np_.arange(5.0))

    def automatic(x, i, d):
        def body(c, a):
            y = np_.log(a - 2.5) + np_.arange(3.0)[i + a.astype(np_.int32)]
            return c + y + (a.astype(np_.int32) // d), c

        return lax.scan(body, x, np_.arange(5.0))

    f = locals()[name]
    g = ck.checkify(f, errors=getattr(ck, errors))
    g = {
        "eager": g,
        "jit": ox.jit(g),
        "vmap": ox.vmap(g),
        "jit_vmap": ox.jit(ox.vmap(g)),
    }[wrap]
    err, out = g(*map(np_.asarray, args))
    try:
        err.throw()
        thrown = None
    except ck.JaxRuntimeError as e:
        thrown = str(e)
    return err.get(), thrown, out


@pytest.mark.parametrize("wrap", ["eager", "jit"])
@pytest.mark.parametrize(
    "name, args",
    [
        ("in_cond", (3.0,)),
        ("in_cond", (7.0,)),
        ("in_cond", (-7.0,)),
        ("in_switch", (1, 1.0)),
        ("in_switch", (1, -1.0)),
        ("in_switch", (0, 1.0)),
        ("in_scan", (1.0,)),
        ("in_fori", (5, 0.0)),
        ("in_fori", (1, 0.0)),
        ("in_while", (0.0,)),
        ("in_while", (5.0,)),
        ("cond_in_scan", (1.0,)),
        ("cond_in_scan", (-1.0,)),
        ("first_in_time", (0.0,)),
    ],
)
def test_checkify_inside_cond_and_loops(name, args, wrap):
    agree(
        _control_flow_checks,
        name,
        *(np.float32(a) if isinstance(a, float) else np.int32(a) for a in args),
        wrap=wrap,
    )


@pytest.mark.parametrize(
    "i, d, errors",
    [
        (0, 1, "all_checks"),
        (0, 1, "div_checks"),
        (0, 0, "div_checks"),
        (1, 1, "index_checks"),
        (-1, 1, "index_checks"),
        (0, 1, "user_checks"),
    ],
)
def test_checkify_automatic_checks_inside_a_loop(i, d, errors):
    args = (np.float32(0), np.int32(i), np.int32(d))
    agree(_control_flow_checks, "automatic", *args, errors=errors)
    agree(_control_flow_checks, "automatic", *args, errors=errors, wrap="jit")


def test_checkify_inside_cond_and_loops_under_vmap():
    xs = np.array([1.0, 7.0, -1.0, -7.0, 3.0], np.float32)
    for wrap in ("vmap", "jit_vmap"):
        agree(_control_flow_checks, "in_cond", xs, wrap=wrap)
        agree(
            _control_flow_checks,
            "in_scan",
            np.array([0.5, -1.0], np.float32),
            wrap=wrap,
        )
        agree(_control_flow_checks, "cond_in_scan", xs, wrap=wrap)
    agree(
        _control_flow_checks,
        "in_switch",
        np.int32([1, 1, 0]),
        np.float32([1, -1, 1]),
        wrap="vmap",
    )


def test_checkify_inside_while_under_vmap():
    # JAX 0.10.2 fails on this (differences.md); the per-example errors are
    # what checkify of each example alone reports
    from olympus.experimental import checkify as ck

    def f(x):
        def body(c):
            ck.check(c < 3, "c={}", c)
            return c + 1

        return olympus.lax.while_loop(lambda c: c < 5, body, x)

    xs = np.array([0.0, 4.0, 2.5, 6.0], np.float32)
    for g in (olympus.vmap(ck.checkify(f)), olympus.jit(olympus.vmap(ck.checkify(f)))):
        err, out = g(xs)
        alone = [ck.checkify(f)(jnp.asarray(x))[0].get() for x in xs]
        assert err.get() == "\n".join(
            f"at mapped index {i}: {m}" for i, m in enumerate(alone) if m
        )
        assert alone[:3] == [
            "c=3.0 (`check` failed)",
            "c=4.0 (`check` failed)",
            "c=3.5 (`check` failed)",
        ]
        np.testing.assert_array_equal(out, [5.0, 5.0, 5.5, 6.0])


def _minimized(ox, c, wrap=lambda g: g):
    def loss(x, c):
        return ox.jnp.sum((x - c) ** 2) + x[0] * x[1] + 0.5 * (x[2] + 1) ** 2

    def solve(c):
        res = sp(ox, "optimize").minimize(loss, ox.jnp.zeros(3), (c,), method="BFGS")
        return res.x, res.success, res.status, res.fun, type(res).__name__

    return wrap(solve)(c)


def test_minimize_bfgs():
    # JAX's float32 BFGS often stops on a failed line search; compare in float64
    with x64():
        agree(
            lambda ox, c: _minimized(ox, c, ox.jit),
            np.float64(2.0),
            atol=1e-6,
            rtol=1e-6,
        )
    agree(
        lambda ox: sp(ox, "optimize").minimize(
            lambda x: x @ x, np.ones(2), method="nelder-mead"
        )
    )
    agree(
        lambda ox: sp(ox, "optimize").minimize(
            lambda x, a: x @ x, np.ones(2), 1.0, method="BFGS"
        )
    )
    assert (
        olympus.scipy.optimize.OptimizeResults._fields
        == jax.scipy.optimize.OptimizeResults._fields
    )


def test_minimize_bfgs_vmap_and_iteration_limit():
    cs = np.array([1.0, 2.0], np.float32)
    x, success = olympus.vmap(lambda c: _minimized(OLYMPUS, c)[:2])(cs)
    expected = np.stack([2 * cs / 3, 2 * cs / 3, (2 * cs - 1) / 3], axis=1)
    np.testing.assert_allclose(x, expected, atol=1e-4)
    assert np.asarray(success).all()
    res = olympus.scipy.optimize.minimize(
        lambda x: jnp.sum((x - 3.0) ** 2) + x[0] ** 4,
        jnp.zeros(2),
        method="BFGS",
        options={"maxiter": 1},
    )
    assert int(res.status) == 1 and not bool(res.success) and int(res.nit) == 1


KDE_DATA = np.random.RandomState(0).randn(2, 20).astype(np.float32)
KDE_POINTS = np.random.RandomState(2).randn(2, 5).astype(np.float32)
KDE_WEIGHTS = np.random.RandomState(1).rand(20).astype(np.float32)


@pytest.mark.parametrize(
    "bw, weights", [(None, None), ("silverman", KDE_WEIGHTS), (0.5, None)]
)
def test_gaussian_kde(bw, weights):
    def program(ox, data, pts):
        kde = sp(ox, "stats").gaussian_kde(data, bw, weights)
        one_d = sp(ox, "stats").gaussian_kde(data[0], bw, weights)
        return (
            kde.pdf(pts),
            kde.logpdf(pts),
            kde(pts),
            kde.neff,
            kde.covariance,
            (kde.d, kde.n),
            one_d.evaluate(pts[0]),
        )

    agree(program, KDE_DATA, KDE_POINTS, atol=2e-6, rtol=1e-5)


def test_gaussian_kde_resample_and_errors():
    agree(lambda ox, d: sp(ox, "stats").gaussian_kde(d, "bad"), KDE_DATA)
    agree(
        lambda ox, d, p: ox.jit(lambda k, q: k.logpdf(q))(
            sp(ox, "stats").gaussian_kde(d), p
        ),
        KDE_DATA,
        KDE_POINTS,
        atol=2e-6,
        rtol=1e-5,
    )
    agree(lambda ox, d: sp(ox, "stats").gaussian_kde(d[:, :1]).pdf(d), KDE_DATA[:1])
    agree(
        lambda ox, d, p: sp(ox, "stats").gaussian_kde(d).pdf(p[:1]),
        KDE_DATA,
        KDE_POINTS,
    )
    kde = olympus.scipy.stats.gaussian_kde(KDE_DATA)
    draws = kde.resample(olympus.random.key(0), (500,))
    assert draws.shape == (2, 500) and draws.dtype == np.float32
    np.testing.assert_allclose(np.mean(draws, axis=1), KDE_DATA.mean(axis=1), atol=0.2)


def test_device_put_and_local_devices_keywords():
    def program(ox, x):
        dev = ox.devices()[0]
        put = ox.device_put(x, dev, src=dev, donate=False, may_alias=True)
        return put * 1, [d.id for d in ox.local_devices(host_id=0)]

    agree(program, X3)


def test_default_matmul_precision_takes_new_val():
    def program(ox, x):
        with ox.default_matmul_precision(new_val="float32"):
            return ox.jit(ox.jnp.dot)(x, x)

    agree(program, X3)


# ---- experimental.sparse.BCOO (numpyro's CAR distribution) -------------------
DENSE = np.array([[1.0, 0.0, 3.0], [0.0, 0.0, 0.0], [0.0, -2.0, 0.5]], np.float32)


def _sparse(ox):
    return mod(ox, "experimental.sparse")


def test_bcoo_fromdense_todense_and_products():
    def program(ox, a, v, b):
        bcoo = _sparse(ox).BCOO
        m = bcoo.fromdense(a)
        padded = bcoo.fromdense(a, nse=6)
        flat, _ = ox.tree_util.tree_flatten(padded)
        return (
            m.data, m.indices, m.shape, m.nse, m.dtype, m.ndim, padded.todense(),
            flat, (m.indices_sorted, m.unique_indices), m.T.todense(),
            m @ v, m @ b, m @ b[None], ox.jnp.asarray(b).T @ m,
            ox.jnp.asarray(v) @ m, padded @ v,
            bcoo.fromdense(a.astype(np.int32)) @ v,
        )  # fmt: skip

    agree(program, DENSE, np.array([1.0, 2.0, -1.0], np.float32), DENSE[:, :2] + 1)


def test_bcoo_through_jit_grad_vmap():
    def program(ox, a, v):
        bcoo = _sparse(ox).BCOO
        m = bcoo.fromdense(a)
        matvec = ox.jit(lambda m, v: m @ v)
        loss = lambda d: ox.jnp.sum(  # noqa: E731
            bcoo((d, m.indices), shape=m.shape) @ v
        )
        fromdense = ox.jit(lambda a: bcoo.fromdense(a, nse=4).todense())
        return (
            matvec(m, v),
            ox.grad(loss)(m.data),
            ox.vmap(lambda w: m @ w)(ox.jnp.stack([v, 2 * v])),
            fromdense(a),
        )

    agree(program, DENSE, np.array([1.0, 2.0, -1.0], np.float32))


def test_bcoo_from_scipy_and_errors():
    sparse = pytest.importorskip("scipy.sparse")
    csr = sparse.csr_matrix(DENSE)

    def program(ox):
        m = _sparse(ox).BCOO.from_scipy_sparse(csr)
        return m.data, m.indices, m.todense(), m @ np.ones(3, np.float32)

    agree(program)
    from olympus.experimental import sparse as ours

    with pytest.raises(ours.SparseNseError, match="nse="):
        olympus.jit(lambda a: ours.BCOO.fromdense(a).data)(DENSE)
    with pytest.raises(ours.SparseLayoutError, match="n_batch"):
        ours.BCOO.fromdense(DENSE, n_batch=1)
    with pytest.raises(ours.SparseShapeError, match="contracted"):
        ours.BCOO.fromdense(DENSE) @ np.ones(2, np.float32)
    with pytest.raises(ours.SparseShapeError, match="data must have shape"):
        ours.BCOO((np.ones(2), np.zeros((3, 2), np.int32)), shape=(3, 3))


# ---- what numpyro reads: np.all of an Array, OrderedDict trees, api_util ----
def test_all_any_take_out_none_and_where():
    def program(ox, x):
        jnp = ox.jnp
        mask = x > 0
        return (
            np.all(mask), np.any(x > 1), jnp.all(x, where=mask),
            jnp.any(mask, axis=0, keepdims=True, where=jnp.array([True, False])),
            jnp.all(x, out=None),
        )  # fmt: skip

    agree(program, np.array([[1.0, 0.0], [2.0, -1.0]], np.float32))
    with pytest.raises(ValueError, match="out="):
        jnp.all(jnp.ones(2), out=np.empty(()))


def test_ordered_and_default_dicts_are_pytrees():
    import collections

    def program(ox, x):
        tu = ox.tree_util
        ordered = collections.OrderedDict([("b", x), ("a", 2 * x)])
        default = collections.defaultdict(list, {"b": x, "a": 3 * x})
        out = ox.jit(lambda t: tu.tree_map(lambda v: v + 1, t))((ordered, default))
        paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(out)[0]]
        return tu.tree_leaves(out), paths, list(out[0]), out[1].default_factory

    agree(program, np.float32(1.5))


LEAF_TREE = olympus.tree_util.tree_structure((1.0,))


def test_flatten_fun_debug_info_and_call_primitives():
    def program(ox, x, y):
        jax_side = ox.name == "jax"
        api = mod(ox, "api_util" if jax_side else "extend.linear_util")
        lu = mod(ox, "extend.linear_util")
        prims = mod(ox, "extend.core").primitives

        def f(a, *, b):
            return {"sum": a + b, "prod": a * b}

        info = api.debug_info("test", f, (x,), {"b": y})
        leaves, in_tree = ox.tree_util.tree_flatten(((x,), {"b": y}))
        flat, out_tree = api.flatten_fun(lu.wrap_init(f, debug_info=info), in_tree)
        out = flat.call_wrapped(*leaves)
        call_flags = prims.call_p.call_primitive, prims.closed_call_p.call_primitive
        return info.traced_for, info.arg_names, out, str(out_tree()), call_flags

    agree(program, np.float32(0.5), np.float32(2.0))
    lu = mod(OLYMPUS, "extend.linear_util")
    call_p = mod(OLYMPUS, "extend.core").primitives.call_p
    # JAX's call primitives are keys for libraries (numpyro); bound directly
    # (JAX wants internal params) olympus's evaluate the function or program
    assert call_p.bind(lu.wrap_init(lambda a: [a + 1]), 2.0) == [3.0]
    closed = olympus.make_olympuspr(lambda a: jnp.sin(a) * 2)(0.5)
    closed_call_p = mod(OLYMPUS, "extend.core").primitives.closed_call_p
    np.testing.assert_allclose(
        closed_call_p.bind(np.float32(0.5), call_jaxpr=closed), [2 * np.sin(0.5)]
    )
    flat, out_tree = lu.flatten_fun_nokwargs(lu.wrap_init(lambda a: a), LEAF_TREE)
    with pytest.raises(lu.OutTreeNotReadyError, match="first"):
        out_tree()


# ---- what flax.nnx reads: key arrays are Arrays, typeof(key), out_sharding ----
def test_key_arrays_are_arrays_with_a_type():
    def program(ox, seed):
        keys = ox.random.split(ox.random.key(seed), 3)
        seen = []

        def f(k):
            seen.append(isinstance(k, ox.Array))
            return ox.random.key_data(k)

        ox.jit(f)(keys)
        ox.vmap(f)(keys)
        t = ox.typeof(keys)
        kinds = isinstance(keys, ox.Array), isinstance(keys, ox.jnp.ndarray)
        return kinds, seen, str(t), t.shape, t.ndim, repr(t)

    agree(program, 0)


def test_dot_general_takes_out_sharding():
    def program(ox, a, b):
        dims = (((1,), (0,)), ((), ()))
        f = lambda a, b: ox.lax.dot_general(a, b, dims, out_sharding=None)  # noqa: E731
        return f(a, b), ox.jit(f)(a, b)

    agree(program, DENSE, DENSE.T)


def test_like_functions_take_eval_shape_results():
    """optax's factored RMS: jnp.zeros_like(jax.eval_shape(f, x)), under jit."""

    def program(ox, x):
        def init(y):
            target = ox.eval_shape(lambda z: ox.jnp.sum(z, axis=0), y)
            return (
                ox.jnp.zeros_like(target),
                ox.jnp.ones_like(target, dtype=np.int8),
                ox.jnp.full_like(target, 2.5),
                ox.jnp.zeros_like(ox.ShapeDtypeStruct((2,), np.int32), shape=(3,)),
            )

        return init(x), ox.jit(init)(x)

    agree(program, np.ones((3, 4), np.float16))


# ---- lax's keyword arguments as JAX's (the signature sweep's allow-list) ------
def test_lax_takes_jax_keyword_names():
    """operand=/array=/m= as JAX names them, accuracy= (a hint), and the
    gather/scatter hints and scatter modes that keep olympus's semantics."""
    x = np.array([[1.5, -2.0, 0.25], [4.0, 0.5, -1.0]], np.float32)
    numbers = dict(
        update_window_dims=(), inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
    )  # fmt: skip

    def program(ox, x):
        lax = ox.lax
        flat = lax.reshape(operand=x, new_sizes=(6,))
        dn = lax.ScatterDimensionNumbers(**numbers)
        gather_dn = lax.GatherDimensionNumbers(
            offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)
        )
        at = np.array([[1], [7], [1]], np.int32)
        ones = ox.jnp.ones(3, np.float32)
        return (
            lax.reduce_sum(operand=x, axes=(0,)),
            lax.reduce_max(operand=x, axes=(1,)),
            lax.argmax(operand=x, axis=1, index_dtype=np.int32),
            lax.convert_element_type(operand=x, new_dtype=np.int32),
            lax.bitcast_convert_type(operand=x, new_dtype=np.int32),
            lax.transpose(operand=x, permutation=(1, 0)),
            lax.rev(operand=x, dimensions=(0,)),
            lax.slice(operand=x, start_indices=(0, 1), limit_indices=(2, 3)),
            lax.pad(operand=x, padding_value=0.0, padding_config=[(1, 0, 0)] * 2),
            lax.squeeze(array=x[:1], dimensions=(0,)),
            lax.expand_dims(array=x, dimensions=(0,)),
            lax.broadcast(operand=x[0], sizes=(2,)),
            lax.polygamma(m=ox.jnp.ones(3), x=ox.jnp.abs(x[0]) + 1),
            [f(x, accuracy=None) for f in (lax.exp, lax.sin, lax.tanh, lax.logistic)],
            lax.gather(
                flat,
                at,
                gather_dn,
                (1,),
                unique_indices=False,
                indices_are_sorted=False,
                mode="fill",
            ),  # fmt: skip
            [
                f(
                    flat,
                    at,
                    ones,
                    dn,
                    indices_are_sorted=True,
                    unique_indices=False,
                    mode=mode,
                )  # fmt: skip
                for f in (lax.scatter, lax.scatter_add, lax.scatter_mul)
                for mode in (None, "drop", "promise_in_bounds")
            ],
        )

    agree(program, x)
    dn = olympus.lax.ScatterDimensionNumbers(**numbers)
    with pytest.raises(ValueError, match="clamp the indices"):
        olympus.lax.scatter_add(
            np.zeros(3), np.array([[5]]), np.ones(1), dn, mode="clip"
        )


def test_numpy_takes_out_none_only():
    """NumPy's out= as JAX takes it: None works, an array raises."""
    x = np.array([[3.0, -1.0], [2.0, 5.0]], np.float32)

    def program(ox, x):
        jnp = ox.jnp
        return (
            jnp.argmax(x, 1, None, True),
            jnp.argmin(x, axis=0, out=None),
            jnp.cumsum(x, 0, None, None),
            jnp.cumprod(x, axis=1, out=None),
            jnp.outer(x[0], x[1], out=None),
            jnp.trace(x, out=None),
        )

    agree(program, x)
    for call in (
        lambda ox: ox.jnp.argmax(x, out=np.zeros(2, np.int32)),
        lambda ox: ox.jnp.cumsum(x, out=np.zeros_like(x)),
        lambda ox: ox.jnp.outer(x[0], x[1], out=np.zeros((2, 2), np.float32)),
        lambda ox: ox.jnp.trace(x, out=np.zeros((), np.float32)),
    ):
        agree(call)


def test_numpy_dtype_promotion_takes_new_val():
    def program(ox):
        with ox.numpy_dtype_promotion(new_val="strict"):
            return ox.jnp.ones(2, np.float32) + ox.jnp.ones(2, np.int32)

    agree(program)
    with olympus.numpy_dtype_promotion(new_val="standard"):
        assert (jnp.ones(2, np.float32) + jnp.ones(2, np.int32)).dtype == np.float32


def test_copies_have_their_own_buffer():
    """optax's schedule_free copies params (`t.copy()`) so that both params and
    state can be donated to one jitted step: a copy must be a new buffer."""

    def program(ox):
        a = ox.jnp.arange(3.0)
        step = ox.jit(lambda p, z: (p + 1, z * 2), donate_argnums=(0, 1))
        same = (
            a.copy() is a,
            ox.jnp.array(a) is a,
            ox.jnp.array(a, copy=False) is a,
            ox.jnp.asarray(a) is a,
            ox.jnp.asarray(a, copy=True) is a,
            ox.jnp.copy(a) is a,
        )
        b, c = ox.jnp.arange(3.0), ox.jnp.ones(2)
        traced = ox.jit(lambda p: p.copy() * 2)(c)  # optax inits under jit
        return (
            same,
            step(b, b.copy()),
            step(*[ox.jnp.array(c) for _ in range(2)]),
            traced,
            ox.grad(lambda p: (p.copy() ** 2).sum())(c),
        )

    agree(program)
    kept = jnp.float32(2.0) + 0
    copied = kept.copy()
    olympus.jit(lambda z: z * 2, donate_argnums=0)(copied)
    assert copied.is_deleted() and not kept.is_deleted()
    assert float(kept) == 2.0 and jnp.asarray(1.0).copy().weak_type


def test_array_methods_jax_has():
    """x.argsort() (optax's hungarian algorithm), sort, argpartition,
    searchsorted, nonzero, ptp, choose, compress and itemsize, eager and jit."""
    x = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], np.float32)

    def methods(a):
        return (
            a.argsort(),
            a.argsort(axis=0, descending=True),
            a.sort(axis=0),
            a.argpartition(1),
            a[0].sort().searchsorted(2.0, side="right"),
            a.nonzero(size=4),
            a.ptp(axis=1),
            (a > 1).astype(np.int32).choose([a, -a], mode="clip"),
            a.itemsize,
        )

    def program(ox, a):
        eager = ox.jnp.asarray(a)
        keep = np.array([True, False, True])
        traced = ox.jit(lambda b: (b.argsort(), b.sort(axis=0), b.nonzero(size=4)))
        return methods(eager), traced(a), eager.compress(keep, axis=1)

    agree(program, x)


def test_vmap_of_indexing_over_an_empty_batch():
    """optax's hungarian algorithm vmapped over 0 problems: gather and scatter
    batched over an axis of size 0."""

    def program(ox, x, i):
        def pick(a, k):
            return a[k, k] + a[k].sum() + a.at[k].add(1.0).sum()

        return (
            ox.vmap(pick)(x, i),
            ox.jit(ox.vmap(lambda a, k: a.at[k].set(2.0)))(x, i),
            ox.vmap(ox.grad(pick))(x, i),
            ox.vmap(lambda k: x[0:1][0, k] if x.shape[0] else k * 1.0)(i),
        )

    agree(program, np.zeros((0, 3, 4), np.float32), np.zeros((0,), np.int32))
    agree(
        lambda ox, x, i: ox.vmap(lambda a, k: a[k, k] + a.at[k].add(1.0).sum())(x, i),
        np.ones((2, 3, 4), np.float32),
        np.array([0, 2], np.int32),
    )


def test_asarray_of_a_key_array_is_the_key_array():
    """optax's inject_hyperparams passes a PRNG key through jnp.asarray."""

    def program(ox):
        key = ox.random.key(3)
        same = ox.jnp.asarray(key)
        copied = ox.jnp.array(key)
        traced = ox.jit(lambda k: ox.random.normal(ox.jnp.asarray(k), (2,)))(key)
        return (
            same is key,
            copied is key,
            ox.random.key_data(copied),
            ox.random.key_data(ox.jnp.asarray(key, copy=True)),
            traced,
        )

    agree(program)
    agree(lambda ox: ox.jnp.asarray(ox.random.key(0), dtype=np.float32))


def test_max_and_min_of_complex_numbers():
    """optax's tree_max over complex leaves: lax.max/min and reduce_max/min
    order complex numbers by (real, imag), as JAX's lowering."""
    x = np.array([1 + 2j, 3 + 0j, 3 - 1j, -1 + 5j, 3 + 0j, np.nan + 1j], np.complex64)

    def program(ox, x):
        lax = ox.lax
        return (
            ox.jnp.max(x[:5]),
            ox.jnp.min(x[:5]),
            lax.max(x, x[::-1]),
            lax.min(x, x[::-1]),
            lax.reduce_max(x, (0,)),
            ox.jit(lambda a: ox.jnp.max(a, axis=1))(x.reshape(2, 3)),
            ox.vmap(lax.min)(x, x[::-1]),
        )

    agree(program, x)


def test_reshape_in_column_major_order():
    """optax's microbatching reshapes with order='F'."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

    def program(ox, x):
        a = ox.jnp.asarray(x)
        return (
            ox.jnp.reshape(x, (4, -1), order="F"),
            a.reshape((6, 4), order="F"),
            ox.jit(lambda b: b.reshape(3, 8, order="F"))(x),
            ox.vmap(lambda b: b.reshape(-1, order="F"))(x),
            ox.grad(lambda b: (b.reshape(4, 6, order="F")[0] ** 2).sum())(x),
        )

    agree(program, x)
    agree(lambda ox: ox.jnp.reshape(ox.jnp.ones((2, 3)), (6,), order="A"))


def test_complex_normal_samples_as_jax():
    """optax's muon test draws a complex matrix: random.normal(dtype=complex64)."""

    def program(ox):
        normal = ox.random.normal
        return (
            normal(ox.random.key(0), (4, 3), dtype=np.complex64),
            ox.jit(lambda k: normal(k, (2,), np.complex64))(ox.random.PRNGKey(3)),
            ox.vmap(lambda k: normal(k, (), np.complex64))(
                ox.random.split(ox.random.key(1), 3)
            ),
        )

    agree(program)


def test_full_of_a_python_number_is_weakly_typed():
    """optax's schedule_free keeps bfloat16 params bfloat16 through
    jnp.where(c, jnp.full(shape, jnp.nan), x): full of a Python number is weak."""

    def program(ox):
        jnp = ox.jnp
        bf16 = jnp.ones((2,), jnp.bfloat16)
        return (
            jnp.full((), jnp.nan),
            jnp.full((2,), 1),
            jnp.full((2,), True),
            jnp.full((2,), np.int8(3)),
            jnp.full((2,), jnp.asarray(2.0)),
            ox.lax.full((2,), 1.0),
            jnp.where(True, jnp.full((2,), jnp.nan), bf16),
            ox.jit(lambda: jnp.full((2, 3), 2.5))(),
            jnp.full((2,), 1.0, dtype=np.float16),
        )

    agree(program)


def test_log_compiles_reports_each_compile_on_the_jax_logger():
    """jax.log_compiles under olympus.compat (optax's log_compilations reads
    "Finished ... compilation" records on the 'jax' logger)."""
    import logging
    import re

    from olympus.compat.logging_faces import log_compiles

    def compiles(log_compiles, jit, jnp):
        records = []
        handler = logging.Handler()
        handler.emit = records.append
        logging.getLogger("jax").addHandler(handler)
        f = jit(lambda x: x * 2 + 1)
        three, four = jnp.ones(3), jnp.ones(4)
        try:
            with log_compiles():
                f(three)
                f(three)
                f(four)
        finally:
            logging.getLogger("jax").removeHandler(handler)
        found = r"Finished .* compilation"
        return sum(bool(re.search(found, r.getMessage())) for r in records)

    assert compiles(jax.log_compiles, jax.jit, jax.numpy) == 2
    assert compiles(log_compiles, olympus.jit, jnp) == 2


def test_astype_of_a_key_array_to_its_own_dtype():
    """optax.MultiSteps keeps an optimizer state holding a typed key through
    `jnp.astype(jnp.where(emit, new, old), old.dtype)` (optax's alias_test)."""

    def prog(ox, pick):
        old, new = ox.random.key(0), ox.random.key(1)
        step = lambda e: ox.jnp.astype(ox.jnp.where(e, new, old), old.dtype)  # noqa: E731
        kept = [step(pick), ox.jit(step)(ox.jnp.bool_(pick))]
        return [ox.random.key_data(k) for k in kept], str(kept[1].dtype)

    agree(prog, True)
    agree(prog, False)
    # to a numeric dtype: refused in both
    agree(lambda ox: ox.jnp.astype(ox.random.key(0), ox.jnp.float32))
