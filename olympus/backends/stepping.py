"""Running a program equation by equation: the step debugger's engine and
NaN provenance.

`ProgramStepper(closed, args)` runs an olympuspr one equation at a time on
the eager path: each equation's primitive runs through its `impl`, the same
per-primitive XLA executables eager mode uses, so every value equals what
eager mode computes (and what `jit` computes, up to XLA's fusion of
floating-point operations). The NumPy interpreter of `backends/reference` is
not used: its numbers can differ from XLA's in the last digits.

Stepping *into* an equation runs its sub-program equation by equation too:
the taken branch of `cond`, each iteration of `while` (its condition program,
then its body) and `scan`, and the callee of `pjit`, `checkpoint` and the
custom-derivative calls (their primal function). Which bodies run, on what,
is the evaluation loop's per-kind rule (olympus/ir/evaluation.py
`program_rules`, shared with the NumPy backends); the stepper runs each body
it asks for in a frame of its own. Primitives are known by name, as the
reference interpreter knows them, so this module sits below `lax`.

Values are keyed by the names `print(closed)` gives the variables (the
printer's `VarNames`; names are unique across the whole print, sub-programs
included). A variable inside a loop body has one value per iteration, keyed
`name[i]` (`q[0]`, `q[1]`, ...; the index of the scanned slice for `scan`,
the trip count from 0 for `while`, `x[2][0]` inside nested loops). A
sub-program shared by several equations (the same jitted function called
twice) keys its second call's values `name#2`, and so on.
"""

from __future__ import annotations

import difflib
import linecache
import os
from collections.abc import Callable, Iterator, Sequence
from html import escape
from typing import NamedTuple

import numpy as np

from olympus.backends.xla.array import to_device
from olympus.ir.core import ClosedOlympuspr, Eqn, Literal, Olympuspr, Primitive, Var
from olympus.ir.html import array_html, scoped
from olympus.ir.evaluation import program_rules
from olympus.ir.printer import (
    DROPPED,
    VarNames,
    pp_eqn,
    pp_literal,
    pp_olympuspr,
    pp_param,
    pp_type,
)
from olympus.tracer import core

_NEIGHBOURS = 2  # equations shown before and after the current one


# ---- errors ---------------------------------------------------------------------------
class StepperError(Exception):
    """A request the stepper cannot follow."""


class UnknownVariableError(StepperError, KeyError):
    """A variable name that has no value: not in the program, or not computed yet."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0])


class NotInProgramError(StepperError, LookupError):
    """`continue_to` asked for a primitive or line no equation has."""


class ProgramFinishedError(StepperError, IndexError):
    """A step past the program's last equation."""


class StepperTraceError(StepperError, TypeError):
    """The stepper runs programs eagerly; it cannot run inside a transform."""


# ---- values ---------------------------------------------------------------------------
def _host(value) -> np.ndarray:
    return np.asarray(value)


def is_finite(value) -> bool:
    x = _host(value)
    return x.dtype.kind not in "fc" or bool(np.isfinite(x).all())


def has_nan(value) -> bool:
    x = _host(value)
    return x.dtype.kind in "fc" and bool(np.isnan(x).any())


def summarize(value) -> str:
    """`f32[3] min=-1.0 max=2.0`, `f32[3] 1 NaN of 3; finite ones min=...`: what a
    value holds, in one line."""
    x = _host(value)
    aval_text = f"{x.dtype.name}{list(x.shape)}"
    type_text = getattr(getattr(value, "aval", None), "str_short", lambda: aval_text)()
    if x.size == 0:
        return f"{type_text} (empty)"
    if x.dtype.kind not in "biufc":
        return type_text
    if x.size == 1:
        return f"{type_text} {x.reshape(())[()]!s}"
    finite = x[np.isfinite(x)] if x.dtype.kind in "fc" else x
    counts = []
    if x.dtype.kind in "fc":
        nans, infs = int(np.isnan(x).sum()), int(np.isinf(x).sum())
        counts = [f"{n} {what}" for n, what in ((nans, "NaN"), (infs, "Inf")) if n]
    real = finite.real if x.dtype.kind == "c" else finite
    span = f"min={real.min()!s} max={real.max()!s}" if finite.size else ""
    if not counts:
        return f"{type_text} {span}"
    text = f"{type_text} {' and '.join(counts)} of {x.size}"
    return text + (f"; finite ones {span}" if span else "")
    return text


