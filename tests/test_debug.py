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
    olympus.vmap(lambda x: debug.print("row {}", x))(
        np.arange(6.0, dtype=np.float32).reshape(2, 3)
    )
    assert _lines(capsys) == ["row [0. 1. 2.]", "row [3. 4. 5.]"]


def test_inside_a_compiled_loop(capsys):
    def body(carry, x):
        debug.print("step {c}: {x}", c=carry, x=x)
        return carry + 1, x * 2

    olympus.jit(lambda xs: lax.scan(body, 0, xs))(X)
    assert _lines(capsys) == ["step 0: 0.0", "step 1: 1.0", "step 2: 2.0"]


def test_callback_gets_numpy_pytrees():
    seen = []
    olympus.jit(
        lambda x: debug.callback(lambda d: seen.append(d), {"a": x, "b": x.sum()})
    )(X)
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
    assert (
        counting.compiles == 2 and len(os.listdir(tmp_path)) == 2
    )  # other text, other key


def test_corrupt_entry_is_ignored_with_a_warning(compilation_cache_dir):
    tmp_path = compilation_cache_dir
    counting, text = _CountingClient(), _module(5.5)
    options = compiler.with_codegen_options(counting, client.xc.CompileOptions())
    key = compiler.cache_key(counting, text, options)
    (tmp_path / f"{key}.xla").write_bytes(b"not an executable")
    with pytest.warns(
        CompilationCacheWarning, match="ignoring unreadable compilation cache entry"
    ):
        executable = compiler.compile_and_load(
            counting, text, client.device_list(), options
        )
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
    assert compiler.cache_key(c, text, plain) == compiler.cache_key(
        c, text, client.xc.CompileOptions()
    )
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
    np.testing.assert_allclose(
        np.asarray(g), [8 * X[1] * X[2], 8 * X[0] * X[2], 8 * X[0] * X[1]]
    )
    assert _lines(capsys) == want
    olympus.jit(
        lambda n: lax.while_loop(
            lambda c: c < 3, lambda c: (debug.print("w {}", c), c + 1)[1], n
        )
    )(0)
    assert _lines(capsys) == ["w 0", "w 1", "w 2"]


# ---- program order across branches, loops, nested jits (an ordering token) -----------
_REPEATS = 20  # each program runs this often, to catch a schedule that reorders


def _run_repeatedly(capsys, call, want):
    """`call()` prints exactly `want` (in order) on every one of _REPEATS runs."""
    for _ in range(_REPEATS):
        call()
        assert _lines(capsys) == want


def _with_cond(x):
    debug.print("before {}", x)
    y = lax.cond(
        x > 0,
        lambda v: (debug.print("true {}", v), v * 2)[1],
        lambda v: (debug.print("false {}", v), v * 3)[1],
        x,
    )
    debug.print("after {}", y)
    return y


def test_prints_before_inside_and_after_a_cond_keep_order(capsys):
    f = olympus.jit(_with_cond)
    _run_repeatedly(
        capsys, lambda: f(np.float32(1.5)), ["before 1.5", "true 1.5", "after 3.0"]
    )
    _run_repeatedly(
        capsys, lambda: f(np.float32(-1.0)), ["before -1.0", "false -1.0", "after -3.0"]
    )


def test_loop_body_prints_interleave_with_prints_outside(capsys):
    @olympus.jit
    def f(x, n):
        debug.print("start {}", x)

        def body(i, c):
            debug.print("body {} {}", i, c)
            return c + 1.0

        y = lax.fori_loop(0, n, body, x)  # traced bound: a while loop
        debug.print("middle {}", y)
        z = lax.while_loop(
            lambda c: (debug.print("test {}", c), c < y + 2)[1],
            lambda c: (debug.print("step {}", c), c + 1.0)[1],
            y,
        )
        debug.print("end {}", z)
        return z

    want = [
        "start 0.0",
        "body 0 0.0",
        "body 1 1.0",
        "body 2 2.0",
        "middle 3.0",
        "test 3.0",
        "step 3.0",
        "test 4.0",
        "step 4.0",
        "test 5.0",
        "end 5.0",
    ]
    _run_repeatedly(capsys, lambda: f(np.float32(0.0), 3), want)
    assert "stablehlo.token" in f.lower(np.float32(0.0), 3).as_text()


