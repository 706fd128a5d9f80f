"""The session-wide print/parse round trip (tests/conftest.py): every program
the suite stages or compiles (one per distinct structure) is printed, parsed
back and reprinted, and any difference fails the run.
These tests check the sampler and the check themselves."""

from __future__ import annotations

import os

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.ir import parser


@pytest.fixture
def conftest(request):
    """tests/conftest.py as loaded by pytest (tests/fuzz has a conftest.py too,
    so the bare module name `conftest` may name that one)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conftest.py")
    for plugin in request.config.pluginmanager.get_plugins():
        if os.path.abspath(getattr(plugin, "__file__", None) or "") == here:
            return plugin
    raise LookupError("tests/conftest.py is not loaded")


def _programs():
    x = np.arange(3, dtype=np.float32)

    def f(x):
        y = lax.scan(lambda c, r: (c * r + 1.5, c), 1.0, x)[1]
        return jnp.sum(jnp.where(y > 1, y, -y)) + x[1]

    return [
        olympus.make_olympuspr(g)(x).olympuspr
        for g in (f, olympus.grad(f), olympus.vmap(f, in_axes=None, axis_size=2))
    ]


def test_programs_the_tests_build_are_round_tripped(conftest):
    before = conftest._programs_seen[0]
    _programs()
    assert conftest._programs_seen[0] >= before + 3
    assert conftest._round_tripped[0] > 0  # this test's programs, or earlier ones


def test_sampled_kinds_of_program_round_trip(conftest):
    for program in _programs():
        assert conftest.round_trip_failure(program) is None


def test_a_program_that_reprints_differently_is_reported(conftest, monkeypatch):
    program = _programs()[0]
    original = parser._scalar

    def off_by_one(token, dtype, r):
        value = original(token, dtype, r)
        return value + 1 if token == "1.5" else value

    monkeypatch.setattr(parser, "_scalar", off_by_one)
    report = conftest.round_trip_failure(program)
    assert report is not None and "reprinted as" in report and "2.5" in report


def test_a_program_that_loses_a_weak_type_is_reported(conftest, monkeypatch):
    """The round trip prints weak types, so a parser dropping them fails it."""
    program = olympus.make_olympuspr(lambda s: s * 2)(3.0).olympuspr
    assert conftest.round_trip_failure(program) is None
    original = parser._Parser.aval
    monkeypatch.setattr(
        parser._Parser, "aval", lambda self: original(self).strip_weak_type()
    )
    report = conftest.round_trip_failure(program)
    assert report is not None and "reprinted as" in report and "f32[]{weak}" in report


def test_a_sub_program_with_constants_round_trips(conftest):
    """A sub-program can keep constvars (`{ lambda d:f32[4] ; e:f32[4]. ...}`);
    the text check has no values for them and compares the text only."""
    from olympus.ir.core import ClosedOlympuspr, Eqn, Olympuspr, ShapedArray, Var
    from olympus.lax.pjit import pjit_p

    aval = ShapedArray((4,), np.dtype(np.float32))
    d, e, a, b, c = (Var(aval) for _ in range(5))
    inner = ClosedOlympuspr(Olympuspr([d], [e], [], [e, d]), [np.ones(4, np.float32)])
    outer = Olympuspr(
        [], [a], [Eqn(pjit_p, {"name": "f", "olympuspr": inner}, [a], [b, c])], [b, c]
    )
    assert "lambda d:f32[4] ; e:f32[4]" in outer.pretty()
    assert conftest.round_trip_failure(outer) is None
