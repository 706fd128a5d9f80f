"""The C call paths of olympus/backends/xla/_fastpath.c (issue 33): an
Array's fields and buffer protocol, a jitted call's cache hit, NumPy
arguments copied into staging arrays. Each is checked against what the
Python paths it mirrors give (the pure-Python build, `OLYMPUS_PURE_PYTHON=1`,
runs the dispatch tests in a subprocess) and against JAX where JAX defines
the behaviour; reference counts are checked so that a hit leaks nothing."""

import gc
import os
import shutil
import subprocess
import sys
import weakref

import jax
import ml_dtypes
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.backends.xla import fastpath
from jax_oracle import agree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
native = pytest.mark.skipif(not fastpath.NATIVE, reason="_fastpath not built")


def test_the_extension_is_built_where_a_c_compiler_is():
    # setup.py builds it as optional: a failed build would only slow olympus
    # down, so this says when that happened on a machine that can build it
    if os.environ.get("OLYMPUS_PURE_PYTHON") == "1":
        pytest.skip("OLYMPUS_PURE_PYTHON=1 asks for the Python paths")
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler on this machine")
    assert fastpath.NATIVE, "olympus/backends/xla/_fastpath.c was not built"


@native
def test_array_fields_and_construction():
    x = jnp.arange(3.0)
    assert type(x) is olympus.Array or isinstance(x, olympus.Array)
    y = type(x)(x._buf, x.aval)
    assert y.aval is x.aval and y._buf is x._buf
    assert y._npy is None and y._global is None and y._sharding is None
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None
    with pytest.raises(TypeError):
        type(x)(x._buf)


@native
def test_buffer_protocol_reads_the_device_buffer_as_jax_does():
    x = olympus.jit(lambda v: v * 2.0)(np.arange(6, dtype=np.float32).reshape(2, 3))
    view = memoryview(x)
    assert view.readonly and view.shape == (2, 3) and view.format.endswith("f")
    jx = jax.jit(lambda v: v * 2.0)(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert memoryview(jx).shape == view.shape and memoryview(jx).readonly
    a, b = np.asarray(x), np.asarray(x)
    assert np.shares_memory(a, b) and not a.flags.writeable
    np.testing.assert_array_equal(a, [[0, 2, 4], [6, 8, 10]])


@pytest.mark.parametrize(
    "dtype",
    [np.float32, np.bool_, np.int8, np.float16, np.complex64, ml_dtypes.bfloat16],
    ids=lambda d: np.dtype(d).name,
)
def test_read_back_where_the_buffer_protocol_steps_aside(dtype):
    # bf16 (jaxlib refuses it), 0-d, a host copy already read, a deleted
    # Array: NumPy then asks __array__, as before the C type
    def program(lib, x):
        f = lib.jit(lambda v: (v * 3).astype(dtype))
        r, s = f(x), f(x)[1]
        first = np.asarray(r)
        return [
            first,
            np.asarray(r),
            np.asarray(s),
            np.asarray(s).shape,
            np.asarray(r).dtype,
        ]

    agree(lambda ox, x: program(ox, x), np.linspace(-1, 1, 4, dtype=np.float32))


def test_read_back_of_a_deleted_array_raises():
    x = olympus.jit(lambda v: v + 1.0)(np.ones(3, np.float32))
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)


def test_a_jit_hit_matches_the_python_path():
    f = olympus.jit(lambda x, k: jnp.sum(x * k), static_argnums=1)
    x = jnp.arange(4.0)
    first = f(x, 3.0)
    for _ in range(3):
        assert float(f(x, 3.0)) == float(f._call_python(x, 3.0)) == float(first)
    assert f(x, 2).dtype == f._call_python(x, 2).dtype  # static 2 vs 2.0: its own entry
    # several outputs, keywords, containers, under a trace, unhashable statics
    g = olympus.jit(lambda x, y: (x + y, x * y))
    assert [float(v[1]) for v in [g(x, x)[0], g(x, x)[0]]] == [2.0, 2.0]
    assert float(f(x, k=3.0)) == float(first)
    assert float(olympus.grad(lambda v: f(v, 3.0))(x)[0]) == 3.0
    with pytest.raises(ValueError, match="hashable"):
        f(x, np.ones(2))


def test_a_jit_hit_after_a_config_change_and_on_a_deleted_argument():
    f = olympus.jit(lambda x: x + 1)
    x = jnp.arange(3)
    assert f(x).dtype == np.int32 and f(x).dtype == np.int32
    with olympus.enable_x64(True):
        y = jnp.arange(3)
        assert f(y).dtype == np.int64 and f(y).dtype == np.int64
    assert f(x).dtype == np.int32
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x)


def test_a_jit_hit_leaks_no_references():
    f = olympus.jit(lambda x, k: x * k, static_argnums=1)
    h = olympus.jit(lambda x, y: x + y)
    x = jnp.arange(4.0)
    a = np.arange(4, dtype=np.float32)
    for _ in range(5):
        f(x, 2.0), h(a, a), h(a, x)
    out_aval = f(x, 2.0).aval
    counts = lambda: (  # noqa: E731
        sys.getrefcount(x),
        sys.getrefcount(x._buf),
        sys.getrefcount(x.aval),
        sys.getrefcount(out_aval),
        sys.getrefcount(a),
    )
    before = counts()
    for _ in range(2000):
        f(x, 2.0)
        h(a, a)
        h(a, x)
    assert counts() == before