def test_scan_body_prints_keep_order_with_unrolled_leftovers(capsys):
    def body(c, x):
        debug.print("c={} x={}", c, x)
        return c + x, c

    @olympus.jit
    def f(xs):
        debug.print("first")
        c, _ = lax.scan(
            body, 0.0, xs, unroll=2
        )  # 2 trips of 2 steps, then 1 straight-line
        debug.print("last {}", c)
        return c

    xs = np.arange(1.0, 6.0, dtype=np.float32)
    want = [
        "first",
        "c=0.0 x=1.0",
        "c=1.0 x=2.0",
        "c=3.0 x=3.0",
        "c=6.0 x=4.0",
        "c=10.0 x=5.0",
        "last 15.0",
    ]
    _run_repeatedly(capsys, lambda: f(xs), want)


def test_nested_jit_prints_in_order(capsys):
    inner = olympus.jit(lambda x: (debug.print("inner {}", x), x + 1)[1])

    @olympus.jit
    def outer(x):
        debug.print("outer in {}", x)
        y = inner(x) * inner(x * 10)
        debug.print("outer out {}", y)
        return y

    want = ["outer in 1.0", "inner 1.0", "inner 10.0", "outer out 22.0"]
    _run_repeatedly(capsys, lambda: outer(np.float32(1.0)), want)


def test_grad_prints_the_forward_values_once(capsys):
    """grad prints what the forward pass prints, once; the backward pass prints nothing."""
    loss = lambda x: _with_cond(x) ** 2
    g = olympus.jit(olympus.grad(loss))
    _run_repeatedly(
        capsys, lambda: g(np.float32(1.5)), ["before 1.5", "true 1.5", "after 3.0"]
    )
    assert float(g(np.float32(-1.0))) == pytest.approx(-18.0)
    assert _lines(capsys) == ["before -1.0", "false -1.0", "after -3.0"]
    assert float(olympus.grad(loss)(np.float32(1.5))) == pytest.approx(12.0)
    assert _lines(capsys) == ["before 1.5", "true 1.5", "after 3.0"]


def test_vmap_prints_each_example_in_order_between_outer_prints(capsys):
    @olympus.jit
    def f(xs):
        debug.print("all {}", xs)
        ys = olympus.vmap(lambda x: (debug.print("one {}", x), x * 2)[1])(xs)
        debug.print("done {}", ys.sum())
        return ys

    xs = np.arange(3.0, dtype=np.float32)
    want = ["all [0. 1. 2.]", "one 0.0", "one 1.0", "one 2.0", "done 6.0"]
    _run_repeatedly(capsys, lambda: f(xs), want)


def test_vmap_with_a_batched_predicate_prints_every_branch_and_trip(capsys):
    """As documented in debug.print: both branches run on the whole batch; a
    batched while runs its body for every example until the last is done."""
    g = olympus.jit(
        olympus.vmap(
            lambda x: lax.cond(
                x > 0,
                lambda v: (debug.print("T {}", v), v)[1],
                lambda v: (debug.print("F {}", v), -v)[1],
                x,
            )
        )
    )
    np.testing.assert_array_equal(
        np.asarray(g(np.array([1.0, -1.0], np.float32))), [1.0, 1.0]
    )
    assert _lines(capsys) == ["F 1.0", "F -1.0", "T 1.0", "T -1.0"]
    w = olympus.jit(
        olympus.vmap(
            lambda n: lax.while_loop(
                lambda c: c < 3, lambda c: (debug.print("w {}", c), c + 1)[1], n
            )
        )
    )
    np.testing.assert_array_equal(np.asarray(w(np.array([0, 1], np.int32))), [3, 3])
    assert _lines(capsys) == ["w 0", "w 1", "w 1", "w 2", "w 2", "w 3"]


