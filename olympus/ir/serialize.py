"""Saving a ClosedOlympuspr to a file and loading it back.

The file is a zip archive (format version 1) holding:

    manifest.json   {"format": "olympuspr", "version": 1, "olympus": "0.1.0",
                     "consts": [{"name": "a", "path": "consts/a.npy",
                                 "dtype": "float32", "shape": [3]}, ...],
                     "weak_vars": ["c", ...], "weak_literals": [0, 2, ...],
                     "source_info": [["f.py", 3, "f"] | null, ...]}
                    (a source entry is [file, line, function, scope, marks]
                    when the line is marked: marks = {"backward": true,
                    "rewrite": rule text, "replaced": [equation text, ...]})
    program.txt     the printed program (`closed.pretty(source_info=True)`),
                    readable on its own and parsed back by `olympus.ir.parse`
    consts/NAME.npy the value of every constvar, top level and sub-programs,
                    keyed by its printed name; dtypes NumPy cannot store
                    (bfloat16, float8) are saved as their raw bits

The manifest also carries what the text leaves out: weak types (variables by
printed name, literals by position in `walk_literals` order) and the source
line of every equation, sub-programs included (in `walk_eqns` order), with
its marks: a backward-pass line, and an optimizer rewrite's record (the rule
and the equations it replaced, `RewriteRecord`), so a loaded optimized program
prints and shows its provenance as the saved one did. A reader refuses other
formats and newer versions with `OlympusprFormatError`; a reader that predates
the marks ignores them.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from typing import Iterator

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import (
    ClosedOlympuspr,
    Literal,
    Olympuspr,
    RewriteRecord,
    SourceInfo,
)
from olympus.ir.parser import parse
from olympus.ir.printer import VarNames, pp_olympuspr

FORMAT = "olympuspr"
VERSION = 1
_RAW_BITS = {1: np.uint8, 2: np.uint16}  # dtypes stored as bits: itemsize -> carrier


class OlympusprFormatError(ValueError):
    """The file is not an olympuspr archive this version of olympus can read."""


# ---- walking every program, equation and literal in one fixed order ---------
def walk_programs(closed: ClosedOlympuspr) -> Iterator[ClosedOlympuspr]:
    """`closed` and every sub-program below it, depth first, in equation order."""
    yield closed
    for eqn in closed.olympuspr.eqns:
        for _, value in sorted(eqn.params.items()):
            for v in value if isinstance(value, tuple) else (value,):
                if isinstance(v, ClosedOlympuspr):
                    yield from walk_programs(v)


def walk_eqns(closed: ClosedOlympuspr) -> Iterator[tuple[Olympuspr, int]]:
    for program in walk_programs(closed):
        for i in range(len(program.olympuspr.eqns)):
            yield program.olympuspr, i


def walk_literals(closed: ClosedOlympuspr) -> Iterator[Literal]:
    for program in walk_programs(closed):
        for eqn in program.olympuspr.eqns:
            yield from (x for x in eqn.invars if isinstance(x, Literal))
        yield from (x for x in program.olympuspr.outvars if isinstance(x, Literal))


def _printed_names(closed: ClosedOlympuspr) -> tuple[str, dict]:
    """The printed text and the name the printer gave each variable."""
    names = VarNames()
    text = pp_olympuspr(closed, source_info=True, names=names)
    return text, names.as_dict()


# ---- save ----------------------------------------------------------------------
def _const_bytes(value) -> tuple[bytes, np.ndarray]:
    array = np.asarray(value)
    stored = array
    if array.dtype.kind == "V" or array.dtype.type.__module__.startswith("ml_dtypes"):
        stored = array.view(_RAW_BITS[array.dtype.itemsize])
    buf = io.BytesIO()
    np.save(buf, stored, allow_pickle=False)
    return buf.getvalue(), array


def _const_entries(closed: ClosedOlympuspr, names: dict):
    for program in walk_programs(closed):
        for var, value in zip(program.olympuspr.constvars, program.consts):
            yield names[var], value


def _holds_python_function(value) -> bool:
    values = value if isinstance(value, (tuple, list)) else (value,)
    return any(
        callable(v) and not isinstance(v, (type, ClosedOlympuspr, Olympuspr))
        for v in values
    )


def _check_saveable(closed: ClosedOlympuspr) -> None:
    """A param holding a Python function would load back as its name only."""
    for program, i in walk_eqns(closed):
        eqn = program.eqns[i]
        for key, value in eqn.params.items():
            if _holds_python_function(value):
                raise OlympusprFormatError(
                    f"cannot save: equation {eqn.primitive.name} holds a Python function "
                    f"in its parameter {key!r} ({value!r}), which a file cannot carry"
                )


def save(closed: ClosedOlympuspr, path: str | os.PathLike) -> None:
    """Writes `closed` to `path` (format documented in this module).

    Programs whose parameters hold Python functions (`debug_callback`,
    `custom_lin`) are refused with OlympusprFormatError.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "f.olympuspr")
    >>> w = jnp.arange(3.0)
    >>> closed = olympus.make_olympuspr(lambda x: jnp.sin(x) * w)(jnp.ones(3))
    >>> olympus.ir.save(closed, path)
    >>> loaded = olympus.ir.load(path)  # the same program, constants included
    >>> str(loaded) == str(closed), np.asarray(loaded.consts[0])
    (True, array([0., 1., 2.], dtype=float32))
    """
    _check_saveable(closed)
    text, names = _printed_names(closed)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "olympus": _olympus_version(),
        "consts": [],
        "weak_vars": sorted(n for v, n in names.items() if v.aval.weak_type),
        "weak_literals": [
            i for i, lit in enumerate(walk_literals(closed)) if lit.aval.weak_type
        ],
        "source_info": [
            _source_json(p.eqns[i].source_info) for p, i in walk_eqns(closed)
        ],
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("program.txt", text)
        for name, value in _const_entries(closed, names):
            data, array = _const_bytes(value)
            entry = {
                "name": name,
                "path": f"consts/{name}.npy",
                "dtype": array.dtype.name,
                "shape": list(array.shape),
            }
            archive.writestr(entry["path"], data)
            manifest["consts"].append(entry)
        archive.writestr("manifest.json", json.dumps(manifest, indent=1))


def _source_json(info: SourceInfo | None):
    if info is None:
        return None
    entry = [info.file, info.line, info.function]
    marks = {}
    if info.backward:
        marks["backward"] = True
    if info.rewrite is not None:
        marks["rewrite"] = str(info.rewrite)
        marks["replaced"] = list(info.rewrite.replaced)
    if marks:
        return entry + [info.scope, marks]
    return entry + ([info.scope] if info.scope else [])


def _source_info(entry) -> SourceInfo | None:
    """A manifest's source entry back as a SourceInfo, marks included."""
    if entry is None:
        return None
    info = SourceInfo(entry[0], int(entry[1]), *entry[2:4])
    marks = entry[4] if len(entry) > 4 else {}
    if marks.get("backward"):
        info = info.as_backward()
    if "rewrite" in marks:
        record = RewriteRecord(marks["rewrite"], marks.get("replaced", ()))
        info = info.with_rewrite(record)
    return info


