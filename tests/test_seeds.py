"""The programs of the olympuspr specification (seed 002), run unchanged.

Their printed IR is pinned: a change to tracing, naming or printing that
alters what users see shows up here as a diff of the golden text.
"""

from __future__ import annotations

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import jit, make_olympuspr
from olympus.test_util import assert_allclose, check_jit_matches_eager, rand_normal


# ---- the seed's cells, verbatim ------------------------------------------------
def func1(first, second):
    temp = first + jnp.sin(second) * 3.0
    return jnp.sum(temp)


def func2(inner, first, second):
    temp = first + inner(second) * 3.0
    return jnp.sum(temp)


def inner(second):
    if second.shape[0] > 4:
        return jnp.sin(second)
    else:
        assert False


def func3(first, second):
    return func2(inner, first, second)


def func4(arg):  # The `arg` is a pair.
    temp = arg[0] + jnp.sin(arg[1]) * 3.0
    return jnp.sum(temp)


def func12(arg):
    @jit
    def inner(x):
        return x + arg * jnp.ones(1)  # Include a constant in the inner function.

    return arg + inner(arg - 2.0)


# ---- golden IR -----------------------------------------------------------------
FUNC1_IR = """\
{ lambda ; a:f32[8] b:f32[8]. let
    c:f32[8] = sin b
    d:f32[8] = mul c 3.0:f32[]
    e:f32[8] = add a d
    f:f32[] = reduce_sum[axes=(0,)] e
  in (f,) }"""

FUNC12_IR = """\
{ lambda ; a:f32[]. let
    b:f32[] = sub a 2.0:f32[]
    c:f32[1] = pjit[
      name=inner
      olympuspr={ lambda ; d:f32[] e:f32[]. let
          f:f32[1] = broadcast_in_dim[broadcast_dimensions=() shape=(1,)] 1.0:f32[]
          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          h:f32[1] = mul g f
          i:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e
          j:f32[1] = add i h
        in (j,) }
    ] a b
    k:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    l:f32[1] = add k c
  in (l,) }"""


def test_func1_ir():
    assert str(make_olympuspr(func1)(jnp.zeros(8), jnp.ones(8))) == FUNC1_IR


def test_func3_inlines_python_calls_and_branches():
    assert str(make_olympuspr(func3)(jnp.zeros(8), jnp.ones(8))) == FUNC1_IR


def test_func4_flattens_the_pair():
    assert str(make_olympuspr(func4)((jnp.zeros(8), jnp.ones(8)))) == FUNC1_IR


def test_func12_nested_jit_is_one_pjit_equation():
    assert str(make_olympuspr(func12)(1.0)) == FUNC12_IR


def test_jit_func1_values():
    rng = np.random.default_rng(1)
    first, second = rand_normal(rng, (8,)), rand_normal(rng, (8,))
    expected = np.sum(first + np.sin(second) * np.float32(3.0))
    assert_allclose(jit(func1)(first, second), expected, rtol=1e-5, atol=1e-5)
    assert_allclose(func1(first, second), expected, rtol=1e-5, atol=1e-5)


def test_jit_matches_eager_without_retracing():
    rng = np.random.default_rng(2)
    check_jit_matches_eager(func1, (rand_normal(rng, (8,)), rand_normal(rng, (8,))))
    check_jit_matches_eager(func4, ((rand_normal(rng, (8,)), rand_normal(rng, (8,))),))
    check_jit_matches_eager(func12, (np.float32(0.5),))


def test_func12_values_eager_and_jit():
    expected = np.float32([1.0 + (1.0 - 2.0) + 1.0 * 1.0])
    assert_allclose(func12(1.0), expected)
    assert_allclose(jit(func12)(np.float32(1.0)), expected)
    assert_allclose(jit(func12)(np.float32(3.0)), np.float32([3.0 + 1.0 + 3.0]))


def test_seed_programs_pass_the_checker():
    for program in (
        make_olympuspr(func1)(jnp.zeros(8), jnp.ones(8)),
        make_olympuspr(func12)(1.0),
    ):
        olympus.ir.check_olympuspr(program)
