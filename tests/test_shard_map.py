"""shard_map and collectives (issue #13, part 4): eager, under jit, against the
threaded NumPy reference, under grad and vmap, and their errors.

Most run in a subprocess with OLYMPUS_NUM_CPU_DEVICES=4 (this process has one
device), each with a bounded timeout.
"""

import numpy as np
import pytest
from test_sharding import run_on_devices

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.sharding import PartitionSpec as P


def test_one_device_mesh():
    """On one device every collective is the identity (or a reshape)."""
    mesh = olympus.make_mesh((1,), ("i",))
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    f = olympus.shard_map(
        lambda v: (
            lax.psum(v, "i")
            + lax.all_gather(v, "i")[0]
            + lax.axis_index("i").astype(jnp.float32)
        ),
        mesh,
        P("i"),
        P("i"),
    )
    np.testing.assert_allclose(f(x), 2 * x)
    np.testing.assert_allclose(olympus.jit(f)(x), 2 * x)
    np.testing.assert_allclose(
        olympus.grad(lambda v: jnp.sum(f(v)))(x), 2 * np.ones_like(x)
    )


def test_collective_outside_shard_map_is_a_named_error():
    with pytest.raises(
        lax.parallel.UnboundAxisNameError,
        match=r"psum: axis name 'i' is not bound here .*test_shard_map.py",
    ):
        lax.psum(jnp.ones(2), "i")
    mesh = olympus.make_mesh((1,), ("i",))
    with pytest.raises(NameError, match="all_gather: axis name 'j'"):
        olympus.shard_map(lambda v: lax.all_gather(v, "j"), mesh, P("i"), P())(
            jnp.ones(2)
        )
    with pytest.raises(ValueError, match="ppermute"):
        olympus.shard_map(lambda v: lax.ppermute(v, "i", [(0, 3)]), mesh, P("i"), P())(
            jnp.ones(2)
        )


def test_collectives_on_four_devices():
    out = run_on_devices("""
        from olympus import lax
        from olympus.test_util import reference_call
        mesh = olympus.make_mesh((2, 2), ("x", "y"))
        x = np.arange(32, dtype=np.float32).reshape(8, 4)
        cases = {
            "psum": (lambda v: lax.psum(v, "y"), P("x", "y"), P("x"), x[:, :2] + x[:, 2:]),
            "psum2": (lambda v: lax.psum(v, ("x", "y")), P("x", "y"), P(),
                      x[:4, :2] + x[:4, 2:] + x[4:, :2] + x[4:, 2:]),
            "pmean": (lambda v: lax.pmean(v, "x"), P("x"), P(), (x[:4] + x[4:]) / 2),
            "pmax": (lambda v: lax.pmax(v, ("x", "y")), P("x", "y"), P(), x[4:, 2:]),
            "pmin": (lambda v: lax.pmin(v, "x"), P("x"), P(), x[:4]),
            "all_gather": (lambda v: lax.all_gather(v, "x", tiled=True), P("x"), P(), x),
            "all_gather_stacked": (lambda v: lax.all_gather(v, "x"), P("x"), P(),
                                   x.reshape(2, 4, 4)),
            "psum_scatter": (lambda v: lax.psum_scatter(v, "y", scatter_dimension=1,
                                                        tiled=True),
                             P("x"), P("x", "y"), 2 * x),
            "ppermute": (lambda v: lax.ppermute(v, "x", [(0, 1), (1, 0)]), P("x"), P("x"),
                         np.concatenate([x[4:], x[:4]])),
            "ppermute_partial": (lambda v: lax.ppermute(v, "x", [(0, 1)]), P("x"), P("x"),
                                 np.concatenate([0 * x[:4], x[:4]])),
            "all_to_all": (lambda v: lax.all_to_all(v, "x", 1, 0, tiled=True), P("x"),
                           P(None, "x"), x),
            "axis_index": (lambda v: v * 0 + 10 * lax.axis_index("x").astype(jnp.float32)
                           + lax.axis_index("y"), P("x", "y"), P("x", "y"),
                           np.repeat(np.repeat(np.float32([[0, 1], [10, 11]]), 4, 0), 2, 1)),
        }
        for name, (body, spec_in, spec_out, want) in cases.items():
            f = olympus.shard_map(body, mesh, spec_in, spec_out)
            for got in (f(x), olympus.jit(f)(x), reference_call(f, x)):
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=name)
        # all_to_all without tiling: pieces stack (device r gets x[r, 2j + k] at [j, k])
        stacked = olympus.shard_map(lambda v: lax.all_to_all(v, "y", 0, 0), mesh,
                                    P(None, "y"), P(None, "y"))
        two = x[:2]
        want = np.concatenate([two[r].reshape(2, 2) for r in range(2)], axis=1)
        for got in (stacked(two), olympus.jit(stacked)(two), reference_call(stacked, two)):
            np.testing.assert_allclose(np.asarray(got), want)
        text = olympus.jit(olympus.shard_map(
            lambda v: lax.psum(v, "y"), mesh, P("x", "y"), P("x"))).lower(x).as_text()
        assert "sdy.manual_computation" in text and "stablehlo.all_reduce" in text
        print("ok")
    """)
    assert out.strip() == "ok"