def test_jitted_prints_come_before_what_python_prints_next(capsys):
    """A call returns after its prints are written (the ordering token is awaited)."""
    f = olympus.jit(lambda x: (debug.print("jit {}", x), x)[1])
    for i in range(_REPEATS):
        f(np.float32(i))
        print(f"python {i}")
    assert _lines(capsys) == [
        line for i in range(_REPEATS) for line in (f"jit {float(i)}", f"python {i}")
    ]


def test_eager_control_flow_prints(capsys):
    """Outside jit, cond and scan still compile their own program, with the token."""
    _with_cond(np.float32(-2.0))
    assert _lines(capsys) == ["before -2.0", "false -2.0", "after -6.0"]
    lax.scan(lambda c, x: (debug.print("s {}", x), (c, x))[1], 0.0, X)
    assert _lines(capsys) == ["s 0.0", "s 1.0", "s 2.0"]


def test_prints_survive_when_nothing_uses_them(capsys):
    @olympus.jit
    def f(x):
        y = jnp.tanh(x @ x)
        debug.print("unused {}", jnp.tanh(y @ x).sum())  # printed value feeds no output
        return x

    x = np.full((64, 64), 1 / 64, np.float32)
    f(x)
    olympus.jit(lambda x: debug.print("no outputs {}", x))(np.float32(4.0))
    lines = _lines(capsys)
    assert lines[0].startswith("unused ") and lines[1:] == ["no outputs 4.0"]


def test_printing_a_value_derived_from_an_output(capsys):
    """Without the token as a result of `main`, XLA failed to compile this (a
    RET_CHECK 'instruction is live and cannot be removed', from 64x64 up)."""
    f = olympus.jit(
        lambda x: (debug.print("s {:.1f}", jnp.tanh(x @ x).sum()), jnp.tanh(x @ x))[1]
    )
    x = np.full((64, 64), 1 / 64, np.float32)
    np.testing.assert_allclose(np.asarray(f(x)), np.tanh(x @ x), rtol=1e-5)
    assert _lines(capsys) == [f"s {np.tanh(x @ x).sum():.1f}"]


def test_a_zero_length_scan_with_a_print_still_runs(capsys):
    out = olympus.jit(
        lambda xs: lax.scan(
            lambda c, x: (debug.print("{}", x), (c + x, x))[1], 1.0, xs
        )[0]
    )(np.zeros((0,), np.float32))
    assert float(out) == 1.0 and _lines(capsys) == []


def test_only_programs_with_effects_carry_a_token():
    plain = olympus.jit(lambda x: lax.cond(x > 0, lambda v: v, lambda v: -v, x))
    assert "token" not in plain.lower(np.float32(1.0)).as_text(generic=True)
    text = olympus.jit(_with_cond).lower(np.float32(1.0)).as_text(generic=True)
    main = next(line for line in text.splitlines() if "@main" in line)
    assert main.endswith("-> (tensor<f32>, !stablehlo.token) {")
    assert text.count("stablehlo.after_all") == 1  # one chain, started once


def test_effects_are_found_in_nested_programs():
    from olympus.ir.effects import has_ordered_effect

    cond_program = olympus.make_olympuspr(_with_cond)(np.float32(1.0))
    (cond_eqn,) = [e for e in cond_program.eqns if e.primitive.name == "cond"]
    assert all(has_ordered_effect(b) for b in cond_eqn.params["branches"])
    outer = olympus.make_olympuspr(lambda x: olympus.jit(_with_cond)(x) + 1)(
        np.float32(1.0)
    )
    assert has_ordered_effect(outer)
    assert not has_ordered_effect(
        olympus.make_olympuspr(lambda x: lax.cond(x > 0, lambda v: v, lambda v: -v, x))(
            np.float32(1.0)
        )
    )


