"""Explicit sharding (issue 28): on a mesh with Explicit axes a value's layout
is part of its type (`typeof(x).sharding`, `f32[8@x,4]` in the IR), ops say
their results' layouts by JAX's rules and refuse conflicting operands with
ShardingTypeError, naming both shardings.

The programs follow JAX's "Explicit sharding" page; each runs under olympus
and JAX 0.10.2 on 4 CPU devices in a subprocess (tests/test_sharding_api.py's
`run_with_jax`) and is compared by tests/jax_oracle.py. A type is compared
by its dimensions (`8@x,4`: the dtype's spelling differs, f32 / float32).
"""

import textwrap

import numpy as np
import pytest

import olympus
from olympus.ir.core import AvalSharding, ShapedArray
from olympus.ir.parser import parse
from test_sharding_api import run_with_jax

PRELUDE = """
    def dims(ox, v):
        return str(ox.typeof(v)).split("[", 1)[1]

    def mesh_of(ox):
        kinds = (ox.sharding.AxisType.Explicit,) * 2
        return ox.make_mesh((2, 2), ("x", "y"), axis_types=kinds)

    def put(ox, value, *spec):
        return ox.device_put(value, ox.NamedSharding(mesh_of(ox), ox.P(*spec)))

    a = np.arange(32.0, dtype=np.float32).reshape(8, 4)
"""


def run(code: str) -> str:
    """`code` after PRELUDE, under olympus and JAX on 4 devices: its stdout."""
    return run_with_jax(textwrap.dedent(PRELUDE) + textwrap.dedent(code))