class Values(dict):
    """The values computed so far, by printed name (`q[2]`: iteration 2 of a loop
    body; olympus/backends/stepping.py); a name with no value raises
    UnknownVariableError naming close ones."""

    def __init__(self, stepper: ProgramStepper):
        super().__init__()
        self._stepper = stepper

    def __missing__(self, key):
        raise UnknownVariableError(self._stepper._missing_message(key))


class Step(NamedTuple):
    """One equation that ran: where, its operands and its results, by key."""

    eqn: Eqn
    path: tuple[str, ...]
    in_keys: tuple
    ins: tuple
    out_keys: tuple
    outs: tuple

    def nonfinite(self, nan_only: bool = False) -> bool:
        test = has_nan if nan_only else (lambda v: not is_finite(v))
        return any(test(v) for v in self.outs)


class Frame:
    """A program being run: which equation is next, its variables' values."""

    __slots__ = ("program", "label", "qualifier", "index", "env", "keys")

    def __init__(self, program: Olympuspr, label: str, qualifier: str):
        self.program = program
        self.label = label
        self.qualifier = qualifier
        self.index = 0
        self.env: dict = {}
        self.keys: dict = {}  # Var -> the key its value has in `values`


# ---- the stepper ----------------------------------------------------------------------
class ProgramStepper:
    """Runs `closed` on `args` (flat: one per invar) one equation at a time.

    The position is the equation about to run (`current`); `step()` runs it
    whole, `step_into()` enters its sub-program, `continue_to(...)` runs (into
    every sub-program) until an equation matches, `finish()` runs the rest.
    `values` holds every value computed so far, `last` the equation that just
    ran (a `Step`), `outputs` the program's results once `finished`.
    """

    def __init__(self, closed: ClosedOlympuspr, args: Sequence, title: str = "program"):
        if core.current_trace() is not core.eval_trace:
            raise StepperTraceError(
                "the stepper runs a program eagerly, equation by equation; call it "
                "outside jit, grad, vmap and other transforms"
            )
        self.closed = closed
        self.title = title
        self.names = VarNames()
        pp_olympuspr(closed, names=self.names)  # names exactly as print(closed)
        self.values = Values(self)
        self.last: Step | None = None
        self.outputs: list | None = None
        self.finished = False
        self.failed: BaseException | None = None
        self._ran: list[Step] = []
        self.frames: list[Frame] = []
        self._calls: dict = {}
        self._producer: dict[str, Step] = {}
        self._origin: dict[str, str] = {}
        args = list(args)
        if len(args) != len(closed.olympuspr.invars):
            raise TypeError(
                f"the program takes {len(closed.olympuspr.invars)} arguments, "
                f"got {len(args)}"
            )
        self._run_gen = self._call(closed, args, [None] * len(args), title, "")
        self._advance(None)

    # -- moving -----------------------------------------------------------------------
    def _advance(self, enter: bool | None) -> None:
        self._ran = []  # the equations this move completes (a loop's last body ones too)
        try:
            self._run_gen.send(enter)
        except StopIteration as stop:
            self.outputs, _ = stop.value
            self.finished = True
            self.frames = []
        except BaseException as err:  # an equation failed: the run cannot go on
            self.failed, self.finished, self.frames = err, True, []
            raise

    def _check_running(self, what: str) -> None:
        if self.failed is not None:
            raise ProgramFinishedError(
                f"{what}: the program stopped at an error: {type(self.failed).__name__}: "
                f"{self.failed}"
            )
        if self.finished:
            raise ProgramFinishedError(
                f"{what}: the program has finished (its {len(self.closed.olympuspr.eqns)} "
                f"equations ran); outputs: {self._outputs_text()}"
            )

    def step(self) -> ProgramStepper:
        """Runs the current equation whole (a loop or call at once), stops at the next."""
        self._check_running("step")
        self._advance(False)
        return self

    def step_into(self) -> ProgramStepper:
        """Like `step`, but a `cond`, loop or call runs its sub-program equation by
        equation: the next position is its first equation."""
        self._check_running("step_into")
        self._advance(True)
        return self

    def continue_to(
        self,
        primitive: str | Primitive | None = None,
        line: int | str | None = None,
        condition: Callable[[ProgramStepper], bool] | None = None,
    ) -> ProgramStepper:
        """Runs (into sub-programs) until the equation about to run is a `primitive`
        (a name or a Primitive), comes from source `line` (a number, or
        `"file.py:12"`), and `condition(stepper)` holds: each given criterion must
        match. If none matches, the program runs to its end (`finished`)."""
        self._check_running("continue_to")
        tests = []
        if primitive is not None:
            name = (
                primitive.name if isinstance(primitive, Primitive) else str(primitive)
            )
            self._check_known("primitive", name, self._primitive_names())
            tests.append(lambda s: s.current.eqn.primitive.name == name)
        if line is not None:
            match_line = self._line_matcher(line)
            tests.append(lambda s: match_line(s.current.eqn.source_info))
        if condition is not None:
            tests.append(condition)
        if not tests:
            raise TypeError("continue_to: give a primitive, a line or a condition")
        self._advance(True)
        while not self.finished and not all(test(self) for test in tests):
            self._advance(True)
        return self

    def continue_to_nonfinite(self, nan_only: bool = False) -> ProgramStepper:
        """Runs (into sub-programs) until an equation produces a NaN or an Inf (only
        a NaN with `nan_only`); it is then `last` (the position is the equation
        after it, which may be after its loop). Runs to the end if none does."""
        self._check_running("continue_to_nonfinite")
        while not self.finished:
            self._advance(True)
            found = next((step for step in self._ran if step.nonfinite(nan_only)), None)
            if found is not None:
                self.last = found
                break
        return self

    def finish(self) -> list:
        """Runs the rest of the program and returns its outputs."""
        while not self.finished:
            self._advance(False)
        return self.outputs

    def run_all(self) -> list:
        """Runs the rest, stepping into every sub-program (so `values` holds every
        intermediate); returns the outputs."""
        while not self.finished:
            self._advance(True)
        return self.outputs

    # -- where we are -------------------------------------------------------------------
    @property
    def current(self) -> Position | None:
        """The equation about to run (None once finished)."""
        if self.finished:
            return None
        frame = self.frames[-1]
        return Position(self, frame, frame.index)

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(f.label for f in self.frames)

    def __str__(self) -> str:
        lines = []
        if self.last is not None:
            lines.append(f"ran: {self.eqn_text(self.last.eqn)}")
            lines += [
                f"  {k} = {summarize(v)}"
                for k, v in zip(self.last.out_keys, self.last.outs)
            ]
        if self.finished:
            lines.append(f"finished; outputs: {self._outputs_text()}")
        else:
            lines.append(str(self.current))
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return scoped("olympus-stepper", self._html_body())

    def _html_body(self) -> str:
        parts = []
        if self.last is not None:
            parts.append(
                f"<div>ran: <code>{escape(self.eqn_text(self.last.eqn))}</code></div>"
            )
            for key, value in zip(self.last.out_keys, self.last.outs):
                x = _host(value)
                parts.append(
                    f"<div><code>{escape(key)}</code> = "
                    f"{array_html(x, getattr(value, 'aval', x.dtype).__str__())}</div>"
                )
        if self.finished:
            parts.append(
                f"<div>finished; outputs: {escape(self._outputs_text())}</div>"
            )
        else:
            parts.append(self.current._html_body())
        return "\n".join(parts)

    def _outputs_text(self) -> str:
        return ", ".join(summarize(v) for v in self.outputs or [])

    # -- printing equations -------------------------------------------------------------
    def eqn_text(self, eqn: Eqn) -> str:
        """The equation as printed; sub-programs shown as `{…}` (one line)."""
        if not any(_programs(v) for v in eqn.params.values()):
            return pp_eqn(eqn, self.names, dead=frozenset(self.names.dropped))
        lhs = " ".join(
            f"{DROPPED if v in self.names.dropped else self.names(v)}:{pp_type(v.aval)}"
            for v in eqn.outvars
        )
        params = []
        for key, value in sorted(eqn.params.items()):
            programs = _programs(value)
            if not programs:
                params.append(f"{key}={pp_param(value, self.names)}")
            elif isinstance(value, tuple):
                params.append(f"{key}=({' '.join('{…}' for _ in programs)})")
            else:
                params.append(f"{key}={{…}}")
        args = " ".join(pp_eqn_atom(a, self.names) for a in eqn.invars)
        return f"{lhs} = {eqn.primitive.name}[{' '.join(params)}] {args}".rstrip()

    # -- running ------------------------------------------------------------------------
    def _key(self, frame: Frame, var) -> str | None:
        if isinstance(var, Literal):
            return None
        if var in self.names.dropped:  # printed `_`: nothing reads it
            return DROPPED
        return self.names(var) + frame.qualifier

    def _bind(self, frame: Frame, variables, vals, sources) -> list:
        keys = []
        for var, value, source in zip(variables, vals, sources):
            value = to_device(value, var.aval) if not hasattr(value, "aval") else value
            frame.env[var] = value
            key = frame.keys[var] = self._key(frame, var)
            if key != DROPPED:
                self.values[key] = value
            if source is not None:
                self._origin[key] = source
            keys.append(key)
        return keys

    def _call(
        self,
        closed: ClosedOlympuspr,
        args: list,
        arg_keys: list,
        label: str,
        qualifier: str,
    ):
        """Generator: runs `closed` in a new frame; returns (outputs, output keys)."""
        program = closed.olympuspr
        frame = Frame(program, label, qualifier)
        self.frames.append(frame)
        self._bind(frame, program.constvars, closed.consts, [None] * len(closed.consts))
        self._bind(frame, program.invars, args, arg_keys)
        for i, eqn in enumerate(program.eqns):
            frame.index = i
            enter = yield
            ins = [
                x.bind_value() if isinstance(x, Literal) else frame.env[x]
                for x in eqn.invars
            ]
            in_keys = [
                frame.keys.get(x) if isinstance(x, Var) else None for x in eqn.invars
            ]
            if enter and eqn.primitive.name in program_rules:
                outs, sources = yield from _enter(self, frame, eqn, ins, in_keys)
            else:
                outs, sources = self._apply(eqn, ins), [None] * len(eqn.outvars)
            out_keys = self._bind(frame, eqn.outvars, outs, sources)
            self.last = Step(
                eqn,
                self.path,
                tuple(in_keys),
                tuple(ins),
                tuple(out_keys),
                tuple(frame.env[v] for v in eqn.outvars),
            )
            self._ran.append(self.last)
            for key in out_keys:
                self._producer[key] = self.last
        frame.index = len(program.eqns)
        outs = [
            x.bind_value() if isinstance(x, Literal) else frame.env[x]
            for x in program.outvars
        ]
        out_keys = [
            frame.keys.get(x) if isinstance(x, Var) else None for x in program.outvars
        ]
        self.frames.pop()
        return outs, out_keys

    def _apply(self, eqn: Eqn, ins: list) -> list:
        """The equation on the eager path (its primitive's impl, as eager mode runs it)."""
        primitive = eqn.primitive
        with core.replaying(eqn.source_info):
            if primitive.impl is None:
                outs = primitive.bind(*ins, **eqn.params)
            else:
                outs = primitive.impl(*ins, **eqn.params)
        return list(outs) if primitive.multiple_results else [outs]

    def _sub_qualifier(self, frame: Frame, programs: Sequence) -> str:
        """`#n` for the n-th run of the same sub-program(s) outside loops."""
        key = (tuple(id(p) for p in programs), frame.qualifier)
        n = self._calls[key] = self._calls.get(key, 0) + 1
        return frame.qualifier + (f"#{n}" if n > 1 else "")

    # -- errors and lookups -------------------------------------------------------------
    def _all_names(self) -> dict[str, Var]:
        return {name: var for var, name in self.names.as_dict().items()}

    def _missing_message(self, key) -> str:
        key = str(key)
        names = self._all_names()
        iterations = [
            k for k in self.values if k.startswith(key + "[") or k.startswith(key + "#")
        ]
        if iterations:
            shown = ", ".join(iterations[:6]) + (", ..." if len(iterations) > 6 else "")
            return (
                f"{key} has several values (it is inside a loop or a repeated call), "
                f"keyed {shown}"
            )
        base = key.split("[")[0].split("#")[0]
        if base in names:
            where = self._defining_eqn(names[base])
            what = f" (made by `{self.eqn_text(where)}`)" if where is not None else ""
            state = "has not run yet" if not self.finished else "did not run"
            return f"variable {key}{what} {state}; it has no value"
        close = difflib.get_close_matches(
            key, list(names) + list(self.values), n=6, cutoff=0.5
        )
        hint = f"; close names: {', '.join(close)}" if close else ""
        return (
            f"no variable {key!r} in the program (names are those print(program) "
            f"shows{hint})"
        )

    def _defining_eqn(self, var: Var) -> Eqn | None:
        for eqn in _walk_eqns(self.closed.olympuspr):
            if var in eqn.outvars:
                return eqn
        return None

    def _primitive_names(self) -> set[str]:
        return {eqn.primitive.name for eqn in _walk_eqns(self.closed.olympuspr)}

    def _check_known(self, what: str, name: str, known) -> None:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=5, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise NotInProgramError(
                f"continue_to: no {what} {name!r} in the program ({what}s: "
                f"{', '.join(sorted(known))}){hint}"
            )

    def _line_matcher(self, line: int | str) -> Callable:
        if isinstance(line, str) and ":" in line:
            file, _, number = line.rpartition(":")
            number = int(number)

            def match(info):
                return (
                    info is not None
                    and info.line == number
                    and (info.file == file or os.path.basename(info.file) == file)
                )
        else:
            number = int(line)

            def match(info):
                return info is not None and info.line == number

        lines = {
            f"{os.path.basename(e.source_info.file)}:{e.source_info.line}"
            for e in _walk_eqns(self.closed.olympuspr)
            if e.source_info is not None
        }
        if not any(match(e.source_info) for e in _walk_eqns(self.closed.olympuspr)):
            self._check_known("line", str(line), lines)
        return match

    # -- provenance ---------------------------------------------------------------------
    def _resolve(self, key: str) -> str:
        seen = set()
        while key in self._origin and key not in seen:
            seen.add(key)
            key = self._origin[key]
        return key

    def root_cause(self, step: Step) -> tuple[Step | None, str | None]:
        """Follows `step`'s non-finite operands back to the first equation that
        made one from finite operands (or to the argument that held one)."""
        for _ in range(10_000):
            bad = [
                k
                for k, v in zip(step.in_keys, step.ins)
                if k is not None and not is_finite(v)
            ]
            if not bad:
                return step, None
            key = self._resolve(bad[0])
            producer = self._producer.get(key)
            if producer is None or producer is step:
                return None, key
            step = producer
        return step, None


