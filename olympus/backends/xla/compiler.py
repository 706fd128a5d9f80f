"""Turning StableHLO text into a loaded executable: the one place that calls
XLA's compiler, so host callbacks and the persistent compilation cache apply to
eager primitives, jit and AOT `.compile()` alike.

Persistent cache (on by default): compiled executables are written to
the `olympus.config` option `olympus_compilation_cache_dir` if set, else
`$OLYMPUS_COMPILATION_CACHE_DIR`, else `$XDG_CACHE_HOME/olympus` (or
`~/.cache/olympus`), keyed by a SHA-256 of the StableHLO text, the serialised
compile options, the jaxlib version and the platform; a later process loads
them instead of compiling. Turn it off with
`olympus.config.update("olympus_compilation_cache", False)` or
`OLYMPUS_COMPILATION_CACHE=0`. Every compile looks the cache up, but only
programs whose compile took at least `olympus_compilation_cache_min_compile_secs`
(default 0.1 s) are written: an eager `add` compiles faster than a file is
written and would only fill the folder. An entry that cannot be read or
deserialised is ignored with a warning (and rewritten). Programs that call host
callbacks are never cached (their Python functions live in the process).
`cache_stats()` counts hits, misses, writes, unreadable entries and evictions.

Size limit: the `.xla` entries of the folder are kept within
`olympus_compilation_cache_max_size` bytes (default 1 GiB; None or a negative
number: unlimited), least recently used first out. A hit touches its entry
(sets its modification time to now, which is the recency the eviction sorts
by: access times are often not kept, `noatime`/`relatime` mounts); before a
write, the oldest entries are deleted until the new one fits, and an entry
larger than the whole limit is not written. Several processes may share the
folder: a file another one deleted or touched meanwhile is skipped, and a
failed eviction is ignored (the folder may then briefly exceed the limit by
what the racing writers add), never raised.

Code generator (CPU): eager one-primitive programs compile with XLA's classic
emitter, jit programs with its MLIR fusion emitters (JAX's choice), as the
option `olympus_cpu_classic_emitter` says ('eager', 'all' or 'none'); see
`with_codegen_options`. The classic emitter compiles a one-op program in about
half the time; the fusion emitters' code runs faster in most jit programs.

Eager one-primitive programs (`eager=True`) compile in tens of milliseconds,
which a notebook's first cell pays once per distinct op, while loading one
takes under a millisecond. They go to the `eager` subfolder whatever their
compile time, counted apart (`eager_hits`, `eager_misses`, `eager_stores`)
and kept to about the `EAGER_ENTRIES` most recently used (a few KiB each;
the folder is scanned once per tenth of them written), so they
never crowd the whole programs out of the folder's size limit.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import time
import warnings

from olympus.backends.xla import host_callback

ENV_VAR = "OLYMPUS_COMPILATION_CACHE_DIR"
logger = logging.getLogger("olympus.compilation_cache")
# hits: loaded from disk; misses: compiled; stores: written; too_fast: compiled
# but not written (under the minimum compile time); errors: unreadable entries
# evictions: entries deleted to keep the folder within its size limit
_stats = dict.fromkeys(
    (
        "hits",
        "misses",
        "stores",
        "too_fast",
        "errors",
        "evictions",
        "eager_hits",
        "eager_misses",
        "eager_stores",
    ),
    0,
)
ENTRY_SUFFIX = ".xla"
EAGER_SUBDIR = "eager"
EAGER_ENTRIES = 2000  # eager one-primitive executables kept (about 5 KiB each)


def cache_stats() -> dict:
    """A copy of this process's persistent-cache counters."""
    return dict(_stats)


def reset_cache_stats() -> None:
    for name in _stats:
        _stats[name] = 0


class CompilationCacheWarning(UserWarning):
    """A cache entry was unreadable or could not be written; olympus compiled instead."""


def default_cache_dir() -> str:
    """`$XDG_CACHE_HOME/olympus`, or `~/.cache/olympus` (the XDG default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache"
    )
    return os.path.join(base, "olympus")


def cache_dir() -> str | None:
    """Where entries live now, or None when the cache is off: the config's
    folder if set, else `$OLYMPUS_COMPILATION_CACHE_DIR` (read at each call, so
    a test or a parent process can redirect it), else the user's cache folder."""
    from olympus import config

    if not config.read("olympus_compilation_cache"):
        return None
    return (
        config.read("olympus_compilation_cache_dir")
        or os.environ.get(ENV_VAR)
        or default_cache_dir()
    )


def cache_key(client, text: str, options) -> str:
    import jaxlib

    digest = hashlib.sha256()
    for part in (
        text.encode(),
        options.SerializeAsString(),
        jaxlib.__version__.encode(),
        client.platform.encode(),
        client.platform_version.encode(),
    ):
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
        _stats["errors"] += 1
        warnings.warn(
            f"ignoring unreadable compilation cache entry {path}: "
            f"{type(err).__name__}: {str(err)[:200]}",
            CompilationCacheWarning,
            stacklevel=4,
        )
        return None


