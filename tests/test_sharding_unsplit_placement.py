"""Where unsplit results go under `set_mesh`, and the types they carry (issue 28).

JAX lays an unsplit result out as `P()` where its type carries over from a
meshless operand (a jnp function JAX jits, given a NumPy array: `jnp.exp(a)`,
`jnp.sum(a, 0)`), and as `P(None, ...)` where its type names the mesh (an
unjitted one that puts the array on the mesh first, `jnp.transpose(a)`; any
result of an Array on the mesh). A key array's layout has one entry per key
dimension (`random.split` gives `P(None,)` on Auto axes too), and on Auto axes
a value's type names its mesh, unsplit. Each case runs under olympus and JAX
on 4 CPU devices; layouts, types and values are compared.
"""

from test_sharding_api import run_with_jax

NUMPY_CASES = [
    "exp",
    "sin",
    "tanh",
    "sum axis 0",
    "sort",
    "transpose",
    "flip",
    "atleast_3d",
    "multiply",
    "add scalar",
    "array",
    "exp of array",
    "exp of exp",
]
KEY_CASES = ["key", "split", "split 3", "split (2, 3)", "jit split", "fold_in"]

PROGRAM = """
    from jax_oracle import differences
    import olympus.numpy, jax.numpy

    def mesh_of(ox, kind):
        kinds = (getattr(ox.sharding.AxisType, kind),) * 2
        return ox.make_mesh((2, 2), ("x", "y"), axis_types=kinds)

    def on_numpy(ox, a, case, kind):
        jnp = ox.numpy
        f = {
            "exp": lambda: jnp.exp(a),
            "sin": lambda: jnp.sin(a),
            "tanh": lambda: jnp.tanh(a),
            "sum axis 0": lambda: jnp.sum(a, 0),
            "sort": lambda: jnp.sort(a),
            "transpose": lambda: jnp.transpose(a),
            "flip": lambda: jnp.flip(a),
            "atleast_3d": lambda: jnp.atleast_3d(a),
            "multiply": lambda: jnp.multiply(a, a),
            "add scalar": lambda: jnp.add(a, 1.0),
            "array": lambda: jnp.array(a),
            "exp of array": lambda: jnp.exp(jnp.array(a)),
            "exp of exp": lambda: jnp.exp(jnp.exp(a)),
        }[case]
        with ox.set_mesh(mesh_of(ox, kind)):
            r = f()
        return r, str(r.sharding.spec), str(ox.typeof(r)).split("[", 1)[1]

    def on_keys(ox, case, kind):
        random = ox.random
        f = {
            "key": lambda: random.key(0),
            "split": lambda: random.split(random.key(0)),
            "split 3": lambda: random.split(random.key(0), 3),
            "split (2, 3)": lambda: random.split(random.key(0), (2, 3)),
            "jit split": lambda: ox.jit(random.split)(random.key(0)),
            "fold_in": lambda: random.fold_in(random.key(0), 3),
        }[case]
        with ox.set_mesh(mesh_of(ox, kind)):
            r = f()
        return random.key_data(r), str(r.sharding.spec)

    def auto_types(ox, a):
        mesh = mesh_of(ox, "Auto")
        x = ox.device_put(a, ox.NamedSharding(mesh, ox.P("x")))
        seen = [repr(ox.typeof(x).sharding)]
        with ox.set_mesh(mesh):
            seen.append(repr(ox.typeof(ox.random.split(ox.random.key(0))).sharding))
            ox.jit(lambda v: seen.append(repr(ox.typeof(v * 2).sharding)) or v)(x)
        ox.jit(lambda v: seen.append(repr(ox.typeof(v.T).sharding)) or v)(x)
        return seen

    a = np.arange(1.0, 33.0, dtype=np.float32).reshape(8, 4) / 40
    for kind in ("Explicit", "Auto"):
        for case in %r:
            ours, theirs = run_both(on_numpy, a, case, kind)
            print(kind, case, theirs[1], differences(ours, theirs), sep=" | ")
        for case in %r:
            ours, theirs = run_both(on_keys, case, kind)
            print(kind, case, theirs[1], differences(ours, theirs), sep=" | ")
    ours, theirs = run_both(auto_types, a)
    print("Auto", "types", theirs[-1], differences(ours, theirs), sep=" | ")
"""

# JAX's layouts of the cases whose layout the tests above turn on
EXPECTED = {
    ("Explicit", "exp"): "P()",
    ("Explicit", "sum axis 0"): "P()",
    ("Explicit", "transpose"): "P(None, None)",
    ("Explicit", "exp of array"): "P(None, None)",
    ("Explicit", "exp of exp"): "P(None, None)",
    ("Auto", "split"): "P(None,)",
    ("Auto", "jit split"): "P(None,)",
    ("Auto", "key"): "P()",
}


def test_unsplit_results_are_placed_and_typed_as_jax_on_four_devices():
    out = run_with_jax(PROGRAM % (NUMPY_CASES, KEY_CASES))
    rows = [line.split(" | ") for line in out.splitlines()]
    assert len(rows) == 2 * (len(NUMPY_CASES) + len(KEY_CASES)) + 1
    for kind, case, theirs, diffs in rows:
        assert diffs == "[]", (kind, case, theirs, diffs)
        if (kind, case) in EXPECTED:
            assert theirs == EXPECTED[kind, case], (kind, case, theirs)
    assert "AbstractMesh('x': 2, 'y': 2" in rows[-1][2]
