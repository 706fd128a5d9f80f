"""`python -m olympus inspect`, end to end in a subprocess (and in-process for
the cheap error paths)."""

import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser

import numpy as np
import pytest

import olympus
from olympus.inspect_cli import main

SOURCE = textwrap.dedent("""
    import olympus.numpy as jnp

    def f(x, y):
        return jnp.sum(jnp.sin(x) * y)

    def rows(x):
        return jnp.max(x, axis=0) - x[0]
""")


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("inspect")
    (directory / "prog_for_inspect.py").write_text(SOURCE)
    return directory


def _run(args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "olympus", "inspect", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _array_after(label, text):
    body = text.split(label, 1)[1]
    numbers = re.search(r"Array\(\[([^\]]*)\]", body).group(1)
    return np.array([float(v) for v in numbers.split(",")])


def test_grad_prints_result_olympuspr_stablehlo_and_writes_html(program_dir):
    done = _run(
        [
            "prog_for_inspect.py:f",
            "--args",
            "np.ones(3), 2.0",
            "--mode",
            "grad",
            "--stage",
            "olympuspr",
            "--stage",
            "stablehlo",
            "--source",
            "--html",
            "out.html",
        ],
        program_dir,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    np.testing.assert_allclose(
        _array_after("result (grad of", out), 2 * np.cos(np.ones(3)), rtol=1e-6
    )
    olympuspr = out.split("\nolympuspr:\n", 1)[1].split("\nstablehlo:\n")[0]
    assert "cos a" in olympuspr and "prog_for_inspect.py:5 (f)" in olympuspr
    stablehlo = out.split("\nstablehlo:\n", 1)[1]
    assert "stablehlo.cosine %arg0 : tensor<3xf32>" in stablehlo  # MLIR's readable form

    class Collect(HTMLParser):
        tags, text = [], ""

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)

        def handle_data(self, data):
            self.text += data

    page = Collect()
    page.feed((program_dir / "out.html").read_text())
    assert {"h1", "table", "pre", "tr"} <= set(page.tags)
    assert (
        "grad of prog_for_inspect.py:f" in page.text and "stablehlo.cosine" in page.text
    )


def test_jit_from_module_path_and_save(program_dir):
    done = _run(
        [
            "prog_for_inspect:rows",
            "--args",
            "np.arange(6.0).reshape(2, 3)",
            "--mode",
            "jit",
            "--save",
            "rows.olympuspr",
            "--stage",
            "olympuspr",
            "--stage",
            "hlo",
        ],
        program_dir,
    )
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(
        _array_after("result (jit of", done.stdout), [3.0, 3.0, 3.0]
    )
    loaded = olympus.ir.load(program_dir / "rows.olympuspr")
    assert str(loaded) in done.stdout
    assert "pjit[" in str(loaded) and "reduce_max" in str(loaded)
    hlo = done.stdout.split("\nhlo:\n", 1)[1]
    assert hlo.startswith("HloModule") and "ENTRY" in hlo


def test_missing_file_exits_2_with_a_message(program_dir):
    done = _run(["no_such_file.py:f"], program_dir)
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == "python -m olympus inspect: error: no such file: no_such_file.py"
    )
    assert done.stdout == ""


def test_usage_errors_in_process(program_dir, capsys):
    path = str(program_dir / "prog_for_inspect.py")
    cases = [
        ([f"{path}:nope"], "has no function 'nope'"),
        (
            [f"{path}:f", "--args", "np.ones(3,"],
            "could not evaluate --args 'np.ones(3,': SyntaxError",
        ),
        ([f"{path}:f", "--args", "undefined_name"], "NameError"),
        ([path], "should be FILE.py:FUNCTION or module:FUNCTION"),
        (["no_such_module_xyz:f"], "no such file or module: no_such_module_xyz"),
        (
            [
                f"{path}:f",
                "--args",
                "np.ones(3), 2.0",
                "--mode",
                "grad",
                "--argnums",
                "x",
            ],
            "could not read --argnums 'x'",
        ),
    ]
    for argv, message in cases:
        assert main(["inspect", *argv]) == 2, argv
        assert message in capsys.readouterr().err


