"""`python -m olympus inspect`: run a function and show the programs olympus makes.

    python -m olympus inspect path/to/file.py:f --args "np.ones(3), 2.0" \\
        --mode grad --stage olympuspr --stage stablehlo --html f.html

The target is `FILE.py:FUNCTION` or `package.module:FUNCTION`. `--args` is a
Python expression evaluated with `np` (NumPy), `jnp` (olympus.numpy) and
`olympus` in scope. `--mode` picks what is run and shown: the function itself
(`eval`), `jit(f)`, `grad(f)`, `vmap(f)` or `jvp(f)` (tangents of ones); the
result is printed, then each requested stage of that computation: its
olympuspr (`--source` adds each equation's line), the optimized olympuspr that
jit lowers (`optimized`), its StableHLO, and/or the
HLO that XLA's optimiser makes of it (`hlo`).
`--html` also writes a page with the result and the olympuspr table, and
`--save` the olympuspr in `olympus.ir.save`'s format.

`--step` runs that computation's olympuspr equation by equation instead
(`olympus.debug.Stepper`), reading commands from stdin: `s` or `n` (or an
empty line) steps, `i` steps into a cond branch, loop iteration or call,
`c PRIM` continues to a primitive, `c LINE` to a source line, `c nan` to the
first equation that makes a NaN or Inf, `p VAR` prints a value (`p q[2]`:
iteration 2 of a loop body), `v` lists the values so far, `l` shows where it
is, `f` finishes, `q` (or end of input) quits.

Usage errors (a missing file or function, arguments that do not evaluate)
exit with status 2 and one line on stderr; an error inside the user's
function exits with status 1 and its message.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from html import escape
from typing import Callable

MODES = ("eval", "jit", "grad", "vmap", "jvp")
STAGES = ("olympuspr", "optimized", "stablehlo", "hlo")


class UsageError(Exception):
    """The command line names something that is not there or cannot be read."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m olympus")
    commands = parser.add_subparsers(dest="command", required=True)
    inspect = commands.add_parser(
        "inspect", help="run a function and print its programs"
    )
    inspect.add_argument("target", help="FILE.py:FUNCTION or package.module:FUNCTION")
    inspect.add_argument(
        "--args", default="", help='Python expression, e.g. "np.ones(3), 2.0"'
    )
    inspect.add_argument("--mode", choices=MODES, default="eval")
    inspect.add_argument(
        "--argnums", default="0", help='grad: which arguments (e.g. 0 or "0, 1")'
    )
    inspect.add_argument("--in-axes", default="0", help='vmap: in_axes, e.g. "0, None"')
    inspect.add_argument(
        "--stage",
        choices=STAGES,
        action="append",
        help="program(s) to print (default: olympuspr)",
    )
    inspect.add_argument(
        "--source", action="store_true", help="show each equation's source line"
    )
    inspect.add_argument("--html", metavar="OUT.html", help="also write an HTML page")
    inspect.add_argument(
        "--save", metavar="OUT.olympuspr", help="also save the olympuspr"
    )
    inspect.add_argument(
        "--step",
        action="store_true",
        help="step through the olympuspr (commands on stdin; h for help)",
    )
    return parser


# ---- finding the function and its arguments ------------------------------------
def _load_module_from_file(path: str):
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    name = "_olympus_inspect_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _load_module(where: str):
    if where.endswith(".py") or os.sep in where:
        return _load_module_from_file(where)
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as err:
        raise UsageError(f"no such file or module: {where} ({err})") from None


def load_function(target: str) -> Callable:
    """The function named by `FILE.py:FUNCTION` or `module:FUNCTION`."""
    where, sep, name = target.rpartition(":")
    if not sep or not where or not name:
        raise UsageError(
            f"target {target!r} should be FILE.py:FUNCTION or module:FUNCTION"
        )
    module = _load_module(where)
    fun = module
    for part in name.split("."):
        fun = getattr(fun, part, None)
        if fun is None:
            raise UsageError(f"{where} has no function {name!r}")
    if not callable(fun):
        raise UsageError(f"{where}:{name} is a {type(fun).__name__}, not a function")
    return fun


