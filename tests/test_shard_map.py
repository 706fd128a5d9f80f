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
    mesh = olympus.make_mesh(
        (1,), ("i",), axis_types=(olympus.sharding.AxisType.Auto,) * 1
    )
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
    mesh = olympus.make_mesh(
        (1,), ("i",), axis_types=(olympus.sharding.AxisType.Auto,) * 1
    )
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
        mesh = olympus.make_mesh((2, 2), ("x", "y"), axis_types=(olympus.sharding.AxisType.Auto,) * 2)
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
        mesh = olympus.make_mesh((4,), ("d",), axis_types=(olympus.sharding.AxisType.Auto,) * 1)
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
        mesh = olympus.make_mesh((4,), ("i",), axis_types=(olympus.sharding.AxisType.Auto,) * 1)
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


# ---- collectives of a vmap's axis inside jit, loops and calls ----------------------
_N = 4
_X = np.arange(24, dtype=np.float32).reshape(_N, 6) / 7


def _shifted(x):
    out = np.zeros_like(x)
    for s, t in [(0, 2), (2, 1), (1, 0)]:
        out[t] = x[s]
    return out


# name: (per-example body over axis "i", NumPy result over the whole batch)
_BODIES = {
    "pmean": (lambda r: r - lax.pmean(r, "i"), lambda x: x - x.mean(0)),
    "psum": (lambda r: lax.psum(r, "i") * r, lambda x: x.sum(0) * x),
    "pmax": (lambda r: lax.pmax(r, "i") - r, lambda x: x.max(0) - x),
    "pmin": (lambda r: lax.pmin(jnp.sin(r), "i"), lambda x: np.sin(x).min(0) + 0 * x),
    "all_gather": (
        lambda r: lax.all_gather(r, "i"),
        lambda x: np.broadcast_to(x, (_N, *x.shape)),
    ),
    "all_gather_tiled": (
        lambda r: lax.all_gather(r, "i", tiled=True),
        lambda x: np.broadcast_to(x.reshape(-1), (_N, x.size)),
    ),
    "psum_scatter": (
        lambda r: lax.psum_scatter(r[:4], "i"),
        lambda x: x[:, :4].sum(0),
    ),
    "ppermute": (
        lambda r: lax.ppermute(r, "i", [(0, 2), (2, 1), (1, 0)]),
        _shifted,
    ),
    "axis_index": (
        lambda r: r + lax.axis_index("i"),
        lambda x: x + np.arange(_N)[:, None],
    ),
}


@pytest.mark.parametrize("name", sorted(_BODIES))
def test_vmap_axis_name_collectives_inside_jit(name):
    """vmap(jit(f), axis_name="i"): the jitted body's collectives run over
    the vmap's axis, as without jit, and as the NumPy reference says."""
    body, want = _BODIES[name]
    expect = np.asarray(want(_X), np.float32)
    v = lambda f: olympus.vmap(f, axis_name="i")  # noqa: E731
    for label, f in [
        ("vmap", v(body)),
        ("vmap(jit)", v(olympus.jit(body))),
        ("jit(vmap(jit))", olympus.jit(v(olympus.jit(body)))),
        ("vmap(jit(jit))", v(olympus.jit(olympus.jit(body)))),
        ("vmap(checkpoint)", v(olympus.checkpoint(body))),
    ]:
        np.testing.assert_allclose(f(_X), expect, rtol=1e-6, atol=1e-6, err_msg=label)


def test_vmap_axis_name_inside_jit_loops_and_conditionals():
    x = _X
    centred = x - x.mean(0)

    def scanned(r):
        step = lambda c, _: (c - lax.pmean(c, "i"), lax.psum(c, "i"))  # noqa: E731
        return lax.scan(step, r, None, length=2)

    def looped(r):
        return lax.fori_loop(0, 2, lambda k, c: c + lax.psum(c, "i"), r)

    def branched(r):
        return lax.cond(r[0] > -1, lambda c: lax.pmean(c, "i"), lambda c: c, r)

    v = lambda f: olympus.vmap(f, axis_name="i")  # noqa: E731
    c, sums = v(olympus.jit(scanned))(x)
    np.testing.assert_allclose(c, centred, atol=1e-5)
    np.testing.assert_allclose(sums[:, 0], np.broadcast_to(x.sum(0), x.shape), 1e-5)
    np.testing.assert_allclose(sums[:, 1], np.zeros_like(x), atol=1e-5)
    once = x + x.sum(0)
    np.testing.assert_allclose(v(looped)(x), once + once.sum(0), rtol=1e-5)
    np.testing.assert_allclose(v(olympus.jit(looped))(x), once + once.sum(0), 1e-5)
    np.testing.assert_allclose(
        v(olympus.jit(branched))(x), np.broadcast_to(x.mean(0), x.shape), 1e-5
    )


