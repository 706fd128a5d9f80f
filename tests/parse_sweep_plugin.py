"""Opt-in pytest plugin: parses back every program the selected tests build.

    PYTHONPATH=tests python -m pytest -p parse_sweep_plugin tests/test_numpy.py ...

Each distinct olympuspr (from a staging trace or handed to XLA) is printed,
parsed with `olympus.ir.parse`, reprinted and type-checked; the session ends
with a summary and the failing programs. Constvar values are not needed to
check the text, so every constvar gets None. Programs with `debug_callback`
(a Python function in a param) are skipped. Runs on 2026-11-22, by groups of
test files: autodiff/control-flow/seeds/IR 802 programs, numpy/vmap/indexing/
primitives/errors 1349, linalg/random/nn 693 (one failure: a shared
sub-program printed at two depths, since fixed), array/dispatch/dtypes/
tree_util/control-flow 527; all identical except programs holding Python
functions (`custom_lin`'s `bwd`) and a test's deliberately unknown primitive.
"""

from __future__ import annotations

import pytest

from olympus.backends.xla import dispatch
from olympus.ir import check_olympuspr
from olympus.ir.parser import _Parser
from olympus.tracer.staging import StagingTrace

_seen: set[str] = set()
_failures: list[str] = []


class _AnyConsts(dict):
    def __contains__(self, name) -> bool:
        return True

    def __getitem__(self, name):
        return None


def _round_trip(olympuspr) -> None:
    text = olympuspr.pretty(weak_types=True)
    if text in _seen or "debug_callback" in text:
        return
    _seen.add(text)
    try:
        parser = _Parser(text, _AnyConsts())
        parsed, _ = parser.program()
        assert parser.r.at_end(), "text after the program"
        assert parsed.pretty(weak_types=True) == text, (
            f"reprinted differently:\n{parsed}"
        )
        check_olympuspr(parsed)
    except Exception as err:  # collect them all, report at the end
        _failures.append(f"{text}\n--- {type(err).__name__}: {err}")


def _wrap_to_olympuspr(original):
    def to_olympuspr(self, outs):
        olympuspr, consts = original(self, outs)
        _round_trip(olympuspr)
        return olympuspr, consts

    return to_olympuspr


def _wrap_build_module(original):
    def build_module(olympuspr, name="main"):
        _round_trip(olympuspr)
        return original(olympuspr, name)

    return build_module


@pytest.fixture(autouse=True, scope="session")
def parse_every_program():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(
            StagingTrace, "to_olympuspr", _wrap_to_olympuspr(StagingTrace.to_olympuspr)
        )
        mp.setattr(dispatch, "build_module", _wrap_build_module(dispatch.build_module))
        yield


def pytest_terminal_summary(terminalreporter):
    terminalreporter.section("olympuspr parse sweep")
    for failure in _failures:
        terminalreporter.write_line(failure + "\n")
    terminalreporter.write_line(
        f"{len(_seen)} programs parsed back, {len(_failures)} failed"
    )
