"""Explicit sharding under vmap of control flow (issue 28): a batch split
between devices keeps its layout through a scan, fori_loop, while_loop or
cond inside a vmapped jit (their batched bodies are typed from the batched
operands, as JAX's), so vmap of random.fold_in / split / uniform on split
keys keeps `@x`. Each program runs under olympus and JAX 0.10.2 on 4 CPU
devices (tests/test_sharding_explicit.py's pattern); types are compared by
their dimensions (`8@x,3`)."""

from test_sharding_explicit import run


def test_vmap_of_control_flow_keeps_the_batch_split_as_jax():
    out = run(
        """
        def mesh1(ox):
            return ox.make_mesh((4,), ("x",), axis_types=(ox.sharding.AxisType.Explicit,))

        def put1(ox, value):
            return ox.device_put(value, ox.NamedSharding(mesh1(ox), ox.P("x")))

        v8 = np.arange(8.0, dtype=np.float32)
        def scans(ox, a):
            lax, x = ox.lax, put1(ox, a)
            vj = lambda f: ox.vmap(ox.jit(f))(x)
            pair = lambda c, _: ((c[0] + c[1], c[1]), None)
            outs = [
                vj(lambda v: lax.scan(pair, (v + 1, v), None, length=3)[0]),
                ox.vmap(lambda v: lax.scan(pair, (v + 1, v), None, length=3)[0])(x),
                vj(lambda v: lax.scan(lambda c, t: (c + t, c * t), v, ox.jnp.arange(3.0))),
                vj(lambda v: lax.scan(lambda c, t: (c * t, c), v, None, length=2, reverse=True)),
                vj(lambda v: lax.fori_loop(0, 3, lambda i, c: c * 2 + i, v)),
                vj(lambda v: lax.while_loop(lambda c: c < 20, lambda c: c * 2 + 1, v)),
                vj(lambda v: lax.cond(True, lambda u: u * 2, lambda u: u + 1, v)),
                vj(lambda v: lax.cond(v > 3, lambda u: u * 2, lambda u: u + 1, v)),
                ox.jit(ox.vmap(lambda v: lax.fori_loop(0, 2, lambda i, c: c + v, v)))(x),
            ]
            leaves = ox.tree_util.tree_leaves(outs)
            return outs, [dims(ox, y) for y in leaves]
        agree(scans, v8)

        def keys(ox, a):
            r = ox.random
            ks = put1(ox, r.split(r.key(0), 8))
            outs = [
                ox.vmap(lambda k: r.fold_in(k, 3))(ks),
                ox.vmap(r.split)(ks),
                ox.vmap(lambda k: r.bits(k, (2,)))(ks),
                ox.vmap(lambda k: r.uniform(k))(ks),
            ]
            values = [r.key_data(o) for o in outs[:2]] + outs[2:]
            return values, [dims(ox, y) for y in outs]
        agree(keys, v8)
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_traced_out_info_carries_the_outputs_layouts_as_jax():
    """jit(f).trace(x).out_info (and .lower's) says each output's layout on
    the arguments' Explicit mesh (unsplit dimensions None); none without one."""
    out = run(
        """
        def info(ox, a):
            x = put(ox, a, "x")
            f = ox.jit(lambda v: (v * 2, v.sum(), v.T, v.sum(0), v @ ox.jnp.ones((4, 3))))
            layouts = lambda structs: [
                (s.shape, None if s.sharding is None else (
                    tuple(s.sharding.spec), tuple(s.sharding.mesh.axis_names)))
                for s in ox.tree_util.tree_leaves(structs)
            ]
            return (
                layouts(f.trace(x).out_info),
                layouts(f.lower(x).out_info),
                layouts(f.trace(a).out_info),
            )
        ours, theirs = run_both(info, a)
        assert ours == theirs, (ours, theirs)
        assert ours[0][0][1] == (("x", None), ("x", "y")), ours
        print("ok")
        """
    )
    assert out.strip() == "ok"
