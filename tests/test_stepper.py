"""The step debugger (olympus.debug.Stepper, intermediates) and NaN
provenance (olympus/backends/stepping.py): values equal eager and jit, names
equal the printed program's, stepping into cond/while/scan/pjit, continue
conditions, errors."""

import re

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import debug, lax
from olympus.backends.stepping import ProgramStepper, StepperTraceError, nan_report

X = np.array([0.5, 1.0, 2.0], np.float32)
Y = np.float32(2.0)


def _mixed(x, y):
    a = jnp.sin(x) * y
    b = lax.cond(a.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, a)

    def body(c, xi):
        return c + xi, c * xi

    c, ys = lax.scan(body, 0.0, b)
    w = lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 1.5), (0, c))
    return olympus.jit(lambda z: z.sum())(ys) + w[1]


def _line_of(fun, text: str) -> int:
    import inspect

    lines, start = inspect.getsourcelines(fun)
    return start + next(i for i, line in enumerate(lines) if text in line)


def _binders(text: str) -> list[str]:
    """Every variable name the printed program binds (`name:type`)."""
    return re.findall(r"(?<![\w.])([a-z]+):[a-z]+\d*\[", text)


# ---- intermediates -------------------------------------------------------------------
def test_intermediates_equal_eager_and_jit():
    values = debug.intermediates(_mixed)(X, Y)
    printed = str(olympus.make_olympuspr(_mixed)(X, Y))
    names = set(_binders(printed))
    # every key is a printed name (with its loop iteration), in the printer's spelling
    assert {re.sub(r"(\[\d+\]|#\d+)+$", "", k) for k in values} <= names
    # values equal eager: `c = sin a`, `d = mul c b`, the cond's result and the output
    sin_x = jnp.sin(olympus.device_put(X))
    np.testing.assert_array_equal(values["c"], sin_x)
    np.testing.assert_array_equal(values["d"], sin_x * Y)
    np.testing.assert_array_equal(values["h"], sin_x * Y * 2.0)
    out = values[_binders(printed)[-1]]
    np.testing.assert_array_equal(out, _mixed(olympus.device_put(X), Y))
    np.testing.assert_allclose(out, olympus.jit(_mixed)(X, Y), rtol=1e-6)


def test_loop_values_are_keyed_by_iteration():
    values = debug.intermediates(_mixed)(X, Y)
    printed = str(olympus.make_olympuspr(_mixed)(X, Y))
    body = printed.split("olympuspr={ lambda ; ", 1)[1]
    carry, x = re.findall(r"([a-z]+):f32\[\]", body)[:2]  # the scan body's o, p
    h = np.asarray(values["h"])
    running = 0.0
    for i in range(3):
        assert float(values[f"{carry}[{i}]"]) == pytest.approx(running)
        assert float(values[f"{x}[{i}]"]) == pytest.approx(h[i])
        running += h[i]
    # the while loop ran 3 times: its condition 4 times
    cond_var = re.search(r"cond_olympuspr=\{ lambda ; ([a-z]+):i32", printed).group(1)
    assert [int(values[f"{cond_var}[{i}]"]) for i in range(4)] == [0, 1, 2, 3]
    with pytest.raises(
        debug.UnknownVariableError, match=rf"{carry}\[0\], {carry}\[1\]"
    ):
        values[carry]


def test_reverse_scan_keys_are_slice_indices():
    def f(xs):
        return lax.scan(lambda c, x: (c + x, c * 1.0), 0.0, xs, reverse=True)

    values = debug.intermediates(f)(X)
    printed = str(olympus.make_olympuspr(f)(X))
    x = re.findall(r"([a-z]+):f32\[\]", printed.split("olympuspr={ lambda ; ", 1)[1])[1]
    assert [float(values[f"{x}[{i}]"]) for i in range(3)] == list(X)
    assert printed.splitlines()[1].startswith("    b:f32[] c:f32[3] = scan")
    np.testing.assert_allclose(values["c"], f(olympus.device_put(X))[1])


def test_shared_sub_program_second_call_is_numbered():
    g = olympus.jit(lambda v: v * 3.0)

    def f(x):
        return g(x) + g(x + 1.0)

    values = debug.intermediates(f)(X)
    printed = str(olympus.make_olympuspr(f)(X))
    inner = re.search(r"\{ lambda ; ([a-z]+):f32\[3\]\. let ([a-z]+):", printed).group(
        2
    )
    np.testing.assert_array_equal(values[inner], X * 3.0)
    np.testing.assert_array_equal(values[f"{inner}#2"], (X + 1.0) * 3.0)