def test_grad_and_vmap_of_shard_map():
    out = run_on_devices("""
        from olympus import lax
        from olympus.test_util import reference_call
        mesh = olympus.make_mesh((4,), ("d",))
        rng = np.random.default_rng(0)
        w = rng.standard_normal((4, 3)).astype(np.float32)
        x = rng.standard_normal((8, 4)).astype(np.float32)
        ref = lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)
        # data parallel: a replicated weight, a split batch, a psum'd loss
        loss = olympus.shard_map(lambda w, x: lax.psum(ref(w, x), "d"), mesh,
                                 (P(), P("d")), P())
        np.testing.assert_allclose(float(loss(w, x)), float(ref(w, x)), rtol=1e-5)
        want = olympus.grad(ref, argnums=(0, 1))(w, x)
        for g in (olympus.grad(loss, argnums=(0, 1)),
                  olympus.jit(olympus.grad(loss, argnums=(0, 1)))):
            for a, b in zip(g(w, x), want):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
        # replicated outputs made without a collective
        r = olympus.shard_map(lambda w, x: (w * 2, x * 3), mesh, (P(), P("d")), (P(), P("d")))
        gw, gx = olympus.grad(lambda w, x: jnp.sum(r(w, x)[0]) + jnp.sum(r(w, x)[1] ** 2),
                              argnums=(0, 1))(w, x)
        np.testing.assert_allclose(np.asarray(gw), 2 * np.ones_like(w))
        np.testing.assert_allclose(np.asarray(gx), 18 * x, rtol=1e-6)
        # transposes of all_gather, psum_scatter, ppermute; pmax's jvp
        c = np.arange(32, dtype=np.float32).reshape(8, 4)
        ag = olympus.shard_map(lambda v: lax.all_gather(v, "d", tiled=True), mesh, P("d"), P())
        np.testing.assert_allclose(np.asarray(olympus.grad(lambda v: jnp.sum(ag(v) * c))(x)), c)
        ring = [(i, (i + 1) % 4) for i in range(4)]
        pp = olympus.shard_map(lambda v: lax.ppermute(v, "d", ring), mesh, P("d"), P("d"))
        np.testing.assert_allclose(np.asarray(olympus.grad(lambda v: jnp.sum(pp(v) * c))(x)),
                                   np.roll(c, -2, axis=0))
        rs = olympus.shard_map(lambda v: lax.psum_scatter(v, "d", tiled=True), mesh, P(), P("d"))
        np.testing.assert_allclose(np.asarray(rs(x)), 4 * x, rtol=1e-6)  # psum of a copy
        np.testing.assert_allclose(np.asarray(olympus.grad(lambda v: jnp.sum(rs(v) * c))(x)),
                                   4 * c)
        a2a = olympus.shard_map(lambda v: lax.all_to_all(v, "d", 1, 0, tiled=True), mesh,
                                P("d"), P(None, "d"))
        np.testing.assert_allclose(np.asarray(olympus.grad(lambda v: jnp.sum(a2a(v) * c))(x)), c)
        pm = olympus.shard_map(lambda v: lax.pmax(v, "d"), mesh, P("d"), P())
        t = olympus.jvp(pm, (x,), (np.ones_like(x),))[1]
        np.testing.assert_allclose(np.asarray(t), np.ones((2, 4)))
        # vmap of a shard_map holding a collective
        vm = olympus.vmap(olympus.shard_map(lambda v: lax.psum(v, "d"), mesh, P("d"), P()))
        xb = rng.standard_normal((3, 8, 4)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(vm(xb)), xb.reshape(3, 4, 2, 4).sum(1),
                                   rtol=1e-5, atol=1e-6)
        print("ok")
    """)
    assert out.strip() == "ok"


