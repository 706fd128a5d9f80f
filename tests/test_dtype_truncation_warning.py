"""A 64-bit dtype asked for while x64 is off narrows, with a warning at the
user's line, as JAX warns (issue 32: a silent float32 surprises)."""

import warnings

import numpy as np
import pytest

import olympus.numpy as jnp
from olympus.numpy.core import DtypeTruncationWarning

REQUESTS = {
    "zeros": lambda m: m.zeros(3, m.float64),
    "array": lambda m: m.array([1.0], np.dtype("float64")),
    "asarray": lambda m: m.asarray(1, dtype="int64"),
    "arange": lambda m: m.arange(3, dtype=m.int64),
    "astype": lambda m: m.ones(2).astype(m.float64),
    "sum": lambda m: m.sum(m.ones(2), dtype=m.float64),
    "cumsum": lambda m: m.cumsum(m.ones(2), dtype="float64"),
}


def _warnings_of(request, module=jnp):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = request(module)
    return result, [w for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_a_narrowed_request_warns_at_the_users_line(name):
    from jax_oracle import JAX

    ours, caught = _warnings_of(REQUESTS[name])
    assert len(caught) == 1, [str(w.message) for w in caught]
    warning = caught[0]
    assert issubclass(warning.category, DtypeTruncationWarning)
    assert warning.filename == __file__
    assert f"jnp.{name}" in str(warning.message)
    assert "olympus_enable_x64" in str(warning.message)
    assert ours.dtype.itemsize == 4
    # JAX warns for the same request (its UserWarning), and narrows alike.
    theirs, jax_caught = _warnings_of(REQUESTS[name], JAX.jnp)
    assert len(jax_caught) >= 1 and theirs.dtype == ours.dtype


@pytest.mark.parametrize(
    "request_",
    [
        lambda m: m.zeros(3, float),
        lambda m: m.zeros(3, "float32"),
        lambda m: m.zeros(3, m.bfloat16),
        lambda m: m.asarray(np.float64(1.0)),
        lambda m: m.array(np.ones(2)),
        lambda m: m.arange(3.0),
    ],
)
def test_no_warning_without_a_narrowed_request(request_):
    assert _warnings_of(request_)[1] == []


def test_no_warning_with_x64():
    from jax_oracle import x64

    with x64():
        result, caught = _warnings_of(REQUESTS["zeros"])
    assert caught == [] and result.dtype == np.float64
