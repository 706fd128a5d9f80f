"""Turning StableHLO text into a loaded executable: the one place that calls
XLA's compiler, so host callbacks and the persistent compilation cache apply to
eager primitives, jit and AOT `.compile()` alike.

Persistent cache: set `OLYMPUS_COMPILATION_CACHE_DIR` (or
`olympus.config.update("olympus_compilation_cache_dir", path)`) and compiled
executables are written there, keyed by a SHA-256 of the StableHLO text, the
serialised compile options, the jaxlib version and the platform; a later
process loads them instead of compiling. An entry that cannot be read or
deserialised is ignored with a warning (and rewritten). Programs that call
host callbacks are never cached (their Python functions live in the process).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings

from olympus.backends.xla import host_callback

ENV_VAR = "OLYMPUS_COMPILATION_CACHE_DIR"


class CompilationCacheWarning(UserWarning):
    """A cache entry was unreadable or could not be written; olympus compiled instead."""


def cache_dir() -> str | None:
    from olympus.ir.config import config

    return config.read("olympus_compilation_cache_dir") or os.environ.get(ENV_VAR) or None


def cache_key(client, text: str, options) -> str:
    import jaxlib

    digest = hashlib.sha256()
    for part in (text.encode(), options.SerializeAsString(), jaxlib.__version__.encode(),
                 client.platform.encode(), client.platform_version.encode()):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def _load_cached(client, path: str, devices, options):
    try:
        with open(path, "rb") as f:
            data = f.read()
        return client.deserialize_executable(data, devices, options)
    except FileNotFoundError:
        return None
    except Exception as err:  # truncated or foreign file: compile again, say so
        warnings.warn(f"ignoring unreadable compilation cache entry {path}: "
                      f"{type(err).__name__}: {str(err)[:200]}", CompilationCacheWarning,
                      stacklevel=4)
        return None


def _store(client, path: str, executable) -> None:
    """Writes atomically (temp file + rename), so readers never see half an entry."""
    try:
        data = client.serialize_executable(executable)
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except Exception as err:
        warnings.warn(f"could not write compilation cache entry {path}: {err}",
                      CompilationCacheWarning, stacklevel=4)


def compile_and_load(client, text: str, devices, options):
    """A LoadedExecutable for `text`, from the persistent cache when possible."""
    if host_callback.uses_host_callbacks(text):
        return host_callback.compile_and_load(client, text, devices, options)
    directory = cache_dir()
    if directory is None:
        return client.compile_and_load(text, devices, options)
    path = os.path.join(directory, cache_key(client, text, options) + ".xla")
    executable = _load_cached(client, path, devices, options)
    if executable is None:
        executable = client.compile_and_load(text, devices, options)
        _store(client, path, executable)
    return executable


def pretty_stablehlo(text: str) -> str:
    """The module in MLIR's custom (readable) form: `stablehlo.add %0, %1 : ...`.

    The lowering emits the generic form (`"stablehlo.add"(%0, %1) : (...) -> ...`);
    MLIR parses it and prints the form people read in StableHLO's documentation.
    """
    from jaxlib.mlir import ir

    with host_callback.mlir_context():
        return str(ir.Module.parse(text))