# ---- stepping ------------------------------------------------------------------------
def test_step_runs_one_equation_and_shows_its_neighbours():
    s = debug.Stepper(_mixed, X, Y)
    assert s.current.eqn.primitive.name == "sin" and s.last is None
    text = str(s.step())
    assert s.last.eqn.primitive.name == "sin" and s.current.eqn.primitive.name == "mul"
    assert "-> d:f32[3] = mul c b" in text
    assert "a = jnp.sin(x) * y" in text  # the user's line of code
    assert f"test_stepper.py:{_line_of(_mixed, 'jnp.sin(x) * y')}" in text
    html = s._repr_html_()
    assert '<table class="olympus-table">' in html and "mul c b" in html
    assert "&rarr;" in html


def test_step_into_cond_takes_the_taken_branch():
    s = debug.Stepper(_mixed, X, Y).continue_to(primitive="cond")
    s.step_into()
    assert s.path[-1].startswith(
        "cond branch 1"
    )  # sum(sin(x) * 2) > 0: the true branch
    assert s.current.eqn.primitive.name == "mul"
    s.step()
    assert s.path == ("_mixed",) and s.current.eqn.primitive.name == "scan"
    with pytest.raises(debug.UnknownVariableError, match="did not run|has not run"):
        s.values["j"]  # the false branch's variable


def test_step_into_scan_and_while_iterations():
    s = debug.Stepper(_mixed, X, Y).continue_to(primitive="scan")
    s.step_into()
    assert s.path[-1].startswith("scan iteration 0")
    # The body's four equations (c is weak: each use converts it first, as in
    # JAX's IR): on to iteration 1
    s.step().step().step().step()
    assert s.path[-1].startswith("scan iteration 1")
    s.continue_to(primitive="while")
    s.step_into()
    assert s.path[-1].startswith("while condition, iteration 0")
    s.step()
    assert s.path[-1].startswith("while body, iteration 0")
    assert float(s.finish()) == pytest.approx(float(_mixed(X, Y)), rel=1e-6)


def test_step_over_a_loop_runs_it_whole():
    s = debug.Stepper(_mixed, X, Y).continue_to(primitive="scan")
    s.step()
    assert s.current.eqn.primitive.name == "while" and len(s.path) == 1
    assert not any(k.endswith("[0]") for k in s.values)


def test_step_into_a_jitted_call():
    s = debug.Stepper(_mixed, X, Y).continue_to(primitive="pjit")
    s.step_into()
    assert s.path[-1].startswith("pjit <lambda>")
    assert s.current.eqn.primitive.name == "reduce_sum"


def test_continue_to_line_condition_and_nonfinite():
    line = _line_of(_mixed, "lax.scan(body")
    s = debug.Stepper(_mixed, X, Y).continue_to(line=line)
    assert s.current.eqn.primitive.name == "scan"
    s = debug.Stepper(_mixed, X, Y).continue_to(line=f"test_stepper.py:{line}")
    assert s.current.eqn.primitive.name == "scan"
    big = debug.Stepper(_mixed, X, Y).continue_to(
        condition=lambda st: (
            st.last is not None and float(np.max(st.last.outs[0])) > 3.0
        )
    )
    assert float(np.max(big.last.outs[0])) > 3.0

    def f(x):
        y = jnp.exp(x * 100.0)
        return jnp.log(x - 1.0) + y

    s = debug.Stepper(f, X).continue_to_nonfinite()
    assert s.last.eqn.primitive.name == "exp"  # inf first
    s.continue_to_nonfinite(nan_only=True)
    assert s.last.eqn.primitive.name == "log"
    s.continue_to_nonfinite()
    assert s.finished


def test_continue_to_runs_to_the_end_when_nothing_matches():
    s = debug.Stepper(_mixed, X, Y).continue_to(primitive="pjit")
    s.step()
    s.continue_to(primitive="sin")
    assert s.finished and s.current is None and "finished" in str(s)


def test_errors_name_the_problem():
    s = debug.Stepper(_mixed, X, Y)
    with pytest.raises(KeyError) as info:
        s.values["cc"]
    assert isinstance(info.value, debug.UnknownVariableError)
    assert (
        "no variable 'cc'" in str(info.value)
        and "c" in str(info.value).split("close")[1]
    )
    with pytest.raises(debug.UnknownVariableError, match="has not run yet"):
        s.values["d"]
    with pytest.raises(LookupError, match="did you mean sin"):
        s.continue_to(primitive="sine")
    with pytest.raises(debug.NotInProgramError, match="no line"):
        s.continue_to(line=1)
    s.finish()
    with pytest.raises(debug.ProgramFinishedError, match="finished"):
        s.step()
    with pytest.raises(StepperTraceError, match="outside jit"):
        olympus.jit(lambda x: debug.Stepper(jnp.sin, x).finish())(X)


