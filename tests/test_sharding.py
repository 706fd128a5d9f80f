"""Devices, meshes, shardings and sharded arrays (issue #13).

This process has one CPU device; tests needing several run a script in a
subprocess started with OLYMPUS_NUM_CPU_DEVICES, each with a bounded timeout.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import config
from olympus.sharding import (
    Mesh,
    MeshShapeError,
    NamedSharding,
    PartitionSpec as P,
    ShardingShapeError,
    SingleDeviceSharding,
    UnknownMeshAxisError,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_on_devices(code: str, count: int = 4, timeout: int = 240) -> str:
    """Runs `code` in a fresh interpreter with `count` CPU devices; its stdout."""
    env = dict(os.environ, OLYMPUS_NUM_CPU_DEVICES=str(count), PYTHONPATH=ROOT)
    prelude = (
        "import numpy as np\nimport olympus, olympus.numpy as jnp\n"
        "from olympus.sharding import NamedSharding, PartitionSpec as P\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


# ---- one device (this process) -------------------------------------------------
def test_single_device_queries():
    assert olympus.device_count() == olympus.local_device_count() == 1
    assert olympus.process_index() == 0 and olympus.process_count() == 1
    (device,) = olympus.devices()
    assert olympus.local_devices() == [device]
    assert (device.id, device.platform, device.process_index) == (0, "cpu", 0)


def test_device_count_locked_once_backend_runs():
    olympus.devices()
    with pytest.raises(config.ConfigLockedError, match="OLYMPUS_NUM_CPU_DEVICES"):
        config.update("olympus_num_cpu_devices", 4)
    config.update("olympus_num_cpu_devices", 1)  # no change: allowed


def test_device_count_option_is_an_int():
    with pytest.raises(config.ConfigValueError):
        config.update("olympus_num_cpu_devices", "4")
    with pytest.raises(config.ConfigValueError):
        config.update("olympus_num_cpu_devices", True)


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        olympus.devices("tpu")


def test_default_array_sharding():
    x = jnp.arange(4.0)
    assert x.sharding == SingleDeviceSharding(olympus.devices()[0])
    assert x.is_fully_replicated
    (shard,) = x.addressable_shards
    assert shard.device == olympus.devices()[0] and shard.data is x


def test_one_device_mesh_round_trip():
    mesh = olympus.make_mesh((1,), ("x",))
    x = olympus.device_put(np.arange(6.0).reshape(3, 2), NamedSharding(mesh, P("x")))
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0).reshape(3, 2))


def test_partition_spec():
    assert P("x", None) == ("x", None)
    assert repr(P("x", ("y", "z"))) == "P('x', ('y', 'z'))"
    with pytest.raises(TypeError):
        P(3)


def test_bad_mesh_errors_name_api_and_line():
    with pytest.raises(
        MeshShapeError,
        match=r"make_mesh: a mesh of shape \(2, 2\) needs 4 "
        r"devices, but there are 1 \(at .*test_sharding.py",
    ):
        olympus.make_mesh((2, 2), ("x", "y"))
    with pytest.raises(MeshShapeError, match="one distinct name per axis"):
        Mesh(np.array(olympus.devices()).reshape(1, 1), ("x",))
    mesh = olympus.make_mesh((1,), ("x",))
    with pytest.raises(UnknownMeshAxisError, match=r"P\('y',\) names unknown"):
        NamedSharding(mesh, P("y"))
    with pytest.raises(UnknownMeshAxisError, match="used twice"):
        NamedSharding(mesh, P("x", "x"))
    with pytest.raises(ShardingShapeError, match="more than the 1 dimensions"):
        olympus.device_put(jnp.ones(3), NamedSharding(mesh, P("x", None)))


# ---- several devices (subprocesses) -----------------------------------------
def test_device_queries_four_devices():
    out = run_on_devices("""
        ds = olympus.devices()
        print([d.id for d in ds], olympus.device_count(), olympus.local_device_count())
        print(olympus.process_index(), olympus.process_count(), ds[3].platform)
        try:
            olympus.config.update("olympus_num_cpu_devices", 2)
        except olympus.config.ConfigLockedError as err:
            print("locked")
    """)
    assert out.split("\n")[:3] == ["[0, 1, 2, 3] 4 4", "0 1 cpu", "locked"]


def test_device_count_from_config_update():
    code = (
        "import olympus\nolympus.config.update('olympus_num_cpu_devices', 3)\n"
        "print(olympus.device_count())"
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("OLYMPUS_NUM_CPU_DEVICES", None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.stdout.strip() == "3", done.stderr[-2000:]


def test_sharded_arrays_four_devices():
    out = run_on_devices("""
        from olympus.sharding import ShardingShapeError, MeshShapeError
        mesh = olympus.make_mesh((2, 2), ("x", "y"))
        x = np.arange(32, dtype=np.float32).reshape(8, 4)
        cases = [P("x", "y"), P("x"), P(None, "y"), P(), P(("x", "y")), P("y", "x")]
        for spec in cases:
            s = NamedSharding(mesh, spec)
            a = olympus.device_put(x, s)
            assert a.sharding == s and np.array_equal(np.asarray(a), x), spec
            shards = a.addressable_shards
            assert [sh.device for sh in shards] == list(mesh.devices.flat)
            for sh in shards:
                assert sh.data.devices() == {sh.device}
                assert np.array_equal(np.asarray(sh.data), x[sh.index]), spec
            assert a.is_fully_replicated == (spec == P())
            # eager ops (gathered to device 0) and printing
            assert np.array_equal(np.asarray(a * 2 + 1), x * 2 + 1)
            assert float(jnp.sum(a)) == x.sum()
        a = olympus.device_put(x, NamedSharding(mesh, P("x", "y")))
        assert str(a) == str(x) and repr(a).startswith("Array([[ 0.,  1.")
        assert NamedSharding(mesh, P("x")).devices_indices_map((8, 4))[
            olympus.devices()[2]] == (slice(4, 8), slice(None))
        # a pytree, and device_put of an Array onto another layout
        tree = olympus.device_put({"a": x, "b": [x[0]]}, NamedSharding(mesh, P()))
        assert tree["b"][0].is_fully_replicated
        b = olympus.device_put(a, NamedSharding(mesh, P(None, "x")))
        assert np.array_equal(np.asarray(b), x)
        # whole on one other device
        d2 = olympus.device_put(x, olympus.devices()[2])
        assert d2.devices() == {olympus.devices()[2]}
        assert np.allclose(np.asarray(jnp.sin(d2)), np.sin(x), atol=1e-6)
        # pieces assembled back
        pieces = [sh.data for sh in a.addressable_shards][::-1]
        c = olympus.make_array_from_single_device_arrays((8, 4), a.sharding, pieces)
        assert np.array_equal(np.asarray(c), x)
        try:
            olympus.make_array_from_single_device_arrays((8, 4), a.sharding, pieces[:3])
        except ValueError as err:
            print(type(err).__name__)
        try:
            olympus.device_put(np.ones((3, 4)), NamedSharding(mesh, P("x")))
        except ShardingShapeError as err:
            print(str(err).split(" (at")[0])
        try:
            olympus.make_mesh((5,), ("x",))  # (3,) takes the first 3, as JAX
        except MeshShapeError:
            print("mesh")
        bf = olympus.device_put(x.astype(jnp.bfloat16), NamedSharding(mesh, P("x")))
        assert np.array_equal(np.asarray(bf), x.astype(jnp.bfloat16))
        print("ok")
    """)
    assert out.split("\n")[:4] == [
        "ShardMismatchError",
        "device_put: NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Explicit, "
        "Explicit)), spec=P('x',), memory_kind=device) splits dimension 0 of an "
        "array of shape (3, 4) into 2 "
        "pieces, but 3 is not divisible by 2",
        "mesh",
        "ok",
    ]


def test_sharding_constraint_one_device():
    """On a one-device mesh the constraint is the identity, eagerly, under jit,
    grad and vmap."""
    from olympus import lax

    auto = (olympus.sharding.AxisType.Auto,)  # JAX constrains only Auto axes
    s = NamedSharding(olympus.make_mesh((1,), ("x",), axis_types=auto), P("x"))
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)

    def f(v):
        return jnp.sum(lax.with_sharding_constraint(jnp.sin(v), s) * 2)

    np.testing.assert_allclose(olympus.jit(f)(x), f(x), rtol=1e-6)
    np.testing.assert_allclose(olympus.grad(f)(x), 2 * np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(
        olympus.vmap(lambda r: lax.with_sharding_constraint(r * 2, s))(x), 2 * x
    )
    assert "sharding_constraint" in str(olympus.make_olympuspr(f)(x))
    with pytest.raises(TypeError, match="NamedSharding"):
        lax.with_sharding_constraint(x, P("x"))


def test_sharded_jit_matches_one_device():
    out = run_on_devices("""
        import logging
        from olympus import lax
        auto = (olympus.sharding.AxisType.Auto,) * 2  # XLA's propagation, not types
        mesh = olympus.make_mesh((2, 2), ("x", "y"), axis_types=auto)
        rep, rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("x"))
        def f(w, x):
            h = jnp.tanh(x @ w)
            return h, jnp.sum(h ** 2)
        rng = np.random.default_rng(0)
        w = rng.standard_normal((4, 4), np.float32)
        x = rng.standard_normal((8, 4), np.float32)
        want = olympus.jit(f)(w, x)
        def same(got, want):
            for g, e in zip(got, want):
                np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-5)
        # in_shardings: the program is partitioned, outputs come back laid out
        jf = olympus.jit(f, in_shardings=(rep, rows))
        got = jf(w, x)
        same(got, want)
        assert got[0].sharding == NamedSharding(mesh, P("x")), got[0].sharding
        assert got[1].is_fully_replicated and len(got[0].addressable_shards) == 4
        text = jf.lower(w, x).as_text()
        assert 'sdy.sharding<@mesh0, [{"x"}, {}]>' in text and "mhlo.num_partitions = 4" in text
        # committed arguments keep their layout; a new layout is a new signature
        xs = olympus.device_put(x, NamedSharding(mesh, P("x", "y")))
        plain = olympus.jit(f)
        plain(w, x)
        olympus.config.update("olympus_explain_cache_misses", True)
        seen = []
        handler = logging.Handler()
        handler.emit = lambda record: seen.append(record.getMessage())
        logging.getLogger("olympus").addHandler(handler)
        got = plain(w, xs)
        olympus.config.update("olympus_explain_cache_misses", False)
        same(got, want)
        assert got[0].sharding.spec == P("x"), got[0].sharding
        assert any("x: sharding default device -> NamedSharding" in m for m in seen), seen
        # out_shardings
        jo = olympus.jit(f, out_shardings=(NamedSharding(mesh, P(None, "y")), rep))
        got = jo(w, xs)
        same(got, want)
        assert got[0].sharding.spec == P(None, "y")
        # grad and vmap of sharded code
        loss = lambda w, x: f(w, x)[1]
        g = olympus.jit(olympus.grad(loss, argnums=(0, 1)), in_shardings=(rep, rows))(w, x)
        same(g, olympus.grad(loss, argnums=(0, 1))(w, x))
        assert g[1].sharding.spec == P("x")
        vf = olympus.jit(olympus.vmap(lambda r: jnp.sin(r) * 2), in_shardings=rows)
        np.testing.assert_allclose(np.asarray(vf(x)), np.sin(x) * 2, rtol=1e-6)
        # with_sharding_constraint: annotated, partitioned, same values, differentiable
        cols = NamedSharding(mesh, P(None, "y"))
        c = lambda v: jnp.sum(lax.with_sharding_constraint(jnp.sin(v) * 2, cols) ** 2)
        jc = olympus.jit(c)
        assert 'sdy.sharding_constraint' in jc.lower(x).as_text()
        np.testing.assert_allclose(float(jc(x)), float(c(x)), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(olympus.jit(olympus.grad(c))(xs)),
                                   np.asarray(olympus.grad(c)(x)), rtol=1e-5)
        vc = olympus.jit(olympus.vmap(lambda r: lax.with_sharding_constraint(r, NamedSharding(
            mesh, P("y")))))
        assert np.array_equal(np.asarray(vc(x)), x)
        # device_put inside jit is a constraint
        dp = olympus.jit(lambda v: olympus.device_put(v, rows) * 2)
        assert dp(x).sharding.spec == P("x")
        # a mesh over devices out of order, and over some of them
        ds = olympus.devices()
        odd = olympus.sharding.Mesh(np.array([ds[3], ds[1], ds[2], ds[0]], dtype=object), ("r",))
        xo = olympus.device_put(x, NamedSharding(odd, P("r")))
        assert [s.device.id for s in xo.addressable_shards] == [3, 1, 2, 0]
        got = olympus.jit(lambda v: (v * 2, jnp.sum(v)))(xo)
        np.testing.assert_allclose(np.asarray(got[0]), 2 * x)
        np.testing.assert_allclose(float(got[1]), x.sum(), rtol=1e-6)
        assert np.array_equal(np.asarray(got[0].addressable_shards[0].data), 2 * x[:2])
        half = olympus.sharding.Mesh(np.array(ds[2:], dtype=object), ("r",))
        xh = olympus.jit(lambda v: v + 1)(olympus.device_put(x, NamedSharding(half, P("r"))))
        assert xh.devices() == set(ds[2:]) and np.array_equal(np.asarray(xh), x + 1)
        # a loop of steps (no two programs in flight deadlock)
        for _ in range(20):
            got = jf(w, got[0] @ np.ones((4, 4), np.float32) * 0.1)
        # errors name the API: a layout that does not fit, a wrong pytree prefix
        try:
            olympus.jit(f, out_shardings=NamedSharding(mesh, P(None, ("x", "y"))))(w, x)
        except ValueError as err:
            print(type(err).__name__, str(err).split(":")[0])
        try:
            olympus.jit(f, in_shardings=(rep,))(w, x)
        except ValueError as err:
            print(type(err).__name__, str(err).split(":")[0])
        print("ok")
    """)
    assert out.split("\n")[:3] == [
        "ShardingShapeError jit out_shardings",
        "ShardingTreeError jit in_shardings",
        "ok",
    ]


def test_sharded_jit_inside_transforms_donation_callbacks_aot():
    out = run_on_devices("""
        from olympus import lax
        auto = (olympus.sharding.AxisType.Auto,) * 2  # JAX constrains only Auto axes
        mesh = olympus.make_mesh((2, 2), ("x", "y"), axis_types=auto)
        rows = NamedSharding(mesh, P("x"))
        x = np.random.default_rng(1).standard_normal((8, 4), np.float32)
        c = lambda v: jnp.sum(lax.with_sharding_constraint(jnp.sin(v) * 2, rows) ** 2)
        # grad of a jitted function holding a constraint, run eagerly: its
        # pjit runs over the constraint's mesh
        g = olympus.grad(olympus.jit(c))(x)
        np.testing.assert_allclose(np.asarray(g), np.asarray(olympus.grad(c)(x)), rtol=1e-5)
        # jit(in_shardings) under grad and inside another jit: constraints
        h = lambda v: jnp.sum(jnp.tanh(v) ** 2)
        f = olympus.jit(h, in_shardings=rows)
        np.testing.assert_allclose(np.asarray(olympus.grad(f)(x)),
                                   np.asarray(olympus.grad(h)(x)), rtol=1e-5)
        outer = olympus.jit(lambda v: f(v * 2))
        assert "sharding_constraint" in outer.lower(x).as_text()
        np.testing.assert_allclose(float(outer(x)), float(h(x * 2)), rtol=1e-5)
        # donation of a placed argument
        xs = olympus.device_put(x, rows)
        doubled = olympus.jit(lambda v: v * 2, donate_argnums=0)(xs)
        assert xs.is_deleted() and np.array_equal(np.asarray(doubled), 2 * x)
        # debug.print inside a program over 4 devices prints once
        printed = olympus.jit(lambda v: (olympus.debug.print("total {}", v.sum()), v)[1])
        printed(olympus.device_put(x, rows)).block_until_ready()
        # AOT stages
        compiled = olympus.jit(lambda v: v + 1, in_shardings=rows).lower(x).compile()
        assert compiled(x).sharding == rows
        print("ok")
    """)
    lines = out.split("\n")
    assert lines[0].startswith("total ") and lines[1] == "ok", out


def test_platform_selection():
    """OLYMPUS_PLATFORMS: the first platform that starts is used; one without
    its PjRt plugin (or hardware) is named with what is missing."""
    code = "import olympus; print(olympus.devices()[0].platform)"
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("PJRT_NAMES_AND_LIBRARY_PATHS", None)
    run = lambda platforms, **extra: subprocess.run(  # noqa: E731
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(env, OLYMPUS_PLATFORMS=platforms, **extra),
    )
    alone = run("cuda")
    assert alone.returncode != 0 and "PlatformUnavailableError" in alone.stderr
    assert "no PjRt plugin found (install the jax-cuda12-pjrt" in alone.stderr
    fallback = run("cuda,cpu")
    assert fallback.returncode == 0 and fallback.stdout.strip() == "cpu"
    assert "platform 'cuda': no PjRt plugin found" in fallback.stderr
    broken = run("cuda", PJRT_NAMES_AND_LIBRARY_PATHS="cuda:/nonexistent/plugin.so")
    assert (
        "the PjRt plugin /nonexistent/plugin.so could not start a client"
        in broken.stderr
    )
    olympus.devices()
    with pytest.raises(config.ConfigLockedError):
        config.update("olympus_platforms", "cuda")


def test_bad_input_errors_name_api_shapes_and_line_four_devices():
    """The issue's bad input, each a named error naming the API, the shapes
    and the user's line (here: the line of the call in the case list)."""
    out = run_on_devices("""
        import sys
        from olympus import lax
        from olympus.sharding import Mesh
        mesh = olympus.make_mesh((2, 2), ("x", "y"))
        s = NamedSharding(mesh, P("x"))
        d = olympus.devices()
        auto = olympus.make_mesh((2, 2), ("x", "y"), axis_types=(olympus.sharding.AxisType.Auto,) * 2)
        sm = lambda f, i=P("x"), o=P("x"): olympus.shard_map(f, auto, i, o)
        put = olympus.device_put
        cases = []
        def case(error, text, fn):
            cases.append((error, text, fn, sys._getframe(1).f_lineno))
        case("MeshShapeError", "make_mesh: a mesh of shape (3,) needs 3 devices, but there are 2", lambda: olympus.make_mesh((3,), ("x",), devices=olympus.devices()[:2]))
        case("MeshShapeError", "make_mesh: a mesh of shape (2, 4) needs 8", lambda: olympus.make_mesh((2, 4), ("x", "y")))
        case("MeshShapeError", "Mesh: each device may appear once", lambda: Mesh(np.array([d[0], d[0]]), ("x",)))
        case("UnknownMeshAxisError", "P('z',) names unknown axes ['z']; the mesh has axes ('x', 'y')", lambda: NamedSharding(mesh, P("z")))
        case("UnknownMeshAxisError", "P('z',) names unknown", lambda: sm(lambda a: a, i=P("z"))(jnp.ones(4)))
        case("UnknownMeshAxisError", "P('z',) names unknown", lambda: sm(lambda a: a, o=P("z"))(jnp.ones(4)))
        case("ShardingShapeError", "device_put: NamedSharding", lambda: put(jnp.ones((4, 6)), NamedSharding(mesh, P(None, ("x", "y")))))
        case("ShardingShapeError", "array of shape (3,) into 2 pieces, but 3 is not divisible by 2", lambda: olympus.jit(lambda a: a, in_shardings=s)(jnp.ones(3)))
        case("ShardingShapeError", "jit out_shardings", lambda: olympus.jit(lambda a: a[:3], out_shardings=s)(jnp.ones(4)))
        case("ShardingShapeError", "with_sharding_constraint: P('x', 'y') has 2 entries", lambda: olympus.jit(lambda a: lax.with_sharding_constraint(a, NamedSharding(mesh, P("x", "y"))))(jnp.ones(4)))
        case("TypeError", "with_sharding_constraint takes a NamedSharding", lambda: olympus.jit(lambda a: lax.with_sharding_constraint(a, P("x")))(jnp.ones(4)))
        case("ShardingShapeError", "shard_map: NamedSharding", lambda: sm(lambda a: a)(jnp.ones(3)))
        case("ShardingShapeError", "shard_map: P('x',) has 1 entries, more than the 0 dimensions", lambda: sm(lambda a: a.sum())(jnp.ones(4)))
        case("UnboundAxisNameError", "psum: axis name 'i' is not bound here (bound: none)", lambda: olympus.jit(lambda a: lax.psum(a, "i"))(jnp.ones(2)))
        case("UnboundAxisNameError", "pmean: axis name 'q' is not bound here (bound: ['x', 'y'])", lambda: sm(lambda a: lax.pmean(a, "q"))(jnp.ones(4)))
        case("UnboundAxisNameError", "axis_index: axis name 'j' is not bound here (bound: ['i'])", lambda: olympus.vmap(olympus.jit(lambda a: a + lax.axis_index("j")), axis_name="i")(jnp.ones(2)))
        case("ShardMismatchError", "must be one device's (2,) array of one dtype; got f32[3]", lambda: olympus.make_array_from_single_device_arrays((4,), s, [put(jnp.ones(3), x) for x in d]))
        case("ShardMismatchError", "got i32[2]", lambda: olympus.make_array_from_single_device_arrays((4,), s, [put(jnp.ones(2, int) if i else jnp.ones(2), x) for i, x in enumerate(d)]))
        case("ShardMismatchError", "needs one array on each of devices [0, 1, 2, 3], got arrays on [0, 1]", lambda: olympus.make_array_from_single_device_arrays((4,), s, [put(jnp.ones(2), x) for x in d[:2]]))
        case("CollectiveShapeError", "psum_scatter: dimension 0 of f32[3] must be equal to the size 2 of axis 'x'", lambda: sm(lambda a: lax.psum_scatter(a, "x"))(jnp.ones(6)))
        case("CollectiveShapeError", "all_to_all: dimension 0 of f32[3] must be divisible by", lambda: sm(lambda a: lax.all_to_all(a, "x", 0, 0, tiled=True))(jnp.ones(6)))
        case("CollectiveShapeError", "all_gather: axis=3 is out of range for f32[2]", lambda: sm(lambda a: lax.all_gather(a, "x", axis=3))(jnp.ones(4)))
        case("CollectiveShapeError", "ppermute: perm=((0, 5),) is not a partial permutation of 0..1", lambda: sm(lambda a: lax.ppermute(a, "x", [(0, 5)]))(jnp.ones(4)))
        case("PmapAxesError", "in_axes 2 is out of range for args[0] of shape (2, 2)", lambda: olympus.pmap(lambda a: a, in_axes=2)(jnp.ones((2, 2))))
        case("PmapDeviceCountError", "the mapped axis has size 5 but there are only 4 devices", lambda: olympus.pmap(lambda a: a)(jnp.ones((5, 2))))
        for error, text, fn, line in cases:
            try:
                fn()
            except Exception as err:
                message = str(err)
                assert type(err).__name__ == error, (error, type(err).__name__, message)
                assert text in message, (text, message)
                assert f"(at <string>:{line} (<lambda>))" in message, (line, message)
            else:
                raise AssertionError(f"no error: {text}")
        print("ok", len(cases))
    """)
    assert out.strip() == "ok 25"
