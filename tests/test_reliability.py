"""Reliability: threads, bounded caches and memory, leaked tracers, bad input,
donation. Each test states the guarantee it checks."""

from __future__ import annotations

import gc
import threading
import tracemalloc

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import api, lax
from olympus.errors import UnexpectedTracerError


# ---- threads ------------------------------------------------------------------------
def _count_compiles(monkeypatch) -> dict:
    """Counts jit compilations per function name (api.compile_olympuspr calls)."""
    counts: dict = {}
    lock = threading.Lock()
    original = api.compile_olympuspr

    def counting(olympuspr, name="main"):
        with lock:
            counts[name] = counts.get(name, 0) + 1
        return original(olympuspr, name)

    monkeypatch.setattr(api, "compile_olympuspr", counting)
    return counts


def test_threads_share_jitted_functions_and_compile_each_once(monkeypatch):
    """8 threads x 500 calls of 3 jitted functions, all starting at once (the
    first calls race to compile): every result right, one compile per function."""
    counts = _count_compiles(monkeypatch)

    def poly(x):
        return x * x + 1.0

    def norm(x):
        return jnp.sqrt(jnp.sum(x * x))

    def loop(x):
        return lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)

    funs = [olympus.jit(f) for f in (poly, norm, loop)]
    expected = [lambda x: x * x + 1.0, lambda x: np.sqrt(np.sum(x * x)), lambda x: x * 8.0]
    start, errors = threading.Barrier(8), []

    def worker(k: int):
        x = np.arange(4, dtype=np.float32) + k
        start.wait()
        try:
            for i in range(500):
                j = (i + k) % 3
                out = np.asarray(funs[j](x))
                np.testing.assert_allclose(out, expected[j](x), rtol=1e-6)
        except Exception as error:  # noqa: BLE001  (reported below)
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert counts == {"poly": 1, "norm": 1, "loop": 1}
