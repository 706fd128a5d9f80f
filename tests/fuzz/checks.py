"""What every generated program must satisfy, one function per property.

Each check takes a `Program` and raises AssertionError (or the error olympus
raised) when the property fails, and returns False when it does not apply
(no float inputs to differentiate); `run_checks` runs them all and `shrink`
cuts a failing program down while the same check still fails.
"""

from __future__ import annotations

import contextlib
import copy
import re

import numpy as np
from program_generator import Stmt, blocks, dead_code_eliminated

import olympus
from olympus.backends import interpreted
from olympus.backends.reference import evaluate
from olympus.test_util import reference_call
from olympus.ir import check_olympuspr, parse
from olympus.tracer.pytree import tree_flatten, tree_unflatten

RTOL = ATOL = 2e-4


def _leaves(tree) -> list[np.ndarray]:
    return [np.asarray(x) for x in tree_flatten(tree)[0]]


def _close(actual, expected, what: str, rtol=RTOL, atol=ATOL) -> None:
    actual, expected = _leaves(actual), _leaves(expected)
    assert len(actual) == len(expected), what
    for a, e in zip(actual, expected):
        assert a.shape == e.shape and a.dtype == e.dtype, (
            f"{what}: {a.dtype}{a.shape} vs {e.dtype}{e.shape}"
        )
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=what)


def _float_part(program, fun, args):
    """fun of the float inputs only (int/bool inputs fixed at their values)."""
    idx = program.float_inputs()

    def g(*floats):
        full = list(args)
        for i, x in zip(idx, floats):
            full[i] = x
        return fun(*full)

    return g, [args[i] for i in idx]


def _round_trip(closed, what: str) -> None:
    check_olympuspr(closed)
    text = str(closed)
    again = parse(text, list(closed.consts))
    check_olympuspr(again)
    assert str(again) == text, f"{what}: printing the parsed program changes it"


# ---- the properties -------------------------------------------------------------------
def check_eager_jit_reference(program) -> None:
    fun, args = program.function(), program.arguments()
    # Eager on olympus Arrays: on raw NumPy inputs, `a * a` would be NumPy's own op.
    eager = fun(*[olympus.device_put(a) for a in args])
    jit_fun = olympus.jit(fun)
    jitted = jit_fun(*args)
    _close(jitted, eager, "jit vs eager")
    # A hit with NumPy arguments runs through jaxlib's C++ dispatcher.
    _close(jit_fun(*args), jitted, "jit hit (NumPy arguments) vs first call")
    # A first call with device Arrays fills the fast path, the second hits it.
    placed = [olympus.device_put(a) for a in args]
    for what in ("jit (Arrays) vs first call", "jit fast hit (Arrays) vs first call"):
        _close(jit_fun(*placed), jitted, what)
    _close(reference_call(fun, *args), jitted, "reference vs jit")
    return True


def check_stepper(program) -> None:
    """Running the program equation by equation (olympus.debug.Stepper, into
    every branch, loop iteration and call) gives jit's results, and keys every
    value by a name the printed program binds."""
    fun, args = program.function(), program.arguments()
    stepper = olympus.debug.Stepper(fun, *args)
    _close(stepper.run_all(), olympus.jit(fun)(*args), "stepped vs jit")
    printed = set(re.findall(r"([a-z]+):", str(stepper.closed)))
    shown = {re.sub(r"(\[\d+\]|#\d+)+$", "", key) for key in stepper.values}
    assert shown <= printed, (
        f"stepper names not in the printed program: {shown - printed}"
    )
    return True


