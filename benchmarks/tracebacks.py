"""A new user's 15 common mistakes, each run as a script under olympus and
under JAX 0.10.2 (the script written once): traceback lines, frames shown and
frames from inside the library, side by side. The table goes in
benchmarks/README.md ("First hour: tracebacks").

    python benchmarks/tracebacks.py
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

MISTAKES = {
    "if on a traced value (jit)": """
        @lib.jit
        def f(x):
            if x > 0:
                return x
            return -x
        f(1.0)
    """,
    "float() of a traced value (jit)": """
        lib.jit(lambda x: float(x))(1.0)
    """,
    "int() index from a traced value (jit)": """
        lib.jit(lambda x, i: x[:int(i)])(jnp.ones(3), 2)
    """,
    "arange with a traced bound (jit)": """
        lib.jit(lambda n: jnp.arange(n))(3)
    """,
    "np.asarray of a tracer (jit)": """
        import numpy as np
        lib.jit(lambda x: np.asarray(x) + 1)(jnp.ones(3))
    """,
    "x[0] = 1 (jit)": """
        def f(x):
            x[0] = 1.0
            return x
        lib.jit(f)(jnp.ones(3))
    """,
    "shapes that do not broadcast (eager)": """
        jnp.ones(3) + jnp.ones(4)
    """,
    "shapes that do not broadcast (jit)": """
        lib.jit(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4))
    """,
    "grad of a vector output": """
        lib.grad(lambda x: x * 2.0)(jnp.ones(3))
    """,
    "grad of an integer input": """
        lib.grad(lambda x: x * 2)(3)
    """,
    "scan carry changes shape": """
        lib.lax.scan(lambda c, x: (jnp.concatenate([c, c]), x), jnp.ones(2), jnp.ones(3))
    """,
    "where(c) without size= (jit)": """
        lib.jit(lambda c: jnp.where(c))(jnp.ones(3) > 0)
    """,
    "a string passed to jit": """
        lib.jit(lambda x, mode: x)(1.0, "fast")
    """,
    "an int used as a PRNG key": """
        lib.random.normal(0, (3,))
    """,
    "vmap over mismatched axis sizes": """
        lib.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4))
    """,
}

PRELUDE = {
    "olympus": "import olympus as lib, olympus.numpy as jnp\n",
    "jax": "import jax as lib, jax.numpy as jnp\n",
}


def run(library: str, body: str) -> dict:
    script = PRELUDE[library] + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    )
    err = done.stderr
    start = err.find("Traceback (most recent call last)")
    if done.returncode == 0 or start < 0:
        return {"lines": 0, "frames": 0, "inside": 0, "raised": False}
    text = err[start:]
    frames = re.findall(r'^  File "([^"]+)"', text, flags=re.M)
    inside = [f for f in frames if f"/{library}/" in f or f"/{library}lib/" in f]
    return {
        "lines": len(text.splitlines()),
        "frames": len(frames),
        "inside": len(inside),
        "raised": True,
    }


def main() -> None:
    print(
        f"{'mistake':<40}{'olympus lines/frames/own':>26}{'JAX lines/frames/own':>24}"
    )
    totals = {"olympus": 0, "jax": 0}
    for name, body in MISTAKES.items():
        row = {lib: run(lib, body) for lib in ("olympus", "jax")}
        cells = []
        for lib in ("olympus", "jax"):
            r = row[lib]
            totals[lib] += r["lines"]
            cells.append(
                f"{r['lines']}/{r['frames']}/{r['inside']}"
                if r["raised"]
                else "no error"
            )
        print(f"{name:<40}{cells[0]:>26}{cells[1]:>24}", flush=True)
    print(f"{'total lines':<40}{totals['olympus']:>26}{totals['jax']:>24}")


if __name__ == "__main__":
    main()
