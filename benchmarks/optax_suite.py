"""optax's own test suite, file by file, under JAX and under olympus.compat.

Each test file of the installed optax package runs in a fresh process, once
with JAX and once with `python -m olympus.compat -m pytest`, each with a
timeout; the table beside each other says which files olympus passes as JAX
does. Not part of CI: the whole suite takes about 35 minutes under JAX alone.

    python benchmarks/optax_suite.py                      # every test file
    python benchmarks/optax_suite.py _src/alias_test.py   # some files
    python benchmarks/optax_suite.py --timeout 300 --failures losses/_smoothing_test.py
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys
import time

SUMMARY = re.compile(r"(\d+) (passed|failed|error|errors|skipped)")
FAILED_TEST = re.compile(r"^(?:FAILED|ERROR) \S+::(\S+)", re.M)


def optax_root() -> pathlib.Path:
    import optax

    return pathlib.Path(optax.__file__).resolve().parent


def test_files(root: pathlib.Path, chosen: list[str]) -> list[pathlib.Path]:
    if chosen:
        return [root / name for name in chosen]
    return sorted(root.rglob("*_test.py"))


REPO = pathlib.Path(__file__).resolve().parent.parent


def run_file(path: pathlib.Path, backend: str, timeout: float, tree: str) -> dict:
    """{'passed': n, 'failed': n, ..., 'seconds': s, 'failures': [...]} of one
    pytest run; {'timeout': s} where it ran past `timeout`. `tree` is the
    folder olympus is imported from (the repository, or a snapshot of it)."""
    env = dict(os.environ, PYTHONPATH=tree)
    prefix = [sys.executable]
    if backend == "olympus":
        prefix += ["-m", "olympus.compat"]
    command = prefix + ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE"]
    start = time.perf_counter()
    try:
        done = subprocess.run(
            command + [str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=path.parent,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    tail = done.stdout[-4000:]
    counts = {kind.rstrip("s"): int(n) for n, kind in SUMMARY.findall(tail)}
    counts["seconds"] = round(time.perf_counter() - start, 1)
    counts["failures"] = FAILED_TEST.findall(done.stdout)
    if not counts.get("passed") and not counts.get("failed"):
        counts["crash"] = (done.stdout + done.stderr)[-600:]
    return counts


def describe(result: dict) -> str:
    if "timeout" in result:
        return f"timed out ({result['timeout']:.0f} s)"
    parts = [
        f"{result[k]} {k}"
        for k in ("passed", "failed", "error", "skipped")
        if result.get(k)
    ]
    return ", ".join(parts) or "no tests ran"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="paths under the optax package")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--failures", action="store_true", help="name each failure")
    parser.add_argument("--only", choices=("jax", "olympus"), default=None)
    parser.add_argument(
        "--tree", default=str(REPO), help="folder to import olympus from"
    )
    args = parser.parse_args(argv)
    root = optax_root()
    backends = [args.only] if args.only else ["jax", "olympus"]
    print("| file | " + " | ".join(backends) + " |")
    print("|---|" + "---|" * len(backends))
    for path in test_files(root, args.files):
        results = [run_file(path, b, args.timeout, args.tree) for b in backends]
        cells = [describe(r) for r in results]
        print(f"| `{path.relative_to(root)}` | " + " | ".join(cells) + " |", flush=True)
        if args.failures:
            for backend, result in zip(backends, results):
                for name in result.get("failures", []):
                    print(f"    {backend} failed: {name}", flush=True)
                if "crash" in result:
                    print(f"    {backend} crashed: {result['crash']}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