def test_vmap_axis_name_inside_jit_under_grad():
    """grad inside the vmap (of a jitted or jit-wrapped body) and grad of a
    vmap of a jitted body: as without jit, and as the closed form."""
    x = _X
    v = lambda f: olympus.vmap(f, axis_name="i")  # noqa: E731

    def loss(r):  # per example: sum((r - mean_i r) ** 2)
        return jnp.sum((r - lax.pmean(r, "i")) ** 2)

    # d/dr_k of sum_j ... through pmean's transpose (psum / n): 2 (r - mean)
    # minus the mean over examples of 2 (r - mean), which is zero.
    want = 2 * (x - x.mean(0))
    for label, f in [
        ("vmap(grad)", v(olympus.grad(loss))),
        ("vmap(grad(jit))", v(olympus.grad(olympus.jit(loss)))),
        ("vmap(jit(grad))", v(olympus.jit(olympus.grad(loss)))),
        ("jit(vmap(grad(jit)))", olympus.jit(v(olympus.grad(olympus.jit(loss))))),
    ]:
        np.testing.assert_allclose(f(x), want, rtol=1e-5, atol=1e-5, err_msg=label)

    def total(xs, inner):  # sum over examples of sin(r - mean_i r)
        return jnp.sum(jnp.sin(v(inner)(xs)))

    centre = lambda r: r - lax.pmean(r, "i")  # noqa: E731
    cos = np.cos(x - x.mean(0))
    outside = cos - cos.mean(0)
    for label, inner in [("no jit", centre), ("jit", olympus.jit(centre))]:
        np.testing.assert_allclose(
            olympus.grad(total)(x, inner), outside, rtol=1e-5, atol=1e-6, err_msg=label
        )


def test_nested_vmaps_with_two_axis_names_inside_jit():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    i = np.arange(2)[:, None, None]
    j = np.arange(3)[None, :, None]

    def body(r):
        return (
            r
            - lax.psum(r, "j")
            + 10 * lax.pmean(r, "i")
            + 100 * lax.axis_index("i")
            + lax.axis_index("j")
            + lax.psum(r, ("i", "j"))
        )

    want = x - x.sum(1, keepdims=True) + 10 * x.mean(0, keepdims=True)
    want = want + 100 * i + j + x.sum((0, 1), keepdims=True)
    vv = lambda f: olympus.vmap(  # noqa: E731
        olympus.vmap(f, axis_name="j"), axis_name="i"
    )
    jit = olympus.jit
    for label, f in [
        ("no jit", vv(body)),
        ("jit inside both", vv(jit(body))),
        (
            "jit between",
            olympus.vmap(jit(olympus.vmap(jit(body), axis_name="j")), axis_name="i"),
        ),
        ("jit outside", jit(vv(jit(body)))),
    ]:
        np.testing.assert_allclose(f(x), want, rtol=1e-6, err_msg=label)


def test_vmap_axis_name_jit_traced_per_axis_size():
    """A jitted body traced inside vmap(axis_name="i") bakes in the axis
    size (pmean divides by it): another size or no binding traces anew."""
    centre = olympus.jit(lambda r: r - lax.pmean(r, "i"))
    v = olympus.vmap(centre, axis_name="i")
    for n in (4, 2, 4):
        np.testing.assert_allclose(v(_X[:n]), _X[:n] - _X[:n].mean(0), atol=1e-6)
    # No operand varies over the batch, yet axis_index does.
    index = olympus.vmap(
        olympus.jit(lambda r: r + lax.axis_index("i")),
        in_axes=None,
        axis_size=3,
        axis_name="i",
    )
    np.testing.assert_array_equal(
        index(np.zeros(2, np.float32)), [[0, 0], [1, 1], [2, 2]]
    )
    with pytest.raises(
        lax.parallel.UnboundAxisNameError, match=r"pmean: axis name 'i'.*test_shard_map"
    ):
        olympus.jit(lambda r: centre(r) * 2)(_X[0])


