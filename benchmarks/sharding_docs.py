"""JAX's sharding pages, cell by cell, under olympus and JAX 0.10.2 (issue 28).

    python benchmarks/sharding_docs.py                # every page, a table each
    python benchmarks/sharding_docs.py --page shard_map --verbose

Each page's code cells are transcribed here (our own short programs doing what
each cell teaches, written in JAX's spelling: `jax`, `jnp`, `P`, ...). A page
runs in one fresh interpreter per system on 8 CPU devices, its cells in order
sharing one namespace as in a notebook; under `--system olympus` the names are
bound to olympus's (`jax` is `olympus`, `jnp` is `olympus.numpy`): the port is
the renaming. A cell agrees when it prints the same text and raises the same
built-in kind of exception (or none: olympus's own exception classes subclass
the built-in one JAX raises, so a ShardMapReplicationError is a ValueError
here). Float values are printed rounded (`show`), so a
last-bit difference of a reduction's order is not counted.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pathlib
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEVICES = 8

PRELUDE = {
    "jax": """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType
from jax import lax
""",
    "olympus": """
import olympus as jax, olympus.numpy as jnp
from olympus.sharding import NamedSharding, PartitionSpec as P, AxisType
from olympus import lax
""",
}

COMMON = """
import numpy as np
from functools import partial
AUTO1, AUTO2 = (AxisType.Auto,), (AxisType.Auto,) * 2  # the pages' meshes for jit/shard_map
def show(x):
    print(np.round(np.asarray(x, dtype=np.float64), 4))
"""

# ---- "Introduction to parallel programming" (sharded-computation) ------------
SHARDED_COMPUTATION = {
    "devices": "print(jax.devices())",
    "arange on one device": """
arr = jnp.arange(32.0).reshape(4, 8)
print(arr.devices())""",
    "arr.sharding": "print(arr.sharding)",
    "visualize one device": "jax.debug.visualize_array_sharding(arr)",
    "make_mesh and NamedSharding": """
mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=AUTO2)
sharding = NamedSharding(mesh, P('x', 'y'))
print(sharding)""",
    "device_put sharded": """
arr_sharded = jax.device_put(arr, sharding)
print(arr_sharded)""",
    "visualize 2x4": "jax.debug.visualize_array_sharding(arr_sharded)",
    "jit elementwise keeps sharding": """
@jax.jit
def f_elementwise(x):
    return 2 * jnp.sin(x) + 1
result = f_elementwise(arr_sharded)
print("shardings match:", result.sharding == arr_sharded.sharding)""",
    "jit contraction": """
@jax.jit
def f_contract(x):
    return x.sum(axis=0)
result = f_contract(arr_sharded)
print(result.sharding.spec)
show(result)""",
    "typeof of a numpy array": """
some_array = np.arange(8)
print(f"JAX-level type of some_array: {jax.typeof(some_array)}")""",
    "typeof under jit": """
@jax.jit
def foo(x):
    print(f"JAX-level type of x: {jax.typeof(x)}")
    return x + x
foo(some_array)""",
    "explicit mesh types": """
mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit, AxisType.Explicit))
replicated_array = np.arange(8).reshape(4, 2)
sharded_array = jax.device_put(replicated_array, NamedSharding(mesh, P("X", None)))
print(f"replicated_array type: {jax.typeof(replicated_array)}")
print(f"sharded_array type: {jax.typeof(sharded_array)}")""",
    "explicit add_arrays": """
arg0 = jax.device_put(np.arange(4).reshape(4, 1), NamedSharding(mesh, P("X", None)))
arg1 = jax.device_put(np.arange(8).reshape(1, 8), NamedSharding(mesh, P(None, "Y")))
@jax.jit
def add_arrays(x, y):
    ans = x + y
    print(f"x sharding: {jax.typeof(x)}")
    print(f"y sharding: {jax.typeof(y)}")
    print(f"ans sharding: {jax.typeof(ans)}")
    return ans
with jax.set_mesh(mesh):
    print(add_arrays(arg0, arg1))""",
    "shard_map elementwise": """
