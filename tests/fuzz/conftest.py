"""The fuzzer's seeds and time budget (tests/fuzz/budget.py says how much runs)."""

import dataclasses

from budget import (
    fuzz_budget_s,
    fuzz_seeds,
    jax_fuzz_budget_s,
    jax_fuzz_seeds,
    jax_tally,
    tally,
)


def pytest_addoption(parser):
    """The JAX-oracle fuzz's seeds (read with defaults: when this conftest is
    not an initial one, e.g. under `pytest tests`, the CI range applies)."""
    parser.addoption(
        "--fuzz-jax-seeds",
        dest="fuzz_jax_seeds",
        help="START:STOP, the JAX-oracle fuzz's seeds (instead of the date's range)",
    )
    parser.addoption(
        "--fuzz-jax-date",
        dest="fuzz_jax_date",
        help="YYYY-MM-DD: run that day's JAX-oracle fuzz seeds (default: today, UTC)",
    )


def pytest_generate_tests(metafunc):
    if "fuzz_seed" in metafunc.fixturenames:
        metafunc.parametrize("fuzz_seed", fuzz_seeds(metafunc.config))
    if "fuzz_jax_seed" in metafunc.fixturenames:
        metafunc.parametrize("fuzz_jax_seed", jax_fuzz_seeds(metafunc.config))


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
    if jax_tally.started is not None:
        terminalreporter.write_line(jax_tally.summary(jax_fuzz_budget_s(config)))