def pp_eqn_atom(atom, names: VarNames) -> str:
    return pp_literal(atom) if isinstance(atom, Literal) else names(atom)


def _programs(value) -> list:
    values = value if isinstance(value, tuple) else (value,)
    return [v for v in values if isinstance(v, (ClosedOlympuspr, Olympuspr))]


def _walk_eqns(program: Olympuspr) -> Iterator[Eqn]:
    for eqn in program.eqns:
        yield eqn
        for value in eqn.params.values():
            for sub in _programs(value):
                yield from _walk_eqns(
                    sub.olympuspr if isinstance(sub, ClosedOlympuspr) else sub
                )


def source_line_text(info) -> str:
    """The user's line of code itself (empty when the file cannot be read)."""
    if info is None:
        return ""
    return linecache.getline(info.file, info.line).strip()


class Position:
    """An equation about to run, in its program; `str` shows it with its
    neighbours, the frames around it and the user's source line."""

    def __init__(self, stepper: ProgramStepper, frame: Frame, index: int):
        self.stepper = stepper
        self.frame = frame
        self.index = index
        self.eqn: Eqn = frame.program.eqns[index]
        self.path = stepper.path

    @property
    def source_info(self):
        return self.eqn.source_info

    def _rows(self) -> list[tuple[bool, str, str]]:
        eqns = self.frame.program.eqns
        lo, hi = (
            max(0, self.index - _NEIGHBOURS),
            min(len(eqns), self.index + _NEIGHBOURS + 1),
        )
        rows = []
        for i in range(lo, hi):
            info = eqns[i].source_info
            where = "" if info is None else f"{os.path.basename(info.file)}:{info.line}"
            rows.append((i == self.index, self.stepper.eqn_text(eqns[i]), where))
        return rows

    def __str__(self) -> str:
        eqns = self.frame.program.eqns
        head = " > ".join(self.path) + f"  (equation {self.index + 1} of {len(eqns)})"
        rows = self._rows()
        width = min(60, max(len(text) for _, text, _ in rows))
        lines = [head]
        for here, text, where in rows:
            lines.append(
                f"{'->' if here else '  '} {text:<{width}}  {'# ' + where if where else ''}".rstrip()
            )
        info = self.eqn.source_info
        if info is not None:
            code = source_line_text(info)
            lines.append(f"source: {info}" + (f"\n    {code}" if code else ""))
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return scoped("olympus-position", self._html_body())

    def _html_body(self) -> str:
        eqns = self.frame.program.eqns
        head = (
            escape(" > ".join(self.path))
            + f" (equation {self.index + 1} of {len(eqns)})"
        )
        here_class = ' class="olympus-here"'
        body = "".join(
            f"<tr{here_class if here else ''}>"
            f"<td>{'&rarr;' if here else ''}</td><td><code>{escape(text)}</code></td>"
            f'<td class="source">{escape(where)}</td></tr>'
            for here, text, where in self._rows()
        )
        info = self.eqn.source_info
        code = source_line_text(info)
        source = (
            ""
            if info is None
            else (f"<div>source: {escape(str(info))}<pre>{escape(code)}</pre></div>")
        )
        return (
            f'<div>{head}</div><div class="olympus-scroll">'
            f'<table class="olympus-table"><tbody>{body}</tbody></table></div>{source}'
        )