mesh = jax.make_mesh((8,), ('x',), axis_types=AUTO1)
f_elementwise_sharded = jax.shard_map(
    f_elementwise, mesh=mesh, in_specs=P('x'), out_specs=P('x'))
arr = jnp.arange(32)
show(f_elementwise_sharded(arr))""",
    "shard_map local shape": """
x = jnp.arange(32)
print(f"global shape: {x.shape=}")
def f(x):
    print(f"device local shape: {x.shape=}")
    return x * 2
y = jax.shard_map(f, mesh=mesh, in_specs=P('x'), out_specs=P('x'))(x)""",
    "shard_map keepdims sum": """
def f(x):
    return jnp.sum(x, keepdims=True)
print(jax.shard_map(f, mesh=mesh, in_specs=P('x'), out_specs=P('x'))(x))""",
    "shard_map psum": """
def f(x):
    sum_in_shard = x.sum()
    return lax.psum(sum_in_shard, 'x')
print(jax.shard_map(f, mesh=mesh, in_specs=P('x'), out_specs=P())(x))""",
    "layer on one device": """
@jax.jit
def layer(x, weights, bias):
    return jax.nn.sigmoid(x @ weights + bias)
rng = np.random.default_rng(0)
x = rng.normal(size=(32,))
weights = rng.normal(size=(32, 4))
bias = rng.normal(size=(4,))
show(layer(x, weights, bias))""",
    "layer auto sharded": """
sharding = NamedSharding(mesh, P('x'))
x_sharded = jax.device_put(x, sharding)
weights_sharded = jax.device_put(weights, sharding)
show(layer(x_sharded, weights_sharded, bias))""",
    "layer shard_map": """
@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=(P('x'), P('x', None), P(None)), out_specs=P(None))
def layer_sharded(x, weights, bias):
    return jax.nn.sigmoid(lax.psum(x @ weights, 'x') + bias)
show(layer_sharded(x, weights, bias))""",
    "layer explicit": """
emesh = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Explicit,))
with jax.set_mesh(emesh):
    xe = jax.device_put(x, P('x'))
    we = jax.device_put(weights, P('x', None))
    out = layer(xe, we, bias)
    print(jax.typeof(out).sharding.spec)
    show(out)""",
}

# ---- "Distributed arrays and automatic parallelization" ----------------------
DISTRIBUTED_ARRAYS = {
    "random normal on one device": """
x = jax.random.normal(jax.random.key(0), (64, 64))
print(x.sharding.device_set == {jax.devices()[0]} or x.sharding)""",
    "dot on one device": """
y = jnp.dot(x, x + 1)
show(y[:2, :2])""",
    "mesh 4x2": """
mesh = jax.make_mesh((4, 2), ('a', 'b'), axis_types=AUTO2)
y = jax.device_put(x, NamedSharding(mesh, P('a', 'b')))
jax.debug.visualize_array_sharding(y)""",
    "spec ('a', None)": """
y = jax.device_put(x, NamedSharding(mesh, P('a', None)))
jax.debug.visualize_array_sharding(y)""",
    "spec (None, 'b')": """
y = jax.device_put(x, NamedSharding(mesh, P(None, 'b')))
jax.debug.visualize_array_sharding(y)""",
    "spec (('a', 'b'), None)": """
y = jax.device_put(x, NamedSharding(mesh, P(('a', 'b'), None)))
print(y.sharding.spec, y.addressable_shards[0].data.shape)""",
    "print a NamedSharding": "print(NamedSharding(mesh, P('a', 'b')))",
    "shard shapes": """
z = jax.device_put(x, NamedSharding(mesh, P('a', 'b')))
print([s.data.shape for s in z.addressable_shards][:3], len(z.addressable_shards))""",
    "computation follows sharding": """
w = jax.device_put(x, NamedSharding(mesh, P(None, None)))
s = jnp.sin(z)
print(s.sharding.spec)
show(s[:2, :2])""",
    "matmul of sharded operands": """
m = z @ w
print(m.sharding.spec)
show(m[:2, :2])""",
    "jit in_shardings and out_shardings": """
f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P('a')),
            out_shardings=NamedSharding(mesh, P(None, 'b')))
r = f(x)
print(r.sharding.spec)
show(r[:2, :2])""",
    "with_sharding_constraint": """
