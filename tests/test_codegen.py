"""XLA's code generator on CPU (compiler.with_codegen_options): eager mode's
one-op programs compile with XLA's classic emitter, jit programs with its
MLIR fusion emitters, as `olympus_cpu_classic_emitter` says; both give the
same values, and the choice is part of the compilation cache key. (The
differential fuzzer compares the two on every random program.)"""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax, nn
from olympus.backends.xla import client, compiler
from olympus.config import ConfigValueError

CLASSIC = ("xla_cpu_use_fusion_emitters", False)
TEXT = "func.func public @main(%x: tensor<3xf32>) -> tensor<3xf32> {...}"


def _overrides(text=TEXT, eager=False, options=None):
    c = client.get_client()  # loads jaxlib's client module (client.xc)
    options = client.xc.CompileOptions() if options is None else options
    return compiler.with_codegen_options(c, options, text, eager).env_option_overrides


def test_eager_programs_use_the_classic_emitter_and_jit_programs_do_not():
    assert _overrides(eager=True) == [CLASSIC]
    assert _overrides(eager=False) == []


@pytest.mark.parametrize(
    "which, eager, jit", [("all", [CLASSIC], [CLASSIC]), ("none", [], [])]
)
def test_the_option_says_which_programs(which, eager, jit):
    with olympus.config.override("olympus_cpu_classic_emitter", which):
        assert (_overrides(eager=True), _overrides(eager=False)) == (eager, jit)


def test_the_option_takes_only_its_choices():
    with pytest.raises(ConfigValueError, match="'eager', 'all', 'none'"):
        olympus.config.update("olympus_cpu_classic_emitter", "classic")


def test_the_choice_is_added_once_and_never_over_a_callers():
    client.get_client()
    options = client.xc.CompileOptions()
    _overrides(eager=True, options=options)
    assert _overrides(eager=True, options=options) == [CLASSIC]
    own = client.xc.CompileOptions()
    own.env_option_overrides = [("xla_cpu_use_fusion_emitters", True)]
    assert _overrides(eager=True, options=own) == [
        ("xla_cpu_use_fusion_emitters", True)
    ]


def test_programs_with_float8_values_keep_the_fusion_emitters():
    """The classic emitter computes float8 through f32 and changes NaN bit
    patterns even in a reverse (tests/test_float8.py checks every pattern)."""
    every = np.arange(256, dtype=np.uint8).view(jnp.float8_e5m2)
    text = olympus.jit(lambda x: x[::-1]).lower(every).as_text()
    assert "f8E5M2" in text
    with olympus.config.override("olympus_cpu_classic_emitter", "all"):
        assert _overrides(text) == []
        out = olympus.jit(lambda x: x[::-1])(every)
    np.testing.assert_array_equal(
        np.asarray(out).view(np.uint8), every[::-1].view(np.uint8)
    )


def test_the_choice_is_part_of_the_cache_key():
    c = client.get_client()
    x = np.ones(3, np.float32)
    text = olympus.jit(lambda x: jnp.sin(x) + 1).lower(x).as_text()
    eager = compiler.with_codegen_options(c, client.xc.CompileOptions(), text, True)
    jit = compiler.with_codegen_options(c, client.xc.CompileOptions(), text)
    assert compiler.cache_key(c, text, eager) != compiler.cache_key(c, text, jit)


def test_xla_reads_the_override():
    """XLA rejects a misspelt override, so the one olympus sets is read."""
    options = client.xc.CompileOptions()
    options.env_option_overrides = [("xla_cpu_use_fusion_emitters_typo", False)]
    text = olympus.jit(lambda x: x + 1).lower(np.ones(3, np.float32)).as_text()
    with pytest.raises(Exception, match="xla_cpu_use_fusion_emitters_typo"):
        client.get_client().compile_and_load(text, client.device_list(), options)


_RNG = np.random.default_rng(0)
_F = _RNG.normal(size=(33, 65)).astype(np.float32)
_I = _RNG.integers(-50, 50, size=(33, 65)).astype(np.int32)
_C = (_F + 1j * _F[::-1]).astype(np.complex64)

PROGRAMS = {
    "transcendentals": (
        lambda x: jnp.tanh(jnp.exp(jnp.sin(x)) + jnp.log1p(x * x)),
        _F,
    ),
    "softmax": (lambda x: nn.softmax(x, axis=-1), _F),
    "normalize": (lambda x: (x - x.mean(0)) / (x.std(0) + 1e-5), _F),
    "reductions": (lambda x: (x.max(1), jnp.argmax(x, 1), x.sum(), x.prod(0)), _F),
    "cumsum": (lambda x: jnp.cumsum(x, axis=1), _F),
    "integers": (lambda i: (i // 7, i % 7, i >> 2, jnp.abs(i) ** 2), _I),
    "complex": (lambda z: (jnp.exp(z), z * z.conj(), jnp.abs(z)), _C),
    "select and compare": (lambda x: jnp.where(x > 0, jnp.sqrt(jnp.abs(x)), -x), _F),
    "special functions": (
        lambda x: (
            lax.erf(x),
            jnp.arctan2(x, x[::-1]),
            jnp.power(jnp.abs(x), 1.7),
            jnp.expm1(x),
            jnp.arcsinh(x),
        ),
        _F,
    ),
    "gradient": (olympus.grad(lambda x: jnp.sum(jnp.tanh(x @ x.T) ** 2)), _F),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_both_emitters_give_the_same_values(name):
    fun, x = PROGRAMS[name]
    fusion = olympus.jit(fun)(x)
    with olympus.config.override("olympus_cpu_classic_emitter", "all"):
        classic = olympus.jit(fun)(x)
    leaves = olympus.tree_util.tree_leaves
    for a, b in zip(leaves(classic), leaves(fusion)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6, err_msg=name)


def test_eager_ops_compile_with_the_classic_emitter(compilation_cache_dir):
    """An eager op's program goes through compile_and_load with eager=True
    (its entry lands in the eager folder, keyed with the classic emitter)."""
    x = olympus.device_put(np.linspace(-2, 2, 7, dtype=np.float32))
    np.testing.assert_allclose(
        np.asarray(jnp.arcsinh(x)), np.arcsinh(np.asarray(x)), rtol=1e-6
    )
    entries = list((compilation_cache_dir / compiler.EAGER_SUBDIR).iterdir())
    assert len(entries) == 1
