"""Programs whose HTML and DOT views are pinned as golden files in
tests/golden/display/ (see tests/test_display.py). They live in a module of
their own so the source lines the HTML shows change only when this file does:
editing it means regenerating the goldens (OLYMPUS_UPDATE_GOLDEN=1)."""

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

X = np.linspace(-1, 1, 3, dtype=np.float32)


def cond_program(x):
    return lax.cond(x.sum() > 0, lambda v: v + 1.0, lambda v: jnp.cos(v) * 2.0, x)


def scan_program(x):
    def step(carry, row):
        return carry * row + 1.0, carry

    return lax.scan(step, jnp.float32(0.5), x)


def loss(x):
    return jnp.sum(jnp.tanh(x) * x)


PROGRAMS = {"cond": cond_program, "scan": scan_program, "grad": olympus.grad(loss)}


def traced(name: str):
    """The ClosedOlympuspr of program `name` at the input X."""
    return olympus.make_olympuspr(PROGRAMS[name])(X)