@jax.jit
def g(a):
    a = a + 1
    return lax.with_sharding_constraint(a, NamedSharding(mesh, P('b', 'a')))
r = g(z)
print(r.sharding.spec)
show(r[:2, :2])""",
    "incompatible device sets": """
m1 = jax.make_mesh((2,), ('a',), devices=jax.devices()[:2], axis_types=AUTO1)
m2 = jax.make_mesh((2,), ('a',), devices=jax.devices()[2:4], axis_types=AUTO1)
u = jax.device_put(np.ones(4), NamedSharding(m1, P('a')))
v = jax.device_put(np.ones(4), NamedSharding(m2, P('a')))
u + v""",
    "mlp setup": """
def init_layer(key, n_in, n_out):
    k1, k2 = jax.random.split(key)
    W = jax.random.normal(k1, (n_in, n_out)) / np.sqrt(n_in)
    b = jax.random.normal(k2, (n_out,))
    return W, b
def init(key, sizes, batch):
    keys = jax.random.split(key, len(sizes))
    params = [init_layer(k, a, b) for k, a, b in zip(keys[1:], sizes[:-1], sizes[1:])]
    inputs = jax.random.normal(keys[0], (batch, sizes[0]))
    targets = jax.random.normal(keys[0], (batch, sizes[-1]))
    return params, (inputs, targets)
def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.maximum(outputs, 0)
    return outputs
def loss(params, batch):
    inputs, targets = batch
    return jnp.mean(jnp.sum((predict(params, inputs) - targets) ** 2, axis=-1))
loss_jit = jax.jit(loss)
gradfun = jax.jit(jax.grad(loss))
params, batch = init(jax.random.key(0), [16, 32, 32, 4], 64)
show(loss_jit(params, batch))""",
    "data parallel batch": """
mesh8 = jax.make_mesh((8,), ('batch',), axis_types=AUTO1)
batch_sh = jax.device_put(batch, NamedSharding(mesh8, P('batch')))
params_rep = jax.device_put(params, NamedSharding(mesh8, P()))
show(loss_jit(params_rep, batch_sh))""",
    "data parallel gradient step": """
g = gradfun(params_rep, batch_sh)
print(g[0][0].sharding.spec)
show(g[0][1][:4])""",
    "4x2 model and data parallel": """
mesh42 = jax.make_mesh((4, 2), ('batch', 'model'), axis_types=AUTO2)
batch_42 = jax.device_put(batch, NamedSharding(mesh42, P('batch', None)))
W0, b0 = params[0]
W0 = jax.device_put(W0, NamedSharding(mesh42, P(None, 'model')))
b0 = jax.device_put(b0, NamedSharding(mesh42, P('model')))
p42 = [(W0, b0)] + jax.device_put(params[1:], NamedSharding(mesh42, P()))
show(loss_jit(p42, batch_42))""",
    "addressable_shards": """
for shard in z.addressable_shards[:2]:
    print(shard.device, shard.index)""",
    "is_fully_replicated": """
print(z.sharding.is_fully_replicated, w.sharding.is_fully_replicated)""",
    "shard_shape": """
print(z.sharding.shard_shape(z.shape), z.sharding.num_devices)""",
    "make_array_from_callback": """
data = np.arange(64.).reshape(8, 8)
arr = jax.make_array_from_callback((8, 8), NamedSharding(mesh, P('a', 'b')), lambda idx: data[idx])
print(arr.sharding.spec)
show(arr[1:3, 1:3])""",
    "inspect_array_sharding in jit": """
@jax.jit
def peek(a):
    jax.debug.inspect_array_sharding(a, callback=lambda s: print(s.spec))
    return a * 2
_ = peek(z)""",
    "random in jit sharded out": """
@partial(jax.jit, out_shardings=NamedSharding(mesh, P('a', 'b')))
def rand(key):
    return jax.random.uniform(key, (8, 8))
r = rand(jax.random.key(1))
print(r.sharding.spec)
show(r[0, :3])""",
}

# ---- "Manual parallelism with shard_map" ---------------------------------------
SHARD_MAP = {
    "matmul_basic": """
mesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=AUTO2)
a = jnp.arange(8 * 16.).reshape(8, 16)
b = jnp.arange(16 * 4.).reshape(16, 4)
@partial(jax.shard_map, mesh=mesh, in_specs=(P('x', 'y'), P('y', None)), out_specs=P('x', None))
def matmul_basic(a_block, b_block):
    c_partialsum = jnp.dot(a_block, b_block)
    return lax.psum(c_partialsum, 'y')
c = matmul_basic(a, b)
print(np.allclose(c, jnp.dot(a, b)))""",
    "result sharding visualized": "jax.debug.visualize_array_sharding(c)",
    "matmul_reduce_scatter": """
@partial(jax.shard_map, mesh=mesh, in_specs=(P('x', 'y'), P('y', None)), out_specs=P(('x', 'y'), None))
def matmul_reduce_scatter(a_block, b_block):
    c_partialsum = jnp.dot(a_block, b_block)
    return lax.psum_scatter(c_partialsum, 'y', scatter_dimension=0, tiled=True)
c = matmul_reduce_scatter(a, b)
print(np.allclose(c, jnp.dot(a, b)), c.sharding.spec)""",
    "block shapes": """
mesh = jax.make_mesh((4, 2), ('i', 'j'), axis_types=AUTO2)
@partial(jax.shard_map, mesh=mesh, in_specs=P('i', 'j'), out_specs=P('i', 'j'))
def f1(x_block):
    print(x_block.shape)
    return 2 * x_block
x1 = np.arange(12 * 12).reshape(12, 12)
y = f1(x1)
print(y.shape)""",
    "in_specs None replicates": """
@partial(jax.shard_map, mesh=mesh, in_specs=P('i', None), out_specs=P('i', 'j'))
def f2(x_block):
    print(x_block.shape)
    return x_block
print(f2(x1).shape)""",
    "out_specs concatenation": """
x = jnp.array([[3.]])
z = jax.shard_map(lambda: x, mesh=mesh, in_specs=(), out_specs=P('i', 'j'))()
print(z)""",
    "out_specs unmentioned axis": """
z = jax.shard_map(lambda: x, mesh=mesh, in_specs=(), out_specs=P('i', None))()
print(z)
z = jax.shard_map(lambda: x, mesh=mesh, in_specs=(), out_specs=P(None, None))()
print(z)""",
    "psum over x": """
@partial(jax.shard_map, mesh=mesh, in_specs=P('i', 'j'), out_specs=P(None, 'j'))
def f3(x_block):
    return lax.psum(x_block, 'i')
x = np.arange(8 * 8.).reshape(8, 8)
show(f3(x))""",
    "psum 1d": """
mesh1 = jax.make_mesh((8,), ('i',), axis_types=AUTO1)
@partial(jax.shard_map, mesh=mesh1, in_specs=P('i'), out_specs=P())
def f4(x_block):
    return lax.psum(x_block, 'i')
x = jnp.array([3, 9, 5, 2, 1, 4, 6, 7, 10, 11, 12, 13, 14, 15, 16, 8])
print(f4(x))""",
    "psum over both axes": """
mesh2 = jax.make_mesh((4, 2), ('i', 'j'), axis_types=AUTO2)
@partial(jax.shard_map, mesh=mesh2, in_specs=P('i', 'j'), out_specs=P())
def f5(x_block):
    return lax.psum(x_block, ('i', 'j'))
print(f5(np.arange(8 * 2).reshape(8, 2)))""",
    "all_gather": """
@partial(jax.shard_map, mesh=mesh1, in_specs=P('i'), out_specs=P('i'))
def f6(x_block):
    print('before', x_block.shape)
    y_block = lax.all_gather(x_block, 'i')
    print('after', y_block.shape)
    return y_block
x = jnp.array([3, 9, 5, 2, 1, 4, 6, 7])
print(f6(x))""",
    "all_gather tiled": """
@partial(jax.shard_map, mesh=mesh1, in_specs=P('i'), out_specs=P('i'))
def f7(x_block):
    return lax.all_gather(x_block, 'i', tiled=True)
print(f7(x).shape)""",
    "psum_scatter": """
