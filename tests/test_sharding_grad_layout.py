"""Cotangents of sums keep the operand's layout (issue 28).

JAX's transpose of reduce_sum broadcasts the cotangent back with the
operand's sharding, so under `set_mesh` of an Explicit mesh the gradient of
`v.sum()` (and of mean, and of a broadcast, whose transpose is a sum) is
split like `v`. Each case runs under olympus and JAX on 4 CPU devices,
eagerly and under jit; types, layouts and values are compared.
"""

from test_sharding_api import run_with_jax

CASES = ["sum", "sum axis 0", "sum axis 1", "mean", "max", "broadcast"]

PROGRAM = """
    from jax_oracle import differences

    def prog(ox, a, case, spec, jitted):
        jnp = ox.numpy
        kinds = (ox.sharding.AxisType.Explicit,) * 2
        mesh = ox.make_mesh((2, 2), ("x", "y"), axis_types=kinds)
        x = ox.device_put(a, ox.NamedSharding(mesh, ox.P(*spec)))
        f = {
            "sum": lambda v: v.sum(),
            "sum axis 0": lambda v: v.sum(0).sum(),
            "sum axis 1": lambda v: (v.sum(1) * 2).sum(),
            "mean": lambda v: v.mean(),
            "max": lambda v: v.max(),
            "broadcast": lambda v: (v + jnp.ones(4)).sum(),
        }[case]
        g = ox.jit(ox.grad(f)) if jitted else ox.grad(f)
        with ox.set_mesh(mesh):
            r = g(x)
        return r, str(ox.typeof(r)).split("[", 1)[1], str(r.sharding.spec)

    import olympus.numpy, jax.numpy
    a = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    for case in %r:
        for spec in (("x",), ("x", "y")):
            for jitted in (False, True):
                ours, theirs = run_both(prog, a, case, spec, jitted)
                print(case, spec, jitted, theirs[1], theirs[2], differences(ours, theirs),
                      sep=" | ")
"""


def test_gradients_of_sums_are_split_like_the_operand_as_jax_on_four_devices():
    out = run_with_jax(PROGRAM % (CASES,))
    rows = [line.split(" | ") for line in out.splitlines()]
    assert len(rows) == len(CASES) * 4
    for case, spec, jitted, their_type, their_spec, diffs in rows:
        # JAX's gradient is split like the operand: the test checks that holds
        split = "8@x,4@y]" if "'y'" in spec else "8@x,4]"
        assert their_type == split, (case, spec, jitted, their_type, their_spec)
        assert diffs == "[]", (case, spec, jitted, diffs)
