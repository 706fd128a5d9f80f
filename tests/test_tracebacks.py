"""Tracebacks of a user's mistake show the user's code: at most one olympus
frame, and never longer than JAX 0.10.2's traceback for the same mistake
(olympus/tracer/tracebacks.py). Each script runs in a fresh interpreter, as a
user's would, under olympus and under JAX (the script written once)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import olympus

PACKAGE = os.path.dirname(os.path.abspath(olympus.__file__))

MISTAKES = {
    "python if on a traced value under jit": """
        @lib.jit
        def f(x):
            if x > 0:
                return x
            return -x
        f(1.0)
    """,
    "grad of a function with a vector output": """
        def f(x):
            return x * 2.0
        lib.grad(f)(jnp.ones(3))
    """,
    "python if under vmap": """
        def f(x):
            return x if x > 0 else -x
        lib.vmap(f)(jnp.arange(3.0))
    """,
    "shapes that do not broadcast inside jit": """
        @lib.jit
        def f(x, y):
            return x + y
        f(jnp.ones(3), jnp.ones(4))
    """,
    "shapes that do not broadcast, eagerly": """
        jnp.ones(3) + jnp.ones(4)
    """,
    "a scan carry that changes shape": """
        lib.lax.scan(lambda c, x: (jnp.concatenate([c, c]), x), jnp.ones(2), jnp.ones(3))
    """,
    "float() of a traced value inside make_jaxpr": """
        def f(x):
            return float(x) * 2
        make(f)(1.0)
    """,
}

PRELUDE = {
    "olympus": "import olympus as lib, olympus.numpy as jnp\nmake = lib.make_olympuspr\n",
    "jax": "import jax as lib, jax.numpy as jnp\nmake = lib.make_jaxpr\n",
}


def _traceback(library: str, body: str, filtering: str = "auto") -> str:
    script = PRELUDE[library] + textwrap.dedent(body)
    env = dict(os.environ, OLYMPUS_TRACEBACK_FILTERING=filtering)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env,
        timeout=120,
    )  # fmt: skip
    assert done.returncode != 0, "the mistake raised nothing"
    return done.stderr[done.stderr.index("Traceback (most recent call last)") :]


def _frames(text: str) -> list[str]:
    return re.findall(r'^  File "([^"]+)"', text, flags=re.M)


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_one_olympus_frame_and_no_longer_than_jax(mistake):
    ours = _traceback("olympus", MISTAKES[mistake])
    frames = _frames(ours)
    inside = [f for f in frames if f.startswith(PACKAGE)]
    assert len(inside) <= 1, ours
    assert "<string>" in frames, ours  # the user's own lines are kept
    assert "OLYMPUS_TRACEBACK_FILTERING=off" in ours
    theirs = _traceback("jax", MISTAKES[mistake])
    assert len(ours.splitlines()) <= len(theirs.splitlines()), (ours, theirs)


def test_filtering_off_shows_every_frame():
    body = MISTAKES["python if on a traced value under jit"]
    full = _traceback("olympus", body, filtering="off")
    assert len([f for f in _frames(full) if f.startswith(PACKAGE)]) > 3
    assert "OLYMPUS_TRACEBACK_FILTERING" not in full


def test_the_exception_is_the_same_object_with_the_users_frames():
    def f(x):
        if x > 0:
            return x
        return x

    with pytest.raises(olympus.errors.ConcretizationTypeError) as info:
        olympus.jit(f)(1.0)
    files = [entry.path for entry in info.traceback]
    assert sum(str(p).startswith(PACKAGE) for p in files) <= 1
    assert any(str(p) == __file__ for p in files)


BAD_KEYS = {
    "normal(0)": lambda r: r.normal(0, (3,)),
    "split(0)": lambda r: r.split(0),
    "fold_in(0, 1)": lambda r: r.fold_in(0, 1),
    "permutation(0, 3)": lambda r: r.permutation(0, 3),
    "choice(0, 3)": lambda r: r.choice(0, 3),
    "multinomial(0, ...)": lambda r: r.multinomial(0, 3.0, np.ones(3) / 3),
    "key_data(0)": lambda r: r.key_data(0),
    "wrap_key_data(f32[3])": lambda r: r.wrap_key_data(np.ones(3, np.float32)),
    "key(1.5)": lambda r: r.key(1.5),
    "PRNGKey(f32[3])": lambda r: r.PRNGKey(np.ones(3, np.float32)),
    "uniform(keys[2])": lambda r: r.uniform(r.split(r.key(0))),
}


@pytest.mark.parametrize("call", sorted(BAD_KEYS))
def test_a_bad_prng_key_or_seed_leaves_no_olympus_frame(call):
    """olympus.random's functions are entry points too (benchmarks/tracebacks.py's
    'an int used as a PRNG key' showed random's argument check)."""
    with olympus.config.override("olympus_traceback_filtering", "on"):
        with pytest.raises(TypeError) as info:
            BAD_KEYS[call](olympus.random)
    files = [str(entry.path) for entry in info.traceback]
    assert not [f for f in files if f.startswith(PACKAGE)], files
    assert files[-1] == __file__ and "OLYMPUS_TRACEBACK_FILTERING" in str(
        info.value.__notes__
    )


def test_ipython_shows_no_olympus_frame(tmp_path):
    """IPython formats the filtered traceback: the user's cell and function,
    none of olympus's files (skipped where IPython is not installed)."""
    import importlib.util

    if importlib.util.find_spec("IPython") is None:
        pytest.skip("IPython is not installed")
    script = tmp_path / "cell.py"
    script.write_text(
        "import olympus\n"
        "def f(x):\n"
        "    if x > 0:\n"
        "        return x\n"
        "    return -x\n"
        "olympus.jit(f)(1.0)\n"
    )
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "IPython",
            "--no-banner",
            "--colors=NoColor",
            "-c",
            f"exec(open({str(script)!r}).read())",
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=120,
    )
    text = shown.stdout + shown.stderr
    assert "TracerBoolConversionError" in text
    assert "in f(x)" in text
    assert "olympus/" not in text.replace("olympus.jit", "")