@partial(jax.shard_map, mesh=mesh1, in_specs=P('i'), out_specs=P('i'))
def f8(x_block):
    return lax.psum_scatter(x_block, 'i', tiled=True)
x = jnp.arange(64).reshape(64)
print(f8(x))""",
    "ppermute shift": """
@partial(jax.shard_map, mesh=mesh1, in_specs=P('i'), out_specs=P('i'))
def f9(x_block):
    n = 8
    return lax.ppermute(x_block, 'i', [(k, (k + 1) % n) for k in range(n)])
print(f9(jnp.arange(8)))""",
    "axis_index": """
@partial(jax.shard_map, mesh=mesh1, in_specs=(), out_specs=P('i'))
def f10():
    return lax.axis_index('i')[None]
print(f10())""",
    "all_to_all": """
@partial(jax.shard_map, mesh=mesh1, in_specs=P('i', None), out_specs=P('i', None))
def f11(x_block):
    return lax.all_to_all(x_block, 'i', 0, 1, tiled=True)
x = jnp.arange(64.).reshape(8, 8)
show(f11(x))""",
    "collective matmul (allgather)": """
mesh1 = jax.make_mesh((8,), ('i',), axis_types=AUTO1)
lhs = jax.random.normal(jax.random.key(0), (16, 32))
rhs = jax.random.normal(jax.random.key(1), (32, 8))
@jax.jit
@partial(jax.shard_map, mesh=mesh1, in_specs=(P('i', None), P(None, 'i')), out_specs=P(None, 'i'))
def matmul_allgather(lhs_block, rhs_block):
    lhs = lax.all_gather(lhs_block, 'i', tiled=True)
    return lhs @ rhs_block
out = matmul_allgather(lhs, rhs)
print(np.allclose(out, lhs @ rhs, atol=1e-3, rtol=1e-3))""",
    "collective matmul (ppermute loop)": """
@jax.jit
@partial(jax.shard_map, mesh=mesh1, in_specs=(P('i', None), P(None, 'i')), out_specs=P(None, 'i'))
def matmul_perm(lhs_block, rhs_block):
    size = 8
    idx = lax.axis_index('i')
    shift = partial(lax.ppermute, axis_name='i', perm=[(j, (j - 1) % size) for j in range(size)])
    B = lhs_block.shape[0]
    out_block = jnp.zeros((B * size, rhs_block.shape[1]))
    def body(k, carry):
        lhs_block, out_block = carry
        j = (idx + k) % size
        out_block = lax.dynamic_update_slice_in_dim(out_block, lhs_block @ rhs_block, j * B, 0)
        return shift(lhs_block), out_block
    _, out_block = lax.fori_loop(0, size, body, (lhs_block, out_block))
    return out_block
out = matmul_perm(lhs, rhs)
print(np.allclose(out, lhs @ rhs, atol=1e-3, rtol=1e-3))""",
    "data parallel loss": """
def predict(params, inputs):
    for W, b in params:
        inputs = jax.nn.relu(jnp.dot(inputs, W) + b)
    return inputs
def loss(params, batch):
    inputs, targets = batch
    return jnp.mean(jnp.sum((predict(params, inputs) - targets) ** 2, axis=-1))
keys = jax.random.split(jax.random.key(0), 4)
params = [(jax.random.normal(keys[i], (8, 8)) / 3, jnp.zeros(8)) for i in range(3)]
batch = (jax.random.normal(keys[3], (32, 8)), jnp.ones((32, 8)))
@jax.jit
@partial(jax.shard_map, mesh=mesh1, in_specs=(P(), P('i')), out_specs=P())
def loss_dp(params, batch):
    return lax.pmean(loss(params, batch), 'i')
show(loss_dp(params, batch))
show(jax.jit(loss)(params, batch))""",
    "data parallel grad": """
gp = jax.jit(jax.grad(loss_dp))(params, batch)
g1 = jax.grad(loss)(params, batch)
print(np.allclose(gp[0][0], g1[0][0], atol=1e-5))""",
    "fsdp": """