def check_ir(program) -> None:
    """The checker accepts the program and its transforms; each prints, parses
    back to the same text, and the parsed program computes the same values."""
    fun, args = program.function(), program.arguments()
    closed = olympus.make_olympuspr(fun)(*args)
    _round_trip(closed, "program")
    if "pure_callback[" not in str(closed):  # a parsed callback is its name only
        _close(
            evaluate(parse(str(closed), list(closed.consts)), *args),
            evaluate(closed, *args),
            "parsed program",
        )
    batched, axes = _batched_arguments(program)
    _round_trip(
        olympus.make_olympuspr(olympus.vmap(fun, in_axes=axes))(*batched), "vmap"
    )
    g, floats = _float_part(program, fun, args)
    if not floats:
        return True
    tangents = [np.ones_like(x) for x in floats]
    _round_trip(
        olympus.make_olympuspr(lambda *xs: olympus.jvp(g, xs, tangents))(*floats), "jvp"
    )
    if program.reverse_differentiable():
        scalar = lambda *xs: sum(olympus.numpy.sum(o) for o in g(*xs))
        _round_trip(
            olympus.make_olympuspr(
                olympus.grad(scalar, argnums=tuple(range(len(floats))))
            )(*floats),
            "grad",
        )
    return True


def _batched_arguments(program):
    """Two examples stacked on axis 0 (some inputs shared: in_axes None)."""
    rng = np.random.default_rng([program.seed, 7])
    first, second = program.arguments(0), program.arguments(1)
    axes = [None if rng.random() < 0.3 else 0 for _ in first]
    if all(a is None for a in axes):
        axes[0] = 0
    batched = [
        a if ax is None else np.stack([a, b]) for a, b, ax in zip(first, second, axes)
    ]
    return batched, axes


def check_vmap(program) -> None:
    fun = program.function()
    batched, axes = _batched_arguments(program)
    examples = [
        [a if ax is None else a[k] for a, ax in zip(batched, axes)] for k in range(2)
    ]
    jitted = olympus.jit(fun)
    per_example = [_leaves(jitted(*ex)) for ex in examples]
    expected = [
        np.stack([p[i] for p in per_example]) for i in range(len(per_example[0]))
    ]
    _close(
        olympus.jit(olympus.vmap(fun, in_axes=axes))(*batched),
        expected,
        "vmap vs stacked",
    )
    return True


def _random_like(rng, xs):
    return [rng.normal(size=np.shape(x)).astype(np.asarray(x).dtype) for x in xs]


def check_jvp_vjp(program) -> None:
    """<vjp(ct), t> == <ct, jvp(t)> (reverse mode only without while_loop)."""
    fun, args = program.function(), program.arguments()
    g, floats = _float_part(program, fun, args)
    if not floats or not program.reverse_differentiable():
        return False
    rng = np.random.default_rng([program.seed, 11])
    tangents = _random_like(rng, floats)
    outs, out_tangents = olympus.jit(lambda xs, ts: olympus.jvp(g, xs, ts))(
        tuple(floats), tuple(tangents)
    )
    cts = _random_like(rng, _leaves(outs))

    def pullback(xs, cts):
        outs, vjp_fun = olympus.vjp(g, *xs)
        return outs, vjp_fun(cts)

    outs2, ct_in = olympus.jit(pullback)(tuple(floats), tuple(cts))
    _close(outs2, outs, "vjp primal vs jvp primal")
    lhs = sum(float(np.vdot(a, b)) for a, b in zip(_leaves(ct_in), tangents))
    rhs = sum(float(np.vdot(a, b)) for a, b in zip(cts, _leaves(out_tangents)))
    scale = 1.0 + sum(float(np.abs(np.asarray(a)).sum()) for a in _leaves(out_tangents))
    assert abs(lhs - rhs) <= 1e-4 * scale, (
        f"<vjp(ct), t> = {lhs} but <ct, jvp(t)> = {rhs}"
    )
    return True


