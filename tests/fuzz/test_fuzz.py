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

The JAX oracle (checks.check_jax_oracle) runs edge programs
(edge_programs.py: float16/bfloat16/x64, NaN/inf/-0/subnormal arguments,
negative and out-of-bounds indices, empty axes) under olympus and JAX 0.10.2:

    pytest tests/fuzz -k jax                          # today's seeds, time-guarded
    pytest tests/fuzz -k jax --fuzz-jax-seeds 0:200   # a fixed range, no budget
    pytest tests/fuzz -k jax --fuzz-jax-date 2026-11-28
"""

from __future__ import annotations

import copy
import dataclasses

import pytest
from budget import fuzz_budget_s, jax_fuzz_budget_s, jax_tally, tally
from checks import (
    CHECKS,
    JAX_CHECKS,
    PythonFloatWeakTypes,
    check_jax_oracle,
    run_checks,
    shrink,
)
from edge_programs import generate_edge
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


def test_random_program_against_jax(fuzz_jax_seed, request):
    """An edge program, its vmap and its pullback give JAX 0.10.2's results."""
    budget_s = jax_fuzz_budget_s(request.config)
    if not jax_tally.start_program(budget_s):
        pytest.skip(
            f"JAX fuzz time budget of {budget_s:.0f} s spent (tests/fuzz/budget.py)"
        )
    program = generate_edge(fuzz_jax_seed)
    try:
        applied = check_jax_oracle(program) is not False
    except PythonFloatWeakTypes as error:
        jax_tally.end_program(1, False)
        pytest.xfail(
            f"edge seed {fuzz_jax_seed}: weak types of grads with Python floats "
            f"differ from JAX (known, docs/differences.md): {error}"
        )
    except Exception as error:  # noqa: BLE001  (any error is a finding)
        jax_tally.end_program(1, True)
        (name,) = JAX_CHECKS
        small = shrink(program, _still_fails(check_jax_oracle))
        pytest.fail(
            f"edge seed {fuzz_jax_seed} ({program.float_dtype}, {program.int_dtype}, "
            f"x64={program.x64}): {name} failed: {type(error).__name__}: {error}\n"
            f"rerun: pytest tests/fuzz -k jax --fuzz-jax-seeds "
            f"{fuzz_jax_seed}:{fuzz_jax_seed + 1}\n"
            f"shrunk reproducer:\n{small.reproducer(name)}",
            pytrace=False,
        )
    jax_tally.end_program(applied, False)


def test_jax_fuzz_seeds_rotate_by_date():
    import datetime
    import types

    from budget import JAX_CI_PROGRAMS, jax_fuzz_seeds

    config = types.SimpleNamespace(getoption=lambda name, default=None: default)
    day = datetime.date(2026, 11, 28)
    today = jax_fuzz_seeds(config, day)
    tomorrow = jax_fuzz_seeds(config, day + datetime.timedelta(days=1))
    assert len(today) == JAX_CI_PROGRAMS and today.stop == tomorrow.start


def test_edge_programs_draw_edge_dtypes_values_and_indices():
    import numpy as np

    programs = [generate_edge(s) for s in range(60)]
    assert {p.float_dtype for p in programs} == {
        "float32",
        "float16",
        "bfloat16",
        "float64",
    }
    assert {"int8", "uint8"} <= {p.int_dtype for p in programs}
    assert all(p.x64 == (p.float_dtype == "float64") for p in programs)
    args = [a for p in programs for a in p.arguments() if a.dtype.kind == "f"]
    flat = np.concatenate([a.astype(np.float64).ravel() for a in args])
    assert (
        np.isnan(flat).any()
        and np.isinf(flat).any()
        and np.signbit(flat[flat == 0]).any()
    )
    assert any(0 in a.shape for a in args)
    sources = "".join(p.source() for p in programs)
    assert (
        "jnp.take(" in sources
        and "[-1]" in sources
        and "dynamic_slice_in_dim" in sources
    )
    assert "max_steps" not in sources and "memory_budget" not in sources


def test_some_edge_programs_take_python_floats():
    """A share of edge programs has scalar inputs passed as Python floats
    (edge values among them) to grad and value_and_grad; the reproducer runs
    that part too."""
    import numpy as np

    programs = [generate_edge(s) for s in range(80)]
    with_floats = [p for p in programs if p.python_floats]
    assert 0.1 < len(with_floats) / len(programs) < 0.5
    values = [v for p in with_floats for v in p.python_floats.values()]
    assert {0.0, 1e-30, 1e30, -2.5} <= set(values)
    assert any(v == 0 and np.signbit(v) for v in values)
    for p in with_floats:
        args = dict(zip((v.name for v in p.inputs), p.python_arguments()))
        assert all(type(args[name]) is float for name in p.python_floats)
        assert all(p.inputs[i].kind == "f" for i in p.python_float_argnums())
    assert "value_and_grad(" in with_floats[0].reproducer()


def test_jax_oracle_check_catches_a_difference():
    """A program that differs under JAX (here: made to, through its source)
    fails the check, and its reproducer runs it under both."""
    with_sin = [p for p in map(generate_edge, range(60)) if "jnp.sin(" in p.source()]
    program = min(with_sin, key=lambda p: len(p.source()))  # the cheapest to run
    assert check_jax_oracle(program)
    broken = copy.deepcopy(program)
    broken.function_in = lambda ns, f=program.function_in: (
        f(ns) if ns.name == "jax" else (lambda *a: tuple(o + 1 for o in f(ns)(*a)))
    )
    with pytest.raises(AssertionError, match="differ"):
        check_jax_oracle(broken)
    assert "run_both(" in program.reproducer() and "x64(" in program.reproducer()


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
