"""How much the fuzzer runs: a fixed list of seeds, and a wall-clock guard.

CI runs the programs of seeds 0 .. CI_PROGRAMS - 1 (`pytest tests/fuzz`); on a
quiet 2-core machine they all finish well inside BUDGET_S, so the same programs
and checks run every time. On a loaded machine a program whose turn comes after
BUDGET_S seconds of fuzzing is skipped, so a slow machine cannot push CI past
its limit; the summary line says how many ran and how many were skipped.
`--fuzz-long` runs LONG_PROGRAMS seeds and `--fuzz-seeds 300:600` any range,
both with no budget; `--fuzz-budget S` sets another budget (0: none).
"""

from __future__ import annotations

import dataclasses
import datetime
import time

# Measured: about 1 s a program on session 6's 2 cores (the 100 CI programs in
# 94 s at load ~1); on session 7's slower Xeon 2 s alone and nearer 2.5 s while
# the suite's other worker runs beside it (`-n 2`), hence 240 s: the suite
# itself went from 16 to 9 minutes by running on both cores.
CI_PROGRAMS = 100
LONG_PROGRAMS = 300
BUDGET_S = 240.0


# The JAX-oracle fuzz (tests/fuzz/edge_programs.py against JAX 0.10.2): a few
# seconds a program on 2 loaded cores (JAX compiles every program too), so CI
# runs JAX_CI_PROGRAMS new programs a day, time-guarded by JAX_BUDGET_S.
JAX_CI_PROGRAMS = 16
JAX_BUDGET_S = 30.0


@dataclasses.dataclass
class Tally:
    """What the fuzz tests of this session ran (for the summary line)."""

    started: float | None = None  # perf_counter at the first program
    ended: float | None = None  # perf_counter when the last program finished
    programs: int = 0
    checks: int = 0  # checks that applied (e.g. no gradient check without float inputs)
    failed: int = 0
    skipped: int = 0  # not started: the budget was spent

    def elapsed(self) -> float:
        """Seconds since the first program started."""
        return 0.0 if self.started is None else time.perf_counter() - self.started

    def end_program(self, checks: int, failed: bool) -> None:
        self.programs += 1
        self.checks += checks
        self.failed += failed
        self.ended = time.perf_counter()

    def start_program(self, budget_s: float) -> bool:
        """False when the budget is spent (the program is skipped)."""
        if self.started is None:
            self.started = time.perf_counter()
        if budget_s and self.elapsed() > budget_s:
            self.skipped += 1
            return False
        return True

    merged_spent: float = 0.0  # the longest a parallel run's worker fuzzed

    def spent(self) -> float:
        """Seconds from the first program's start to the last one's end."""
        own = (self.ended or self.started or 0.0) - (self.started or 0.0)
        return max(own, self.merged_spent)

    def merge(self, record: dict) -> None:
        """Adds a parallel run's worker tally (`dataclasses.asdict` of one,
        with its `spent`) to this one: the controller's summary covers all."""
        self.programs += record["programs"]
        self.checks += record["checks"]
        self.failed += record["failed"]
        self.skipped += record["skipped"]
        self.merged_spent = max(self.merged_spent, record["spent"])

    label: str = "fuzz"

    def summary(self, budget_s: float) -> str:
        budget = f"budget {budget_s:.0f} s" if budget_s else "no budget"
        spent = self.spent()
        return (
            f"{self.label}: {self.programs} programs, {self.checks} checks, {self.failed} failed, "
            f"{self.skipped} skipped by the time budget ({spent:.0f} s, {budget})"
        )


tally = Tally()


def fuzz_long(config) -> bool:
    return config.getoption("fuzz_long", default=False)


def fuzz_seeds(config) -> range:
    """--fuzz-seeds START:STOP, else LONG_PROGRAMS or CI_PROGRAMS seeds from 0."""
    given = config.getoption("fuzz_seeds", default=None)
    if given:
        start, _, stop = given.partition(":")
        return range(int(start), int(stop))
    return range(LONG_PROGRAMS if fuzz_long(config) else CI_PROGRAMS)


def fuzz_budget_s(config) -> float:
    """--fuzz-budget if given, else BUDGET_S in CI and none with --fuzz-long."""
    given = config.getoption("fuzz_budget", default=None)
    if given is not None:
        return given
    return (
        0.0
        if fuzz_long(config) or config.getoption("fuzz_seeds", default=None)
        else BUDGET_S
    )


jax_tally = Tally(label="fuzz against JAX")


def jax_fuzz_seeds(config, today: datetime.date | None = None) -> range:
    """--fuzz-jax-seeds START:STOP, else JAX_CI_PROGRAMS seeds that the date
    picks (--fuzz-jax-date YYYY-MM-DD, default today, UTC): each day's CI
    tries programs no earlier day tried, and a day's run can be repeated."""
    given = config.getoption("fuzz_jax_seeds", default=None)
    if given:
        start, _, stop = given.partition(":")
        return range(int(start), int(stop))
    day = config.getoption("fuzz_jax_date", default=None)
    if day:
        today = datetime.date.fromisoformat(day)
    today = today or datetime.datetime.now(datetime.timezone.utc).date()
    start = today.toordinal() * JAX_CI_PROGRAMS
    return range(start, start + JAX_CI_PROGRAMS)


def jax_fuzz_budget_s(config) -> float:
    """No budget when seeds are given, else JAX_BUDGET_S (--fuzz-budget wins)."""
    given = config.getoption("fuzz_budget", default=None)
    if given is not None:
        return given
    return 0.0 if config.getoption("fuzz_jax_seeds", default=None) else JAX_BUDGET_S