def _literal(text: str, flag: str):
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as err:
        raise UsageError(f"could not read {flag} {text!r}: {err}") from None


def parse_args(text: str) -> tuple:
    """The positional arguments that `--args` describes."""
    import numpy as np

    import olympus
    import olympus.numpy as jnp

    if not text.strip():
        return ()
    try:
        value = eval(f"({text},)", {"np": np, "jnp": jnp, "olympus": olympus})  # noqa: S307
    except (
        Exception
    ) as err:  # a SyntaxError, a NameError, ...: the user's text is wrong
        raise UsageError(
            f"could not evaluate --args {text!r}: {type(err).__name__}: {err}"
        ) from None
    return tuple(value)


# ---- running it in a mode ---------------------------------------------------------
def transformed(fun: Callable, mode: str, args: tuple, options=None) -> Callable:
    """The computation `mode` runs, as a function of the same arguments."""
    import numpy as np

    import olympus
    from olympus.tracer.core import aval_of

    if mode == "eval":
        return fun
    if mode == "jit":
        return olympus.jit(fun)
    if mode == "grad":
        argnums = _literal(getattr(options, "argnums", "0"), "--argnums")
        return olympus.grad(fun, argnums=argnums)
    if mode == "vmap":
        return olympus.vmap(
            fun, in_axes=_literal(getattr(options, "in_axes", "0"), "--in-axes")
        )
    # tangents of ones, of each argument's own type (a Python float is f32 here)
    tangents = tuple(np.ones(aval_of(a).shape, aval_of(a).dtype) for a in args)
    return lambda *primals: olympus.jvp(fun, primals, tangents)


def _stage_texts(computation: Callable, args: tuple, stages, source: bool):
    import olympus

    closed = olympus.make_olympuspr(computation)(*args)
    texts = {}
    if "olympuspr" in stages:
        texts["olympuspr"] = closed.pretty(source_info=source)
    if "optimized" in stages:  # the program jit lowers, after the optimizer
        optimized = olympus.make_olympuspr(computation, optimize=True)(*args)
        texts["optimized"] = optimized.pretty(source_info=source)
    if "stablehlo" in stages or "hlo" in stages:
        jitted = computation
        if not isinstance(computation, olympus.api.JitFunction):
            jitted = olympus.jit(computation)
        lowered = jitted.lower(*args)
        texts["stablehlo"] = lowered.as_text()
        if "hlo" in stages:
            texts["hlo"] = lowered.compile().as_text()
    return closed, texts


def _html_page(title: str, result, closed, texts: dict) -> str:
    parts = [
        f"<html><head><meta charset='utf-8'><title>{escape(title)}</title></head><body>",
        f"<h1>{escape(title)}</h1>",
        "<h2>result</h2>",
        f"<pre>{escape(repr(result))}</pre>",
        "<h2>olympuspr</h2>",
        closed._repr_html_(),
    ]
    for stage in ("optimized", "stablehlo", "hlo"):
        if stage in texts:
            parts += [f"<h2>{stage}</h2>", f"<pre>{escape(texts[stage])}</pre>"]
    return "\n".join(parts + ["</body></html>"])


STEP_HELP = """commands:
  s, n, <empty>   run the current equation (a cond, loop or call whole)
  i               step into a cond branch, loop iteration or call
  c PRIM          continue to the next equation of primitive PRIM
  c LINE          continue to source line LINE (a number or FILE.py:NUMBER)
  c nan           continue to the first equation that makes a NaN or Inf
  p VAR           print the value of VAR (q[2]: iteration 2 of a loop body)
  v               list the values computed so far
  l               show where the stepper is
  f               run to the end and print the result
  q               quit"""