@jax.jit
@partial(jax.shard_map, mesh=mesh1, in_specs=(P('i'), P('i')), out_specs=P())
def loss_fsdp(params, batch):
    inputs, targets = batch
    for W, b in params:
        W = lax.all_gather(W, 'i', tiled=True)
        b = lax.all_gather(b, 'i', tiled=True)
        inputs = jax.nn.relu(jnp.dot(inputs, W) + b)
    return lax.pmean(jnp.mean(jnp.sum((inputs - targets) ** 2, axis=-1)), 'i')
show(loss_fsdp(params, batch))""",
    "out_specs P() of a varying value": """
@partial(jax.shard_map, mesh=mesh1, in_specs=P('i'), out_specs=P())
def bad(x):
    return x * 2
bad(jnp.arange(8.))""",
    "check_vma=False": """
@partial(jax.shard_map, mesh=mesh1, in_specs=P('i'), out_specs=P(), check_vma=False)
def unchecked(x):
    return x * 2
print(unchecked(jnp.arange(8.)))""",
    "eager shard_map": """
print(jax.shard_map(lambda v: v + lax.axis_index('i'), mesh=mesh1, in_specs=P('i'), out_specs=P('i'))(jnp.zeros(8)))""",
    "explicit mesh: input laid out otherwise": """
emesh = jax.make_mesh((8,), ('i',))
jax.shard_map(lambda v: v * 2, mesh=emesh, in_specs=P('i'), out_specs=P('i'))(jnp.arange(8.))""",
    "axis_names partial manual": """
mesh2 = jax.make_mesh((4, 2), ('i', 'j'), axis_types=AUTO2)
f = jax.shard_map(lambda v: lax.psum(v, 'i'), mesh=mesh2, in_specs=P('i'), out_specs=P(), axis_names={'i'})
print(f(jnp.arange(8.)))""",
    "vma in typeof": """
def body(v):
    print(jax.typeof(v).vma, jax.typeof(lax.psum(v, 'i')).vma)
    return v
_ = jax.shard_map(body, mesh=mesh1, in_specs=P('i'), out_specs=P('i'))(jnp.arange(8.))""",
    "pcast to varying": """
f = jax.shard_map(lambda v: lax.pcast(v, 'i', to='varying'), mesh=mesh1, in_specs=P(), out_specs=P('i'))
print(f(jnp.arange(2.)))""",
    "indivisible in_specs": """
jax.shard_map(lambda v: v, mesh=mesh1, in_specs=P('i'), out_specs=P('i'))(jnp.arange(6.))""",
    "in_specs longer than rank": """
jax.shard_map(lambda v: v, mesh=mesh1, in_specs=P('i', None), out_specs=P('i'))(jnp.arange(8.))""",
    "unknown axis name": """
jax.shard_map(lambda v: v, mesh=mesh1, in_specs=P('k'), out_specs=P('k'))(jnp.arange(8.))""",
    "psum of an unknown axis": """
jax.shard_map(lambda v: lax.psum(v, 'k'), mesh=mesh1, in_specs=P('i'), out_specs=P('i'))(jnp.arange(8.))""",
    "axis_size": """
print(jax.shard_map(lambda v: v * lax.axis_size('i'), mesh=mesh1, in_specs=P('i'), out_specs=P('i'))(jnp.ones(8)))""",
    "pmax and pmin": """
f = jax.shard_map(lambda v: (lax.pmax(v, 'i'), lax.pmin(v, 'i')), mesh=mesh1, in_specs=P('i'), out_specs=(P(), P()))
print(f(jnp.arange(8.)))""",
    "vmap of shard_map": """
f = jax.shard_map(lambda v: lax.psum(v, 'i'), mesh=mesh1, in_specs=P('i'), out_specs=P())
print(jax.vmap(f)(jnp.arange(16.).reshape(2, 8)))""",
    "vmap inside shard_map": """
f = jax.shard_map(jax.vmap(lambda r: r.sum()), mesh=mesh1, in_specs=P('i'), out_specs=P('i'))
print(f(jnp.arange(32.).reshape(8, 4)))""",
    "ppermute both ways": """
def both(v):
    right = lax.ppermute(v, 'i', [(k, (k + 1) % 8) for k in range(8)])
    left = lax.ppermute(v, 'i', [(k, (k - 1) % 8) for k in range(8)])
    return right + left