def test_types_carry_shardings_through_ops_eagerly_and_under_jit():
    out = run(
        """
        def prog(ox, a):
            x = put(ox, a, "x")
            xy = put(ox, a, ("x", "y"))
            w = put(ox, a.T, None, "y")
            def body(x):
                return [dims(ox, v) for v in (
                    x, x * 2 + 1, ox.jnp.sin(x), x.sum(0), x.sum(1), x.T,
                    x.reshape(4, 2, 4), x.reshape(32), x[None], ox.jnp.expand_dims(x, 2),
                    ox.jnp.broadcast_to(x[:, None], (8, 3, 4)), x.astype(ox.jnp.int32),
                    x @ w, ox.jnp.maximum(x, 0.0), x + ox.jnp.ones(4),
                    ox.jnp.cumsum(x, 1), x[:, 1:3], x[:, 1], ox.jnp.concatenate([x, x], 1),
                    ox.jnp.pad(x, ((0, 0), (1, 1))), ox.jnp.roll(x, 1, axis=1),
                    ox.jnp.stack([x, x], 2), ox.lax.dynamic_slice_in_dim(x, 1, 2, axis=1),
                    ox.nn.softmax(x, axis=-1), ox.jnp.sort(x, axis=1),
                )]
            traced = []
            ox.jit(lambda v: traced.append(body(v)) or v)(x)
            spec = tuple(ox.typeof(x).sharding.spec)
            axes = ox.typeof(x).sharding.mesh.axis_names
            return body(x), traced[0], dims(ox, xy), spec, tuple(axes)
        agree(prog, a)
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_conflicting_shardings_raise_as_in_jax():
    out = run(
        """
        def conflict(ox, a, make):
            try:
                make(ox, put(ox, a, "x"), put(ox, a, "y"))
            except Exception as err:
                return type(err).__name__, str(err)
            return None
        cases = [
            lambda ox, x, y: x + y,
            lambda ox, x, y: ox.jit(lambda u, v: u * v)(x, y),
            lambda ox, x, y: put(ox, a, None, "x") @ put(ox, a.T, "y"),
            lambda ox, x, y: ox.jit(lambda u: u @ u.T)(x),
            lambda ox, x, y: x.reshape(2, 16),
        ]
        for make in cases:
            ours, theirs = run_both(lambda ox, a: conflict(ox, a, make), a)
            assert ours[0] == theirs[0] == "ShardingTypeError", (ours, theirs)
            print(ours[1])
        """
    )
    lines = out.strip().splitlines()
    assert (
        "add got incompatible shardings for broadcasting: ('x', None), ('y', None)"
        in lines[0]
    )
    assert "('x', None), ('y', None)" in lines[1]
    assert (
        "contracting dimensions to have consistent sharding, got ('x',) and ('y',)"
        in lines[2]
    )
    assert "illegally sharded result: f32[8@x,8@x]" in lines[3]
    assert "f32[8@x,4], new sizes: (2, 16)" in lines[4]


def test_results_are_laid_out_as_their_types_say_and_reshard_changes_them():
    out = run(
        """
        def prog(ox, a):
            x = put(ox, a, "x")
            f = ox.jit(lambda v: (ox.jnp.tanh(v) * 2).T)
            y = f(x)
            moved = ox.reshard(x, ox.P(None, "y"))
            z = moved * 3
            with ox.set_mesh(mesh_of(ox)):
                auto = ox.sharding.auto_axes(lambda v: v + 1, out_sharding=ox.P("y"))(x)
            return (y, tuple(y.sharding.spec), dims(ox, y), z, dims(ox, z),
                    tuple(z.sharding.spec), dims(ox, auto), ox.grad(lambda v: (f(v) ** 2).sum())(x))
        agree(prog, a)
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_auto_meshes_type_values_unsplit_as_jax():
    """On Auto axes a value's type names its mesh, unsplit (`P(None, None)`,
    as JAX's), also for traced values inside jit and set_mesh; the IR is as
    before (its types hold no unsplit layout)."""
    from jax_oracle import run_both

    def prog(ox, a):
        mesh = ox.make_mesh((1,), ("x",), axis_types=(ox.sharding.AxisType.Auto,))
        x = ox.device_put(a, ox.NamedSharding(mesh, ox.P("x")))
        seen = []
        ox.jit(lambda v: seen.append(repr(ox.typeof(v * 2).sharding)) or v)(x)
        with ox.set_mesh(mesh):
            ox.jit(lambda v: seen.append(repr(ox.typeof(v.T).sharding)) or v)(a)
        return repr(ox.typeof(x).sharding), seen

    ours, theirs = run_both(prog, np.ones((2, 3), np.float32))
    assert ours == theirs and "spec=P(None, None)" in ours[0], (ours, theirs)
    mesh = olympus.make_mesh((1,), ("x",), axis_types=(olympus.sharding.AxisType.Auto,))
    x = olympus.device_put(
        np.ones((2, 3), np.float32), olympus.NamedSharding(mesh, olympus.P("x"))
    )
    assert "f32[2,3]" in str(olympus.make_olympuspr(lambda v: v * 2)(x))


def test_sharded_types_print_parse_and_compare():
    typed = ShapedArray((8, 4), np.float32, sharding=AvalSharding(None, ("x", None)))
    plain = ShapedArray((8, 4), np.float32)
    assert typed.str_short() == "f32[8@x,4]" and typed != plain
    assert str(typed) == "float32[8@x,4]"  # JAX's str of a type
    assert hash(plain) == hash(ShapedArray((8, 4), np.float32))
    pair = ShapedArray((6,), np.float32, sharding=AvalSharding(None, (("x", "y"),)))
    assert pair.str_short() == "f32[6@(x,y)]"
    text = "{ lambda ; a:f32[8@x,4]. let b:f32[8@x,4] = sin a in (b,) }"
    program = parse(text).olympuspr
    assert program.invars[0].aval.str_short() == "f32[8@x,4]"
    assert program.invars[0].aval.sharding.spec == ("x", None)
    assert str(program) == text.replace(" let b", " let\n    b").replace(
        " in", "\n  in"
    )


@pytest.mark.parametrize("spec", [("x",), (None, "x")])
def test_one_device_explicit_mesh_agrees_with_jax(spec):
    from jax_oracle import agree

    def prog(ox, a):
        kinds = (ox.sharding.AxisType.Explicit,)
        mesh = ox.make_mesh((1,), ("x",), axis_types=kinds)
        x = ox.device_put(a, ox.NamedSharding(mesh, ox.P(*spec)))
        return ox.jit(lambda v: v.sum(0) * 2)(x), (x * 3).T

    agree(prog, np.arange(6.0, dtype=np.float32).reshape(2, 3))


def test_gradients_of_a_data_parallel_step_in_explicit_mode():
    """A weight's gradient contracts the split batch: unsplit, as JAX's
    transpose rules make it; the input's gradient keeps the batch split."""
    out = run(
        """
        def prog(ox, a, w):
            ox.set_mesh(mesh_of(ox))
            x, w = put(ox, a / 32, "x"), put(ox, w)
            loss = lambda w, x: (ox.jnp.tanh(x @ w) ** 2).mean()
            gw, gx = ox.jit(ox.grad(loss, argnums=(0, 1)))(w, x)
            eager = ox.grad(loss)(w, x)
            return gw, gx, dims(ox, gw), dims(ox, gx), eager
        agree(prog, a, np.eye(4, dtype=np.float32) * 0.5)
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_unsplit_types_and_out_sharding_agree_with_jax():
    """An unsplit value on Explicit axes has `P(None, ...)` in its type; dot,
    matmul, einsum, tensordot, dot_general, reshape and the random samplers
    take `out_sharding=`, and a contraction over dimensions split alike is refused without it."""
    out = run(
        """
        def spec(ox, v):
            return dims(ox, v), tuple(ox.typeof(v).sharding.spec)
        def prog(ox, a):
            P, mesh = ox.P, mesh_of(ox)
            u, w, x = put(ox, a, None, "x"), put(ox, a.T, "x"), put(ox, a, "x")
            jnp, lax = ox.jnp, ox.lax
            dn = (((1,), (0,)), ((), ()))
            with ox.set_mesh(mesh):
                got = [spec(ox, v) for v in (
                    put(ox, a), put(ox, a) * 2, ox.jit(lambda v: v + 1)(put(ox, a)),
                    jnp.dot(u, w, out_sharding=P("y")), jnp.matmul(u, w, out_sharding=P()),
                    jnp.einsum("ij,jk->ik", u, w, out_sharding=P(None, "y")),
                    jnp.tensordot(u, w, 1, out_sharding=P("x")),
                    lax.dot_general(u, w, dn, out_sharding=P("y")),
                    ox.jit(lambda p, q: jnp.dot(p, q, out_sharding=P("y")))(u, w),
                    jnp.reshape(x, (2, 16), out_sharding=P("x")),
                    ox.jit(lambda v: lax.reshape(v, (2, 16), out_sharding=P("x")))(x),
                    ox.jit(lambda v: ox.reshard(v, P(None, "y")))(x),
                    jnp.dot(u, w, out_sharding=ox.NamedSharding(mesh, P("y"))),
                    ox.vmap(lambda p: jnp.dot(p, w, out_sharding=P("y")))(
                        jnp.stack([u, u])
                    ),
                )]
                key = ox.random.key(0)
                drawn = (
                    ox.random.normal(key, (8, 4), out_sharding=P("x")),
                    ox.random.uniform(key, (8, 4), out_sharding=P(None, "y")),
                    ox.jit(lambda k: ox.random.bits(k, (8,), out_sharding=P("x")))(key),
                    ox.random.randint(key, (4, 4), 0, 9, out_sharding=P("y")),
                )
                got += [spec(ox, v) for v in drawn]
                inside = []
                ox.jit(lambda v: inside.append(spec(ox, v)) or v)(put(ox, a))
            return got, inside, drawn, jnp.dot(u, w, out_sharding=ox.NamedSharding(mesh, P("y")))
        agree(prog, a)
        def refused(ox, a, make):
            try:
                make(ox)
            except ValueError as err:  # olympus's MeshNotSetError is one
                return "ValueError", str(err)
            except Exception as err:
                return type(err).__name__, str(err)
            return None
        cases = [
            lambda ox: put(ox, a, None, "x") @ put(ox, a.T, "x"),
            lambda ox: ox.jit(ox.jnp.dot)(put(ox, a, None, "x"), put(ox, a.T, "x")),
            lambda ox: ox.jnp.dot(put(ox, a), put(ox, a.T), out_sharding=ox.P("y")),
        ]
        for make in cases:
            ours, theirs = run_both(lambda ox, a: refused(ox, a, make), a)
            assert ours[0] == theirs[0], (ours, theirs)
            print(ours[1])
        """
    )
    lines = out.strip().splitlines()
    for line in lines[:2]:
        assert "specify the output sharding via the `out_sharding` parameter" in line
        assert "lhs_contracting_spec=('x',) and rhs_contracting_spec=('x',)" in line
    assert "no mesh is in scope" in lines[2]


def test_gathers_and_scans_carry_shardings_as_in_jax():
    """A gather keeps the layout of the operand's dimensions taken whole; a
    scan's stacked outputs are unsplit along the scan and laid out as each
    step's output."""
    out = run(
        """
        def prog(ox, a):
            x, c = put(ox, a, "x"), put(ox, a, None, "y")
            idx = ox.jnp.array([0, 2, 1])
            row = put(ox, np.ones(4, np.float32), "y")
            scan = ox.lax.scan
            def body(x, c, idx, row):
                return (
                    x[:, idx], ox.jnp.take(x, idx, axis=1), c[idx], c[1], x[:, 2],
                    scan(lambda cr, _: (cr * 2, cr), row, None, length=3),
                    scan(lambda cr, r: (cr + r, r * 2), ox.jnp.zeros(4), c),
                    scan(lambda cr, r: (cr, r.sum(0)), 0.0, c.reshape(2, 4, 4)),
                )
            traced = []
            ox.jit(lambda *v: traced.append(body(*v)) or 0)(x, c, idx, row)
            types = lambda t: ox.tree_util.tree_map(lambda v: dims(ox, v), t)
            got = body(x, c, idx, row)
            return got, types(got), types(traced[0])
        agree(prog, a)
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_more_primitives_carry_layouts_and_refuse_as_jax():
    """Sharding rules of slice/pad/dynamic_slice (kept where the size stays
    divisible), concatenate, sort, top_k, scatter, gather (take_along_axis),
    conv, fft and bitcast; JAX's refusals (sorting, running reductions,
    windows, dynamic_update_slice, gathers and scans along split dimensions)
    raise what JAX raises; `typeof` inside jit without `set_mesh` reports the
    arguments' mesh; an eager loop run on two layouts keeps each one's."""
    out = run(
        """
        def prog(ox, a):
            x, xy, u = put(ox, a, "x"), put(ox, a, "x", "y"), put(ox, a, None, "y")
            lax, jnp = ox.lax, ox.jnp
            def body(x, xy, u):
                img = x.reshape(2, 1, 4, 4)
                return [dims(ox, v) for v in (
                    lax.dynamic_slice(x, (1, 0), (4, 4)), lax.dynamic_slice(u, (0, 1), (8, 2)),
                    lax.pad(xy, 0.0, ((1, 1, 0), (1, 1, 0))), lax.slice(x, (2, 0), (6, 4)),
                    *jnp.split(xy, 2, axis=1),
                    jnp.concatenate([x, x]), jnp.sort(x, axis=1), *lax.top_k(x, 2),
                    jnp.argsort(x, axis=1), jnp.take_along_axis(x, jnp.argsort(x, axis=1), 1),
                    jnp.median(u, axis=0), jnp.percentile(x, 50.0, axis=1),
                    u.at[jnp.array([0, 2])].add(1.0),
                    lax.conv_general_dilated(img, jnp.ones((3, 1, 2, 2)), (1, 1), "SAME"),
                    jnp.fft.fft(xy, axis=1), lax.bitcast_convert_type(xy, np.int32),
                    lax.rev(xy, (0,)), lax.fori_loop(0, 2, lambda i, c: c * 2, u),
                    lax.cond(True, lambda v: v + 1, lambda v: v - 1, xy),
                )]
            traced = []
            ox.jit(lambda *v: traced.append(body(*v)) or v[0])(x, xy, u)
            with ox.set_mesh(mesh_of(ox)):  # JAX's eager scatter needs one
                return body(x, xy, u), traced[0]
        agree(prog, a)

        def kind(ox, make):
            try:
                make(ox)
            except Exception as err:
                return "ValueError" if isinstance(err, ValueError) else type(err).__name__
            return None
        x = lambda ox: put(ox, a, "x")
        u = lambda ox: put(ox, a, None, "y")
        def repeat_split(ox):
            with ox.set_mesh(mesh_of(ox)):
                return ox.jnp.repeat(x(ox), 2, axis=0)
        refusals = [
            lambda ox: ox.jnp.sort(x(ox), axis=0),
            lambda ox: ox.jit(lambda v: ox.jnp.argsort(v, axis=1))(u(ox)),
            lambda ox: ox.lax.top_k(u(ox), 2),
            lambda ox: ox.jnp.cumsum(x(ox), axis=0),
            lambda ox: ox.jit(lambda v: ox.lax.cummax(v, axis=1))(u(ox)),
            lambda ox: ox.lax.dynamic_update_slice(x(ox), ox.jnp.zeros((2, 4)), (1, 0)),
            lambda ox: ox.jit(lambda v: ox.lax.reduce_window(v, 0.0, ox.lax.add, (1, 2), (1, 1), "VALID"))(u(ox)),
            lambda ox: ox.jit(lambda v: v[:, ox.jnp.array([0, 2])])(u(ox)),
            lambda ox: ox.jit(lambda v: v[ox.jnp.array([0, 2])])(x(ox)),
            lambda ox: ox.jit(lambda v: v.at[ox.jnp.array([0, 2])].add(1.0))(x(ox)),
            lambda ox: ox.jit(lambda v: ox.jnp.concatenate([v, put(ox, a, "y")]))(x(ox)),
            lambda ox: ox.lax.conv_general_dilated(
                put(ox, a.reshape(2, 4, 2, 2), None, "x"), ox.jnp.ones((3, 4, 1, 1)), (1, 1), "SAME"),
            lambda ox: ox.lax.scan(lambda c, r: (c + r, r), ox.jnp.zeros(4), x(ox)),
            repeat_split,
        ]
        for i, make in enumerate(refusals):
            ours, theirs = run_both(lambda ox, a: kind(ox, make), a)
            assert ours == theirs and ours in ("ShardingTypeError", "ValueError"), (i, ours, theirs)

        def inside(ox, a):
            seen = []
            def f(v, w):
                sh = lambda t: (tuple(ox.typeof(t).sharding.spec), ox.typeof(t).sharding.mesh.axis_names)
                seen.append([sh(t) for t in (v, w, v.sum(0), v * 2, w + 1, v.T)])
                return v
            ox.jit(f)(put(ox, a, "x"), put(ox, a))
            return seen
        agree(inside, a)

        def grads(ox, a):  # transposes' zeros take the cotangents' layout
            jnp, lax = ox.jnp, ox.lax
            fs = (
                lambda v: jnp.take_along_axis(v, jnp.argsort(v, axis=1), 1),
                lambda v: jnp.median(v, axis=1), lambda v: lax.top_k(v, 2)[0],
                lambda v: lax.dynamic_slice(v, (0, 1), (8, 2)),
                lambda v: v[:, jnp.array([0, 2])], lambda v: v[2:6],
                lambda v: jnp.concatenate([v, v]),
            )
            x = put(ox, a, "x")
            gs = [ox.jit(ox.grad(lambda v: (f(v) ** 2).sum()))(x) for f in fs]
            return gs, [dims(ox, g) for g in gs]
        agree(grads, a)

        def batched(ox, a):  # vmap's gathers and scatters keep the batch's split
            jnp, lax = ox.jnp, ox.lax
            fs = (
                lambda r: jnp.sort(r), lambda r: r[jnp.array([0, 2])],
                lambda r: lax.dynamic_slice(r, (jnp.argmax(r),), (1,)),
                lambda r: r.at[jnp.argmax(r)].set(0.0), lambda r: jnp.cumsum(r),
            )
            x = put(ox, a, "x")
            ys = [ox.jit(ox.vmap(f))(x) for f in fs]
            return ys, [dims(ox, y) for y in ys]
        agree(batched, a)
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_vmap_of_jit_linalg_and_nonzero_follow_jax():
    """vmap of a jitted function (and of jnp functions run as one program)
    keeps the batch's split; matrix decompositions keep the batch dims'
    layout and refuse split matrix dims; jnp.nonzero refuses a split array
    (its positions are a running count over the whole array), approx_max_k
    one split along its reduction dimension."""
    out = run(
        """
        m = np.eye(4, dtype=np.float32) * 4 + np.arange(16, dtype=np.float32).reshape(4, 4) / 64
        b = np.stack([m + m.T] * 4)
        def batched(ox, a):
            jnp, x = ox.jnp, put(ox, a, "x")
            ys = [
                ox.vmap(lambda r: jnp.pad(r, (1, 1)))(x),
                ox.vmap(ox.jit(lambda r: r * 2))(put(ox, a, "x", "y")),
                ox.vmap(ox.jit(lambda r: r.sum()), in_axes=1)(put(ox, a, None, "y")),
                ox.jit(ox.vmap(ox.jit(lambda r, s: r * s)))(x, x),
                *ox.lax.approx_max_k(x, 2),
            ]
            with ox.set_mesh(mesh_of(ox)):  # JAX's eager grad here needs one
                loss = lambda v: ox.vmap(ox.jit(lambda r: (r**2).sum()))(v).sum()
                ys.append(ox.grad(loss)(x))
            return ys, [dims(ox, y) for y in ys]
        agree(batched, a)

        def decompositions(ox, b):
            L, u = ox.lax.linalg, put(ox, b, "x")
            lower = L.cholesky(u)
            outs = (
                lower, *L.qr(u), *L.eigh(u), *L.lu(u), *L.svd(u),
                *L.eig(u, compute_left_eigenvectors=False),
                L.triangular_solve(lower, put(ox, b, "x", None, "y"), left_side=True, lower=True),
                L.triangular_solve(put(ox, b, None, "y"), u, left_side=True, lower=True),
                ox.jit(L.cholesky)(u), ox.jnp.linalg.solve(u, u),
            )
            return [dims(ox, v) for v in outs], lower
        agree(decompositions, b)
        # a transpose's cotangent (no layout) takes the other operand's batch
        # layout (JAX refuses this gradient at its tril's select)
        solve = lambda v: olympus.lax.linalg.triangular_solve(v, v * 2 + 1, left_side=True, lower=True)
        grad = olympus.jit(olympus.grad(lambda v: solve(v).sum()))
        g = grad(put(olympus, b, "x"))
        np.testing.assert_allclose(g, grad(b), rtol=1e-6)
        assert dims(olympus, g) == "4@x,4,4]", dims(olympus, g)

        def kind(ox, make):
            try:
                make(ox)
            except Exception as err:
                return type(err).__name__
            return None
        L = lambda ox: ox.lax.linalg
        refusals = [
            lambda ox: L(ox).qr(put(ox, b, None, "x")),
            lambda ox: ox.jit(L(ox).svd)(put(ox, b, None, "y")),
            lambda ox: L(ox).lu(put(ox, b, None, None, "x")),
            lambda ox: L(ox).cholesky(put(ox, b, None, "x")),
            lambda ox: ox.jnp.nonzero(put(ox, a, "x")),
            lambda ox: ox.jit(lambda v: ox.jnp.nonzero(v, size=3))(put(ox, a, None, "y")),
            lambda ox: ox.jnp.argwhere(put(ox, a, "x")),
            lambda ox: ox.jnp.flatnonzero(put(ox, a, "x")),
            lambda ox: ox.lax.approx_min_k(put(ox, a, None, "y"), 2),
        ]
        for i, make in enumerate(refusals):
            ours, theirs = run_both(lambda ox, a: kind(ox, make), a)
            assert ours == theirs == "ShardingTypeError", (i, ours, theirs)
        agree(lambda ox, a: ox.jnp.nonzero(put(ox, a) - 3), a)
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_values_made_from_host_data_under_set_mesh_lie_on_the_mesh():
    """Under `set_mesh` of an Explicit mesh, JAX places an eager value made
    from no mesh-placed operand on the mesh, unsplit: creation functions as
    `P(None, ...)`, jnp.array as `P()`; a later op on a split value composes."""
    out = run(
        """
        made = [
            lambda ox: ox.jnp.arange(8),
            lambda ox: ox.jnp.eye(4),
            lambda ox: ox.lax.iota(np.int32, 4),
            lambda ox: ox.jnp.zeros((2, 3)),
            lambda ox: ox.jnp.full((2,), 3.0),
            lambda ox: ox.jnp.ones(4) * 2,
            lambda ox: ox.jnp.sin(1.0),
            lambda ox: ox.jnp.array(np.ones(3)),
            lambda ox: ox.jnp.asarray([1.0, 2.0]),
            lambda ox: ox.jnp.array(3.0),
            lambda ox: ox.jnp.arange(32.0).reshape(8, 4) + put(ox, a, "x"),
        ]
        def layout(ox, make):
            with ox.set_mesh(mesh_of(ox)):
                v = make(ox)
                return str(v.sharding.spec), str(ox.typeof(v).sharding.spec), v
        for make in made:
            ours, theirs = run_both(lambda ox: layout(ox, make)[:2])
            assert ours == theirs, (ours, theirs)
            agree(lambda ox: layout(ox, make)[2])
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_auto_and_explicit_axes_take_the_sharding_at_the_call():
    """JAX's auto_axes / explicit_axes take `out_sharding=` / `in_sharding=`
    when decorating or when calling; missing both is a TypeError."""
    out = run(
        """
        def prog(ox, a):
            with ox.set_mesh(mesh_of(ox)):
                add = ox.sharding.auto_axes(lambda u, v: u + v)
                r = add(put(ox, a, "x"), put(ox, a, None, "y"), out_sharding=ox.P("x", None))
                total = ox.sharding.explicit_axes(lambda u: u * 2)
                t = total(a, in_sharding=ox.P("x", None))
                return r, tuple(r.sharding.spec), t
        agree(prog, a)
        def missing(ox, a):
            with ox.set_mesh(mesh_of(ox)):
                try:
                    ox.sharding.auto_axes(lambda u: u)(put(ox, a, "x"))
                except TypeError:
                    return "TypeError"
        agree(missing, a)
        def inside_explicit_axes(ox, a):
            kinds = (ox.sharding.AxisType.Auto,) * 2
            seen = []
            def f(u):
                seen.append(dims(ox, u))
                return u.sum(0)
            g = ox.sharding.explicit_axes(f, axes="x", in_sharding=ox.P("x", None))
            with ox.set_mesh(ox.make_mesh((2, 2), ("x", "y"), axis_types=kinds)):
                return ox.jit(g)(a), g(a), seen
        agree(inside_explicit_axes, a)
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_results_under_set_mesh_go_onto_the_mesh_as_in_jax():
    """Under `set_mesh` JAX places a jit's results, a random key and an op on
    an Array made before the mesh on the mesh, unsplit: on Explicit axes
    `P(None, ...)` (`P()` where JAX's type keeps a meshless operand's),
    on Auto axes `P()`. A jit or an op whose one-device result was cached
    before the mesh is placed too, and is on one device again after it."""
    out = run(
        """
        def layouts(ox, kind):
            kinds = (getattr(ox.sharding.AxisType, kind),) * 2
            mesh = ox.make_mesh((2, 2), ("x", "y"), axis_types=kinds)
            before = ox.jnp.arange(4.0)
            double = ox.jit(lambda v: v * 2)
            double(before), double(before), before * 2, before * 2  # cached hits
            cases = {
                "linspace": lambda: ox.jnp.linspace(0, 1, 5),
                "normal": lambda: ox.random.normal(ox.random.key(0), (3,)),
                "key": lambda: ox.random.key(0),
                "PRNGKey": lambda: ox.random.PRNGKey(0),
                "jit host": lambda: ox.jit(lambda v: v * 2)(np.ones((2, 3), np.float32)),
                "jit scalar": lambda: ox.jit(lambda v: v * 2)(3.0),
                "jit cached": lambda: double(before),
                "jit sin": lambda: ox.jit(ox.jnp.sin)(before),
                "jit reshape": lambda: ox.jit(lambda v: v.reshape(2, 2).T)(before),
                "jit no args": lambda: ox.jit(lambda: ox.jnp.ones(3))(),
                "mul": lambda: before * 2,
                "sin": lambda: ox.jnp.sin(before),
                "lax.exp of NumPy": lambda: ox.lax.exp(np.ones(3, np.float32)),
                "transpose": lambda: before.reshape(2, 2).T,
                "matmul": lambda: before.reshape(2, 2) @ before.reshape(2, 2),
            }
            if kind == "Explicit":  # (JAX splits a key Auto-laid as P(None,))
                cases["split"] = lambda: ox.random.split(ox.random.key(0))
            seen = {}
            with ox.set_mesh(mesh):
                for name, make in cases.items():
                    v = make()
                    t = ox.typeof(v)
                    held = None if kind == "Auto" else str(t.sharding)
                    seen[name] = (str(v.sharding), held, str(t))
            after = double(before), before * 2, ox.jnp.sin(before)
            seen["after"] = [str(v.sharding) for v in after]
            return seen
        for kind in ("Explicit", "Auto"):
            ours, theirs = run_both(layouts, kind)
            assert ours == theirs, [(k, ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]]
        def values(ox):
            with ox.set_mesh(mesh_of(ox)):
                before = ox.jnp.arange(4.0)
                return (ox.jnp.linspace(0, 1, 5), ox.random.normal(ox.random.key(0), (3,)),
                        ox.jit(lambda v: ox.jnp.sin(v) @ v)(before), before * 2)
        agree(values)
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_inspect_array_sharding_out_info_and_laid_out_structs_as_in_jax():
    """debug.inspect_array_sharding calls back eagerly with the Array's
    layout and, under jit, with the one XLA's partitioner chose (under grad
    and vmap too, and in a jit that grad, vmap or jvp runs eagerly, over its
    arguments' mesh as JAX's); jit(f).trace(x).out_info names an AbstractMesh,
    lower's the Mesh, and a Compiled says its input_shardings/output_shardings;
    a ShapeDtypeStruct with a NamedSharding is traced laid out so by jit's
    trace/lower and eval_shape."""
    out = run(
        """
        def inspected(ox, a):
            auto = ox.make_mesh((2, 2), ("x", "y"), axis_types=(ox.sharding.AxisType.Auto,) * 2)
            x = put(ox, a, "x")
            xa = ox.device_put(a, ox.NamedSharding(auto, ox.P("x", "y")))
            seen = []
            note = lambda tag: lambda s: seen.append((tag, str(s)))
            ox.debug.inspect_array_sharding({"x": x, "one": ox.jnp.ones(3)}, callback=note("eager"))
            def f(v):
                w = ox.jnp.sin(v) * 2
                ox.debug.inspect_array_sharding(w, callback=note("jit"))
                ox.debug.inspect_array_sharding((w.T, w.sum(0)), callback=note("tree"))
                return w
            def constrained(v):
                c = ox.lax.with_sharding_constraint(v, ox.NamedSharding(auto, ox.P(None, "x")))
                ox.debug.inspect_array_sharding(c + 1, callback=note("constrained"))
                return c
            ox.jit(f)(x), ox.jit(f)(xa), ox.jit(f)(ox.jnp.ones((2, 2))), ox.jit(constrained)(xa)
            ox.jit(ox.grad(lambda v: f(v).sum()))(xa * 1.5)
            ox.jit(ox.vmap(f))(xa + 1)
            # an eager pjit (a transformed jit) runs over its arguments' mesh
            g = ox.grad(lambda v: ox.jit(f)(v).sum())(xa * 2.5)
            b = ox.vmap(ox.jit(f))(xa + 2)
            t = ox.jvp(ox.jit(f), (xa,), (xa,))[1]
            return seen, [str(v.sharding) for v in (g, b, t)]
        ours, theirs = run_both(inspected, a)
        assert ours == theirs, (ours, theirs)
        def staged(ox, a):
            x = put(ox, a, "x")
            f = ox.jit(lambda v: (v * 2, v.sum(0)))
            struct = ox.ShapeDtypeStruct(a.shape, a.dtype, sharding=x.sharding)
            seen = []
            g = lambda v: seen.append((str(ox.typeof(v)), str(ox.typeof(v).sharding))) or v * 2
            compiled = [f.lower(v).compile() for v in (x, ox.jnp.ones((2, 2)))]
            placed = [(str(c.input_shardings), str(c.output_shardings)) for c in compiled]
            return (placed, str(f.trace(x).out_info), str(f.lower(x).out_info),
                    str(ox.jit(g).trace(struct).out_info), str(ox.jit(g).lower(struct).out_info),
                    str(ox.eval_shape(g, struct)), set(seen))  # (JAX traces g once)
        ours, theirs = run_both(staged, a)
        assert ours == theirs, (ours, theirs)
        print("ok")
        """
    )
    assert out.strip() == "ok"
