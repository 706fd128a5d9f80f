"""olympus.random against JAX 0.10.2: the same key gives JAX's values.

JAX's samplers (which algorithm, how the key is split and which draw feeds
which step) are the spec; each program runs under both systems through the
oracle, integers compared exactly and floats to float32 (or float64) rounding,
with 64-bit types off and on.
"""

import numpy as np
import pytest
from jax_oracle import Raised, agree, differences, run_both, x64

import olympus
import olympus.random as orandom

BOTH = pytest.mark.parametrize("wide", [False, True], ids=["x32", "x64"])


def k(ox, seed=0):
    return ox.random.PRNGKey(seed)


def agree_in(wide, program, **tolerance):
    with x64(wide):
        agree(program, **tolerance)


def staged(program):
    """program run as one compiled program on each side: a single compile per
    system instead of one per sampler call (the values are the same: each
    sampler is a compiled program in both already)."""
    return lambda ox: ox.jit(lambda: program(ox))()


def agree_staged(wide, program, **tolerance):
    agree_in(wide, staged(program), **tolerance)


# ---- keys, bits, randint ----------------------------------------------------------
@BOTH
def test_bits_uniform_normal_every_width(wide):
    def program(ox):
        key = k(ox, 3)
        bits = [ox.random.bits(key, (7,), getattr(ox.jnp, f"uint{n}")) for n in (8, 16)]
        floats = [getattr(ox.jnp, name) for name in ("float16", "bfloat16", "float64")]
        return (
            *bits,
            ox.random.bits(key, (7,), ox.jnp.uint64 if wide else ox.jnp.uint32),
            *[ox.random.uniform(key, (6,), dtype) for dtype in floats],
            *[ox.random.normal(key, (6,), dtype) for dtype in floats],
        )

    agree_staged(wide, program)


RANDINT_CASES = [
    ("int8", -300, 300),
    ("uint8", 7, 3),
    ("int16", 5, 5),
    ("uint16", 0, 70000),
    ("int32", -10, 10),
    ("uint32", 1, 2**32),
]


@BOTH
def test_randint_dtypes_and_bounds(wide):
    """Bounds past the dtype's range are clipped, minval >= maxval gives minval."""

    def program(ox):
        key = k(ox, 5)
        out = [
            ox.random.randint(key, (9,), lo, hi, getattr(ox.jnp, dtype))
            for dtype, lo, hi in RANDINT_CASES
            if wide or hi < 2**31
        ]
        return (*out, ox.random.randint(key, (9,), -(2**31), 2**31 - 1))

    agree_staged(wide, program)


def test_randint_reaches_the_dtype_maximum():
    ours, _ = agree(
        lambda ox: ox.random.randint(k(ox), (20,), 250, 256, dtype=ox.jnp.uint8)
    )
    assert 255 in np.asarray(ours)


def test_randint_int64_with_x64_and_default_dtype():
    with x64():
        ours, _ = agree(
            lambda ox: ox.random.randint(k(ox, 2), (6,), -(2**40), 2**40, ox.jnp.int64)
        )
        assert np.abs(np.asarray(ours)).max() > 2**31
        agree(lambda ox: ox.random.randint(k(ox, 2), (6,), 0, 100))
    agree(lambda ox: ox.random.randint(k(ox, 2), (6,), 0.0, 100.0))


@BOTH
def test_fold_in_takes_any_uint32(wide):
    agree_in(wide, lambda ox: ox.random.fold_in(k(ox, 5), 2**32 - 1))
    agree_in(wide, lambda ox: ox.random.fold_in(k(ox, 5), ox.jnp.array(-5)))
    agree_in(wide, lambda ox: ox.random.fold_in(k(ox, 5), -5))  # both raise
    with pytest.raises(OverflowError, match="uint32"):
        orandom.fold_in(orandom.PRNGKey(0), 2**32)


def test_typed_keys_split_shapes_clone_under_jit_and_vmap():
    def program(ox):
        key = ox.random.key(11)
        keys = ox.random.split(key, (2, 3))
        data = ox.random.key_data(keys)
        back = ox.random.wrap_key_data(data)
        draw = ox.jit(lambda kk: ox.random.normal(ox.random.clone(kk), (2,)))
        batched = ox.vmap(lambda kk: ox.random.uniform(kk, (3,)))(keys[0])
        folded = ox.vmap(lambda kk: ox.random.key_data(ox.random.fold_in(kk, 7)))(
            back[1]
        )
        same = ox.random.uniform(ox.random.PRNGKey(11)) == ox.random.uniform(key)
        return data, draw(keys[1, 2]), batched, folded, same, keys.shape

    agree(program)