print(jax.shard_map(both, mesh=mesh1, in_specs=P('i'), out_specs=P('i'))(jnp.arange(8.)))""",
    "out_specs tree mismatch": """
jax.shard_map(lambda v: (v, v), mesh=mesh1, in_specs=P('i'), out_specs=P('i'))(jnp.arange(8.))""",
    "grad through psum": """
f = jax.shard_map(lambda v: lax.psum(v ** 2, 'i'), mesh=mesh1, in_specs=P('i'), out_specs=P())
show(jax.grad(lambda v: f(v).sum())(jnp.arange(8.)))""",
}

# ---- "Explicit sharding" -------------------------------------------------------
EXPLICIT = {
    "typeof of a numpy array": """
some_array = np.arange(8)
print(f"JAX-level type of some_array: {jax.typeof(some_array)}")""",
    "explicit mesh": """
mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit, AxisType.Explicit))
jax.set_mesh(mesh)
print(mesh.axis_types)""",
    "sharded types": """
replicated_array = np.arange(8).reshape(4, 2)
sharded_array = jax.device_put(replicated_array, P("X", None))
print(f"replicated_array type: {jax.typeof(replicated_array)}")
print(f"sharded_array type: {jax.typeof(sharded_array)}")""",
    "sharding propagates through jit": """
arg0 = jax.device_put(np.arange(4).reshape(4, 1), P("X", None))
arg1 = jax.device_put(np.arange(8).reshape(1, 8), P(None, "Y"))
@jax.jit
def add_arrays(x, y):
    ans = x + y
    print(f"x sharding: {jax.typeof(x)}")
    print(f"y sharding: {jax.typeof(y)}")
    print(f"ans sharding: {jax.typeof(ans)}")
    return ans
print(add_arrays(arg0, arg1))""",
    "eager typeof": """
print(jax.typeof(arg0 + arg1))""",
    "creation under set_mesh": """
v = jnp.arange(8)
print(v.sharding.spec, jax.typeof(v))""",
    "eye under set_mesh": """
v = jnp.eye(4)
print(jax.typeof(v).sharding.spec)""",
    "conflict raises": """
a = jax.device_put(np.arange(8.).reshape(4, 2), P("X", None))
b = jax.device_put(np.arange(8.).reshape(4, 2), P("Y", None))
a + b""",
    "matmul contracting split": """
x = jax.device_put(np.arange(16.).reshape(2, 8), P(None, "X"))
y = jax.device_put(np.arange(32.).reshape(8, 4), P("X", None))
(x @ y)""",
    "matmul out_sharding": """
z = jnp.matmul(x, y, out_sharding=P(None, None))
print(jax.typeof(z))
show(z)""",
    "reshard": """
r = jax.reshard(z, P("X", None))
print(jax.typeof(r))""",
    "einsum out_sharding": """
w = jnp.einsum('ij,jk->ik', x, y, out_sharding=P("X", None))
print(jax.typeof(w))""",
    "auto_axes": """
@jax.sharding.auto_axes
def add_auto(a, b):
    return a + b
a2 = jax.device_put(np.ones((4, 8)), P("X", None))
b2 = jax.device_put(np.ones((4, 8)), P(None, "Y"))
print(jax.typeof(add_auto(a2, b2, out_sharding=P("X", None))))""",
    "explicit_axes": """
mesh_auto = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Auto, AxisType.Auto))
@jax.sharding.explicit_axes(in_sharding=P("X", None))
def explicit_sum(a):
    print(f"inside: {jax.typeof(a)}")
    return a.sum(axis=0)
with jax.set_mesh(mesh_auto):
    show(jax.jit(explicit_sum)(np.ones((4, 2))))""",
    "zeros out_sharding": """
v = jnp.zeros((8, 4), out_sharding=P("X", None))
print(jax.typeof(v).sharding.spec)""",
    "device_put a spec": """
v = jax.device_put(np.arange(16.).reshape(8, 2), P("X", "Y"))
print(v.sharding.spec)""",
    "random under set_mesh": """
v = jax.random.normal(jax.random.key(0), (8,))
print(jax.typeof(v).sharding.spec)""",
    "reduction over a split axis": """
