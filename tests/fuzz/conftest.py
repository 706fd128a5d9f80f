"""The fuzzer's seeds and time budget (tests/fuzz/budget.py says how much runs)."""

import dataclasses

from budget import fuzz_budget_s, fuzz_seeds, tally


def pytest_generate_tests(metafunc):
    if "fuzz_seed" in metafunc.fixturenames:
        metafunc.parametrize("fuzz_seed", fuzz_seeds(metafunc.config))


def pytest_sessionfinish(session):
    """A parallel run's worker hands its tally to the controller (whose
    summary line tests/conftest.py writes)."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None and tally.started is not None:
        workeroutput["fuzz_tally"] = dataclasses.asdict(tally) | {
            "spent": tally.spent()
        }


def pytest_terminal_summary(terminalreporter, config):
    if tally.started is not None:
        terminalreporter.write_line(tally.summary(fuzz_budget_s(config)))