def test_a_region_without_a_token_is_a_lowering_error():
    from olympus.backends.xla.host_callback import emit_host_callback
    from olympus.backends.xla.lowering import Emitter, LoweringError

    with pytest.raises(LoweringError, match="debug_callback .* no ordering token"):
        emit_host_callback(Emitter(), print, [])


def test_a_failing_callback_raises_a_named_error():
    def fail(x):
        raise ValueError(f"no {x}")

    f = olympus.jit(lambda x: (debug.callback(fail, x), x + 1)[1])
    with pytest.raises(
        debug.HostCallbackError, match=r"(?s)debug.callback.*ValueError: no 2.0"
    ):
        f(np.float32(2.0))
    assert (
        float(olympus.jit(lambda x: x + 1)(np.float32(2.0))) == 3.0
    )  # the runtime is fine


def test_aot_compiled_and_donating_calls_print(capsys):
    f = lambda x: (debug.print("aot {}", x), x * 2)[1]
    compiled = olympus.jit(f).lower(np.float32(3.0)).compile()
    assert float(compiled(np.float32(3.0))) == 6.0
    g = olympus.jit(
        lambda x, y: (debug.print("donated {}", x), x + y)[1], donate_argnums=0
    )
    np.testing.assert_array_equal(
        np.asarray(g(jnp.ones(3), jnp.ones(3))), [2.0, 2.0, 2.0]
    )
    assert _lines(capsys) == ["aot 3.0", "donated [1. 1. 1.]"]


# ---- NaN provenance under jit (olympus_debug_nans) -----------------------------------
@pytest.fixture
def debug_nans():
    with olympus.config.override("olympus_debug_nans", True):
        yield


def _line(text: str, fun) -> int:
    import inspect

    lines, start = inspect.getsourcelines(fun)
    return start + next(i for i, line in enumerate(lines) if text in line)


def _nan_message(fun, *args) -> str:
    with pytest.raises(FloatingPointError) as info:
        fun(*args)
    return str(info.value)


def test_jit_nan_names_the_first_equation_its_operands_and_line(debug_nans):
    def f(x):
        y = jnp.log(x)  # -inf at 0: not yet a NaN
        return y * 0.0 + 1.0

    text = _nan_message(olympus.jit(f), np.array([0.0, 1.0], np.float32))
    line = _line("jnp.log(x)", f)
    assert f"encountered in mul at {__file__}:{line + 1} (f)" in text
    assert "first NaN made by: c:f32[2] = mul b 0.0:f32[]" in text
    assert "source: return y * 0.0 + 1.0" in text and "in: jit(f)" in text
    assert "b: f32[2] 1 Inf of 2; finite ones min=0.0 max=0.0" in text
    assert f"Inf first made by b:f32[2] = log a at {__file__}:{line} (f)" in text


def test_jit_of_grad_nan_is_in_the_backward_pass(debug_nans):
    def loss(x):
        return jnp.sum(jnp.sqrt(x) * 0.0)

    text = _nan_message(olympus.jit(olympus.grad(loss)), np.zeros(3, np.float32))
    line = _line("jnp.sqrt(x)", loss)
    assert (
        f"encountered in div at {__file__}:{line} (loss) (in the backward pass" in text
    )
    assert (
        f"differentiating the forward line {__file__}:{line} (loss): b:f32[3] = sqrt a"
        in text
    )


def test_jit_nan_inside_a_scan_names_the_iteration(debug_nans):
    def f(xs):
        return lax.scan(lambda c, v: (c * v, jnp.log(c - 1.0)), 1.0, xs)[1]

    text = _nan_message(olympus.jit(f), np.array([0.1, 2.0, 3.0], np.float32))
    assert "encountered in log" in text and "> scan iteration 1 (" in text
    assert "g[1]: f32[] -0.9" in text  # f is c made strong (c * v), as in JAX


def test_jit_nan_from_an_argument(debug_nans):
    text = _nan_message(olympus.jit(lambda x: x + 1.0), np.array([np.nan], np.float32))
    assert "comes from a, an input of the program" in text
