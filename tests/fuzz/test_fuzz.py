"""Random programs (tests/fuzz/program_generator.py) against every property in
checks.py: eager == jit == the NumPy reference interpreter, stepping
equation by equation (olympus.debug.Stepper) == jit, vmap == stacked calls,
<vjp(ct), t> == <ct, jvp(t)>, jvp == finite differences in float64,
jit with the optimizer on == off (program and pullback), XLA's classic CPU
emitter == its fusion emitters,
the IR checker accepts every transformed program, print -> parse -> print is
the identity, values tagged with checkpoint_name under a name policy's
checkpoint == untagged (value and pullback). A failing program is shrunk and printed as a runnable script.

    pytest tests/fuzz                 # CI: budget.CI_PROGRAMS seeds, time-guarded
    pytest tests/fuzz --fuzz-long     # budget.LONG_PROGRAMS seeds, no time budget
"""

from __future__ import annotations

import dataclasses

import pytest
from budget import fuzz_budget_s, tally
from checks import CHECKS, run_checks, shrink
from program_generator import generate


def _still_fails(check):
    def fails(candidate) -> bool:
        try:
            check(candidate)
        except Exception:  # noqa: BLE001
            return True
        return False

    return fails


def test_random_program(fuzz_seed, request):
    budget_s = fuzz_budget_s(request.config)
    if not tally.start_program(budget_s):
        pytest.skip(
            f"fuzz time budget of {budget_s:.0f} s spent (tests/fuzz/budget.py)"
        )
    program = generate(fuzz_seed)
    applied, failures = run_checks(program)
    tally.end_program(applied, bool(failures))
    if failures:
        name, error = failures[0]
        small = shrink(program, _still_fails(CHECKS[name]))
        pytest.fail(
            f"seed {fuzz_seed}: {name} failed: {type(error).__name__}: {error}\n"
            f"shrunk reproducer:\n{small.reproducer(name)}",
            pytrace=False,
        )


def test_time_budget_skips_programs_only_after_it_is_spent():
    from budget import Tally

    t = Tally()
    assert t.start_program(budget_s=100.0)  # the first program starts the clock
    t.end_program(checks=5, failed=False)
    t.started -= 101.0  # as if 101 s of fuzzing had passed
    assert not t.start_program(budget_s=100.0)
    assert t.start_program(budget_s=0.0)  # 0: no budget
    assert (t.programs, t.checks, t.skipped) == (1, 5, 1)
    assert "1 programs, 5 checks, 0 failed, 1 skipped" in t.summary(100.0)


def test_a_parallel_runs_tallies_add_up():
    from budget import Tally

    worker = Tally()
    worker.start_program(budget_s=0.0)
    worker.end_program(checks=4, failed=True)
    worker.skipped = 2
    record = dataclasses.asdict(worker) | {"spent": 42.0}
    controller = Tally()
    controller.merge(record)
    controller.merge(record)
    assert (controller.programs, controller.checks, controller.failed) == (2, 8, 2)
    assert controller.skipped == 4
    assert "(42 s, budget 150 s)" in controller.summary(150.0)


def test_generation_is_reproducible():
    assert generate(5).source() == generate(5).source()
    assert [a.tolist() for a in generate(5).arguments()] == [
        a.tolist() for a in generate(5).arguments()
    ]


def test_shrinker_cuts_a_failing_program_down():
    """A 'bug' that fires whenever a program has a cos: the reproducer keeps one."""
    program = next(
        p
        for p in map(generate, range(100))
        if "jnp.cos(" in p.source() and len(p.source().splitlines()) > 6
    )
    small = shrink(program, lambda p: "jnp.cos(" in p.source())
    assert "jnp.cos(" in small.source()
    assert len(small.source().splitlines()) < len(program.source().splitlines())
    assert (
        "def program(" in small.reproducer()
        and "olympus.jit(program)" in small.reproducer()
    )


# ---- regressions the fuzzer found (each was a failing generated program) -------------
def test_grad_of_checkpoint_prints_and_parses_back_to_itself():
    """The rematerialised program used to share Vars with the forward one, so
    both printed with one set of names (fuzz seeds 60, 97, ...)."""
    import numpy as np

    import olympus
    import olympus.numpy as jnp
    from olympus.ir import parse

    f = olympus.checkpoint(lambda a: a / (1.0 + a * a))
    closed = olympus.make_olympuspr(olympus.grad(lambda a: jnp.sum(f(a))))(
        np.ones(3, np.float32)
    )
    text = str(closed)
    assert str(parse(text, list(closed.consts))) == text


def test_traced_int_index_helpers_exist():
    import numpy as np

    from olympus import lax

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(
        lax.dynamic_slice_in_dim(x, np.int32(5), 2, 0), x[1:3]
    )
    np.testing.assert_array_equal(
        lax.dynamic_update_slice_in_dim(x, np.zeros((3, 1), np.float32), 1, 1)[:, 1],
        [0, 0, 0],
    )