def _olympus_version() -> str:
    """The installed olympus's version (read from its package metadata, as
    the ir layer may not import the top-level package)."""
    from importlib import metadata

    try:
        return metadata.version("olympus")
    except metadata.PackageNotFoundError:
        return "unknown"


# ---- load ----------------------------------------------------------------------
def _read_manifest(archive: zipfile.ZipFile, path) -> dict:
    try:
        manifest = json.loads(archive.read("manifest.json"))
    except KeyError:
        raise OlympusprFormatError(
            f"{path}: no manifest.json; not an olympuspr archive"
        ) from None
    if manifest.get("format") != FORMAT:
        raise OlympusprFormatError(
            f"{path}: format {manifest.get('format')!r}, expected {FORMAT!r}"
        )
    version = manifest.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise OlympusprFormatError(
            f"{path}: format version {version!r}; this olympus reads versions up to {VERSION}"
        )
    return manifest


def _read_const(archive: zipfile.ZipFile, entry: dict) -> np.ndarray:
    stored = np.load(io.BytesIO(archive.read(entry["path"])), allow_pickle=False)
    dtype = np.dtype(getattr(dtypes, entry["dtype"], None) or entry["dtype"])
    return stored.view(dtype) if stored.dtype != dtype else stored


def _restore_annotations(closed: ClosedOlympuspr, manifest: dict) -> None:
    """Puts back the weak types and source lines the text does not carry."""
    _, names = _printed_names(closed)
    weak = set(manifest.get("weak_vars", ()))
    for var, name in names.items():
        if name in weak:
            var.aval = var.aval.update(weak_type=True)
    weak_literals = set(manifest.get("weak_literals", ()))
    for i, lit in enumerate(walk_literals(closed)):
        if i in weak_literals:
            lit.aval = lit.aval.update(weak_type=True)
    infos = manifest.get("source_info")
    if infos is None:
        return
    for (program, i), info in zip(list(walk_eqns(closed)), infos):
        program.eqns[i] = program.eqns[i]._replace(source_info=_source_info(info))


def load(path: str | os.PathLike) -> ClosedOlympuspr:
    """Reads a program written by `save`; raises OlympusprFormatError for other files."""
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise OlympusprFormatError(
            f"{path}: not a zip archive; not an olympuspr file"
        ) from None
    with archive:
        manifest = _read_manifest(archive, path)
        consts = {e["name"]: _read_const(archive, e) for e in manifest["consts"]}
        text = archive.read("program.txt").decode()
    closed = parse(text, consts)
    _restore_annotations(closed, manifest)
    return closed