def test_pmap():
    x = np.arange(6, dtype=np.float32).reshape(1, 6)
    np.testing.assert_allclose(
        olympus.pmap(lambda v: lax.psum(v, "i") * 2, axis_name="i")(x), 2 * x
    )
    with pytest.raises(
        olympus.api.PmapDeviceCountError, match="size 2 but there are only 1"
    ):
        olympus.pmap(lambda v: v)(np.ones((2, 3)))
    out = run_on_devices("""
        from olympus import lax
        x = np.arange(12, dtype=np.float32).reshape(4, 3)
        centred = olympus.pmap(lambda v: v - lax.pmean(v, "i"), axis_name="i")
        np.testing.assert_allclose(np.asarray(centred(x)), x - x.mean(0), rtol=1e-6)
        moved = olympus.pmap(lambda v, w: v * w + lax.axis_index("i"), axis_name="i",
                             in_axes=(1, None), out_axes=1)
        np.testing.assert_allclose(np.asarray(moved(x.T.copy(), np.float32(2))),
                                   x.T * 2 + np.arange(4))
        total = olympus.pmap(lambda v: lax.psum(jnp.sum(v ** 2), "i"), axis_name="i")
        np.testing.assert_allclose(np.asarray(total(x)), [(x ** 2).sum()] * 4)
        np.testing.assert_allclose(
            np.asarray(olympus.grad(lambda v: jnp.sum(total(v)))(x)), 8 * x)
        print("ok")
    """)
    assert out.strip() == "ok"


def test_vmap_axis_name_collectives_match_shard_map():
    """vmap(f, axis_name="i") runs f's collectives over the batch: the same
    numbers as one device per example under shard_map."""
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    v = lambda f: olympus.vmap(f, axis_name="i")  # noqa: E731
    np.testing.assert_allclose(v(lambda r: r - lax.pmean(r, "i"))(x), x - x.mean(0))
    np.testing.assert_array_equal(v(lambda r: lax.axis_index("i"))(x), np.arange(4))
    g = olympus.grad(lambda x: jnp.sum(v(lambda r: lax.psum(r, "i") * r)(x)))(x)
    np.testing.assert_allclose(g, 2 * np.broadcast_to(x.sum(0), x.shape))
    with pytest.raises(NameError, match="axis name 'j' is not bound here .*'i'"):
        v(lambda r: lax.psum(r, "j"))(x)
    out = run_on_devices("""
        from olympus import lax
        mesh = olympus.make_mesh((4,), ("i",))
        x = np.arange(64, dtype=np.float32).reshape(4, 4, 4)
        bodies = {
            "psum": lambda r: lax.psum(r, "i"),
            "pmax": lambda r: lax.pmax(r, "i"),
            "pmin": lambda r: lax.pmin(r, "i"),
            "all_gather": lambda r: lax.all_gather(r, "i", axis=1),
            "all_gather_tiled": lambda r: lax.all_gather(r, "i", axis=1, tiled=True),
            "psum_scatter": lambda r: lax.psum_scatter(r, "i", scatter_dimension=1),
            "psum_scatter_tiled": lambda r: lax.psum_scatter(r, "i", tiled=True),
            "ppermute": lambda r: lax.ppermute(r, "i", [(0, 2), (2, 1), (1, 0)]),
            "all_to_all": lambda r: lax.all_to_all(r, "i", 0, 1),
            "all_to_all_tiled": lambda r: lax.all_to_all(r, "i", 1, 0, tiled=True),
            "axis_index": lambda r: r * 0 + lax.axis_index("i"),
        }
        for name, f in bodies.items():
            per_device = olympus.shard_map(lambda r: f(r[0])[None], mesh, P("i"), P("i"))
            want = np.asarray(per_device(x))
            got = np.asarray(olympus.vmap(f, axis_name="i")(x))
            np.testing.assert_allclose(got, want, err_msg=name)
        print("ok")
    """)
    assert out.strip() == "ok"