def check_optimizer(program) -> None:
    """The optimizer keeps every value: jit with olympus_optimize off == on,
    for the program and (when reverse mode applies) its pullback; the
    optimized programs pass the checker and print/parse round-trip."""
    fun, args = program.function(), program.arguments()
    targets = [(fun, args)]
    g, floats = _float_part(program, fun, args)
    if floats and program.reverse_differentiable():
        rng = np.random.default_rng([program.seed, 13])
        outs = olympus.jit(g)(*floats)
        _, out_tree = tree_flatten(outs)
        cts = tree_unflatten(out_tree, _random_like(rng, _leaves(outs)))

        def pullback(*xs):
            outs, vjp_fun = olympus.vjp(g, *xs)
            return outs, vjp_fun(cts)

        targets.append((pullback, floats))
    for f, xs in targets:
        with olympus.config.override("olympus_optimize", False):
            plain = olympus.jit(f)(*xs)
        _close(olympus.jit(f)(*xs), plain, "optimizer on vs off")
        _round_trip(olympus.make_olympuspr(f, optimize=True)(*xs), "optimized program")
    return True


def check_tiered(program) -> None:
    """jit(tiered=True): the first call, interpreted with NumPy while XLA
    compiles, gives the compiled program's results, dtypes and weak types
    (the second call, after the background compile, runs the executable)."""
    fun, args = program.function(), program.arguments()
    tiered = olympus.jit(fun, tiered=True)
    interpreted = tiered(*args)
    for pending in list(tiered._pending.values()):
        pending.result(120)  # raises the background compile's error, if any
    compiled = tiered(*args)
    assert tiered._cache, "the second call did not run the compiled program"
    _close(interpreted, compiled, "tiered (interpreted) vs compiled")
    weak = [x.weak_type for x in tree_flatten(interpreted)[0]]
    assert weak == [x.weak_type for x in tree_flatten(compiled)[0]], "weak types differ"
    return True


def check_classic_emitter(program) -> None:
    """XLA's classic CPU emitter (olympus's choice for eager ops, and for every
    program with olympus_cpu_classic_emitter='all') and its MLIR fusion
    emitters (jit's default, and JAX's) compute the same values."""
    fun, args = program.function(), program.arguments()
    with olympus.config.override("olympus_cpu_classic_emitter", "all"):
        classic = olympus.jit(fun)(*args)
    _close(classic, olympus.jit(fun)(*args), "classic emitter vs fusion emitters")
    return True


_ONE_WORKER = interpreted._Workers(1)  # started on first use, then reused


@contextlib.contextmanager
def _interpreter_memory_floor():
    """The interpreter's size thresholds at their floor, with one worker
    thread on any machine: every value takes arena memory, is written over
    when it dies, is shared with the device, and every matmul is split over
    the threads or run on the worker (the paths a fuzzed program's small
    values never take otherwise)."""
    names = ("_SHARE_BYTES", "_DONOR_BYTES", "_SPLIT_FLOPS", "_MIN_ROWS")
    saved = {name: getattr(interpreted, name) for name in names}
    saved["_workers"] = interpreted._workers
    for name in names:
        setattr(interpreted, name, 1)
    interpreted._workers = _ONE_WORKER
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(interpreted, name, value)
        interpreted._arena.clear()


def check_interpreter_memory(program) -> None:
    """The interpreter's memory reuse with its thresholds at their floor
    (arena blocks, prefaulted ones, operands written over, results shared
    with the device, split matmuls) gives the values of the ordinary
    interpretation, and a result stays as it was while later runs reuse
    memory that its own run dropped."""
    fun, args = program.function(), program.arguments()
    closed = olympus.make_olympuspr(fun, optimize=True)(*args)
    if interpreted.not_interpretable(closed) is not None:
        return False
    expected = interpreted.interpret(closed, args)
    with _interpreter_memory_floor():
        interpreted.prefault_like(args)
        first = interpreted.interpret(closed, args)
        kept = [np.array(x, copy=True) for x in _leaves(first)]
        later = [interpreted.interpret(closed, args) for _ in range(2)]
    _close(first, expected, "interpreter memory reuse vs ordinary")
    _close(first, kept, "a result changed when later runs reused memory", 0, 0)
    _close(later[-1], expected, "interpreter memory reuse (third run) vs ordinary")
    return True


def check_finite_differences(program) -> None:
    """jvp (in float64) against central differences."""
    olympus.config.update("olympus_enable_x64", True)
    try:
        return _check_finite_differences(program)
    finally:
        olympus.config.update("olympus_enable_x64", False)