# ---- permutations and choices -------------------------------------------------------
@BOTH
def test_permutation_forms(wide):
    agree_staged(
        wide,
        lambda ox: (
            ox.random.permutation(k(ox, 0), 10),
            ox.random.permutation(k(ox, 1), ox.jnp.arange(12.0).reshape(3, 4), axis=1),
            ox.random.permutation(
                k(ox, 1), ox.jnp.arange(12).reshape(3, 4), axis=1, independent=True
            ),
            ox.random.permutation(k(ox, 2), ox.jnp.array([True, False, True])),
        ),
    )


@BOTH
def test_choice_forms(wide):
    p = [0.1, 0.2, 0.3, 0.4, 0.0, 0.0]
    agree_staged(
        wide,
        lambda ox: [
            (
                ox.random.choice(k(ox, 2), 10, (5,), replace=replace),
                ox.random.choice(k(ox, 2), 6, (2, 2), replace, p=ox.jnp.array(p)),
                ox.random.choice(
                    k(ox, 3), ox.jnp.arange(12).reshape(3, 4), (2,), replace, axis=1
                ),
                ox.random.choice(k(ox, 3), 5, (0,), replace),
            )
            for replace in (True, False)
        ],
    )


# ---- gamma and the laws built on it ---------------------------------------------------
GAMMA_A = [0.05, 0.5, 1.0, 3.0, 10.0, 150.0]


def gamma_family(ox):
    return (
        ox.random.gamma(k(ox, 3), ox.jnp.array(GAMMA_A)),
        ox.random.loggamma(k(ox, 3), ox.jnp.array(GAMMA_A)),
        ox.random.beta(k(ox, 3), 2.0, ox.jnp.array([0.3, 3.0]), (3, 2)),
        ox.random.dirichlet(k(ox, 3), ox.jnp.array([0.2, 2.0, 3.0]), (2,)),
        ox.random.chisquare(k(ox, 6), 3.0, (5,)),
        ox.random.t(k(ox, 6), ox.jnp.array([1.0, 3.0, 30.0])),
        ox.random.f(k(ox, 6), 3.0, ox.jnp.array([4.0, 9.0])),
        ox.random.generalized_normal(k(ox, 6), 3.0, (4,)),
        ox.random.ball(k(ox, 6), 3, 1.5, (2,)),
    )


def gamma_gradient(ox):
    """The reparameterised gradient (dx/da from lax.random_gamma_grad)."""
    sample_sum = lambda a: ox.random.gamma(k(ox, 1), a).sum()  # noqa: E731
    return ox.grad(sample_sum)(ox.jnp.array([0.5, 2.0]))


def gamma_under_vmap(ox):
    draw = lambda kk: ox.random.gamma(kk, 2.0, (3,))  # noqa: E731
    return ox.vmap(draw)(ox.random.split(k(ox, 9), 2))


def test_gamma_family_gradient_and_vmap():
    """Every law built on gamma (each its own wrapper of the rejection loop;
    a < 1 takes the U**(1/a) boost), gamma's gradient and gamma under vmap are
    JAX's: one compiled program per system, each part to its own tolerance."""
    parts = {gamma_family: 2e-5, gamma_gradient: 1e-4, gamma_under_vmap: None}
    ours, theirs = run_both(staged(lambda ox: tuple(f(ox) for f in parts)))
    if isinstance(ours, Raised) or isinstance(theirs, Raised):
        found = differences(ours, theirs)  # both raising is a failure here too
        raise AssertionError(found or f"both raised: {ours!r}")
    found = []
    for i, rtol in enumerate(parts.values()):
        found += differences(ours[i], theirs[i], rtol=rtol, path=f"part {i}")
    assert not found, "olympus and JAX differ:\n  " + "\n  ".join(found)


def test_gamma_family_x64():
    with x64():
        agree(
            staged(
                lambda ox: (
                    ox.random.loggamma(k(ox, 3), ox.jnp.array(GAMMA_A)),
                    ox.random.beta(k(ox, 3), 2.0, ox.jnp.array([0.3, 3.0]), (3, 2)),
                    ox.random.f(k(ox, 6), 3.0, ox.jnp.array([4.0, 9.0])),
                )
            ),
            rtol=1e-10,
        )


