"""olympus.debug.print / callback (eager, jit through XLA host callbacks, grad,
vmap, loops) and the persistent compilation cache."""

import os
import warnings

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import debug, lax
from olympus.backends.xla import client, compiler
from olympus.backends.xla.compiler import CompilationCacheWarning

X = np.array([0.0, 1.0, 2.0], np.float32)


def _f(x):
    debug.print("x = {x}", x=x)
    y = jnp.sin(x)
    debug.print("y = {}", y)
    debug.print("sum = {s} ({s:.2f})", s=y.sum())
    return y * 2


_Y = np.asarray(jnp.sin(X))  # XLA's sin (its last digit can differ from NumPy's)
_S = np.asarray(jnp.sum(_Y))[()]
EXPECTED = ["x = [0. 1. 2.]", f"y = {_Y}", f"sum = {_S!s} ({_S:.2f})"]


def _lines(capsys):
    return capsys.readouterr().out.splitlines()


def test_eager_prints_at_once(capsys):
    out = _f(X)
    assert _lines(capsys) == EXPECTED
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(X), rtol=1e-6)


def test_jit_prints_in_program_order_on_every_call(capsys):
    f = olympus.jit(_f)
    out = f(X)
    assert _lines(capsys) == EXPECTED
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(X), rtol=1e-6)
    f(X + 1)  # the cached executable calls back again, with the new values
    assert _lines(capsys)[0] == "x = [1. 2. 3.]"
    text = f.lower(X).as_text()
    assert text.count("xla_ffi_python_cpu_callback") == 3 and "!stablehlo.token" in text


def test_many_independent_prints_stay_in_order(capsys):
    @olympus.jit
    def f(x):
        for i in range(8):
            debug.print("{} {}", i, x[i % 3] * i, ordered=False)  # ordered anyway
        return x

    f(X)
    assert [int(line.split()[0]) for line in _lines(capsys)] == list(range(8))


def test_grad_prints_primal_values(capsys):
    g = olympus.grad(lambda x: _f(x).sum())(X)
    assert _lines(capsys) == EXPECTED
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(X), rtol=1e-6)
    olympus.jit(olympus.grad(lambda x: _f(x).sum()))(X)
    assert _lines(capsys) == EXPECTED


def test_vmap_prints_each_example(capsys):
    olympus.vmap(lambda x: debug.print("row {}", x))(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    assert _lines(capsys) == ["row [0. 1. 2.]", "row [3. 4. 5.]"]


def test_inside_a_compiled_loop(capsys):
    def body(carry, x):
        debug.print("step {c}: {x}", c=carry, x=x)
        return carry + 1, x * 2

    olympus.jit(lambda xs: lax.scan(body, 0, xs))(X)
    assert _lines(capsys) == ["step 0: 0.0", "step 1: 1.0", "step 2: 2.0"]


def test_callback_gets_numpy_pytrees():
    seen = []
    olympus.jit(lambda x: debug.callback(lambda d: seen.append(d), {"a": x, "b": x.sum()}))(X)
    assert set(seen[0]) == {"a", "b"}
    assert isinstance(seen[0]["a"], np.ndarray)
    np.testing.assert_array_equal(seen[0]["a"], X)
    assert seen[0]["b"] == np.float32(3.0)


def test_shows_in_the_olympuspr():
    text = str(olympus.make_olympuspr(_f)(X))
    assert text.count("debug_callback[callback=print]") == 3


# ---- persistent compilation cache ----------------------------------------------
class _CountingClient:
    """The real client, counting how often XLA's compiler runs."""

    def __init__(self):
        self.real = client.get_client()
        self.compiles = 0

    def compile_and_load(self, *args, **kwargs):
        self.compiles += 1
        return self.real.compile_and_load(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.real, name)


def _module(constant: float) -> str:
    return olympus.jit(lambda x: x * constant + 1).lower(X).as_text()


def _run(executable):
    buf = client.host_to_device(X, olympus.core.ShapedArray((3,), np.float32))
    out = executable.execute_sharded([buf]).disassemble_into_single_device_arrays()
    return np.asarray(out[0][0])


def test_cache_hit_skips_the_compiler(compilation_cache_dir):
    tmp_path = compilation_cache_dir
    counting, text = _CountingClient(), _module(3.5)
    options = client.xc.CompileOptions()
    first = compiler.compile_and_load(counting, text, client.device_list(), options)
    assert counting.compiles == 1 and len(os.listdir(tmp_path)) == 1
    second = compiler.compile_and_load(counting, text, client.device_list(), options)
    assert counting.compiles == 1  # loaded from the file
    np.testing.assert_array_equal(_run(second), X * 3.5 + 1)
    np.testing.assert_array_equal(_run(first), _run(second))
    compiler.compile_and_load(counting, _module(4.5), client.device_list(), options)
    assert counting.compiles == 2 and len(os.listdir(tmp_path)) == 2  # other text, other key


def test_corrupt_entry_is_ignored_with_a_warning(compilation_cache_dir):
    tmp_path = compilation_cache_dir
    counting, text = _CountingClient(), _module(5.5)
    options = client.xc.CompileOptions()
    key = compiler.cache_key(counting, text, options)
    (tmp_path / f"{key}.xla").write_bytes(b"not an executable")
    with pytest.warns(CompilationCacheWarning, match="ignoring unreadable compilation cache entry"):
        executable = compiler.compile_and_load(counting, text, client.device_list(), options)
    assert counting.compiles == 1
    np.testing.assert_array_equal(_run(executable), X * 5.5 + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the entry was rewritten and now loads
        compiler.compile_and_load(counting, text, client.device_list(), options)
    assert counting.compiles == 1


def test_jit_writes_the_cache_through_config(compilation_cache_dir):
    tmp_path = compilation_cache_dir
    out = olympus.jit(lambda x: x * 6.5 - 2)(X)
    np.testing.assert_array_equal(np.asarray(out), X * 6.5 - 2)
    assert [name.endswith(".xla") for name in os.listdir(tmp_path)] == [True]


def test_key_depends_on_options():
    c, text = client.get_client(), _module(7.5)
    plain = client.xc.CompileOptions()
    other = client.xc.CompileOptions()
    other.num_replicas = 2
    assert compiler.cache_key(c, text, plain) == compiler.cache_key(c, text, client.xc.CompileOptions())
    assert compiler.cache_key(c, text, plain) != compiler.cache_key(c, text, other)


def test_in_branches_loops_and_their_gradients(capsys):
    def f(x):
        def branch(y):
            debug.print("branch {}", y)
            return y * 2

        z = lax.cond(x.sum() > 0, branch, lambda y: y, x)

        def body(c, r):
            debug.print("body {} {}", c, r)
            return c * r, c

        return lax.scan(body, 1.0, z)[0]

    want = ["branch [0. 1. 2.]", "body 1.0 0.0", "body 0.0 2.0", "body 0.0 4.0"]
    assert float(olympus.jit(f)(X)) == 0.0
    assert _lines(capsys) == want
    g = olympus.jit(olympus.grad(f))(X)  # c = 2*x0 * 2*x1 * 2*x2
    np.testing.assert_allclose(np.asarray(g), [8 * X[1] * X[2], 8 * X[0] * X[2], 8 * X[0] * X[1]])
    assert _lines(capsys) == want
    olympus.jit(lambda n: lax.while_loop(lambda c: c < 3, lambda c: (debug.print("w {}", c), c + 1)[1], n))(0)
    assert _lines(capsys) == ["w 0", "w 1", "w 2"]
