"""shard_map over a mesh whose axes are all Explicit moves no data (issue 28).

As JAX 0.10.2: there each argument's type must already be laid out as its
in_spec says, else ValueError (ShardMapInSpecsError: reshard it first); on
an Auto mesh shard_map lays the arguments out itself. Each case runs under
olympus and JAX on 4 CPU devices, eagerly and under jit.
"""

from test_sharding_api import run_with_jax

# What JAX does with each call: "ok", or the kind of exception it raises.
EXPECTED = {
    "split as in_specs": "ok",
    "split otherwise": "ValueError",
    "split, in_specs unsplit": "ValueError",
    "host data, in_specs split": "ValueError",
    "host data, in_specs unsplit": "ok",
    "two axes as in_specs": "ok",
    "auto mesh, host data": "ok",
}

CASES = """
    from jax_oracle import differences

    def prog(ox, a, case):
        P, A = ox.sharding.PartitionSpec, ox.sharding.AxisType
        mesh = ox.make_mesh((2, 2), ("x", "y"), axis_types=(A.Explicit,) * 2)
        auto = ox.make_mesh((2, 2), ("x", "y"), axis_types=(A.Auto,) * 2)
        put = lambda *spec: ox.device_put(a, ox.NamedSharding(mesh, P(*spec)))
        total = lambda v: ox.lax.psum(v.sum(0), ("x", "y"))
        arg, spec, m = {
            "split as in_specs": (put("x"), P("x"), mesh),
            "split otherwise": (put("y"), P("x"), mesh),
            "split, in_specs unsplit": (put("x"), P(), mesh),
            "host data, in_specs split": (a, P("x"), mesh),
            "host data, in_specs unsplit": (a, P(), mesh),
            "two axes as in_specs": (put("x", "y"), P("x", "y"), mesh),
            "auto mesh, host data": (a, P("x"), auto),
        }[case]
        f = ox.shard_map(total, mesh=m, in_specs=spec, out_specs=P(), check_vma=False)
        return f(arg), ox.jit(f)(arg)

    def kind(r):
        error = getattr(r, "error", None)
        return "ok" if error is None else next(
            k.__name__ for k in (ValueError, Exception) if isinstance(error, k))

    a = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    for case in %r:
        ours, theirs = run_both(prog, a, case)
        print(case, kind(ours), kind(theirs), differences(ours, theirs),
              type(getattr(ours, "error", None)).__name__,
              str(getattr(ours, "error", "")).replace("\\n", " "), sep=" | ")
"""


def test_shard_map_on_an_all_explicit_mesh_takes_inputs_laid_out_as_jax():
    out = run_with_jax(CASES % (list(EXPECTED),))
    rows = [line.split(" | ") for line in out.splitlines()]
    assert [r[0] for r in rows] == list(EXPECTED)
    for case, ours, theirs, diffs, error, message in rows:
        assert (ours, theirs) == (EXPECTED[case], EXPECTED[case]), (case, message)
        assert diffs == "[]", (case, diffs)
        if ours == "ValueError":
            assert error == "ShardMapInSpecsError", (case, error)
            assert "does not match the layout of the input" in message, message
            assert "olympus.sharding.reshard(x, P(" in message, message