def test_vmap_axis_name_through_shard_map_and_shadowed_by_its_mesh():
    """A shard_map body inside vmap(axis_name="i") sees the vmap's "i" unless
    its mesh has an axis "i" itself (the innermost binding wins)."""
    out = run_on_devices(
        """
        from olympus import lax
        mesh = olympus.make_mesh((2,), ("d",), axis_types=(olympus.sharding.AxisType.Auto,) * 1)
        x = np.arange(16, dtype=np.float32).reshape(4, 4)
        # the pmean over the vmap's "i" still varies along "d": unchecked, the
        # output is read from device 0
        body = olympus.shard_map(lambda a: lax.psum(a, "d") + lax.pmean(a, "i"),
                                 mesh, P("d"), P(), check_rep=False)
        want = x[:, :2] + x[:, 2:] + x[:, :2].mean(0)
        for f in (body, olympus.jit(body)):
            got = olympus.vmap(f, axis_name="i")(x)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
        own = olympus.make_mesh((2,), ("i",), axis_types=(olympus.sharding.AxisType.Auto,) * 1)
        shadow = olympus.shard_map(lambda a: lax.psum(a, "i"), own, P("i"), P())
        for f in (shadow, olympus.jit(shadow)):
            got = olympus.vmap(f, axis_name="i")(x)
            np.testing.assert_allclose(np.asarray(got), x[:, :2] + x[:, 2:])
        print("ok")
        """,
        count=2,
    )
    assert out.strip() == "ok"


# ---- check_rep: outputs declared replicated must be equal along the axis ------------
def _mesh2():
    return olympus.make_mesh(
        (1, 1), ("x", "y"), axis_types=(olympus.sharding.AxisType.Auto,) * 2
    )


@olympus.custom_vjp
def _summed(v):
    """A custom_vjp whose body makes its result equal along "x"."""
    return lax.psum(v, "x")


_summed.defvjp(lambda v: (lax.psum(v, "x"), None), lambda _, g: (lax.psum(g, "x"),))


def test_unreplicated_output_is_a_named_error_with_the_users_line():
    """`v * 2` of a block split over "i" differs between devices; out_specs
    P() would return one device's block. The check runs on any mesh size."""

    def double(v):
        return v * 2

    line = double.__code__.co_firstlineno + 1
    mesh = olympus.make_mesh(
        (1,), ("i",), axis_types=(olympus.sharding.AxisType.Auto,) * 1
    )
    f = olympus.shard_map(double, mesh, P("i"), P())
    with pytest.raises(lax.parallel.ShardMapReplicationError) as info:
        f(jnp.ones(4))
    message = str(info.value)
    assert "shard_map of test_unreplicated_output_is_a_named_error" in message
    assert "output (f32[4]) may vary along 'i'" in message
    assert f"test_shard_map.py:{line} (double)" in message
    assert "lax.psum" in message and "check_rep=False" in message
    assert isinstance(info.value, ValueError)
    assert olympus.errors.ShardMapReplicationError is type(info.value)
    with pytest.raises(lax.parallel.ShardMapReplicationError):
        olympus.jit(f)(jnp.ones(4))


@pytest.mark.parametrize(
    "body",
    [
        lambda v: lax.psum(v, "x"),
        lambda v: lax.pmean(v, ("x", "y")),
        lambda v: lax.pmax(v, "x") * lax.pmin(v, "x"),
        lambda v: lax.all_gather(v, "x", tiled=True)[:2],
        lambda v: lax.all_gather(v, "x")[0],
        lambda v: lax.psum(v * lax.axis_index("x"), "x"),
        lambda v: lax.psum(v, "x") + np.float32(3) + jnp.ones(2),  # constants
        lambda v: olympus.jit(lambda a: lax.psum(a, "x"))(v),
        lambda v: olympus.checkpoint(lambda a: lax.pmean(jnp.sin(a), "x"))(v),
        lambda v: _summed(v) * olympus.nn.relu(lax.psum(v, "x")),
        lambda v: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(v, "x"), jnp.ones(2)),
        lambda v: lax.cond(lax.psum(v[0], "x") > 0, jnp.sin, jnp.cos, lax.psum(v, "x")),
        lambda v: lax.scan(lambda c, a: (c + a, c), 0.0, lax.psum(v, "x"))[1],
    ],
)
def test_outputs_made_equal_along_the_axis_pass(body):
    x = np.arange(2, dtype=np.float32) + 1
    f = olympus.shard_map(body, _mesh2(), P("x"), P())
    assert np.asarray(f(x)).shape == np.asarray(olympus.jit(f)(x)).shape


