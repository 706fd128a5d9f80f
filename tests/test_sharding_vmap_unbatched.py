"""vmap's outputs that do not vary over a batch split between devices (issue 28).

Where the mapped inputs' batch dimension is split over an Explicit mesh axis,
JAX broadcasts an unbatched output split like the batch when its type names
a mesh: a result of a jit or cond with a batched result (or a cond output
its rule batches), or any array made inside `set_mesh`; a Python or NumPy
constant stays unsplit. Each case runs under olympus and JAX on 4 CPU
devices, eagerly and under jit; types and values are compared.
"""

from test_sharding_api import run_with_jax

# JAX's type of the unbatched output (after `float32[`), per (set_mesh, case).
EXPECTED = {
    ("True", "ones"): "8@x,3]",
    ("True", "float"): "8]",
    ("True", "numpy"): "8,4]",
    ("True", "jit ones"): "8@x,3]",
    ("True", "jit float"): "8@x]",
    ("True", "jit numpy"): "8@x,4]",
    ("True", "jit of vmap"): "8@x,3]",
    ("True", "jit of vmap of jit"): "8@x,3]",
    ("True", "cond"): "8@x,2]",
    ("True", "jit cond"): "8@x,2]",
    ("True", "unsplit batch"): "4,3]",
    ("False", "ones"): "8,3]",
    ("False", "float"): "8]",
    ("False", "numpy"): "8,4]",
    ("False", "jit ones"): "8@x,3]",
    ("False", "jit float"): "8@x]",
    ("False", "jit numpy"): "8@x,4]",
    ("False", "jit of vmap"): "8,3]",
    ("False", "jit of vmap of jit"): "8,3]",
    ("False", "cond"): "8@x,2]",
    ("False", "jit cond"): "8,2]",
    ("False", "unsplit batch"): "4,3]",
}


CASES = """
    CASE_LIST = [(k == "True", c) for k, c in %r]
    from jax_oracle import differences

    def prog(ox, a, case, in_scope):
        P = ox.sharding.PartitionSpec
        kinds = (ox.sharding.AxisType.Explicit,) * 2
        mesh = ox.make_mesh((2, 2), ("x", "y"), axis_types=kinds)
        xs = ox.device_put(a, ox.NamedSharding(mesh, P("x")))
        jnp, lax = ox.jnp, ox.lax
        both = lambda v: lax.cond(True, lambda u: (u, jnp.ones(2)),
                                  lambda u: (u * 2, jnp.zeros(2)), v)
        f = {
            "ones": lambda: ox.vmap(lambda v: (v * 2, jnp.ones(3)))(xs),
            "float": lambda: ox.vmap(lambda v: (v * 2, 1.0))(xs),
            "numpy": lambda: ox.vmap(lambda v: (v * 2, a[0]))(xs),
            "jit ones": lambda: ox.vmap(ox.jit(lambda v: (v * 2, jnp.ones(3))))(xs),
            "jit float": lambda: ox.vmap(ox.jit(lambda v: (v.sum(), 1.0)))(xs),
            "jit numpy": lambda: ox.vmap(ox.jit(lambda v: (v * 2, a[0])))(xs),
            "jit of vmap": lambda: ox.jit(ox.vmap(lambda v: (v * 2, jnp.ones(3))))(xs),
            "jit of vmap of jit": lambda: ox.jit(
                ox.vmap(ox.jit(lambda v: (v * 2, jnp.ones(3))))
            )(xs),
            "cond": lambda: ox.vmap(both)(xs),
            "jit cond": lambda: ox.jit(ox.vmap(both))(xs),
            "unsplit batch": lambda: ox.vmap(ox.jit(lambda v: (v, jnp.ones(3))), in_axes=1)(xs),
        }[case]
        if in_scope:
            with ox.set_mesh(mesh):
                r = f()
        else:
            r = f()
        return r, [str(ox.typeof(v)).split("[", 1)[1] for v in ox.tree_util.tree_leaves(r)]

    a = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    for in_scope, case in CASE_LIST:
            ours, theirs = run_both(prog, a, case, in_scope)
            print(in_scope, case, getattr(theirs, "error", theirs[1])[-1],
                  differences(ours, theirs), sep=" | ")
"""


def test_unbatched_outputs_split_like_the_batch_as_jax_on_four_devices():
    out = run_with_jax(CASES % (list(EXPECTED),))
    rows = [line.split(" | ") for line in out.splitlines()]
    assert [(r[0], r[1]) for r in rows] == list(EXPECTED)
    for in_scope, case, theirs, diffs in rows:
        assert theirs == EXPECTED[in_scope, case], (in_scope, case, theirs)
        assert diffs == "[]", (in_scope, case, diffs)
