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
import sys
import tempfile
import time

# The persistent compilation cache is on by default in the user's cache folder;
# the suite (and the subprocesses it starts) use a folder of their own instead,
# removed at the end of the session. Workers of a parallel run (pytest-xdist,
# `-n 2` in README's test command) share their controller's folder, so a
# program one of them compiled is a cache hit for the other.
if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("OLYMPUS_TEST_CACHE_DIR"):
    _SESSION_CACHE_DIR, _OWNS_CACHE_DIR = os.environ["OLYMPUS_TEST_CACHE_DIR"], False
else:
    _SESSION_CACHE_DIR = tempfile.mkdtemp(prefix="olympus-test-cache-")
    _OWNS_CACHE_DIR = True
    os.environ["OLYMPUS_TEST_CACHE_DIR"] = _SESSION_CACHE_DIR
os.environ["OLYMPUS_COMPILATION_CACHE_DIR"] = _SESSION_CACHE_DIR
# JAX (the oracle) caches its programs in a subfolder of the same one, every
# program whatever its compile time: a program one worker's JAX compiled is a
# hit for the other's (a third of an oracle test file's time is JAX compiling).
os.environ["JAX_COMPILATION_CACHE_DIR"] = os.path.join(_SESSION_CACHE_DIR, "jax")
os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"

import pytest

from olympus.backends.xla import dispatch
from olympus.ir.checker import check_olympuspr
from olympus.ir.core import ClosedOlympuspr
from olympus.tracer.staging import StagingTrace

checked_programs: list[int] = [0]  # how many programs were checked (a test reads it)


# ---- print/parse round trip of every program the suite builds -------------------
# Each program staged or compiled during the session whose structure (primitives,
# input types) is new is printed, parsed back and reprinted at once (about 1-2 ms,
# no program is kept); one that does not reprint identically fails the run at the
# end. Only a hash is kept per structure, so tracing the same structure again (the
# leak tests trace thousands of closures) costs a hash and keeps nothing.
_programs_seen = [0]
_round_tripped = [0]
_structures_seen: set[int] = set()
_round_trip_failures: list[str] = []
_round_trip_seconds = [0.0]


def _structure(olympuspr) -> int:
    return hash(
        (
            tuple(v.aval for v in olympuspr.invars),
            len(olympuspr.outvars),
            tuple(
                (e.primitive.name, len(e.params), len(e.invars)) for e in olympuspr.eqns
            ),
        )
    )


def _round_trip_if_new(olympuspr) -> None:
    _programs_seen[0] += 1
    structure = _structure(olympuspr)
    if structure in _structures_seen:
        return
    _structures_seen.add(structure)
    start = time.perf_counter()
    failure = round_trip_failure(olympuspr)
    _round_trip_seconds[0] += time.perf_counter() - start
    _round_tripped[0] += 1
    if failure is not None:
        _round_trip_failures.append(failure)


def _sub_programs(value):
    for v in value if isinstance(value, (tuple, list)) else (value,):
        if isinstance(v, ClosedOlympuspr):
            yield v.olympuspr


def _outside_the_text_format(olympuspr) -> bool:
    """Programs the text cannot carry: a param holding a Python function
    (debug_callback, custom_lin), or a primitive a test defined for itself."""
    from olympus.ir.core import all_primitives

    for eqn in olympuspr.eqns:
        if all_primitives.get(eqn.primitive.name) is not eqn.primitive:
            return True
        for value in eqn.params.values():
            values = value if isinstance(value, (tuple, list)) else (value,)
            if any(
                callable(v) and not isinstance(v, (type, ClosedOlympuspr))
                for v in values
            ):
                return True
            if any(map(_outside_the_text_format, _sub_programs(value))):
                return True
    return False


class _AnyConsts(dict):
    """Constvar values are not needed to check the text: every one is None."""

    def __contains__(self, name) -> bool:
        return True

    def __getitem__(self, name):
        return None