# ---- counts ---------------------------------------------------------------------------
@BOTH
def test_poisson_knuth_and_rejection(wide):
    lam = [0.0, 0.5, 3.0, 9.9, 10.0, 30.0, 1000.0]
    agree_staged(
        wide,
        lambda ox: (
            ox.random.poisson(k(ox, 4), ox.jnp.array(lam)),
            ox.random.poisson(k(ox, 4), 3.0, (6,), ox.jnp.int16),
            ox.random.poisson(k(ox, 5), 30.0, (6,)),
        ),
    )


@BOTH
def test_binomial_multinomial_geometric(wide):
    agree_staged(
        wide,
        lambda ox: (
            ox.random.binomial(k(ox, 6), 10.0, ox.jnp.array([0.1, 0.3, 0.7, 0.95])),
            ox.random.binomial(k(ox, 6), ox.jnp.array([100.0, 1000.0]), 0.4),
            ox.random.multinomial(k(ox, 6), 10.0, ox.jnp.array([0.2, 0.3, 0.5])),
            ox.random.geometric(k(ox, 6), ox.jnp.array([0.05, 0.3, 0.9])),
        ),
    )


# ---- the other samplers ----------------------------------------------------------------
@BOTH
def test_sweep_of_samplers(wide):
    def program(ox):
        key = k(ox, 6)
        logits = ox.jnp.arange(12.0).reshape(3, 4) / 3
        cov = ox.jnp.array([[2.0, 0.5], [0.5, 1.0]])
        return (
            ox.random.bernoulli(key, 0.3, (8,)),
            ox.random.bernoulli(key, ox.jnp.array([0.1, 0.9])),
            ox.random.categorical(key, ox.jnp.array([0.0, 1.0, 2.0]), shape=(5,)),
            ox.random.categorical(key, logits, axis=0, shape=(2, 4)),
            ox.random.categorical(key, logits, shape=(3, 3), replace=False),
            ox.random.gumbel(key, (5,)),
            ox.random.laplace(key, (5,)),
            ox.random.logistic(key, (5,)),
            ox.random.truncated_normal(key, -1.0, 2.0, (5,)),
            ox.random.cauchy(key, (5,)),
            ox.random.exponential(key, (5,)),
            ox.random.rademacher(key, (8,)),
            ox.random.multivariate_normal(key, ox.jnp.zeros(2), cov, (3,)),
            ox.random.pareto(key, 3.0, (5,)),
            ox.random.weibull_min(key, 1.0, 2.0, (5,)),
            ox.random.orthogonal(key, 3),
            ox.random.triangular(key, 0.0, 1.0, 3.0, (5,)),
            ox.random.wald(key, 2.0, (5,)),
            ox.random.maxwell(key, (5,)),
            ox.random.double_sided_maxwell(key, 0.0, 1.0, (5,)),
            ox.random.lognormal(key, 0.5, (5,)),
            ox.random.rayleigh(key, 2.0, (5,)),
        )

    agree_staged(wide, program, rtol=1e-5 if not wide else 1e-10)


def test_samplers_eager_jit_vmap_agree():
    """One program, three ways of running it: the values do not depend on staging."""

    def program(key):
        return (
            orandom.gamma(key, 1.5, (3,)),
            orandom.poisson(key, 12.0, (3,)),
            orandom.permutation(key, 5),
            orandom.randint(key, (3,), 0, 7),
        )

    key = orandom.PRNGKey(21)
    eager = program(key)
    keys = orandom.split(key, 2)
    both = olympus.jit(lambda k, ks: (program(k), olympus.vmap(program)(ks)))
    jitted, mapped = both(key, keys)  # one compile for the staged two
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    for a, b in zip(program(keys[1]), mapped):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b)[1], rtol=1e-6)


def test_f_is_an_f_distribution():
    """Mean of F(d1, d2) is d2 / (d2 - 2) (0.05 is about 7 standard errors:
    Var F(5, 12) = 1.08); the draws' dtype is JAX's."""
    ours, theirs = run_both(lambda ox: ox.random.f(k(ox), 5.0, 12.0, (20000,)))
    assert abs(np.asarray(ours).mean() - 12 / 10) < 0.05
    assert ours.dtype == theirs.dtype
