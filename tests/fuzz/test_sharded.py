"""Random programs run split over 4 CPU devices equal the same programs on one.

In a subprocess with OLYMPUS_NUM_CPU_DEVICES=4 (this process has one device):
each generated program's arguments are laid out over a mesh (split along an
axis where its size divides, else replicated), jit partitions the program
through XLA's SPMD partitioner, and its results must equal the single-device
jit's, both for the program and for its gradient; so must the program run as
the per-device body of a shard_map (manual over every axis, and, every
other program, over "x" only); on odd-numbered programs with its arguments
constrained inside jit to specs that do not divide their dimensions (XLA
pads) and as the body of `vmap(jit(f), axis_name="i")` with its float inputs
centred by a `pmean` over the batch; on even-numbered ones in explicit mode
(arguments resharded under `set_mesh` on a mesh of Explicit axes, their
layouts part of the types; operands split along different axes may be refused
with ShardingTypeError, as in JAX, and the program is then run unsplit; every
fourth program eagerly too, each operation an SPMD program).
"""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROGRAMS = 40

_SCRIPT = r"""
import sys
import numpy as np
sys.path.insert(0, HERE)
from program_generator import generate
import olympus
from olympus import lax
from olympus.sharding import NamedSharding, PartitionSpec as P, ShardingTypeError
from olympus.sharding import ScanShardingError
from olympus.tracer.pytree import tree_flatten

mesh = olympus.make_mesh((2, 2), ("x", "y"),
                         axis_types=(olympus.sharding.AxisType.Auto,) * 2)
explicit = olympus.make_mesh((2, 2), ("x", "y"),
                             axis_types=(olympus.sharding.AxisType.Explicit,) * 2)

def uneven(a):
    # split the first dimension that 2 does not divide (padding), else none
    parts = [None] * a.ndim
    for dim in range(a.ndim):
        if a.shape[dim] % 2:
            parts[dim] = "x"
            break
    return NamedSharding(mesh, P(*parts))

def layout(a, turn):
    parts = [None] * a.ndim
    for dim in range(a.ndim):
        for axis in (("x", "y"), "x", "y")[turn % 3:]:
            size = 4 if isinstance(axis, tuple) else 2
            if a.shape[dim] % size == 0 and axis not in parts:
                parts[dim] = axis
                break
        if parts[dim] is not None:
            break
    return NamedSharding(mesh, P(*parts))

def close(got, want, what):
    got, want = tree_flatten(got)[0], tree_flatten(want)[0]
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-4,
                                   err_msg=what)

ran = named = padded = typed = refused = 0
for seed in range(SEEDS):
    program = generate(seed)
    fun, args = program.function(), program.arguments()
    want = olympus.jit(fun)(*args)
    placed = [olympus.device_put(a, layout(a, seed + i)) for i, a in enumerate(args)]
    got = olympus.jit(fun)(*placed)
    close(got, want, f"seed {seed}: sharded jit")
    # the program as every device's body of a shard_map (replicated in and out)
    per_device = olympus.shard_map(fun, mesh, P(), P())
    close(olympus.jit(per_device)(*placed), want, f"seed {seed}: shard_map")
    if seed % 2:  # (every other program, to keep the suite's time)
        partial = olympus.shard_map(fun, mesh=mesh, in_specs=P(), out_specs=P(),
                                    axis_names={"x"})
        close(olympus.jit(partial)(*placed), want, f"seed {seed}: shard_map over 'x'")
    if seed % 2:  # uneven specs on the programs explicit mode leaves
        constrained = lambda *xs: fun(*[lax.with_sharding_constraint(x, uneven(x))
                                        for x in xs])
        close(olympus.jit(constrained)(*args), want, f"seed {seed}: uneven specs")
        padded += any(any(d % 2 for d in np.shape(a)) for a in args)
    if seed % 2 == 0:  # explicit mode on the other half
        with olympus.set_mesh(explicit):
            specs = [layout(a, seed + i).spec for i, a in enumerate(args)]
            resharded = [olympus.reshard(a, s) for a, s in zip(args, specs)]
            try:
                close(olympus.jit(fun)(*resharded), want, f"seed {seed}: explicit jit")
                typed += 1
            except (ShardingTypeError, ScanShardingError) as err:
                # operands split along different axes, or sorted, scanned or
                # sliced unevenly along a split one: JAX refuses them too;
                # laid out alike (unsplit), the program must then run
                assert "shard" in str(err).lower() or "replicated" in str(err), err
                refused += 1
                resharded = [olympus.reshard(a, P()) for a in args]
                close(olympus.jit(fun)(*resharded), want, f"seed {seed}: explicit, unsplit")
            if seed % 4 == 0:
                try:
                    close(fun(*resharded), want, f"seed {seed}: explicit eager")
                except (ShardingTypeError, ScanShardingError):
                    refused += 1
    floats = program.float_inputs()
    if floats and program.reverse_differentiable():
        loss = lambda *xs: sum(np.float32(0) + (l.astype("float32") ** 2).sum()
                               for l in tree_flatten(fun(*xs))[0])
        grad = olympus.jit(olympus.grad(loss, argnums=tuple(floats)))
        close(grad(*placed), grad(*args), f"seed {seed}: sharded grad")
    float32 = all(np.asarray(args[i]).dtype == np.float32 for i in floats)
    if floats and float32 and seed % 2:  # (every other program, for time)
        # vmap(jit(f), axis_name): the float inputs centred over the batch by a
        # pmean inside the jitted body; the reference loops over the examples
        # with the mean taken by NumPy.
        def centred(*xs):
            return fun(*[x - lax.pmean(x, "i") if i in floats else x
                         for i, x in enumerate(xs)])
        batch = [np.stack([np.asarray(a), np.asarray(a) * np.float32(0.5) + 1])
                 if i in floats else a for i, a in enumerate(args)]
        axes = [0 if i in floats else None for i in range(len(args))]
        got = olympus.vmap(olympus.jit(centred), in_axes=axes, axis_name="i")(*batch)
        rows = [olympus.jit(fun)(*[b[k] - b.mean(0, dtype=np.float32) if i in floats
                                   else b for i, b in enumerate(batch)])
                for k in range(2)]
        want = [np.stack([np.asarray(r) for r in leaves])
                for leaves in zip(*[tree_flatten(r)[0] for r in rows])]
        close(got, want, f"seed {seed}: vmap(jit) with pmean over the batch")
        named += 1
    ran += 1
print("typed", typed, "refused", refused)
print("ran", ran, "padded", padded, "named", named)
"""


def test_sharded_programs_match_one_device():
    env = dict(os.environ, OLYMPUS_NUM_CPU_DEVICES="4", PYTHONPATH=ROOT)
    script = _SCRIPT.replace("HERE", repr(HERE)).replace("SEEDS", str(PROGRAMS))
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"ran {PROGRAMS}" in done.stdout
    typed = int(done.stdout.split("typed")[1].split()[0])
    assert typed >= PROGRAMS // 8, done.stdout  # explicit mode's rules ran, not refused
    named = int(done.stdout.split("named")[1])
    padded = int(done.stdout.split("padded")[1].split()[0])
    assert padded >= PROGRAMS // 5, done.stdout  # uneven specs were exercised
    assert named >= PROGRAMS // 5, done.stdout  # the vmap(jit) check ran often