def test_vmap_jvp_and_user_errors_in_process(program_dir, capsys):
    path = str(program_dir / "prog_for_inspect.py")
    assert (
        main(
            [
                "inspect",
                f"{path}:f",
                "--args",
                "np.ones((2, 3)), 2.0",
                "--mode",
                "vmap",
                "--in-axes",
                "0, None",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    np.testing.assert_allclose(
        _array_after("result", out), [2 * 3 * np.sin(1.0)] * 2, rtol=1e-6
    )
    assert (
        main(["inspect", f"{path}:f", "--args", "np.ones(3), 2.0", "--mode", "jvp"])
        == 0
    )
    out = capsys.readouterr().out
    primal, tangent = re.findall(r"Array\(([-0-9.e]+), dtype=float32\)", out)
    np.testing.assert_allclose(float(primal), 6 * np.sin(1.0), rtol=1e-6)
    np.testing.assert_allclose(
        float(tangent), 6 * np.cos(1.0) + 3 * np.sin(1.0), rtol=1e-6
    )
    # the user's function fails (vmap over a scalar): exit 1 with its message
    assert (
        main(["inspect", f"{path}:f", "--args", "np.ones(3), 2.0", "--mode", "vmap"])
        == 1
    )
    assert "in_axes" in capsys.readouterr().err


def test_optimized_stage_shows_the_shorter_program_jit_lowers(program_dir):
    done = _run(
        [
            "prog_for_inspect.py:f",
            "--args",
            "np.ones(3), 2.0",
            "--mode",
            "grad",
            "--stage",
            "olympuspr",
            "--stage",
            "optimized",
        ],
        program_dir,
    )
    assert done.returncode == 0, done.stderr
    traced, optimized = done.stdout.split("\nolympuspr:\n", 1)[1].split(
        "\noptimized:\n"
    )
    assert "cos a" in optimized
    assert optimized.count(" = ") < traced.count(" = ")


STEP_SOURCE = textwrap.dedent("""
    import olympus.numpy as jnp
    from olympus import lax

    def g(x, y):
        a = jnp.sin(x) * y
        b = lax.cond(a.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, a)
        c, ys = lax.scan(lambda c, v: (c + v, jnp.log(c - 1.0)), 0.0, b)
        return c + ys.sum()
""")


def _step(args, commands: str, cwd):
    return subprocess.run(
        [sys.executable, "-m", "olympus", "inspect", *args, "--step"],
        cwd=cwd,
        input=commands,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_step_drives_the_stepper_from_stdin(program_dir):
    (program_dir / "prog_for_step.py").write_text(STEP_SOURCE)
    script = "p a\ns\nc cond\ni\nc scan\ni\np p\np p[0]\nc nan\nc sine\nzz\nf\ns\nq\n"
    done = _step(
        ["prog_for_step.py:g", "--args", "np.arange(3.0, dtype=np.float32), 2.0"],
        script,
        program_dir,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert (
        "stepping eval of prog_for_step.py:g:\n{ lambda ; a:f32[3] b:f32[]. let" in out
    )
    assert "-> c:f32[3] = sin a" in out and "a = jnp.sin(x) * y" in out
    assert "a = Array([0., 1., 2.], dtype=float32)" in out
    assert "-> i:f32[3] = cond[branches=({…} {…}) linear=(False,)] h e" in out
    assert "g > cond branch 1 (prog_for_step.py:7)" in out  # sin(x)*2 sums > 0
    assert "g > scan iteration 0 (prog_for_step.py:8)" in out
    assert (
        "UnknownVariableError: p has several values" in out and "p[0] = Array(0." in out
    )
    assert (
        "ran: u:f32[] = log t\n  u[0] = f32[] nan" in out
    )  # log(0 - 1) in iteration 0
    assert "did you mean sin, scan?" in out and "unknown command 'zz'" in out
    assert "result:\nArray(nan, dtype=float32)" in out
    assert "ProgramFinishedError: step: the program has finished" in out


def test_step_grad_mode_and_end_of_input(program_dir):
    done = _step(
        ["prog_for_inspect.py:f", "--args", "np.ones(3), 2.0", "--mode", "grad"],
        "i\nc cos\nf\n",
        program_dir,
    )  # no q: the end of stdin quits
    assert done.returncode == 0, done.stderr
    assert "-> " in done.stdout and "= cos " in done.stdout
    np.testing.assert_allclose(
        _array_after("result:", done.stdout), 2 * np.cos(np.ones(3)), rtol=1e-6
    )
