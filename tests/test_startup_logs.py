"""jaxlib's C++ INFO lines (`PjRt-IFRT device count ...`) stay off stderr even
when the first thing a program does loads jaxlib before the client starts
(`Lowered.compiler_ir`, a LAPACK call's lowering), unless the user asks for
them with TF_CPP_MIN_LOG_LEVEL. Fresh processes: the log level is read once."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = """
import numpy as np
import olympus
import olympus.numpy as jnp

eye = np.eye(2, dtype=np.float32)
lowered = olympus.jit(jnp.linalg.inv).lower(eye)
lowered.compiler_ir()  # loads jaxlib's MLIR before any client exists
print(lowered.compile()(eye).sum())
"""
C_LOG_LINE = re.compile(r"^[IW]\d{4} ", re.M)  # glog's INFO/WARNING prefix


def _stderr(**env) -> str:
    base = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    path = os.pathsep.join(filter(None, [str(ROOT), base.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM],
        env={**base, "PYTHONPATH": path, "OLYMPUS_COMPILATION_CACHE": "0", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "2.0" in done.stdout
    return done.stderr


def test_no_jaxlib_info_lines_by_default():
    stderr = _stderr()
    assert "PjRt-IFRT" not in stderr and not C_LOG_LINE.search(stderr), stderr


def test_the_users_log_level_is_kept():
    assert "PjRt-IFRT device count" in _stderr(TF_CPP_MIN_LOG_LEVEL="0")
