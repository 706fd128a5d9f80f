"""A jit function's `lower(x).compile()` shares its calls' executables (issue 28).

JAX's compile cache hands `jit(f).lower(x).compile()` the executable a call
`jit(f)(x)` compiled (and the other way round, across wrappers of the same
`f`), so XLA's partitioner runs once and `debug.inspect_array_sharding`
calls back once. Runs under olympus and JAX on 4 CPU devices; the counts
of callbacks after each step are compared.
"""

from test_sharding_api import run_with_jax

PROGRAM = """
    import olympus.debug

    def prog(ox):
        kinds = (ox.sharding.AxisType.Explicit,) * 2
        mesh = ox.make_mesh((2, 2), ("x", "y"), axis_types=kinds)
        x = ox.device_put(np.ones((8, 4), np.float32), ox.NamedSharding(mesh, ox.P("x")))
        calls = []

        def f(v):
            ox.debug.inspect_array_sharding(v, callback=lambda s: calls.append(str(s.spec)))
            return v * 2

        def g(v):
            ox.debug.inspect_array_sharding(v, callback=lambda s: calls.append(str(s.spec)))
            return v + 1

        counts, jf = [], ox.jit(f)
        jf(x), counts.append(len(calls))
        compiled = jf.lower(x).compile()
        counts.append(len(calls))
        compiled(x), counts.append(len(calls))
        ox.jit(f).lower(x).compile(), counts.append(len(calls))
        ox.jit(g).lower(x).compile(), counts.append(len(calls))
        ox.jit(g)(x), counts.append(len(calls))
        return counts, calls, np.asarray(compiled(x)).sum()

    ours, theirs = run_both(prog)
    print(",".join(map(str, theirs[0])), ours == theirs)
"""


def test_compile_after_a_call_reuses_its_executable_as_jax_on_four_devices():
    theirs, same = run_with_jax(PROGRAM).split()[-2:]
    assert theirs == "1,1,1,1,2,2"  # JAX calls back once per program
    assert same == "True"