# ---- stepping into sub-programs ------------------------------------------------------
# rule(stepper, frame, eqn, operands, operand keys) -> generator returning
# (outputs, the key each output's value comes from, or None)
def _label(eqn: Eqn, text: str) -> str:
    """`scan iteration 2 (f.py:8)`: a frame, with its equation's line."""
    info = eqn.source_info
    return (
        text if info is None else f"{text} ({os.path.basename(info.file)}:{info.line})"
    )


class _Keyed:
    """A value in the stepper's higher-order rules (olympus/ir/evaluation.py
    `program_rules`): the device value and the key its value has in
    `values` (None for one made here, a scan's stacked rows)."""

    __slots__ = ("value", "key", "_host")

    def __init__(self, value, key):
        self.value, self.key, self._host = value, key, None

    def host(self) -> np.ndarray:
        if self._host is None:
            self._host = _host(self.value)
        return self._host


class _KeyedOps:
    """How the shared higher-order rules read the stepper's values."""

    @staticmethod
    def index(v: _Keyed) -> int:
        return int(v.host())

    @staticmethod
    def truth(v: _Keyed) -> bool:
        return bool(v.host())

    @staticmethod
    def row(x: _Keyed, i: int, var) -> _Keyed:
        return _Keyed(to_device(x.host()[i], var.aval), x.key)

    @staticmethod
    def stack(rows: list, var) -> _Keyed:
        aval = var.aval
        stacked = np.stack([r.host() for r in rows]) if rows else np.zeros(aval.shape)
        return _Keyed(to_device(stacked.astype(aval.dtype, copy=False), aval), None)