def test_numpy_arguments_written_after_the_call_do_not_change_results():
    # small arrays go through the staging arrays, large ones through copies;
    # the async program reads its argument after the call returns
    ident = olympus.jit(lambda v: v)
    add = olympus.jit(lambda v, w: v + w)
    slow = olympus.jit(lambda v: jnp.sum(jnp.tanh(v @ v.T)))
    a = np.zeros(4, np.float32)
    kept = []
    for i in range(8):
        a[:] = i
        kept.append((ident(a), add(a, a)))
    a[:] = 100
    assert [float(r[0]) for r, _ in kept] == list(range(8))
    assert [float(s[0]) for _, s in kept] == [2.0 * i for i in range(8)]
    for n in (64, 256):  # 16 KiB (staged) and 256 KiB (copied)
        b = np.ones((n, n), np.float32)
        want = float(slow(b))
        changed = 0
        for _ in range(10):
            r = slow(b)
            b[:] = 2.0
            changed += float(r) != want
            b[:] = 1.0
        assert changed == 0


def test_numpy_arguments_of_every_kind_through_the_host_path():
    ident = olympus.jit(lambda v: v)
    cases = [
        np.arange(8, dtype=np.float32)[::2],  # not contiguous
        np.ones(5, ml_dtypes.bfloat16),
        np.array([True, False]),
        np.arange(6, dtype=np.int8).reshape(2, 3),
        np.array(3.5, np.float16),  # 0-d
        np.zeros((0, 3), np.float32),
    ]
    for x in cases:
        for _ in range(3):
            r = ident(x)
            assert r.shape == x.shape and r.dtype == x.dtype
            np.testing.assert_array_equal(np.asarray(r), x)
    for _ in range(2):  # not native: refused as JAX refuses it
        with pytest.raises(TypeError, match=">f4"):
            ident(np.ones(3, ">f4"))
    for i in range(6):  # shapes alternating at one position
        x = np.full(3 + i % 2, i, np.float32)
        np.testing.assert_array_equal(np.asarray(ident(x)), x)


def test_the_dispatch_tests_pass_on_the_python_paths():
    env = dict(os.environ, OLYMPUS_PURE_PYTHON="1")
    files = [
        "tests/test_dispatch.py",
        "tests/test_dispatch_static.py",
        "tests/test_dispatch_keywords.py",
        "tests/test_dispatch_trees.py",
        "tests/test_dispatch_scalars.py",
        "tests/test_read_back.py",
        "tests/test_fastpath.py",
    ]
    check = "from olympus.backends.xla import fastpath; assert not fastpath.NATIVE"
    subprocess.run([sys.executable, "-c", check], env=env, cwd=ROOT, check=True)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            *files,
            "-k",
            "not python_paths",
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


@native
def test_small_numpy_arguments_are_copied_into_aligned_staging_arrays():
    f = olympus.jit(lambda v, w: v * w[:8])
    a, big = np.ones(8, np.float32), np.ones(20000, np.float32)  # 32 B, 80 KB
    f(a, big)  # compiles (the Python path)
    f(a, big)  # makes the C++ dispatcher (the Python path)
    f(a, big)  # the C path: (dtype, shape) seen once
    # an entry per position: [dtype, shape, nbytes, staging A, B, their data]
    assert f._staging[0][3] is None  # seen once: copied the ordinary way
    for _ in range(3):
        f(a, big)
    staged = f._staging[0]
    assert staged[:3] == [np.float32, (8,), 32]
    for arr in staged[3:5]:
        assert arr.shape == (8,) and arr.ctypes.data % 64 == 0
    assert f._staging[1] is None  # 80 KB: always copied
    g = olympus.jit(lambda v: v + 1)
    for i in range(8):  # alternating shapes: seen once each time, never staged
        g(
            np.ones(3 + i // 2 % 2, np.float32)
            if i < 4
            else np.ones(3 + i % 2, np.float32)
        )
    assert g._staging[0][3] is None


@native
def test_keyword_and_container_hits_run_in_c_as_in_python():
    k = olympus.jit(lambda x, factor: x * factor, static_argnames="factor")
    t = olympus.jit(lambda pair, x: pair[0] * x + pair[1])
    x, y = jnp.arange(3.0), jnp.ones(3)
    for _ in range(3):
        np.testing.assert_array_equal(k(x, factor=2.0), k._call_python(x, factor=2.0))
        np.testing.assert_array_equal(t((x, y), x), t._call_python((x, y), x))
        np.testing.assert_array_equal(t([x, y], x), t._call_python([x, y], x))
    assert float(t((x, y), x)[2]) == 5.0 and float(k(x, factor=3)[1]) == 3.0


def test_threads_sharing_a_function_and_its_staging_arrays_get_their_own_results():
    import threading

    f = olympus.jit(lambda v, w: jnp.sum(v * w))
    wrong = []

    def work(t):
        a, b = np.zeros(16, np.float32), np.ones(16, np.float32)
        for i in range(400):
            a[:] = t + i % 7
            r = f(a, b)
            a[:] = -1.0  # written before the result is read
            if float(r) != 16.0 * (t + i % 7):
                wrong.append((t, i, float(r)))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