s = sharded_array.sum(axis=0)
print(jax.typeof(s).sharding.spec)
print(s)""",
    "with_sharding_constraint spec": """
@jax.jit
def constrain(a):
    return lax.with_sharding_constraint(a * 2, P(None, "X"))
print(jax.typeof(constrain(jnp.ones((4, 8)))).sharding.spec)""",
    "reshape splits": """
print(jax.typeof(jax.device_put(np.arange(16.), P("X")).reshape(2, 8)).sharding.spec)""",
    "get_abstract_mesh": """
print(jax.sharding.get_abstract_mesh().axis_names)""",
    "grad keeps sharding": """
g = jax.grad(lambda v: (v ** 2).sum())(sharded_array.astype(jnp.float32))
print(jax.typeof(g))""",
    "vmap over a split axis": """
vm = jax.vmap(lambda r: r * 2)(sharded_array)
print(jax.typeof(vm))""",
}

PAGES = {
    "sharded-computation": SHARDED_COMPUTATION,
    "distributed-arrays": DISTRIBUTED_ARRAYS,
    "shard_map": SHARD_MAP,
    "explicit-sharding": EXPLICIT,
}


def _kind(err: Exception) -> str:
    """The built-in exception class `err` is (olympus names one class per
    failure, subclassing the built-in one JAX raises)."""
    return next(c.__name__ for c in type(err).__mro__ if c.__module__ == "builtins")


def run_page(system: str, page: str) -> list:
    """Runs `page`'s cells in order in this interpreter: [(cell, out, error)]."""
    namespace: dict = {}
    exec(PRELUDE[system] + COMMON, namespace)
    results = []
    for name, source in PAGES[page].items():
        out, error = io.StringIO(), None
        with contextlib.redirect_stdout(out):
            try:
                exec(textwrap.dedent(source), namespace)
            except Exception as err:  # a cell's raise is part of its result
                error = (_kind(err), (str(err).splitlines() or [""])[0][:160])
        results.append((name, out.getvalue(), error))
    return results


def page_results(system: str, page: str) -> list:
    """`page` run under `system` in a fresh interpreter on DEVICES CPUs."""
    env = dict(
        os.environ,
        OLYMPUS_NUM_CPU_DEVICES=str(DEVICES),
        XLA_FLAGS=f"--xla_force_host_platform_device_count={DEVICES}",
        PYTHONPATH=str(ROOT),
    )
    done = subprocess.run(
        [sys.executable, __file__, "--system", system, "--page", page, "--child"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{system} {page}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def difference(ours, theirs) -> str:
    """A one-line reason two results of a cell differ ('' when they agree)."""
    (_, out_o, err_o), (_, out_j, err_j) = ours, theirs
    kind_o, kind_j = (err_o or [None])[0], (err_j or [None])[0]
    if kind_o != kind_j:
        said = err_j[1][:90] if err_j else err_o[1][:90]
        return f"olympus raises {kind_o}, JAX {kind_j} ({said})"
    if out_o != out_j:
        for lo, lj in zip(out_o.splitlines() + [""], out_j.splitlines() + [""]):
            if lo != lj:
                return f"prints {lo.strip()[:70]!r}, JAX {lj.strip()[:70]!r}"
    return ""


def report(page: str, verbose: bool) -> tuple:
    """Prints `page`'s table; (cells, agreeing)."""
    ours, theirs = page_results("olympus", page), page_results("jax", page)
    rows = [(o[0], difference(o, j)) for o, j in zip(ours, theirs)]
    agree = sum(not why for _, why in rows)
    print(f"\n{page}: {agree}/{len(rows)} cells agree")
    for name, why in rows:
        if why or verbose:
            print(f"  {name}: {why or 'agrees'}")
    return len(rows), agree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", choices=sorted(PRELUDE))
    parser.add_argument("--page", choices=sorted(PAGES))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_page(args.system, args.page)))
        return
    total = [0, 0]
    for page in [args.page] if args.page else PAGES:
        cells, agree = report(page, args.verbose)
        total = [total[0] + cells, total[1] + agree]
    print(f"\nall pages: {total[1]}/{total[0]} cells agree")


if __name__ == "__main__":
    main()
