"""The style guide's formatting and lint rules (ruff.toml at the repository
root), checked on every Python file of the project: `ruff format` leaves each
file as it is and `ruff check` finds nothing."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PATHS = ["olympus", "tests", "benchmarks", "examples", "docs"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_file_is_ruff_formatted():
    result = _ruff("format", "--check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_check_finds_nothing():
    result = _ruff("check")
    assert result.returncode == 0, result.stdout + result.stderr
