"""Reading results back to the host (`np.asarray(Array)`, issue 33): the
values, dtypes and shapes JAX gives, read-only views as JAX's are, for jit,
eager and device_put results, and safe after the Array is deleted."""

import os
import subprocess
import sys
import textwrap

import jax
import ml_dtypes
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from jax_oracle import agree

X = np.linspace(-1.0, 2.0, 6, dtype=np.float32)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DTYPES = [
    np.float32,
    np.float16,
    np.int32,
    np.uint8,
    np.bool_,
    np.complex64,
    ml_dtypes.bfloat16,
    ml_dtypes.float8_e4m3fn,
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_read_back_of_jit_eager_and_put_results_agrees_with_jax(dtype):
    def program(ox, x):
        f = ox.jit(lambda x: (x * 2).astype(dtype).reshape(2, 3))
        s = ox.jit(lambda x: x.astype(dtype)[1])  # 0-d
        e = ox.jit(lambda x: x.astype(dtype)[:0])  # empty
        put = ox.device_put(x.astype(dtype))
        return [
            (np.asarray(f(x)), np.asarray(s(x)), np.asarray(e(x)))
            for _ in range(3)  # the first call compiles, the rest are fast hits
        ] + [np.asarray(put), np.asarray(ox.jnp.negative(put))]

    agree(program, X)


def test_read_back_is_a_read_only_view_as_in_jax():
    def flags(lib, np_):
        r = lib.jit(lambda x: x + 1.0)(X)
        eager = np_.sin(lib.device_put(X))
        return [
            np.asarray(r).flags.writeable,
            np.asarray(eager).flags.writeable,
            np.array(r).flags.writeable,  # copy=True: the user's own array
            np.asarray(r, dtype=np.float64).flags.writeable,
            np.array(r, copy=False).flags.writeable,
            np.shares_memory(np.asarray(r), np.array(r, copy=False)),
        ]

    assert (
        flags(olympus, jnp)
        == flags(jax, jax.numpy)
        == [
            False,
            False,
            True,
            True,
            False,
            True,
        ]
    )
    out = olympus.jit(lambda x: x * 3.0)(X)
    view = np.asarray(out)
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 5.0
    np.testing.assert_array_equal(np.asarray(out), X * 3.0)  # unchanged


def test_read_back_survives_the_arrays_deletion():
    f = olympus.jit(lambda x: x * 3.0 + 1.0)
    want = np.array(f(X))  # a copy of its own (XLA may fuse to an fma)
    out = f(X)
    view = np.asarray(out)
    out.delete()
    for _ in range(20):  # new buffers that could reuse freed memory
        f(X + 1.0).block_until_ready()
    np.testing.assert_array_equal(view, want)
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(out)


def test_a_zero_d_piece_of_a_placed_array_reads_back_as_zero_d():
    code = """
        import numpy as np, olympus
        from olympus.sharding import NamedSharding, PartitionSpec as P
        mesh = olympus.make_mesh((2,), ("x",))
        x = olympus.device_put(np.float32(3.0), NamedSharding(mesh, P()))
        print([(np.asarray(s.data).shape, float(s.data)) for s in x.addressable_shards])
    """
    env = dict(os.environ, OLYMPUS_NUM_CPU_DEVICES="2", PYTHONPATH=ROOT)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[((), 3.0), ((), 3.0)]"


class _NotOnTheCpu:
    """Stands for a device buffer NumPy cannot read (jaxlib's buffer protocol
    is CPU-only): np.asarray makes a 0-d object array of it."""

    def devices(self):
        return {"gpu:0"}


@pytest.mark.parametrize("shape", [(), (3,)])
def test_a_buffer_numpy_cannot_read_raises_instead_of_an_object_array(shape):
    from olympus.backends.xla.array import Array
    from olympus.backends.xla.client import HostReadError, host_array
    from olympus.ir.core import ShapedArray

    aval = ShapedArray(shape, np.dtype(np.float32))
    with pytest.raises(HostReadError, match="buffer protocol"):
        np.asarray(Array(_NotOnTheCpu(), aval))
    with pytest.raises(HostReadError, match="f32"):
        host_array(_NotOnTheCpu(), aval)
