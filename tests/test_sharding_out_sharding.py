"""JAX's `out_sharding=` / `sharding=` / `device=` keywords (issue 28) and the
top-level `make_array_from_callback` / `make_array_from_process_local_data`:
each program runs under olympus and JAX 0.10.2 on 4 CPU devices (one
subprocess per test, tests/test_sharding_explicit.py's `run`) and is
compared by tests/jax_oracle.py, types by their dimensions (`8@x,4`).
"""

from test_sharding_explicit import run  # the same prelude: dims, mesh_of, put, a


def test_out_sharding_keywords_lay_results_out_eagerly_and_under_jit():
    out = run(
        """
        def prog(ox, a):
            m, P = mesh_of(ox), ox.P
            x, xi = put(ox, a, "x"), put(ox, np.arange(8, dtype=np.int32) % 4, "x")
            img, ker = put(ox, a.reshape(2, 1, 4, 4), "x"), ox.jnp.ones((3, 1, 2, 2))
            def body(x, xi, img):
                lax, jnp = ox.lax, ox.jnp
                return [dims(ox, v) for v in (
                    jnp.array(x, out_sharding=P(None, "y")),
                    jnp.asarray(x, out_sharding=P("y")),
                    jnp.broadcast_to(x, (2, 8, 4), out_sharding=P(None, "x", "y")),
                    jnp.ravel(x, out_sharding=P("x")),
                    jnp.repeat(x, 2, axis=1, out_sharding=P("x", "y")),
                    jnp.bincount(xi, length=4, out_sharding=P()),
                    jnp.percentile(x, 50.0, axis=1, out_sharding=P("x")),
                    lax.broadcast(x, (2,), out_sharding=P("y", "x")),
                    lax.broadcast_in_dim(x, (8, 4, 3), (0, 1), out_sharding=P("x", "y")),
                    lax.broadcasted_iota(np.int32, (8, 4), 1, out_sharding=P("x", "y")),
                    lax.reduce_sum(x, (1,), out_sharding=P("y")),
                    lax.reduce(x, 0.0, lax.add, (0,), out_sharding=P("y")),
                    lax.full((8, 4), 1.0, sharding=ox.NamedSharding(m, P("x"))),
                    lax.conv_general_dilated(img, ker, (1, 1), "SAME", out_sharding=P("x")),
                )]
            with ox.set_mesh(m):
                traced = []
                ox.jit(lambda *v: traced.append(body(*v)) or v[0])(x, xi, img)
                values = (
                    ox.jnp.array(x, out_sharding=P(None, "y")),
                    ox.jnp.array(a, device=ox.NamedSharding(m, P("y"))),
                    ox.jnp.repeat(x, 2, axis=1, out_sharding=P("x", "y")),
                    ox.lax.full((8, 4), 1.0, sharding=ox.NamedSharding(m, P("x"))),
                    ox.jit(lambda v: ox.lax.reduce_sum(v, (0,), out_sharding=P("y")))(x),
                )
                return body(x, xi, img), traced[0], values, dims(ox, values[1])
        agree(prog, a)

        def split_bincount(ox, a):
            with ox.set_mesh(mesh_of(ox)):
                xi = put(ox, np.arange(8, dtype=np.int32) % 4, "x")
                return ox.jnp.bincount(xi, length=4, out_sharding=ox.P("x"))
        ours, theirs = run_both(split_bincount, a)
        assert type(ours.error).__name__ == type(theirs.error).__name__, (ours, theirs)
        assert "fully replicated" in str(ours.error), ours
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_make_array_from_callback_and_process_local_data_as_in_jax():
    out = run(
        """
        def build(ox, a):
            s = ox.NamedSharding(mesh_of(ox), ox.P("x"))
            calls = []
            def piece(index):
                calls.append(str(index))
                return a[index]
            x = ox.make_array_from_callback((8, 4), s, piece)
            whole = ox.NamedSharding(mesh_of(ox), ox.P())
            shards = sorted(
                (sh.device.id, str(sh.index), np.asarray(sh.data).tolist())
                for sh in x.addressable_shards
            )
            return (
                x, dims(ox, x), sorted(calls), shards,
                isinstance(x.addressable_shards[0], ox.Shard),
                ox.make_array_from_callback((8, 4), whole, lambda i: a[i]),
                ox.make_array_from_callback((8,), s, lambda i: np.arange(8)[i]),
                ox.make_array_from_process_local_data(s, a),
                ox.make_array_from_process_local_data(s, a, (8, 4)),
            )
        agree(build, a)

        def other_dtype(ox, a):
            s = ox.NamedSharding(mesh_of(ox), ox.P("x"))
            f = lambda i: np.arange(8)[i]
            return ox.make_array_from_callback((8,), s, f, dtype=np.float32)

        def other_shape(ox, a):
            s = ox.NamedSharding(mesh_of(ox), ox.P("x"))
            return ox.make_array_from_process_local_data(s, a, (16, 4))

        def whole_piece(ox, a):
            s = ox.NamedSharding(mesh_of(ox), ox.P("x"))
            return ox.make_array_from_callback((8, 4), s, lambda i: a)

        for wrong in (other_dtype, other_shape, whole_piece):
            ours, theirs = run_both(wrong, a)
            assert isinstance(ours.error, ValueError), ours
            assert isinstance(theirs.error, ValueError), theirs
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_at_get_and_updates_take_out_sharding_where_jax_asks_for_it():
    """`x.at[...].get/set/add(out_sharding=)`: what JAX's gather and scatter
    refusals ask for; with it the result is laid out so, as in JAX."""
    out = run(
        """
        def prog(ox, a):
            P, jnp = ox.P, ox.jnp
            x, u = put(ox, a, "x"), put(ox, a, None, "y")
            cols, rows = jnp.array([0, 2]), jnp.array([0, 2])
            with ox.set_mesh(mesh_of(ox)):
                values = (
                    ox.jit(lambda v: v.at[:, cols].get(out_sharding=P()))(u),
                    ox.jit(lambda v: v.at[rows].get(out_sharding=P(None, "y")))(x),
                    ox.jit(lambda v: v.at[rows].add(1.0, out_sharding=P("x")))(x),
                    ox.jit(lambda v: v.at[:, 1].set(5.0, out_sharding=P(None, "y")))(u),
                    x.at[rows].get(out_sharding=P()),
                )
            return values, [dims(ox, v) for v in values]
        agree(prog, a)
        print("ok")
        """
    )
    assert out.strip() == "ok"
