"""jnp functions that issue 30 merged into one body per family (factories and
shared helpers): each member still behaves as JAX's, eagerly and under jit,
and keeps its own name, signature and docstring."""

import inspect

import numpy as np
import pytest
from jax_oracle import agree

import olympus.numpy as onp

M = np.arange(12.0, dtype=np.float32).reshape(3, 4) - 5
V = np.array([0.25, -0.5, 0.75], np.float32)
NANS = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]], np.float32)

PROGRAMS = {
    "triu": lambda ox, x: ox.jnp.triu(x, 1),
    "tril": lambda ox, x: ox.jnp.tril(x, -1),
    "fliplr": lambda ox, x: ox.jnp.fliplr(x),
    "flipud": lambda ox, x: ox.jnp.flipud(x),
    "zeros_like": lambda ox, x: ox.jnp.zeros_like(x, dtype="int16"),
    "ones_like": lambda ox, x: ox.jnp.ones_like(x, shape=(2,)),
    "zeros": lambda ox, x: ox.jnp.zeros(x.shape, "int8") + ox.jnp.ones(2, bool)[0],
    "dot": lambda ox, x: ox.jnp.dot(x, x.T),
    "inner": lambda ox, x: ox.jnp.inner(x, x),
    "fftn": lambda ox, x: ox.jnp.fft.fftn(x, axes=(0, 1)),
    "ifftn": lambda ox, x: ox.jnp.fft.ifftn(x, s=(2, 4)),
    "std": lambda ox, x: ox.jnp.std(x, axis=1, ddof=1),
    "nanstd": lambda ox, x: ox.jnp.nanstd(x, axis=0),
    "logical": lambda ox, x: [
        f(x > 0, x < 2)
        for f in (ox.jnp.logical_and, ox.jnp.logical_or, ox.jnp.logical_xor)
    ],
    "inexact_unary": lambda ox, x: [
        f(x / 10) for f in (ox.jnp.sinh, ox.jnp.arctan, ox.jnp.arcsinh, ox.jnp.expm1)
    ],
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_member_agrees_eagerly_and_under_jit(name):
    program = PROGRAMS[name]
    agree(program, M)
    agree(lambda ox, x: ox.jit(lambda y: program(ox, y))(x), M)


def test_members_of_integer_and_vector_inputs():
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    agree(lambda ox: ox.jnp.arccosh(ints + 1))  # integers become the default float
    agree(lambda ox: ox.jnp.logical_xor(ints, 2.5))
    agree(lambda ox: ox.jnp.dot(V, V))
    agree(lambda ox: ox.jnp.inner(3.0, V))
    agree(lambda ox: ox.jnp.nanstd(NANS, axis=1, ddof=2))
    agree(lambda ox: ox.jnp.triu(V))  # refused: fewer than 2 dimensions


def test_index_and_window_families():
    agree(lambda ox: ox.jnp.tril_indices(3, 1, 4))
    agree(lambda ox: ox.jnp.triu_indices_from(np.ones((3, 2))))
    agree(lambda ox: ox.jnp.tril_indices_from(np.ones(3)))  # refused: not 2-D
    for name in ("hamming", "hanning", "blackman", "bartlett"):
        agree(lambda ox: getattr(ox.jnp, name)(5))
    agree(lambda ox: ox.jnp.logspace(0.0, 2.0, 4, base=3.0))
    agree(lambda ox: ox.jnp.geomspace(1.0, 8.0, 4, dtype="float16"))


@pytest.mark.parametrize(
    "name",
    "triu tril fliplr flipud zeros ones zeros_like ones_like std nanstd "
    "tril_indices triu_indices tril_indices_from triu_indices_from hamming "
    "hanning blackman".split(),
)
def test_member_keeps_its_name_and_signature(name):
    import jax.numpy as jjnp

    fn = getattr(onp, name)
    assert fn.__name__ == name and f"jnp.{name}(" in fn.__doc__
    ours = list(inspect.signature(fn).parameters)
    assert ours == list(inspect.signature(getattr(jjnp, name)).parameters)


@pytest.mark.parametrize("name", ["logical_and", "logical_xor", "sinh", "arctanh"])
def test_ufunc_member_keeps_its_name(name):
    fn = getattr(onp, name)
    assert fn.__name__ == name and "\nArgs:\n  x" in fn.__doc__


def test_shared_sections_are_added_once():
    from olympus.numpy import ufunc_docs

    def f(x, size=None, fill_value=None):
        """Summary.

        Example:
          >>> 1
          1
        """

    ufunc_docs.add_args((f,), {"x": "an array.", **ufunc_docs.SIZE_ARGS})
    ufunc_docs.add_sections((f,), ufunc_docs.RAISES_X)
    assert (
        f.__doc__.index("Args:")
        < f.__doc__.index("Raises:")
        < f.__doc__.index("Example:")
    )
    assert "  fill_value: the value that pads" in f.__doc__
    with pytest.raises(ufunc_docs.DocstringSectionError, match="own Raises"):
        ufunc_docs.add_sections((f,), ufunc_docs.RAISES_SIZE)


def test_percentiles_share_the_conversion_to_fractions():
    ints = np.array([10, 50, 95], np.int32)
    weights = np.array([1.0, 2.0, 0.5, 1.0], np.float32)
    for name in ("percentile", "nanpercentile"):
        agree(lambda ox: getattr(ox.jnp, name)(NANS, ints, axis=1))
        agree(lambda ox: ox.jit(getattr(ox.jnp, name))(NANS, 37.5))
        agree(
            lambda ox: getattr(ox.jnp, name)(
                M, 40.0, axis=1, method="inverted_cdf", weights=weights
            )
        )
        agree(lambda ox: getattr(ox.jnp, name)(M, 50, method="cubic"))  # refused
    assert "out_sharding" in inspect.signature(onp.percentile).parameters
    assert "  out_sharding:" in onp.percentile.__doc__
    assert "QuantileTypeError" in onp.nanpercentile.__doc__


def test_index_modes_are_checked_once():
    """choose and ravel_multi_index share indexing.check_mode (issue 30)."""
    idx = (np.array([1, 0, 3]), np.array([2, 1, 0]))
    for mode in ("wrap", "clip", "nearest"):
        agree(lambda ox: ox.jnp.ravel_multi_index(idx, (2, 3), mode=mode))
        agree(lambda ox: ox.jnp.choose(np.array([0, 2, 3]), [V, 2 * V], mode=mode))
    with pytest.raises(ValueError, match="mode must be 'raise', 'clip' or 'wrap'"):
        onp.choose(np.array([0]), [V], mode="nearest")
