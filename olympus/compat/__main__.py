"""`python -m olympus.compat script.py [args]` (or `-m module [args]`): runs a
program written for JAX with `import jax` answered by olympus."""

from __future__ import annotations

import runpy
import sys

from olympus import compat


class CompatUsageError(SystemExit):
    """`python -m olympus.compat` given no program to run."""


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help") or argv in (["-m"], ["-c"]):
        raise CompatUsageError(
            "usage: python -m olympus.compat script.py [args...]\n"
            "       python -m olympus.compat -m package.module [args...]\n"
            "       python -m olympus.compat -c 'program text' [args...]\n"
            "runs the program with `import jax` answered by olympus"
        )
    compat.install()
    if argv[0] == "-c":
        sys.argv = ["-c"] + argv[2:]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    elif argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