def _enter(stepper: ProgramStepper, frame: Frame, eqn: Eqn, ins: list, in_keys: list):
    """Steps into a higher-order equation: its kind's shared rule says which
    bodies run on what; each runs here equation by equation, in a frame
    labelled by the rule (`scan iteration 2 (f.py:8)`) and keyed `name[i]`
    inside loops, `name#n` for a sub-program's n-th run."""
    rule = program_rules[eqn.primitive.name]
    calls = rule(_KeyedOps, eqn, [_Keyed(v, k) for v, k in zip(ins, in_keys)])
    qualifier = None
    try:
        call = next(calls)
        while True:
            if qualifier is None:
                qualifier = stepper._sub_qualifier(frame, call.family)
            q = (
                qualifier
                if call.iteration is None
                else f"{qualifier}[{call.iteration}]"
            )
            outs, keys = yield from stepper._call(
                call.body,
                [a.value for a in call.args],
                [a.key for a in call.args],
                _label(eqn, call.label),
                q,
            )
            call = calls.send([_Keyed(v, k) for v, k in zip(outs, keys)])
    except StopIteration as stop:
        results = stop.value
    return [r.value for r in results], [r.key for r in results]


# ---- NaN provenance -------------------------------------------------------------------
def _input_lines(stepper: ProgramStepper, step: Step) -> list[str]:
    lines = []
    for atom, key, value in zip(step.eqn.invars, step.in_keys, step.ins):
        name = key if key is not None else pp_eqn_atom(atom, stepper.names)
        lines.append(f"    {name}: {summarize(value)}")
    return lines