def test_finish_returns_the_function_result_pytree():
    def f(x, scale=1.0):
        return {"s": jnp.sin(x) * scale, "n": x.sum()}

    out = debug.Stepper(f, X, scale=2.0).finish()
    np.testing.assert_array_equal(out["s"], f(olympus.device_put(X), 2.0)["s"])
    assert float(out["n"]) == pytest.approx(X.sum())


def test_an_equation_that_fails_stops_the_stepper():
    def bad(x):
        olympus.debug.callback(lambda v: 1 / 0, x)
        return x

    s = debug.Stepper(bad, X)
    with pytest.raises(ZeroDivisionError):
        s.finish()
    with pytest.raises(debug.ProgramFinishedError, match="stopped at an error"):
        s.step()


# ---- NaN provenance ------------------------------------------------------------------
def _report(fun, *args):
    closed = olympus.make_olympuspr(fun)(*args)
    return nan_report(closed, list(args), f"jit({fun.__name__})")


def test_nan_report_names_equation_inputs_and_line():
    def f(x):
        y = x - 1.0
        return jnp.sqrt(y) * 2.0

    text = _report(f, X)
    line = _line_of(f, "jnp.sqrt(y)")
    assert re.search(
        rf"\(NaN\) encountered in sqrt at .*test_stepper.py:{line} \(f\)", text
    )
    assert "= sqrt b" in text and "return jnp.sqrt(y) * 2.0" in text
    assert "b: f32[3] min=-0.5 max=1.0" in text and "1 NaN of 3" in text


def test_nan_report_follows_an_inf_back_to_its_origin():
    def f(x):
        big = jnp.exp(x * 100.0)
        return big * 0.0

    text = _report(f, X)
    assert "encountered in mul" in text
    assert re.search(r"Inf first made by .* = exp .*test_stepper.py:\d+", text)


def test_nan_report_in_a_scan_iteration():
    def f(xs):
        return lax.scan(lambda c, v: (c * v, jnp.log(c - 1.0)), 1.0, xs)[1]

    text = _report(f, np.array([0.1, 2.0, 3.0], np.float32))
    assert "encountered in log" in text and "scan iteration 1" in text


def test_nan_report_in_the_backward_pass_names_the_forward_line():
    def loss(x):
        return jnp.sum(jnp.sqrt(x) * 0.0)

    text = _report(olympus.grad(loss), np.zeros(3, np.float32))
    line = _line_of(loss, "jnp.sqrt(x)")
    assert "in the backward pass" in text
    assert re.search(
        rf"forward line .*test_stepper.py:{line} \(loss\): .* = sqrt", text
    )


def test_nan_report_is_none_without_nan():
    assert _report(lambda x: x * 2.0, X) is None


def test_stepper_over_a_closed_program_directly():
    closed = olympus.make_olympuspr(lambda x: jnp.cos(x) + 1.0)(X)
    s = ProgramStepper(closed, [X])
    assert [np.asarray(v).tolist() for v in s.run_all()] == [
        np.asarray(jnp.cos(olympus.device_put(X)) + 1.0).tolist()
    ]


def test_nan_report_in_a_while_iteration_and_from_an_input():
    def f(x):
        return lax.while_loop(
            lambda s: s[0] < 4, lambda s: (s[0] + 1, jnp.sqrt(s[1] - 1.0)), (0, x)
        )[1]

    text = _report(
        f, np.float32(1.5)
    )  # 1.5 -> 0.707 -> sqrt(-0.29): NaN in iteration 1
    assert "encountered in sqrt" in text and "while body, iteration 1" in text
    text = _report(lambda x: x * 2.0, np.array([1.0, np.nan], np.float32))
    assert (
        "encountered in mul" in text and "comes from a, an input of the program" in text
    )


def test_constants_are_named_as_printed_and_html_at_the_end():
    w = np.arange(3.0, dtype=np.float32)

    def f(x):
        return jnp.sum(x * w)

    printed = str(olympus.make_olympuspr(f)(X))
    assert printed.startswith("{ lambda a:f32[3] ; b:f32[3]. let")
    s = debug.Stepper(f, X)
    np.testing.assert_array_equal(s.values["a"], w)
    np.testing.assert_array_equal(s.values["b"], X)
    assert float(s.finish()) == pytest.approx(float(np.sum(X * w)))
    assert "finished; outputs: f32[] 5.0" in s._repr_html_()