def round_trip_failure(olympuspr) -> str | None:
    """None if `olympuspr` prints, parses back and reprints identically (or
    cannot be written as text at all); else a report with both texts. The
    text shows weak types (`f32[]{weak}`), so losing one is a difference."""
    from olympus.ir.parser import _Parser

    if _outside_the_text_format(olympuspr):
        return None
    text = olympuspr.pretty(weak_types=True)
    checking, _check_on_construction[0] = _check_on_construction[0], False
    try:  # constvars of sub-programs get None, so only the text is compared here
        parser = _Parser(text, _AnyConsts())
        parser.r.skip_space()
        parsed, _ = parser.program()
        assert parser.r.at_end(), "text after the program"
        again = parsed.pretty(weak_types=True)
    except Exception as err:  # noqa: BLE001 (any parse error is reported, at the end)
        return f"{text}\n--- {type(err).__name__}: {err}"
    finally:
        _check_on_construction[0] = checking
    return None if again == text else f"{text}\n--- reprinted as:\n{again}"


def _checked_to_olympuspr(original):
    def to_olympuspr(self, outs):
        olympuspr, consts = original(self, outs)
        closed = ClosedOlympuspr(olympuspr, consts)  # checked there when on
        if not _check_on_construction[0]:
            check_olympuspr(closed)
            checked_programs[0] += 1
        _round_trip_if_new(olympuspr)
        return olympuspr, consts

    return to_olympuspr


def _checked_build_module(original):
    def build_module(olympuspr, name="main", *donated):
        check_olympuspr(olympuspr)
        checked_programs[0] += 1
        _round_trip_if_new(olympuspr)
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
    parser.addoption(
        "--fuzz-budget",
        type=float,
        default=None,
        dest="fuzz_budget",
        help="seconds of fuzzing before later programs are skipped (0: no limit; "
        "default tests/fuzz/budget.py BUDGET_S, none with --fuzz-long)",
    )
    parser.addoption(
        "--fuzz-seeds",
        default=None,
        dest="fuzz_seeds",
        help="START:STOP, the fuzzer's seeds (instead of the CI or --fuzz-long range)",
    )


def pytest_sessionfinish(session, exitstatus):
    """A run that selects no tests (e.g. `-k` matching nothing) is not a
    failure; a program that does not round-trip through its text is. A
    parallel run's worker hands its round-trip record to the controller
    (`pytest_testnodedown`), which reports and fails for all of them."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["round_trip"] = (
            _programs_seen[0],
            _round_tripped[0],
            _round_trip_seconds[0],
            _round_trip_failures,
        )
    if _OWNS_CACHE_DIR:
        shutil.rmtree(_SESSION_CACHE_DIR, ignore_errors=True)
    if _round_trip_failures:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK


_worker_fuzz_tallies: list[dict] = []  # a parallel run's (tests/fuzz/conftest.py)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist: a worker finished; add its round-trip record and fuzz
    tally to ours (the controller collects no tests, so this conftest, not
    tests/fuzz's, is the one it has)."""
    output = getattr(node, "workeroutput", {})
    if "fuzz_tally" in output:
        _worker_fuzz_tallies.append(output["fuzz_tally"])
    record = output.get("round_trip")
    if record is None:
        return
    seen, tripped, seconds, failures = record
    _programs_seen[0] += seen
    _round_tripped[0] += tripped
    _round_trip_seconds[0] += seconds
    _round_trip_failures.extend(failures)


def pytest_terminal_summary(terminalreporter, config):
    if _worker_fuzz_tallies:
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fuzz"))
        from budget import Tally, fuzz_budget_s

        tally = Tally()
        for record in _worker_fuzz_tallies:
            tally.merge(record)
        terminalreporter.write_line(tally.summary(fuzz_budget_s(config)))
    if not _programs_seen[0]:
        return
    terminalreporter.write_line(
        f"print/parse round trip: {_round_tripped[0]} distinct programs of "
        f"{_programs_seen[0]} built, {len(_round_trip_failures)} failed "
        f"({_round_trip_seconds[0]:.1f} s)"
    )
    for failure in _round_trip_failures[:5]:
        terminalreporter.write_line(f"round trip FAILED:\n{failure}\n")


@pytest.fixture
def x64():
    """64-bit types on (olympus_enable_x64) for one test, then as before."""
    from olympus import config

    with config.override("olympus_enable_x64", True):
        yield


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
    from olympus import config

    min_secs = config.read("olympus_compilation_cache_min_compile_secs")
    config.update("olympus_compilation_cache_dir", str(tmp_path))
    config.update("olympus_compilation_cache_min_compile_secs", 0.0)
    compiler.reset_cache_stats()
    try:
        yield tmp_path
    finally:
        config.update("olympus_compilation_cache_dir", None)
        config.update("olympus_compilation_cache_min_compile_secs", min_secs)
