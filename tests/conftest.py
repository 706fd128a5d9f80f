"""Test-wide setup: every olympuspr the tests produce passes the IR checker.

The checker runs on each program a staging trace builds (whatever name
`trace_to_olympuspr` is imported under, all of them end in
`StagingTrace.to_olympuspr`), on each `ClosedOlympuspr` made anywhere (the
sub-programs transforms and control flow rebuild by hand), and on each
program handed to XLA.
"""

from __future__ import annotations

import os
import shutil
import tempfile

# The persistent compilation cache is on by default in the user's cache folder;
# the suite (and the subprocesses it starts) use a folder of their own instead,
# removed at the end of the session.
_SESSION_CACHE_DIR = tempfile.mkdtemp(prefix="olympus-test-cache-")
os.environ["OLYMPUS_COMPILATION_CACHE_DIR"] = _SESSION_CACHE_DIR

import pytest  # noqa: E402

from olympus.backends.xla import dispatch  # noqa: E402
from olympus.ir.checker import check_olympuspr  # noqa: E402
from olympus.ir.core import ClosedOlympuspr  # noqa: E402
from olympus.tracer.staging import StagingTrace  # noqa: E402

checked_programs: list[int] = [0]  # how many programs were checked (a test reads it)


def _checked_to_olympuspr(original):
    def to_olympuspr(self, outs):
        olympuspr, consts = original(self, outs)
        check_olympuspr(ClosedOlympuspr(olympuspr, consts))
        checked_programs[0] += 1
        return olympuspr, consts

    return to_olympuspr


def _checked_build_module(original):
    def build_module(olympuspr, name="main", *donated):
        check_olympuspr(olympuspr)
        checked_programs[0] += 1
        return original(olympuspr, name, *donated)

    return build_module


_check_on_construction = [
    True
]  # off inside tests that build ill-typed programs on purpose


def _checked_closed_init(original):
    def __init__(self, olympuspr, consts):
        original(self, olympuspr, consts)
        if _check_on_construction[0]:
            check_olympuspr(self)
            checked_programs[0] += 1

    return __init__


@pytest.fixture(autouse=True, scope="session")
def check_every_olympuspr():
    """Installs the checker around program construction and compilation."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(
            StagingTrace,
            "to_olympuspr",
            _checked_to_olympuspr(StagingTrace.to_olympuspr),
        )
        mp.setattr(
            ClosedOlympuspr, "__init__", _checked_closed_init(ClosedOlympuspr.__init__)
        )
        mp.setattr(
            dispatch, "build_module", _checked_build_module(dispatch.build_module)
        )
        yield


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-long",
        action="store_true",
        dest="fuzz_long",
        help="run the random-program fuzzer (tests/fuzz) on hundreds of programs",
    )


def pytest_sessionfinish(session, exitstatus):
    """A run that selects no tests (e.g. `-k` matching nothing) is not a failure."""
    shutil.rmtree(_SESSION_CACHE_DIR, ignore_errors=True)
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK


@pytest.fixture
def checked_program_count():
    """A function giving how many programs the checker has seen so far."""
    return lambda: checked_programs[0]


@pytest.fixture
def ill_typed_programs_allowed():
    """For tests that build ill-typed ClosedOlympusprs to show the checker rejects them."""
    _check_on_construction[0] = False
    try:
        yield
    finally:
        _check_on_construction[0] = True


@pytest.fixture
def compilation_cache_dir(tmp_path):
    """An empty persistent compilation cache for one test that writes every
    compile (no minimum compile time), with its counters reset."""
    from olympus.backends.xla import compiler
    from olympus.ir.config import config

    min_secs = config.read("olympus_compilation_cache_min_compile_secs")
    config.update("olympus_compilation_cache_dir", str(tmp_path))
    config.update("olympus_compilation_cache_min_compile_secs", 0.0)
    compiler.reset_cache_stats()
    try:
        yield tmp_path
    finally:
        config.update("olympus_compilation_cache_dir", None)
        config.update("olympus_compilation_cache_min_compile_secs", min_secs)