@pytest.mark.parametrize(
    "body, in_spec, out_spec, axes",
    [
        # varies only through axis_index: the input is replicated
        (lambda v: v + lax.axis_index("x"), P(), P(), "'x'"),
        (lambda v: lax.psum(v, "x"), P(("x", "y")), P(), "'y'"),
        (lambda v: v, P(("x", "y")), P("x"), "'y'"),
        (lambda v: lax.ppermute(v, "x", [(0, 0)]), P(), P(), "'x'"),
        (lambda v: lax.psum_scatter(v, "x", tiled=True), P(), P(), "'x'"),
        # a loop carry that picks up the axis inside is a LoopCarryVaryingError
        # (tests/test_shard_map_loop_carries.py); one the body keeps replicated
        # varies along the trip count's axis
        (
            lambda v: lax.fori_loop(
                0, v[0].astype(int), lambda i, c: c + 1.0, jnp.zeros(2)
            ),
            P("x"),
            P(),
            "'x'",
        ),
        # a loop whose trip count differs between devices
        (
            lambda v: lax.while_loop(lambda c: c < v[0], lambda c: c + 1.0, 0.0),
            P("x"),
            P(),
            "'x'",
        ),
        # a branch chosen per device
        (lambda v: lax.cond(v[0] > 0, lambda: 1.0, lambda: 2.0), P("x"), P(), "'x'"),
        (
            lambda v: olympus.jit(lambda: lax.axis_index("y"))() + v,
            P("x"),
            P("x"),
            "'y'",
        ),
    ],
)
def test_outputs_varying_along_an_unnamed_axis_raise(body, in_spec, out_spec, axes):
    f = olympus.shard_map(body, _mesh2(), in_spec, out_spec)
    with pytest.raises(
        lax.parallel.ShardMapReplicationError, match=f"may vary along {axes}"
    ):
        f(np.arange(2, dtype=np.float32) + 1)
    unchecked = olympus.shard_map(body, _mesh2(), in_spec, out_spec, check_rep=False)
    unchecked(np.arange(2, dtype=np.float32) + 1)
    olympus.shard_map(body, _mesh2(), in_spec, out_spec, check_vma=False)(
        np.arange(2, dtype=np.float32) + 1
    )


def test_check_rep_names_each_offending_output_by_path():
    f = olympus.shard_map(
        lambda d: {"sum": lax.psum(d["a"], "x"), "raw": d["a"], "idx": d["b"]},
        _mesh2(),
        P("x"),
        P(),
    )
    with pytest.raises(lax.parallel.ShardMapReplicationError) as info:
        f({"a": jnp.ones(2), "b": jnp.ones(2)})
    message = str(info.value)
    assert "output['raw'] (f32[2])" in message and "output['idx']" in message
    assert "output['sum']" not in message


def test_check_rep_on_four_devices():
    """Unchecked, the wrong program silently returns device 0's block; checked
    it raises. A checked program's gradient matches finite differences."""
    out = run_on_devices("""
        from olympus import lax
        mesh = olympus.make_mesh((4,), ("i",), axis_types=(olympus.sharding.AxisType.Auto,) * 1)
        x = np.arange(8, dtype=np.float32) / 8
        try:
            olympus.shard_map(lambda v: v * 2, mesh, P("i"), P())(x)
            print("no error")
        except olympus.errors.ShardMapReplicationError as e:
            print("raised", "may vary along 'i'" in str(e))
        loose = olympus.shard_map(lambda v: v * 2, mesh, P("i"), P(), check_rep=False)
        print("device0", np.allclose(np.asarray(loose(x)), x[:2] * 2))
        f = olympus.shard_map(lambda w, v: lax.pmean(jnp.sum(jnp.tanh(v * w)), "i"),
                              mesh, (P(), P("i")), P())
        loss = lambda w: f(w, x)
        w = np.float32(0.7)
        g = float(olympus.grad(loss)(w))
        gj = float(olympus.jit(olympus.grad(loss))(w))
        eps = np.float32(1e-2)
        fd = (float(loss(w + eps)) - float(loss(w - eps))) / (2 * float(eps))
        exact = float(np.sum(x * (1 - np.tanh(x * 0.7) ** 2)) / 4)
        print("grad", abs(g - fd) < 1e-3 * abs(fd), abs(g - exact) < 1e-5, abs(gj - g) < 1e-6)
        vm = olympus.vmap(f, in_axes=(0, None))(np.float32([0.5, 0.7]), x)
        print("vmap", np.allclose(np.asarray(vm)[1], float(loss(w)), rtol=1e-6))
        """)
    assert out.split("\n")[:4] == [
        "raised True",
        "device0 True",
        "grad True True True",
        "vmap True",
    ], out