def _check_finite_differences(program) -> None:
    fun, args = program.function(), program.arguments(dtype=np.float64)
    g, floats = _float_part(program, fun, args)
    if not floats:
        return False
    rng = np.random.default_rng([program.seed, 13])
    tangents = _random_like(rng, floats)
    jg = olympus.jit(g)
    _, out_tangents = olympus.jit(lambda xs, ts: olympus.jvp(g, xs, ts))(
        tuple(floats), tuple(tangents)
    )
    fine, coarse = (
        _central_difference(jg, floats, tangents, eps) for eps in (1e-6, 1e-5)
    )
    for (numeric, scale), (rough, _), t in zip(fine, coarse, _leaves(out_tangents)):
        assert t.dtype == np.float64, f"jvp in x64 gave {t.dtype}"
        atol = 1e-4 * (1 + scale)
        smooth = (
            np.abs(numeric - rough) <= 0.1 * (np.abs(numeric) + np.abs(rough)) + atol
        )
        np.testing.assert_allclose(
            t[smooth],
            numeric[smooth],
            rtol=1e-3,
            atol=atol,
            err_msg="jvp vs finite differences",
        )
    return True


def _central_difference(jg, floats, tangents, eps):
    """[(numeric directional derivative, max |output|)] per output leaf.

    Compared at two step sizes: where they disagree the function jumps there
    (a cond predicate that rounding flips, e.g. a sum that is zero in exact
    arithmetic), and finite differences say nothing about the jvp."""
    plus = jg(*[x + eps * t for x, t in zip(floats, tangents)])
    minus = jg(*[x - eps * t for x, t in zip(floats, tangents)])
    return [
        ((p - m) / (2 * eps), np.abs(p).max(initial=0))
        for p, m in zip(_leaves(plus), _leaves(minus))
    ]


def _tagged(program, rng):
    """A copy of `program` in which some float values, in every block (jit,
    cond, loop, checkpoint, vmap and grad bodies too), are re-bound tagged:
    `v = checkpoint_name(v, "nK")`. Returns (the copy, the names)."""
    tagged, names = copy.deepcopy(program), []
    for block in list(blocks(tagged.body)):
        stmts = []
        for stmt in block.stmts:
            stmts.append(stmt)
            floats = [t for t in stmt.targets if t.kind == "f"]
            if floats and rng.random() < 0.4:
                v = floats[int(rng.integers(len(floats)))]
                names.append(f"n{len(names)}")
                tag = f'olympus.ad_checkpoint.checkpoint_name({v.name}, "{names[-1]}")'
                stmts.append(Stmt([v], tag, [v.name]))
        block.stmts = stmts
    return tagged, names


def _pullback(f):
    """xs -> (f(xs), vjp(f)(cts)): cotangents fixed by the outputs' shapes."""

    def run(*xs):
        outs, vjp_fun = olympus.vjp(f, *xs)
        cts = tuple(
            np.cos(np.arange(o.size) + 0.5).reshape(o.shape).astype(o.dtype)
            for o in outs
        )
        return outs, vjp_fun(cts)

    return run


