"""Runs the Array API conformance suite (data-apis/array-api-tests) on a namespace.

The suite stays out of this tree: give the path of a checkout whose `array-api`
submodule is populated (`git submodule update --init`) and `pip install
hypothesis ndindex pytest-json-report`
(the failed test ids come from its report: they hold spaces). Usage:

    python benchmarks/array_api_conformance.py /path/to/array-api-tests \
        [--module olympus.numpy] [--max-examples 2] [--version 2023.12] [--x64] \
        [test files...]

It prints pytest's summary line (passed/failed/skipped counts); the results of
olympus.numpy and of jax.numpy are recorded in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "suite", type=Path, help="checkout of data-apis/array-api-tests"
    )
    parser.add_argument("--module", default="olympus.numpy")
    parser.add_argument("--max-examples", type=int, default=2)
    parser.add_argument("--version", default="2023.12")
    parser.add_argument(
        "--x64",
        action="store_true",
        help="64-bit types on (OLYMPUS_ENABLE_X64 and JAX_ENABLE_X64), so the "
        "suite's float64/int64 draws are not truncated to 32 bits",
    )
    parser.add_argument("--timeout", type=int, default=3600, help="seconds for the run")
    parser.add_argument("--failures", type=Path, help="write the failed test ids here")
    parser.add_argument("files", nargs="*", help="test files (default: all of them)")
    args = parser.parse_intermixed_args()
    if not (args.suite / "array-api" / "spec").exists():
        print(
            f"{args.suite} is not a populated checkout of array-api-tests",
            file=sys.stderr,
        )
        return 2
    root = Path(__file__).resolve().parent.parent
    env = dict(
        os.environ,
        ARRAY_API_TESTS_MODULE=args.module,
        ARRAY_API_TESTS_VERSION=args.version,
    )
    if args.x64:
        env.update(OLYMPUS_ENABLE_X64="1", JAX_ENABLE_X64="1")
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(root), env.get("PYTHONPATH")])
    )
    files = [f"array_api_tests/{f}" if "/" not in f else f for f in args.files]
    report = Path(tempfile.mkdtemp()) / "report.json"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--max-examples",
        str(args.max_examples),
        "--disable-deadline",
        "--derandomize",
        "-o",
        "addopts=",
        "--tb=no",
        "--json-report",
        f"--json-report-file={report}",
        *(files or ["array_api_tests"]),
    ]
    try:
        done = subprocess.run(
            command,
            cwd=args.suite,
            env=env,
            timeout=args.timeout,
            capture_output=True,
            text=True,
        )
    except subprocess.TimeoutExpired:
        print(f"timed out after {args.timeout}s", file=sys.stderr)
        return 1
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    if args.failures and report.exists():  # test ids hold spaces: read the report
        tests = json.loads(report.read_text())["tests"]
        failed = [t["nodeid"] for t in tests if t["outcome"] in ("failed", "error")]
        args.failures.write_text("".join(f"{name}\n" for name in failed))
    print(lines[-1] if lines else "no output")
    return 0


if __name__ == "__main__":
    sys.exit(main())
