"""The call path of compiled code: results come back right, fast paths agree with
the general path, and running code never imports jax (even when installed)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

import olympus
import olympus.numpy as jnp


def test_running_code_never_imports_jax():
    # A fresh interpreter: jaxlib would import jax while unpacking results.
    code = (
        "import sys, numpy as np, olympus, olympus.numpy as jnp\n"
        "x = jnp.arange(4.0)\n"
        "f = olympus.jit(lambda a, b: (jnp.sin(a) * b, a.sum()))\n"
        "out = f(x, np.ones(4, np.float32))\n"
        "print(float(out[1]), float((x + 1.0).sum()), float(olympus.grad(lambda a: (a * a).sum())(x)[1]))\n"
        "assert sys.modules.get('jax') is None, 'jax was imported'\n"
        "assert not [m for m in sys.modules if m.startswith('jax.')]\n"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["6.0", "10.0", "2.0"]


def test_multiple_results_keep_their_avals():
    f = olympus.jit(lambda x: (x * 2.0, x.astype(jnp.int32), 3))
    a, b, c = f(jnp.arange(3.0))
    np.testing.assert_array_equal(a, [0.0, 2.0, 4.0])
    assert a.dtype == np.float32 and b.dtype == np.int32 and b.shape == (3,)
    np.testing.assert_array_equal(b, [0, 1, 2])
    assert c.shape == () and c.weak_type and int(c) == 3


def test_results_are_independent_buffers():
    f = olympus.jit(lambda x: x + 1.0)
    x = jnp.zeros(2)
    first, second = f(x), f(first_arg := x + 1.0)
    np.testing.assert_array_equal(first, [1.0, 1.0])
    np.testing.assert_array_equal(second, [2.0, 2.0])
    np.testing.assert_array_equal(first_arg, [1.0, 1.0])