def check_checkpoint_names(program) -> None:
    """The program with some values tagged by `checkpoint_name` (chosen from
    the seed with the check's own RNG, so the generator's stream and every
    seed's program stay as they were), checkpointed whole (or its jitted
    call) under save_only_these_names / save_any_names_but_these of some of
    the names: its value and pullback equal the untagged program's."""
    fun, args = program.function(), program.arguments()
    g, floats = _float_part(program, fun, args)
    if not floats or not program.reverse_differentiable():
        return False
    rng = np.random.default_rng([program.seed, 17])
    tagged, names = _tagged(program, rng)
    if not names:
        return False
    chosen = tuple(n for n in names if rng.random() < 0.5)
    which = (
        "save_only_these_names" if rng.random() < 0.5 else "save_any_names_but_these"
    )
    policy = getattr(olympus.checkpoint_policies, which)(*chosen)
    # Half the time the tags are all inside a jitted call in the checkpoint.
    jitted = bool(rng.random() < 0.5)
    body = olympus.jit(tagged.function()) if jitted else tagged.function()
    h, _ = _float_part(tagged, olympus.checkpoint(body, policy=policy), args)
    what = (
        f"checkpoint({'jit(program)' if jitted else 'program'}, "
        f"policy={which}{chosen}) of\n{tagged.source()}"
    )
    # By the NumPy interpreter, and the tagged pullback compiled half the
    # time: XLA compiles are most of the check's cost.
    plain = reference_call(_pullback(g), *floats)
    if rng.random() < 0.5:
        got, what = olympus.jit(_pullback(h))(*floats), "jit of " + what
    else:
        got = reference_call(_pullback(h), *floats)
    _close(got, plain, what)
    return True


CHECKS = {
    "eager == jit == reference": check_eager_jit_reference,
    "stepped == jit": check_stepper,
    "IR checks and round-trips": check_ir,
    "vmap == stacked": check_vmap,
    "<vjp(ct), t> == <ct, jvp(t)>": check_jvp_vjp,
    "optimizer on == off": check_optimizer,
    "tiered == compiled": check_tiered,
    "classic emitter == fusion emitters": check_classic_emitter,
    "interpreter memory reuse == ordinary": check_interpreter_memory,
    "jvp == finite differences (x64)": check_finite_differences,
    "checkpoint_name policies == untagged": check_checkpoint_names,
}


# ---- JAX 0.10.2 as the oracle ---------------------------------------------------------
# Per float dtype: the tolerance of a whole program's values (its ops' roundings add up).
JAX_TOLERANCE = {"float64": 1e-9, "float32": 2e-4, "float16": 1e-2, "bfloat16": 6e-2}
OLYMPUS_ONLY = ("max_steps=", "memory_budget(")  # arguments JAX does not take


def _against_jax(what: str, program_of_ns, args, tolerance: float) -> None:
    """program_of_ns(ns, *args) under olympus and JAX: no difference."""
    import jax_oracle  # tests/ is on sys.path (test_fuzz and benchmarks put it there)

    ours, theirs = jax_oracle.run_both(program_of_ns, *args)
    found = jax_oracle.differences(ours, theirs, rtol=tolerance, atol=tolerance)
    assert not found, f"{what}: olympus and JAX 0.10.2 differ:\n  " + "\n  ".join(
        found[:6]
    )
    return ours


def _cotangents(outs) -> tuple:
    """Fixed cotangents shaped and typed like the outputs."""
    return tuple(
        np.cos(np.arange(np.size(o)) + 0.5)
        .reshape(np.shape(o))
        .astype(np.asarray(o).dtype)
        for o in outs
    )


def check_jax_oracle(program) -> None:
    """The program, its vmap (two examples stacked, some inputs shared) and its
    pullback (fixed cotangents) give JAX's values, dtypes, weak types and
    shapes, and raise where JAX raises; with the program's x64 setting in both;
    so do its gradients with Python float arguments, where the program has
    them (edge_programs.PYTHON_FLOAT_RATE). Programs with olympus-only
    arguments do not apply."""
    import jax_oracle

    if any(word in program.source() for word in OLYMPUS_ONLY):
        return False
    tolerance = JAX_TOLERANCE[getattr(program, "float_dtype", "float32")]
    with jax_oracle.x64(getattr(program, "x64", False)):
        args = program.arguments()
        # Each system's own Arrays: on NumPy inputs `a * a` would be NumPy's op.
        ours = _against_jax(
            "program",
            lambda ns, *xs: program.function_in(ns)(*map(ns.jnp.asarray, xs)),
            args,
            tolerance,
        )
        batched, axes = _batched_arguments(program)
        _against_jax(
            f"vmap(program, in_axes={axes})",
            lambda ns, *xs: ns.vmap(program.function_in(ns), in_axes=axes)(*xs),
            batched,
            tolerance,
        )
        if isinstance(ours, jax_oracle.Raised) or not program.float_inputs():
            return True
        if program.reverse_differentiable():
            cts = _cotangents(ours)

            def pullback(ns, *floats):
                g, _ = _float_part(program, program.function_in(ns), args)
                return ns.vjp(g, *floats)[1](cts)

            floats = [args[i] for i in program.float_inputs()]
            _against_jax("vjp(program)(cts)", pullback, floats, tolerance)
            if getattr(program, "python_floats", None):
                _against_jax_with_python_floats(program, cts, tolerance)
    return True