def _max_size() -> int | None:
    """The folder's size limit in bytes, or None for unlimited."""
    from olympus import config

    limit = config.read("olympus_compilation_cache_max_size")
    return None if limit is None or limit < 0 else int(limit)


def _touch(path: str) -> None:
    """Marks an entry as just used, so eviction keeps it longest."""
    try:
        os.utime(path)
    except OSError:  # deleted by another process meanwhile: nothing to keep
        pass


def _entries(directory: str) -> list[tuple[float, int, str]]:
    """(last use, size, path) of each entry in the folder, oldest first."""
    found = []
    try:
        scan = list(os.scandir(directory))
    except OSError:
        return []
    for entry in scan:
        if not entry.name.endswith(ENTRY_SUFFIX):
            continue
        try:
            info = entry.stat()
        except OSError:  # removed between listing and stat
            continue
        found.append((info.st_mtime, info.st_size, entry.path))
    return sorted(found)


def make_room(directory: str, incoming: int, limit: int) -> bool:
    """Deletes least recently used entries until `incoming` more bytes fit
    within `limit`; False when the new entry could not fit even alone."""
    if incoming > limit:
        return False
    entries = _entries(directory)
    total = sum(size for _, size, _ in entries)
    for _, size, path in entries:
        if total + incoming <= limit:
            break
        try:
            os.remove(path)
            _stats["evictions"] += 1
            logger.debug(
                "persistent compilation cache evicted %s (%d bytes)", path, size
            )
        except OSError:  # another process evicted or is reading it: count it gone
            pass
        total -= size
    _known_room[(directory, limit)] = [(limit - total - incoming) // 10, 100]
    return True


# What the last scan of a folder under a size limit left room for, per
# (folder, limit): [bytes, stores] this process may still write before it
# scans again. A scan stats every entry (thousands in a long-used folder), so
# it is repeated only after a tenth of the room it found, or 100 stores, is
# used; other processes' writes in between are not counted.
_known_room: dict[tuple[str, int], list[int]] = {}


def _fits_known_room(directory: str, size: int, limit: int) -> bool:
    """True (and the room counted down) when the last scan of `directory`
    under `limit` left room for `size` more bytes: no scan is needed now."""
    room = _known_room.get((directory, limit))
    if room is None or room[0] < size or room[1] < 1:
        return False
    room[0] -= size
    room[1] -= 1
    return True


def _eager_folder_fits(counter: str, size: int, limit: int | None) -> bool:
    """True for an eager entry whose folder, full of entries like it, would
    stay under half the size limit: no scan of it against the limit is needed."""
    return counter == "eager_stores" and (
        limit is None or 2 * EAGER_ENTRIES * size <= limit
    )


def _store(client, path: str, executable, counter: str = "stores") -> None:
    """Writes atomically (temp file + rename), so readers never see half an
    entry, after making room for it under the size limit."""
    try:
        data = client.serialize_executable(executable)
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        limit = _max_size()
        if _eager_folder_fits(counter, len(data), limit):
            limit = None  # the eager folder's entry cap keeps it far under the limit
        if (
            limit is not None
            and not _fits_known_room(directory, len(data), limit)
            and not make_room(directory, len(data), limit)
        ):
            logger.debug(
                "persistent compilation cache: %s (%d bytes) exceeds the "
                "%d-byte limit; not written",
                path,
                len(data),
                limit,
            )
            return
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        _stats[counter] += 1
    except Exception as err:
        warnings.warn(
            f"could not write compilation cache entry {path}: {err}",
            CompilationCacheWarning,
            stacklevel=4,
        )


def with_codegen_options(client, options, text: str = "", eager: bool = False):
    """`options` with olympus's choice of XLA code generator for `text`, as
    `olympus_cpu_classic_emitter` says: on CPU, XLA's classic emitter for
    eager one-op programs (by default) or every program, else its MLIR
    fusion emitters (XLA's and JAX's default). The fusion emitters build
    fresh MLIR contexts and pass pipelines for every program: a one-op
    program compiles in 27 ms with the classic emitter against 53-59 ms,
    which a notebook's first cell pays per distinct op. In jit programs,
    whose steady state is what they are for, the fusion emitters' code is
    mostly as fast or faster (a training step, a fori_loop 2x, an argmax
    1.6x; a transpose added to its input 3x slower): benchmarks/README.md,
    "Compile time". Programs with float8/6/4 values always keep the fusion
    emitters: the classic one computes them through f32 and changes NaN bit
    patterns even where it only moves them. The choice is in the options,
    hence in the persistent cache key; an override the caller set is kept."""
    from olympus import config

    which = config.read("olympus_cpu_classic_emitter")
    overrides = options.env_option_overrides
    if (
        client.platform == "cpu"
        and (which == "all" or (which == "eager" and eager))
        and all(name != _FUSION_EMITTERS for name, _ in overrides)
        and not any(narrow in text for narrow in _NARROW_FLOAT_TYPES)
    ):
        options.env_option_overrides = [*overrides, (_FUSION_EMITTERS, False)]
    return options


_FUSION_EMITTERS = "xla_cpu_use_fusion_emitters"
# How StableHLO spells float8/6/4 element types (f8E4M3FN, f6E2M3FN, f4E2M1FN, ...).
_NARROW_FLOAT_TYPES = ("f8E", "f6E", "f4E")


def compile_and_load(client, text: str, devices, options, eager: bool = False):
    """A LoadedExecutable for `text`, from the persistent cache when possible;
    `eager`: a one-primitive program of eager mode (kept apart, by count)."""
    options = with_codegen_options(client, options, text, eager)
    if host_callback.uses_host_callbacks(text):
        return host_callback.compile_and_load(client, text, devices, options)
    directory = cache_dir()
    if directory is None:
        return client.compile_and_load(text, devices, options)
    prefix = "eager_" if eager else ""
    if eager:
        directory = os.path.join(directory, EAGER_SUBDIR)
    path = os.path.join(directory, cache_key(client, text, options) + ENTRY_SUFFIX)
    executable = _load_cached(client, path, devices, options)
    if executable is not None:
        _stats[prefix + "hits"] += 1
        _touch(path)
        logger.debug("persistent compilation cache hit: %s", path)
        return executable
    _stats[prefix + "misses"] += 1
    start = time.perf_counter()
    executable = client.compile_and_load(text, devices, options)
    seconds = time.perf_counter() - start
    if eager:
        _store_eager(client, path, executable)
        return executable
    if seconds < _min_compile_secs():
        _stats["too_fast"] += 1
        return executable
    _store(client, path, executable)
    logger.debug(
        "persistent compilation cache write (%.3f s compile): %s", seconds, path
    )
    return executable


# Eager stores this process may still make before it scans the eager folder
# again, per folder. A scan stats every entry, which costs about as much as a
# one-op compile once the folder is full, so it runs once every tenth of
# EAGER_ENTRIES stores, and a full folder is cut by that tenth more than needed.
_eager_room: dict[str, int] = {}


def _store_eager(client, path: str, executable) -> None:
    """Writes an eager entry, keeping the folder near the `EAGER_ENTRIES` most
    recently used. Other processes' stores between two scans are not counted,
    so a shared folder may pass the cap by a tenth of it per other writer
    until the next scan."""
    directory = os.path.dirname(path)
    if _eager_room.get(directory, 0) < 1:
        step = max(1, EAGER_ENTRIES // 10)
        entries = _entries(directory)
        excess = len(entries) + 1 - EAGER_ENTRIES
        cut = min(len(entries), excess + step - 1) if excess > 0 else 0
        for _, _, old in entries[:cut]:
            try:
                os.remove(old)
                _stats["evictions"] += 1
            except OSError:  # another process removed it first
                pass
        _eager_room[directory] = min(step, EAGER_ENTRIES - (len(entries) - cut))
    _eager_room[directory] -= 1
    _store(client, path, executable, "eager_stores")


def _min_compile_secs() -> float:
    from olympus import config

    return float(config.read("olympus_compilation_cache_min_compile_secs"))


def compiler_ir(text: str, dialect: str | None):
    """The module as jaxlib's objects, for `Lowered.compiler_ir`: an MLIR
    `ir.Module` ("stablehlo", the default) or an XlaComputation ("hlo")."""
    from jaxlib import xla_client
    from jaxlib.mlir import ir

    if dialect in (None, "stablehlo"):
        with host_callback.mlir_context():
            return ir.Module.parse(text)
    if dialect == "hlo":
        return xla_client._xla.mlir.mlir_module_to_xla_computation(
            text, use_tuple_args=False, return_tuple=False
        )
    raise ValueError(
        f"Lowered.compiler_ir: unknown dialect {dialect!r}; use 'stablehlo' or 'hlo'"
    )


def pretty_stablehlo(text: str, debug_info: bool = False) -> str:
    """The module in MLIR's custom (readable) form: `stablehlo.add %0, %1 : ...`.

    The lowering emits the generic form (`"stablehlo.add"(%0, %1) : (...) -> ...`);
    MLIR parses it and prints the form people read in StableHLO's documentation.
    `debug_info`: each op followed by its location (`loc(...)`).
    """
    from jaxlib.mlir import ir

    with host_callback.mlir_context():
        module = ir.Module.parse(text)
        if debug_info:
            return module.operation.get_asm(enable_debug_info=True)
        return str(module)
