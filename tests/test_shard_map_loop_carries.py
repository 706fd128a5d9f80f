"""shard_map(check_vma=True): loop carries keep the mesh axes they vary along.

As JAX 0.10.2's types: a fori_loop/while_loop/scan whose carry varies along
other axes after an iteration than its initial value does raises a TypeError
(LoopCarryVaryingError) when the body is traced, naming the axes and the fix
(pcast the initial carry); JAX inserts no pvary on a carry itself. An initial
carry made by `jnp.zeros_like(v)` or `lax.full_like(v, ...)` varies as `v` does,
so it needs none. Each case runs under olympus and JAX on 4 CPU devices,
eagerly and under jit (and its gradient where it runs).
"""

from test_sharding_api import run_with_jax

# What JAX does with each body: "ok", or the kind of exception it raises.
EXPECTED = {
    "fori inv->var": "TypeError",
    "fori python scalar": "TypeError",
    "fori traced trip count": "TypeError",
    "while inv->var": "TypeError",
    "scan inv->var": "TypeError",
    "scan ys vary": "ok",
    "fori var->inv": "TypeError",
    "fori var stays": "ok",
    "fori zeros_like": "ok",
    "fori full_like": "ok",
    "fori pcast init": "ok",
    "fori axis_index": "TypeError",
    "nested": "TypeError",
    "fori 2d pcast i": "ok",
    "fori 2d gains j": "TypeError",
}

CASES = """
    from jax_oracle import differences

    def prog(ox, x, case, check=True):
        P, A = ox.sharding.PartitionSpec, ox.sharding.AxisType
        mesh = ox.make_mesh((4,), ("i",), axis_types=(A.Auto,))
        mesh2 = ox.make_mesh((2, 2), ("i", "j"), axis_types=(A.Auto,) * 2)
        jnp, lax = ox.jnp, ox.lax
        pv = lambda v, a: lax.pcast(v, a, to="varying")
        fori = lambda body, init: lax.fori_loop(0, 3, body, init)
        m, out = mesh, P("i")
        body = {
            "fori inv->var": lambda v: fori(lambda k, c: c + v, jnp.zeros(2)),
            "fori python scalar": lambda v: fori(lambda k, c: c + v.sum(), 0.0),
            "fori traced trip count": lambda v: lax.fori_loop(
                0, lax.axis_index("i") + 1, lambda k, c: c + v, jnp.zeros(2)),
            "while inv->var": lambda v: lax.while_loop(
                lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + v), (0, jnp.zeros(2)))[1],
            "scan inv->var": lambda v: lax.scan(
                lambda c, e: (c + v, e), jnp.zeros(2), jnp.arange(3.0))[0],
            "scan ys vary": lambda v: lax.scan(
                lambda c, e: (c, c + v), jnp.zeros(2), jnp.arange(3.0))[1][0],
            "fori var->inv": lambda v: fori(lambda k, c: lax.psum(c, "i"), v),
            "fori var stays": lambda v: fori(lambda k, c: c * 2, v),
            "fori zeros_like": lambda v: fori(lambda k, c: c + v, jnp.zeros_like(v)),
            "fori full_like": lambda v: fori(lambda k, c: c * v, lax.full_like(v, 2.0)),
            "fori pcast init": lambda v: fori(lambda k, c: c + v, pv(jnp.zeros(2), "i")),
            "fori axis_index": lambda v: fori(
                lambda k, c: c + lax.axis_index("i"), jnp.zeros(2)),
            "nested": lambda v: fori(
                lambda k, c: lax.fori_loop(0, 2, lambda l, d: d + v, c), jnp.zeros(2)),
        }.get(case)
        if case == "fori 2d pcast i":
            m, body = mesh2, lambda v: fori(lambda k, c: c + v, pv(jnp.zeros(4), "i"))
        if case == "fori 2d gains j":
            m, out = mesh2, P("i", None)
            body = lambda v: fori(
                lambda k, c: c + lax.axis_index("j"), pv(jnp.zeros(4), "i"))
        f = ox.shard_map(body, mesh=m, in_specs=P("i"), out_specs=out, check_vma=check)
        return f(x), ox.jit(f)(x), ox.grad(lambda w: f(w).sum())(x)

    def kind(r):
        error = getattr(r, "error", None)
        return "ok" if error is None else next(
            k.__name__ for k in (TypeError, ValueError, Exception) if isinstance(error, k))

    x = np.arange(8.0, dtype=np.float32)
    for case in %r:
        ours, theirs = run_both(prog, x, case)
        print(case, kind(ours), kind(theirs), differences(ours, theirs),
              type(getattr(ours, "error", None)).__name__,
              str(getattr(ours, "error", "")).replace("\\n", " "), sep=" | ")
    unchecked = run_both(prog, x, "fori inv->var", False)
    print("unchecked", kind(unchecked[0]), kind(unchecked[1]),
          differences(*unchecked), sep=" | ")
"""


def test_loop_carries_keep_their_varying_axes_as_jax_on_four_devices():
    out = run_with_jax(CASES % (list(EXPECTED),))
    *rows, unchecked = [line.split(" | ") for line in out.splitlines()]
    assert [r[0] for r in rows] == list(EXPECTED)
    for case, ours, theirs, diffs, error, message in rows:
        assert (ours, theirs) == (EXPECTED[case], EXPECTED[case]), (case, message)
        assert diffs == "[]", (case, diffs)
        if ours == "TypeError":
            assert error == "LoopCarryVaryingError", (case, error)
            assert "carry input and carry output must have equal types" in message
            assert "check_vma=True; the loop at <string>:" in message, message
    gains = dict((r[0], r[5]) for r in rows)
    assert "{V:i} but the corresponding output" not in gains["fori inv->var"]
    assert "type f32[2]{V:i}, so" in gains["fori inv->var"]
    assert "lax.pcast(..., ('i',), to='varying')" in gains["fori inv->var"]
    assert "lax.pcast(..., ('j',), to='varying')" in gains["fori 2d gains j"]
    assert "f32[2]{V:i} but the corresponding output" in gains["fori var->inv"]
    assert "Revise the function" in gains["fori var->inv"]
    # with check_vma=False both run it (and agree)
    assert unchecked == ["unchecked", "ok", "ok", "[]"]