def _forward_eqn(stepper: ProgramStepper, info) -> Eqn | None:
    """The forward equation of the line a backward equation belongs to."""
    for eqn in _walk_eqns(stepper.closed.olympuspr):
        if eqn.source_info == info and not eqn.source_info.backward:
            return eqn
    return None


def nan_report(closed: ClosedOlympuspr, args: Sequence, where: str) -> str | None:
    """Runs `closed` on `args` equation by equation (into every branch, loop
    iteration and call) and describes the first equation that produced a NaN:
    its printed line, where it sits, its operands, the user's line (and, for
    a backward-pass equation, the forward line it differentiates), and the
    equation whose Inf led to it. None when no equation produces a NaN."""
    stepper = ProgramStepper(closed, args, where)
    stepper.continue_to_nonfinite(nan_only=True)
    step = stepper.last
    if step is None or not step.nonfinite(nan_only=True):
        return None
    info = step.eqn.source_info
    at = f" at {info}" if info is not None else ""
    if info is not None and info.backward:
        at += " (in the backward pass of that line)"
    lines = [
        f"invalid value (NaN) encountered in {step.eqn.primitive.name}{at} "
        f"(olympus_debug_nans is on)",
        f"  first NaN made by: {stepper.eqn_text(step.eqn)}",
        f"  in: {' > '.join(step.path)}",
    ]
    code = source_line_text(info)
    if code:
        lines.append(f"  source: {code}")
    if info is not None and info.backward:
        forward = _forward_eqn(stepper, info)
        shown = f": {stepper.eqn_text(forward)}" if forward is not None else ""
        lines.append(
            f"  in the backward pass (differentiating the forward line {info}{shown})"
        )
    if step.eqn.invars:
        lines.append("  operands:")
        lines += _input_lines(stepper, step)
    lines.append("  results:")
    lines += [f"    {k}: {summarize(v)}" for k, v in zip(step.out_keys, step.outs)]
    root, argument = stepper.root_cause(step)
    if argument is not None:
        lines.append(
            f"  the non-finite operand comes from {argument}, an input of the program"
        )
    elif root is not None and root is not step:
        rinfo = root.eqn.source_info
        rat = f" at {rinfo}" if rinfo is not None else ""
        lines.append(
            f"  its non-finite operands come from an Inf first made by "
            f"{stepper.eqn_text(root.eqn)}{rat} (in {' > '.join(root.path)})"
        )
        lines += _input_lines(stepper, root)
    return "\n".join(lines)


def raise_first_nan(closed: ClosedOlympuspr, args: Sequence, where: str) -> None:
    """FloatingPointError naming the first equation that makes a NaN (see
    `nan_report`), or saying that none does op by op (the NaN came from the
    compiled program's fusion, or from an input)."""
    report = nan_report(closed, args, where)
    if report is None:
        report = (
            f"invalid value (NaN) in the output of {where}; op by op, no "
            f"primitive produced it (olympus_debug_nans is on)"
        )
    raise FloatingPointError(report)
