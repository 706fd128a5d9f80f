"""Conformance against JAX 0.10.2: the op-by-op sweep over its whole grid and
the JAX-oracle fuzz over N seeds, as a table.

    python benchmarks/conformance.py                  # full sweep + 200 fuzz seeds
    python benchmarks/conformance.py --seeds 0:50     # another fuzz range
    python benchmarks/conformance.py --only lax.       # sweep names with a prefix
    python benchmarks/conformance.py --json out.json  # every difference, for triage

The sweep is tests/test_conformance_sweep.py's (ALLOWED says which differences
are known and documented); the fuzz is tests/fuzz/checks.py's
check_jax_oracle on tests/fuzz/program_generator.py's edge programs.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")]


def run_sweep(prefix: str, report: dict, names=(), json_path=None) -> dict:
    """Every cell of the functions named (or with the prefix); `report` gets
    each difference, written to json_path after each function."""
    import test_conformance_sweep as sweep

    counts = dict(functions=0, cells=0, differing=0, allowed=0, seconds=0.0)
    start = time.perf_counter()
    for qualname in sweep.FUNCTIONS:
        if not qualname.startswith(prefix) or (names and qualname not in names):
            continue
        counts["functions"] += 1
        for dtype, shape in sweep.grid(qualname, full=True):
            counts["cells"] += 1
            try:
                diffs = sweep.cell_differences(qualname, dtype, shape)
            except Exception as error:  # noqa: BLE001  (the comparison itself failed)
                diffs = [f"comparison raised {type(error).__name__}: {error}"]
            if diffs:
                counts["differing"] += 1
                known = sweep.allowed(qualname, dtype) is not None
                counts["allowed"] += known
                report.setdefault(qualname, []).append(
                    [dtype, list(shape), diffs[:3], known]
                )
        print(f"  {qualname}: {len(report.get(qualname, []))} cells differ", flush=True)
        if json_path:
            pathlib.Path(json_path).write_text(
                json.dumps(report, indent=1, default=str)
            )
    counts["seconds"] = time.perf_counter() - start
    return counts


def run_fuzz(seeds: range, report: dict) -> dict:
    from checks import check_jax_oracle
    from edge_programs import generate_edge

    counts = dict(programs=0, checks=0, differing=0, allowed=0, seconds=0.0)
    start = time.perf_counter()
    for seed in seeds:
        counts["programs"] += 1
        program = generate_edge(seed)
        try:
            applied = check_jax_oracle(program)
            counts["checks"] += applied if isinstance(applied, int) else 0
        except Exception as error:  # noqa: BLE001  (any error is a finding)
            counts["checks"] += 1
            counts["differing"] += 1
            report[f"fuzz seed {seed}"] = [f"{type(error).__name__}: {error}"[:2000]]
    counts["seconds"] = time.perf_counter() - start
    return counts


def table(sweep: dict | None, fuzz: dict | None) -> str:
    rows = [
        "| run | programs / calls against JAX | differing | allowed (documented) | time |",
        "|---|---|---|---|---|",
    ]
    if sweep:
        rows.append(
            f"| op-by-op sweep, full grid | {sweep['functions']} functions, "
            f"{sweep['cells']} calls | {sweep['differing']} calls | "
            f"{sweep['allowed']} | {sweep['seconds']:.0f} s |"
        )
    if fuzz:
        rows.append(
            f"| JAX-oracle fuzz | {fuzz['programs']} programs, {fuzz['checks']} "
            f"checks | {fuzz['differing']} programs | {fuzz['allowed']} | "
            f"{fuzz['seconds']:.0f} s |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0:200", help="fuzz seeds START:STOP")
    parser.add_argument("--only", default="", help="sweep only names with this prefix")
    parser.add_argument("--names", default="", help="sweep only these, comma-separated")
    parser.add_argument("--no-sweep", action="store_true")
    parser.add_argument("--no-fuzz", action="store_true")
    parser.add_argument("--json", help="write every difference found here")
    args = parser.parse_args()
    report: dict = {}
    names = set(filter(None, args.names.split(",")))
    sweep = None if args.no_sweep else run_sweep(args.only, report, names, args.json)
    start, _, stop = args.seeds.partition(":")
    fuzz = None if args.no_fuzz else run_fuzz(range(int(start), int(stop)), report)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=1, default=str))
    print(table(sweep, fuzz))


if __name__ == "__main__":
    main()
