"""`with_sharding_constraint` refuses where JAX 0.10.2 refuses (issue 28).

It constrains only Auto axes: inside `set_mesh` of a mesh whose axes are all
Explicit a value's layout is its type, so the constraint asserts that type
(AssertionError on another layout; the value itself otherwise), and elsewhere
a spec naming an Explicit axis is a ValueError (use `reshard`). Each case runs
under olympus and JAX on 4 CPU devices, eagerly, under jit, vmap and grad.
"""

from test_sharding_api import run_with_jax

CASES = """
    from jax_oracle import differences

    def prog(ox, a, case):
        P, A = ox.sharding.PartitionSpec, ox.sharding.AxisType
        mesh = ox.make_mesh((2, 2), ("x", "y"), axis_types=(A.Explicit,) * 2)
        mixed = ox.make_mesh((2, 2), ("x", "y"), axis_types=(A.Explicit, A.Auto))
        auto = ox.make_mesh((2, 2), ("x", "y"), axis_types=(A.Auto,) * 2)
        wsc = ox.lax.with_sharding_constraint
        xs = ox.device_put(a, ox.NamedSharding(mesh, P("x")))

        def under(m, f):
            with ox.set_mesh(m):
                r = f()
                return r, str(ox.typeof(r)).split("[", 1)[1]

        return {
            "jit same": lambda: under(mesh, lambda: ox.jit(lambda v: wsc(v, P("x")))(xs)),
            "jit other": lambda: under(mesh, lambda: ox.jit(lambda v: wsc(v, P("y")))(xs)),
            "eager other": lambda: under(mesh, lambda: wsc(xs, P("y"))),
            "eager same": lambda: under(mesh, lambda: wsc(xs, P("x", None))),
            "host split": lambda: under(mesh, lambda: wsc(a, P("x"))),
            "host unsplit": lambda: under(mesh, lambda: wsc(a, P())),
            "unsplit": lambda: under(mesh, lambda: ox.jit(lambda v: wsc(v, P()))(xs)),
            "auto mesh's": lambda: under(mesh, lambda: ox.jit(
                lambda v: wsc(v, ox.NamedSharding(auto, P("y"))))(xs)),
            "vmap other": lambda: under(mesh, lambda: ox.jit(ox.vmap(
                lambda v: wsc(v, P("y"))))(xs)),
            "vmap same": lambda: under(mesh, lambda: ox.jit(ox.vmap(
                lambda v: wsc(v, P())))(xs)),
            "grad": lambda: under(mesh, lambda: ox.grad(
                lambda v: ox.jnp.sin(wsc(v, P("x"))).sum())(xs)),
            "no mesh jit": lambda: ox.jit(
                lambda v: wsc(v, ox.NamedSharding(mesh, P("x"))))(xs),
            "no mesh eager": lambda: wsc(a, ox.NamedSharding(mesh, P("x"))),
            "no mesh unsplit": lambda: wsc(a, ox.NamedSharding(mesh, P())),
            "no mesh auto": lambda: wsc(a, ox.NamedSharding(auto, P("x"))),
            "mixed auto axis": lambda: under(mixed, lambda: ox.jit(
                lambda v: wsc(v, P("y")))(a)),
            "mixed explicit axis": lambda: under(mixed, lambda: ox.jit(
                lambda v: wsc(v, P("x")))(a)),
            "mixed eager": lambda: under(mixed, lambda: wsc(a, P("x", "y"))),
            "auto set_mesh": lambda: under(auto, lambda: ox.jit(
                lambda v: wsc(v, ox.NamedSharding(mesh, P("x"))))(a)),
        }[case]()

    def kind(r):
        error = getattr(r, "error", None)
        if error is None:
            return "ok"
        return next(k.__name__ for k in (AssertionError, ValueError, Exception)
                    if isinstance(error, k))

    a = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    for case in [
        "jit same", "jit other", "eager other", "eager same", "host split",
        "host unsplit", "unsplit", "auto mesh's", "vmap other", "vmap same", "grad",
        "no mesh jit", "no mesh eager", "no mesh unsplit", "no mesh auto",
        "mixed auto axis", "mixed explicit axis", "mixed eager", "auto set_mesh",
    ]:
        ours, theirs = run_both(prog, a, case)
        print(case, kind(ours), kind(theirs), differences(ours, theirs),
              str(getattr(ours, "error", ""))[:400].replace("\\n", " "), sep=" | ")
"""

# What JAX does in each case (the run checks olympus does the same).
EXPECTED = {
    "jit same": "ok",
    "jit other": "AssertionError",
    "eager other": "AssertionError",
    "eager same": "ok",
    "host split": "AssertionError",
    "host unsplit": "ok",
    "unsplit": "AssertionError",
    "auto mesh's": "AssertionError",
    "vmap other": "AssertionError",
    "vmap same": "ok",
    "grad": "ok",
    "no mesh jit": "ValueError",
    "no mesh eager": "ValueError",
    "no mesh unsplit": "ok",
    "no mesh auto": "ok",
    "mixed auto axis": "ok",
    "mixed explicit axis": "ValueError",
    "mixed eager": "ValueError",
    "auto set_mesh": "ValueError",
}


def test_with_sharding_constraint_asserts_or_refuses_as_jax_on_four_devices():
    rows = [line.split(" | ") for line in run_with_jax(CASES).splitlines()]
    assert [r[0] for r in rows] == list(EXPECTED)
    for case, ours, theirs, diffs, message in rows:
        assert (ours, theirs) == (EXPECTED[case], EXPECTED[case]), case
        assert diffs == "[]", (case, diffs)
        if ours == "AssertionError":  # names the API, both layouts and the fix
            assert "with_sharding_constraint" in message and "reshard(x, P(" in message
            assert "is not the one asked for" in message and "(at <string>" in message
        if ours == "ValueError":
            assert "names ['x'], not Auto axes of the mesh" in message, message
            assert "olympus.sharding.reshard(x, P(" in message, message
