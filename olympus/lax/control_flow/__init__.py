"""Structured control flow: the `cond`, `while` and `scan` primitives.

Python `if` and `for` run while tracing and leave no trace of themselves; to
keep a value-dependent choice or a loop in the program, the user calls
`cond` / `switch`, `while_loop` / `fori_loop` or `scan` / `map`. Each traces its
function arguments into sub-olympusprs (held as ClosedOlympuspr params, with
their constants turned into leading operands) and binds one equation:

    cond[branches=(...) linear=(...)]          index, *operands
    while[cond_olympuspr body_olympuspr ...]   *cond_consts, *body_consts, *carry
    scan[olympuspr length reverse ...]         *consts, *carry, *xs

One module per primitive (cond.py, loops.py, scan.py) holds its shape rule,
lowering (`stablehlo.case`, `stablehlo.while`), public functions and
transformation rules; subprograms.py holds what they share: tracing the
user's functions, eager caching, branch and carry checks. The transformed
sub-programs the rules bind (jvp, partial evaluation, transpose, batching)
are built by olympus/transforms/programs.py.
"""

from olympus.lax.control_flow.cond import cond, cond_p, switch  # noqa: F401
from olympus.lax.control_flow.loops import fori_loop, while_loop, while_p  # noqa: F401
from olympus.lax.control_flow.scan import map, scan, scan_p  # noqa: F401,A004
from olympus.lax.control_flow.subprograms import (  # noqa: F401
    BranchTypeError,
    CarryTypeError,
    ScanLengthError,
)
