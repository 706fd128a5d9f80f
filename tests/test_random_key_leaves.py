"""Typed PRNG key arrays are pytree leaves to the user's tree functions (as
JAX's are) while jit, vmap, grad and the loops still trace their uint32 words:
tree_leaves, tree_structure, tree_map, paths, equality and the transformations
with keys in arguments, carries and results, each through the JAX oracle
(key values compared through key_data)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from jax_oracle import OLYMPUS, agree
from test_sharding_api import run_with_jax


def _state(ox):
    k = ox.random.key(3)
    return {"k": k, "ks": ox.random.split(k, 3), "x": ox.jnp.ones(2), "n": None}


# ---- the user's tree functions ------------------------------------------------------
def test_a_key_is_one_leaf():
    agree(lambda ox: len(ox.tree_util.tree_leaves(ox.random.key(0))))
    agree(lambda ox: str(ox.tree_util.tree_structure(ox.random.key(0))))
    k = olympus.random.key(0)
    assert olympus.tree_util.tree_leaves(k)[0] is k
    assert olympus.tree.leaves({"k": k})[0] is k


def test_structure_of_a_state_holding_keys():
    agree(lambda ox: str(ox.tree_util.tree_structure(_state(ox))))
    agree(lambda ox: len(ox.tree_util.tree_leaves(_state(ox))))
    agree(lambda ox: str(ox.tree.structure(_state(ox))))


def test_tree_map_meets_the_keys():
    agree(lambda ox: ox.tree.map(lambda x: x.shape, _state(ox)))
    agree(
        lambda ox: ox.tree_util.tree_map(
            lambda x: str(x.dtype), _state(ox), is_leaf=lambda x: x is None
        )
    )


def test_paths_end_at_the_key():
    def program(ox):
        pairs = ox.tree_util.tree_flatten_with_path(_state(ox))[0]
        return [ox.tree_util.keystr(path) for path, _ in pairs]

    agree(program)
    agree(lambda ox: ox.tree_util.all_leaves([ox.random.key(0), ox.jnp.ones(1)]))


def test_flatten_and_unflatten_keep_the_key():
    def program(ox):
        leaves, treedef = ox.tree_util.tree_flatten(_state(ox))
        back = ox.tree_util.tree_unflatten(treedef, leaves)
        return ox.random.key_data(back["ks"])

    agree(program)


def test_transformations_still_see_the_words():
    """jit's and vmap's own flattening goes through the key: its words are
    traced, and the key comes back typed."""
    traced = olympus.make_olympuspr(lambda k: olympus.random.split(k))(
        olympus.random.key(0)
    )
    assert "u32[2]" in str(traced)
    out = olympus.jit(lambda s: s)(_state(OLYMPUS))
    assert isinstance(out["k"], olympus.random.PRNGKeyArray)


# ---- equality and array methods ---------------------------------------------------
def test_keys_compare_elementwise():
    agree(lambda ox: ox.random.key(1) == ox.random.key(1))
    agree(lambda ox: ox.random.key(1) != ox.random.key(2))
    agree(lambda ox: ox.random.split(ox.random.key(0)) == ox.random.key(0))
    agree(
        lambda ox: (
            ox.random.split(ox.random.key(0), 3)
            != ox.random.split(ox.random.key(0), 3)[1]
        )
    )
    agree(lambda ox: ox.jit(lambda a, b: a == b)(ox.random.key(1), ox.random.key(1)))


def test_jnp_equal_and_not_equal_compare_keys():
    ks = lambda ox: ox.random.split(ox.random.key(0), 3)  # noqa: E731
    agree(lambda ox: ox.jnp.equal(ks(ox), ks(ox)[1]))
    agree(lambda ox: ox.jnp.not_equal(ks(ox), ox.random.key(0)))
    agree(lambda ox: ox.jnp.equal(ks(ox)[:, None], ks(ox)))  # broadcasting
    agree(lambda ox: ox.jit(ox.jnp.not_equal)(ks(ox), ks(ox)[::-1]))
    agree(lambda ox: ox.vmap(ox.jnp.equal, (0, None))(ks(ox), ks(ox)[2]))
    agree(lambda ox: ox.jnp.equal(ks(ox), ox.jnp.zeros(3, "uint32")))  # raises


def test_lower_and_trace_take_structs_of_a_key_dtype():
    def program(ox):
        sds = ox.ShapeDtypeStruct((3,), ox.random.key(0).dtype)
        f = ox.jit(lambda ks: (ox.random.uniform(ks[0], (2,)), ox.random.split(ks[1])))
        info = [str(s) for s in f.trace(sds).out_info + f.lower(sds).out_info]
        out = f.lower(sds).compile()(ox.random.split(ox.random.key(4), 3))
        return info, out[0], ox.random.key_data(out[1])

    agree(program)


def test_key_types_carry_explicit_shardings():
    out = run_with_jax(
        """
        def prog(ox, spec):
            kinds = (ox.sharding.AxisType.Explicit,) * 2
            mesh = ox.make_mesh((2, 2), ("x", "y"), axis_types=kinds)
            ks = ox.random.split(ox.random.key(0), 8)
            k = ox.device_put(ks, ox.NamedSharding(mesh, ox.P(*spec)))
            seen = ox.jit(lambda k: [str(ox.typeof(k)), tuple(ox.typeof(k).sharding.spec)])
            t = ox.typeof(k)
            return str(t), tuple(t.sharding.spec), t.sharding.mesh.axis_names, seen(k)

        for spec in [("x",), (("x", "y"),), ("y",), ()]:
            agree(prog, spec)
        print("ok", str(olympus.typeof(olympus.device_put(
            olympus.random.split(olympus.random.key(0), 8),
            olympus.NamedSharding(olympus.make_mesh((2, 2), ("x", "y")), olympus.P("x"))))))
        """
    )
    assert out.split()[-1] == "key<fry>[8@x]"


def test_keys_are_unhashable():
    with pytest.raises(TypeError):
        hash(olympus.random.key(0))


def test_transpose_squeeze_copy():
    def program(ox):
        ks = ox.random.split(ox.random.key(0), 6).reshape(2, 3, 1)
        return [
            ox.random.key_data(ks.T),
            ox.random.key_data(ks.transpose(1, 0, 2)),
            ox.random.key_data(ks.squeeze()),
            ox.random.key_data(ks.squeeze(2)),
            ox.random.key_data(ks.copy()),
        ]

    agree(program)
    agree(
        lambda ox: (ox.random.key(0).itemsize, ox.random.split(ox.random.key(0)).size)
    )


# ---- keys through the transformations ----------------------------------------------
def test_jit_with_keys_in_a_dict():
    def program(ox):
        step = ox.jit(lambda s: {**s, "k": ox.random.fold_in(s["k"], 1)})
        out = step(_state(ox))
        return ox.random.key_data(out["k"]), str(ox.tree_util.tree_structure(out))

    agree(program)


def test_vmap_over_keys():
    agree(
        lambda ox: ox.vmap(lambda k: ox.random.normal(k, (2,)))(
            ox.random.split(ox.random.key(0), 3)
        )
    )
    agree(
        lambda ox: ox.random.key_data(
            ox.vmap(lambda k: ox.random.split(k))(ox.random.split(ox.random.key(0), 3))
        )
    )


def test_grad_skips_a_key_argument():
    agree(
        lambda ox: ox.grad(lambda x, k: x * ox.random.normal(k))(1.0, ox.random.key(0))
    )
    agree(
        lambda ox: ox.grad(lambda s: s["x"].sum() * ox.random.uniform(s["k"]))(
            {"x": ox.jnp.ones(2), "k": ox.random.key(0)}
        )["x"]
    )
    agree(lambda ox: ox.grad(lambda k: 1.0)(ox.random.key(0)))  # both raise


def test_scan_fori_cond_carry_keys():
    def scan(ox):
        def body(k, sub):
            return ox.random.fold_in(k, 1), ox.random.normal(sub)

        k, xs = ox.lax.scan(
            body, ox.random.key(0), ox.random.split(ox.random.key(1), 4)
        )
        return ox.random.key_data(k), xs

    def fori(ox):
        k = ox.lax.fori_loop(
            0, 3, lambda i, k: ox.random.fold_in(k, i), ox.random.key(2)
        )
        return ox.random.key_data(k)

    def cond(ox, which):
        k = ox.lax.cond(
            which, lambda k: k, lambda k: ox.random.split(k)[1], ox.random.key(5)
        )
        return ox.random.key_data(k)

    agree(scan)
    agree(fori)
    agree(cond, True)
    agree(cond, False)


def test_split_fold_in_key_data_wrap_key_data():
    agree(lambda ox: ox.random.key_data(ox.random.split(ox.random.key(0), (2, 3))))
    agree(lambda ox: ox.random.split(ox.random.key(0), (2, 3)).shape)
    agree(lambda ox: ox.random.key_data(ox.random.fold_in(ox.random.key(0), 7)))
    data = np.array([[0, 1], [2, 3]], np.uint32)
    agree(lambda ox, d: ox.random.key_data(ox.random.wrap_key_data(d)), data)
    agree(lambda ox, d: ox.random.wrap_key_data(d).shape, data)


def test_printing():
    agree(lambda ox: repr(ox.random.key(0)))
    agree(lambda ox: str(ox.random.split(ox.random.key(0), 2)))
    agree(lambda ox: str(ox.typeof(ox.random.key(0))))
    agree(lambda ox: ox.jnp.issubdtype(ox.random.key(0).dtype, ox.dtypes.prng_key))


def test_eager_jit_vmap_agree():
    ks = olympus.random.split(olympus.random.key(0), 3)

    def draw(k):
        return olympus.random.uniform(olympus.random.fold_in(k, 3), (2,))

    eager = jnp.stack([draw(k) for k in ks])
    np.testing.assert_array_equal(olympus.vmap(draw)(ks), eager)
    np.testing.assert_array_equal(olympus.jit(olympus.vmap(draw))(ks), eager)


# ---- the jnp functions JAX defines on key arrays -----------------------------------
def test_stack_concatenate_where_of_keys():
    def program(ox):
        k, ks = ox.random.key(0), ox.random.split(ox.random.key(1), 3)
        data = ox.random.key_data
        grid = ox.random.split(ox.random.key(2), (2, 3))
        return [
            data(ox.jnp.stack([k, k])),
            data(ox.jnp.stack([ks, ks], axis=1)),
            data(ox.jnp.stack((ks, ks), axis=-1)),
            data(ox.jnp.concatenate([ks, ks])),
            data(ox.jnp.concatenate([grid, grid], axis=1)),
            data(ox.jnp.concatenate([grid, ks.reshape(1, 3)], axis=None)),
            data(ox.jnp.where(True, k, ks[1])),
            data(ox.jnp.where(ox.jnp.array([True, False, True]), ks, k)),
            data(ox.jnp.where(ox.jnp.array([[True], [False]]), grid, ks)),
        ]

    agree(program)
    agree(
        lambda ox: ox.random.key_data(
            ox.jit(lambda c, a, b: ox.jnp.where(c, a, b))(
                False, ox.random.key(0), ox.random.key(1)
            )
        )
    )
    agree(
        lambda ox: ox.random.key_data(
            ox.vmap(lambda a, b: ox.jnp.stack([a, b]))(
                ox.random.split(ox.random.key(0), 2),
                ox.random.split(ox.random.key(1), 2),
            )
        )
    )


def test_joining_keys_with_numbers_raises():
    agree(lambda ox: ox.jnp.stack([ox.random.key(0), ox.jnp.zeros(2, "uint32")]))
    agree(lambda ox: ox.jnp.where(True, ox.random.key(0), 0))
    agree(lambda ox: ox.jnp.concatenate([ox.random.key(0), ox.random.key(0)]))
    with pytest.raises(olympus.random.KeyArrayTypeError):
        jnp.stack([olympus.random.key(0), jnp.zeros(2, "uint32")])


def test_moving_functions_of_keys():
    """The jnp functions that only move, pick or repeat elements, as JAX
    defines them on key arrays (compared through key_data)."""

    def program(ox):
        jnp, data = ox.jnp, ox.random.key_data
        k, ks = ox.random.key(0), ox.random.split(ox.random.key(1), 4)
        g = ks.reshape(2, 2)
        outs = [
            jnp.reshape(ks, (2, 2)), jnp.ravel(g), jnp.broadcast_to(k, (3,)),
            jnp.expand_dims(ks, 0), jnp.squeeze(ks[None]), jnp.transpose(g),
            jnp.swapaxes(g, 0, 1), jnp.moveaxis(g, 0, 1), jnp.take(ks, jnp.array([3, 0])),
            jnp.take_along_axis(g, jnp.array([[1], [0]]), axis=1), jnp.tile(ks, 2),
            jnp.repeat(ks, 2), jnp.flip(ks), jnp.roll(ks, 1), jnp.hstack([ks, ks]),
            jnp.vstack([ks, ks]), jnp.atleast_1d(k), jnp.atleast_2d(ks), jnp.copy(g),
            jnp.array([k, k]), jnp.asarray([[k], [k]]), jnp.asarray(ks),
            jnp.select([jnp.array([True, False, True, False])], [ks], k),
            g.flatten(), g.swapaxes(0, 1),
        ]  # fmt: skip
        return [data(x) for x in outs] + [data(x) for x in jnp.split(ks, 2)]

    agree(program)
    agree(
        lambda ox: ox.random.key_data(
            ox.jit(lambda ks, i: ox.jnp.take(ks, i))(
                ox.random.split(ox.random.key(1), 4), ox.jnp.array([2, 2])
            )
        )
    )
    agree(
        lambda ox: ox.random.key_data(
            ox.vmap(lambda ks: ox.jnp.roll(ks, 1))(
                ox.random.split(ox.random.key(1), 6).reshape(2, 3)
            )
        )
    )


def test_words_like_and_array_equal():
    def program(ox):
        jnp, data = ox.jnp, ox.random.key_data
        ks = ox.random.split(ox.random.key(0), 2)
        return [
            data(jnp.zeros_like(ks)), data(jnp.ones_like(ks)),
            data(jnp.full_like(ks, 5)), data(jnp.full_like(ks, ox.random.key(3))),
            data(jnp.zeros_like(ks, shape=(3,))),
            jnp.array_equal(ks, ks), jnp.array_equal(ks, ks[:1]),
        ]  # fmt: skip

    agree(program)
    # a library's tree_map of zeros_like over a state holding a key
    agree(
        lambda ox: ox.random.key_data(
            ox.tree.map(ox.jnp.zeros_like, {"k": ox.random.key(0), "x": 1.0})["k"]
        )
    )


def test_at_set_and_get_of_keys():
    def program(ox):
        ks, k = ox.random.split(ox.random.key(0), 4), ox.random.key(7)
        data = ox.random.key_data
        return [
            data(ks.at[1].set(k)), data(ks.at[1:3].set(k)), data(ks.at[1].get()),
            data(ox.jit(lambda ks, i: ks.at[i].set(k))(ks, 2)),
        ]  # fmt: skip

    agree(program)
    agree(lambda ox: ox.random.split(ox.random.key(0)).at[0].set(0))  # both raise
    agree(lambda ox: ox.random.split(ox.random.key(0)).at[0].add(ox.random.key(1)))


def test_allow_int_gradient_of_a_key_is_float0_of_its_shape():
    agree(lambda ox: ox.grad(lambda k: 1.0, allow_int=True)(ox.random.key(0)))
    agree(
        lambda ox: ox.grad(
            lambda x, ks: x * ox.random.normal(ks[0]), argnums=(0, 1), allow_int=True
        )(1.0, ox.random.split(ox.random.key(0), 3))
    )


def test_eval_shape_of_keys_gives_key_structs():
    agree(lambda ox: repr(ox.eval_shape(lambda: ox.random.split(ox.random.key(0)))))
    agree(
        lambda ox: repr(ox.eval_shape(lambda k: {"k": k, "n": 1.0}, ox.random.key(0)))
    )
    agree(
        lambda ox: repr(
            ox.eval_shape(
                lambda k: ox.random.normal(k, (3,)),
                ox.ShapeDtypeStruct((), ox.random.key(0).dtype),
            )
        )
    )
    agree(
        lambda ox: repr(
            ox.eval_shape(
                ox.random.split, ox.ShapeDtypeStruct((), ox.random.key(0).dtype)
            )
        )
    )


def test_jvp_takes_and_gives_a_key_tangent_as_float0_of_its_shape():
    def program(ox, which):
        k = ox.random.key(0)
        t = np.zeros((), ox.dtypes.float0)
        if which == "in":
            return ox.jvp(lambda k: ox.random.normal(k), (k,), (t,))
        out, tangent = ox.jvp(lambda x, k: (x, ox.random.split(k)), (1.0, k), (1.0, t))
        return out[0], tangent

    agree(program, "in")
    agree(program, "out")


def test_vjp_takes_a_key_cotangent_as_float0_of_its_shape():
    def program(ox):
        out, pullback = ox.vjp(
            lambda x, k: (x * 2.0, ox.random.split(k)), 1.0, ox.random.key(0)
        )
        return pullback((1.0, np.zeros((2,), ox.dtypes.float0)))

    agree(program)


def test_typeof_and_placement_of_keys():
    agree(
        lambda ox: str(ox.typeof(ox.random.split(ox.random.key(0))).update(shape=(3,)))
    )
    agree(lambda ox: len(ox.random.key(0).devices()))
    agree(lambda ox: ox.random.key(0).is_fully_addressable)
    k = olympus.random.split(olympus.random.key(0))
    assert olympus.typeof(k).sharding == olympus.typeof(k.data).sharding  # None here
    assert k.sharding == k.data.sharding


def test_lax_functions_of_keys():
    """The lax functions that only move or pick elements, on key arrays as
    JAX defines them (olympus.lax.key_arrays)."""

    def program(ox):
        lax, data = ox.lax, ox.random.key_data
        k, ks = ox.random.key(0), ox.random.split(ox.random.key(1), 4)
        g = ks.reshape(2, 2)
        mask = ox.jnp.array([True, False, True, False])
        outs = [
            lax.select(mask, ks, ks[::-1]), lax.select_n(True, k, ks[0]),
            lax.concatenate([ks, ks], 0), lax.reshape(ks, (2, 2)), lax.broadcast(k, (3,)),
            lax.broadcast_in_dim(ks, (2, 4), (1,)), lax.transpose(g, (1, 0)),
            lax.squeeze(ks[None], (0,)), lax.expand_dims(ks, (0,)),
            lax.slice(ks, (1,), (3,)), lax.slice_in_dim(ks, 0, 2),
            lax.index_in_dim(ks, 1, keepdims=False), lax.dynamic_slice(ks, (1,), (2,)),
            lax.dynamic_index_in_dim(ks, 2, keepdims=False),
            lax.dynamic_update_slice(ks, ks[:2], (1,)),
            lax.dynamic_update_index_in_dim(ks, k, 3, 0), lax.rev(ks, (0,)),
        ]  # fmt: skip
        return [data(x) for x in outs]

    agree(program)
    agree(
        lambda ox: ox.random.key_data(
            ox.jit(lambda ks, i: ox.lax.dynamic_index_in_dim(ks, i, keepdims=False))(
                ox.random.split(ox.random.key(1), 4), 2
            )
        )
    )
    agree(lambda ox: ox.lax.select(True, ox.random.key(0), ox.jnp.zeros(2, "uint32")))


def test_key_operands_by_keyword():
    agree(
        lambda ox: ox.random.key_data(
            ox.jnp.broadcast_to(array=ox.random.key(0), shape=(2,))
        )
    )
    agree(
        lambda ox: ox.random.key_data(
            ox.jnp.reshape(a=ox.random.split(ox.random.key(0), 4), shape=(2, 2))
        )
    )
    agree(
        lambda ox: ox.random.key_data(
            ox.lax.rev(operand=ox.random.split(ox.random.key(0)), dimensions=(0,))
        )
    )