def _against_jax_with_python_floats(program, cts, tolerance: float) -> None:
    """Some scalar inputs as Python floats (weakly typed): the program under
    jit, grad (eager) of its summed outputs, and under jit value_and_grad of
    that sum and grad of the outputs weighted by `cts` (strong arrays), all
    with respect to every float input, give JAX's values, dtypes and weak
    types."""
    args, argnums = program.python_arguments(), program.python_float_argnums()

    def run(ns, *xs):
        f = program.function_in(ns)
        plain = lambda *xs: sum(ns.jnp.sum(o) for o in f(*xs))  # noqa: E731
        weighted = lambda *xs: sum(ns.jnp.sum(o * w) for o, w in zip(f(*xs), cts))  # noqa: E731

        def jitted(*xs):
            return (
                f(*xs),
                ns.value_and_grad(plain, argnums)(*xs),
                ns.grad(weighted, argnums)(*xs),
            )

        return ns.grad(plain, argnums)(*xs), ns.jit(jitted)(*xs)

    what = f"grad and jit(value_and_grad) with Python floats {program.python_floats}"
    try:
        _against_jax(what, run, args, tolerance)
    except AssertionError as error:
        lines = str(error).splitlines()[1:]
        if lines and all(": weak_type " in line for line in lines):
            raise PythonFloatWeakTypes(str(error)) from None
        raise


class PythonFloatWeakTypes(AssertionError):
    """Only weak types differ, in the gradients (or values) of a program
    called with Python floats: a known difference (docs/differences.md,
    "Weak types with Python float arguments"); test_fuzz marks it xfail.
    Values and dtypes still have to agree."""


JAX_CHECKS = {
    "olympus == JAX 0.10.2 (value, vmap, vjp, grad of Python floats)": check_jax_oracle
}


def run_checks(program) -> tuple[int, list]:
    """(checks that applied, [(check name, error)]) for one program."""
    applied, failures = 0, []
    for name, check in CHECKS.items():
        try:
            applied += check(program) is not False
        except Exception as error:  # noqa: BLE001  (any error is a finding)
            applied += 1
            failures.append((name, error))
    return applied, failures


# ---- shrinking ------------------------------------------------------------------------
def _cut(program, block_index: int, stmt_index: int):
    """The statement's results become program inputs (same names and types)."""
    cut = copy.deepcopy(program)
    block = list(blocks(cut.body))[block_index]
    stmt = block.stmts.pop(stmt_index)
    cut.inputs = cut.inputs + [t for t in stmt.targets]
    return dead_code_eliminated(cut)


def _candidates(program):
    if len(program.outputs) > 1:
        for out in program.outputs:
            smaller = copy.deepcopy(program)
            smaller.outputs = [out]
            smaller.body.result, smaller.body.result_uses = f"({out.name},)", [out.name]
            yield dead_code_eliminated(smaller)
    for b, block in enumerate(blocks(program.body)):
        for i in range(len(block.stmts)):
            yield _cut(program, b, i)


def shrink(program, still_fails, budget: int = 40):
    """Greedy: take the first smaller program that still fails, until none does."""
    current = dead_code_eliminated(copy.deepcopy(program))
    while budget > 0:
        for candidate in _candidates(current):
            budget -= 1
            if still_fails(candidate):
                current = candidate
                break
            if budget <= 0:
                break
        else:
            break
    return current
