"""Code metrics of the package, for docs/architecture.md's "small pieces" goal.

Prints:
  - functions over 60 lines, counted three ways: the code lines of the body
    (blank lines, comments and the docstring left out), the lines of the body
    after its docstring, and all its lines;
  - functions of McCabe complexity over 10, as `ruff check --select C901`
    reports them;
  - lines per folder (all lines, and code lines);
  - the pair count of the `duplicates` command for olympus/, when it is on PATH.

    python benchmarks/code_metrics.py              # olympus/
    python benchmarks/code_metrics.py --limit 40   # another length limit
"""

from __future__ import annotations

import argparse
import ast
import io
import pathlib
import re
import shutil
import subprocess
import tokenize
from collections import Counter

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _code_lines(source: str) -> set[int]:
    """The line numbers holding code: not blank, not only a comment, and not
    part of a string that stands alone as a statement (a docstring)."""
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
            continue
        if tok.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            continue
        lines.update(range(tok.start[0], tok.end[0] + 1))
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            lines.difference_update(range(node.lineno, node.end_lineno + 1))
    return lines


def _body_start(node) -> int:
    """The first line of a function's body after its docstring."""
    first = node.body[0]
    is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    if is_doc and isinstance(first.value.value, str) and len(node.body) > 1:
        return node.body[1].lineno
    return first.lineno


def function_lengths(path: pathlib.Path) -> list[tuple[str, int, int, int, int]]:
    """(qualified name, first line, body code lines, body lines after the
    docstring, all lines) per function."""
    source = path.read_text()
    code = _code_lines(source)
    found = []

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                body = range(child.body[0].lineno, child.end_lineno + 1)
                after_doc = child.end_lineno - _body_start(child) + 1
                total = child.end_lineno - child.lineno + 1
                code_lines = len(code.intersection(body))
                found.append((name, child.lineno, code_lines, after_doc, total))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(ast.parse(source), "")
    return found


def long_functions(package: pathlib.Path, limit: int) -> list[tuple]:
    """Functions over `limit` lines by any of the three counts."""
    rows = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for name, line, code, body, total in function_lengths(path):
            if total > limit:
                rows.append((rel, line, name, code, body, total))
    return sorted(rows, key=lambda r: -r[3])


def complex_functions(package: pathlib.Path, limit: int = 10) -> list[str] | None:
    """ruff's C901 findings over `limit`; None when ruff is not installed."""
    ruff = shutil.which("ruff")
    if ruff is None:
        return None
    result = subprocess.run(
        [ruff, "check", "--select", "C901", "--output-format", "concise"]
        + ["--config", f"lint.mccabe.max-complexity={limit}", str(package)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    pattern = re.compile(r"^(\S+?):(\d+):\d+: C901 `(.+)` is too complex \((\d+) > ")
    rows = []
    for line in result.stdout.splitlines():
        m = pattern.match(line)
        if m:
            rel = pathlib.Path(m[1]).resolve().relative_to(ROOT).as_posix()
            rows.append(f"{m[4]:>4}  {rel}:{m[2]}  {m[3]}")
    return rows


def folder_lines(package: pathlib.Path) -> list[tuple[str, int, int, int]]:
    """(folder, files, lines, code lines) for each folder of the package."""
    files: Counter = Counter()
    lines: Counter = Counter()
    code: Counter = Counter()
    for path in package.rglob("*.py"):
        folder = path.parent.relative_to(ROOT).as_posix()
        source = path.read_text()
        files[folder] += 1
        lines[folder] += source.count("\n")
        code[folder] += len(_code_lines(source))
    return [(f, files[f], lines[f], code[f]) for f in sorted(files)]


def duplicate_pairs(package: pathlib.Path) -> str | None:
    """The first line of `duplicates` for the package (its pair count), or None
    when the command is not on PATH."""
    command = shutil.which("duplicates")
    if command is None:
        return None
    result = subprocess.run(
        [command, "--repo", str(package), "--seconds", "120"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    first = result.stdout.strip().splitlines()
    return first[0] if first else result.stderr.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="olympus")
    parser.add_argument("--limit", type=int, default=60, help="function length")
    args = parser.parse_args()
    package = ROOT / args.package

    rows = long_functions(package, args.limit)
    counts = [sum(1 for r in rows if r[k] > args.limit) for k in (3, 4, 5)]
    print(f"## Functions over {args.limit} lines")
    print(f"{counts[0]} by body code lines (docstring, comments, blanks out),")
    print(f"{counts[1]} by body lines after the docstring, {counts[2]} by all lines")
    print("\n| body code | body | all | function |")
    print("|---|---|---|---|")
    for rel, line, name, code, body, total in rows:
        print(f"| {code} | {body} | {total} | {rel}:{line} `{name}` |")

    complex_rows = complex_functions(package)
    print("\n## McCabe complexity over 10 (ruff C901)")
    if complex_rows is None:
        print("ruff is not installed")
    else:
        print(f"{len(complex_rows)} functions")
        for row in complex_rows:
            print(f"    {row}")

    print("\n## Lines per folder")
    print("| folder | files | lines | code lines |")
    print("|---|---|---|---|")
    totals = [0, 0, 0]
    for folder, n, lines, code in folder_lines(package):
        print(f"| {folder} | {n} | {lines} | {code} |")
        totals = [totals[0] + n, totals[1] + lines, totals[2] + code]
    print(f"| total | {totals[0]} | {totals[1]} | {totals[2]} |")

    pairs = duplicate_pairs(package)
    if pairs is not None:
        print(f"\n## duplicates ({args.package}/)\n{pairs}")


if __name__ == "__main__":
    main()
