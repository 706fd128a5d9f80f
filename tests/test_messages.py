"""Messages for a new user's common mistakes say what to do, and point at the
user's own line (issue: a user's first hour). Each test checks the advice and
the line."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.errors import IncompatibleShapesError, OlympusTypeError


def _line_of(marker: str) -> str:
    """`test_messages.py:N` of the line in this file that contains `marker`."""
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    (n,) = [
        i + 1
        for i, text in enumerate(lines)
        if marker in text and "_line_of" not in text
    ]
    return f"test_messages.py:{n}"


def test_arange_of_a_traced_bound_says_make_it_static():
    with pytest.raises(TypeError) as info:
        olympus.jit(lambda n: jnp.arange(n))(3)  # arange-marker
    text = str(info.value)
    assert "static_argnums" in text and "traced i32[]" in text
    assert "use olympus.numpy functions" not in text
    assert _line_of("arange-marker") in text


def test_a_carry_that_changes_shape_is_not_told_to_astype():
    with pytest.raises(OlympusTypeError) as info:
        lax.fori_loop(0, 3, lambda i, c: jnp.concatenate([c, c]), jnp.ones(2))  # grow
    text = str(info.value)
    assert "f32[2]" in text and "f32[4]" in text and ".astype" not in text
    assert "allocate its final size" in text and _line_of("# grow") in text


def test_a_carry_that_changes_dtype_is_told_to_astype():
    with pytest.raises(OlympusTypeError, match=r"\.astype\(int32 -> float32\)"):
        lax.fori_loop(0, 2, lambda i, c: (c * 2).astype(jnp.int32), jnp.ones(2))


@pytest.mark.parametrize("jitted", [False, True])
def test_shapes_that_do_not_broadcast_name_the_operation(jitted):
    def add(a, b):
        return a + b  # add-marker

    with pytest.raises(TypeError) as info:
        (olympus.jit(add) if jitted else add)(jnp.ones(3), jnp.ones(4))
    assert isinstance(info.value, IncompatibleShapesError)
    text = str(info.value)
    assert "add got incompatible shapes for broadcasting: (3,), (4,)" in text
    assert _line_of("add-marker") in text


def test_broadcast_shapes_still_raises_value_error_as_jax():
    with pytest.raises(ValueError):
        jnp.broadcast_shapes((3,), (4,))


def test_setitem_inside_jit_points_to_at_set():
    def f(x):
        x[0] = 1.0  # setitem-marker
        return x

    with pytest.raises(TypeError) as info:
        olympus.jit(f)(jnp.ones(3))
    text = str(info.value)
    assert "x.at[idx].set(y)" in text and "StagingTracer" not in text
    assert _line_of("setitem-marker") in text


def test_setitem_of_a_concrete_array_too():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=r"x = x\.at\[idx\]\.set\(y\)"):
        x[0] = 2.0


def test_a_string_argument_to_jit_names_it_and_static_argnums():
    def f(x, mode):
        return x

    with pytest.raises(OlympusTypeError) as info:
        olympus.jit(f)(1.0, "fast")
    text = str(info.value)
    assert "argument mode is a str ('fast')" in text
    assert "static_argnums=(1,)" in text and "static_argnames=('mode',)" in text
    with pytest.raises(OlympusTypeError, match=r"mode \(at mode\['a'\]\[1\]\)"):
        olympus.jit(f)(1.0, mode={"a": [np.float32(1), "b"]})


def test_an_int_used_as_a_prng_key_is_a_public_error():
    with pytest.raises(olympus.errors.InvalidKeyError) as info:
        olympus.random.normal(0, (3,))
    assert isinstance(info.value, TypeError)
    assert "random.PRNGKey" in str(info.value) and "random.key" in str(info.value)
    assert "KeyError_" not in type(info.value).__name__