def _continue(stepper, arg: str):
    """`c ARG`: to a primitive, a line (N or file:N) or the first non-finite value."""
    if not arg:
        return "c needs a primitive, a line or 'nan' (h for help)"
    if arg.lower() in ("nan", "inf", "nonfinite"):
        return stepper.continue_to_nonfinite()
    if arg.isdigit() or (":" in arg and arg.rpartition(":")[2].isdigit()):
        return stepper.continue_to(line=int(arg) if arg.isdigit() else arg)
    return stepper.continue_to(primitive=arg)


def _values(stepper, arg: str) -> str:
    from olympus.backends.stepping import summarize

    return "\n".join(f"{key}: {summarize(v)}" for key, v in stepper.values.items())


# Each stepper command: its spellings and what it prints.
_STEP_COMMANDS = (
    (("", "s", "n", "step", "next"), lambda stepper, arg: stepper.step()),
    (("i", "into"), lambda stepper, arg: stepper.step_into()),
    (("c", "continue"), _continue),
    (("p", "print"), lambda stepper, arg: f"{arg} = {stepper.values[arg]!r}"),
    (("v", "values"), _values),
    (("l", "w", "where"), lambda stepper, arg: stepper),
    (("f", "finish"), lambda stepper, arg: f"result:\n{stepper.finish()!r}"),
    (("h", "help", "?"), lambda stepper, arg: STEP_HELP),
)


def _step_command(stepper, command: str, arg: str) -> bool:
    """Runs one stepper command, printing what it shows; False to quit."""
    if command in ("q", "quit", "exit"):
        return False
    for spellings, run in _STEP_COMMANDS:
        if command in spellings:
            shown = run(stepper, arg)
            if shown != "" or command not in ("v", "values"):
                print(shown)
            return True
    print(f"unknown command {command!r}\n{STEP_HELP}")
    return True


def step(computation: Callable, args: tuple, title: str, commands=None) -> int:
    """The `--step` loop: commands from `commands` (default stdin) until `q` or
    their end; a stepper error (an unknown name, a step past the end) is
    printed and the loop goes on."""
    from olympus.debug import Stepper, StepperError

    commands = sys.stdin if commands is None else commands
    stepper = Stepper(computation, *args)
    print(f"stepping {title}:\n{stepper.closed}\n")
    print(stepper)
    while True:
        print("(olympus step) ", end="", flush=True)
        line = commands.readline()
        if not line:
            print()
            return 0
        command, _, arg = line.strip().partition(" ")
        try:
            if not _step_command(stepper, command, arg.strip()):
                return 0
        except StepperError as err:
            print(f"{type(err).__name__}: {err}")


def inspect(options) -> int:
    fun = load_function(options.target)
    args = parse_args(options.args)
    computation = transformed(fun, options.mode, args, options)
    if options.step:
        return step(computation, args, f"{options.mode} of {options.target}")
    stages = options.stage or ["olympuspr"]
    title = f"{options.mode} of {options.target}"
    result = computation(*args)
    closed, texts = _stage_texts(computation, args, stages, options.source)
    print(f"result ({title}):\n{result!r}")
    for stage in stages:
        print(f"\n{stage}:\n{texts[stage]}")
    if options.html:
        with open(options.html, "w", encoding="utf-8") as out:
            out.write(_html_page(title, result, closed, texts))
    if options.save:
        from olympus.ir import save

        save(closed, options.save)
    return 0


def main(argv=None) -> int:
    options = _parser().parse_args(argv)
    try:
        return inspect(options)
    except UsageError as err:
        print(f"python -m olympus inspect: error: {err}", file=sys.stderr)
        return 2
    except (
        Exception
    ) as err:  # the user's function failed: show its message, not our stack
        print(
            f"python -m olympus inspect: {type(err).__name__}: {err}", file=sys.stderr
        )
        return 1
