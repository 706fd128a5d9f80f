"""The docstring text random's samplers share: the key, shape and dtype
arguments, the samples returned and the errors of a bad key or dtype. Each
is written once here and `documented_sampler` adds it to a sampler's own
docstring, which keeps what is particular to it (its law, its parameters,
an example) beside its code.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Callable

from olympus.lax.op_docs import insert_section, with_sections

KEY = (
    "key: a PRNG key, typed (random.key) or a uint32[2] array (random.PRNGKey);\n"
    "  never reuse a key for two draws: split it first."
)
SHAPE = "shape: the sample shape (a tuple of ints); () for one number."
BROADCAST_SHAPE = "shape: the sample shape; None for the parameters' broadcast shape."
FLOAT_DTYPE = "dtype: a floating dtype; None for the default float."
INT_DTYPE = "dtype: an integer dtype; None for the default int."
SAMPLES = "An array of `shape` and `dtype` holding the samples."
BAD_KEY = "InvalidKeyError: key is neither a typed key nor a uint32[2] array (a\n  TypeError)."
NOT_FLOAT = "TypeError: dtype is not a real floating dtype."
NOT_INT = "RandomDtypeError: dtype is not an integer dtype (a TypeError)."


def _args_entries(doc: str) -> tuple[dict[str, str], int, int]:
    """The entries of doc's Args section by parameter name, and the section's
    span (both -1 when it has none)."""
    start = doc.find("\nArgs:\n")
    if start < 0:
        return {}, -1, -1
    end = doc.find("\n\n", start + 1)
    end = len(doc) if end < 0 else end
    entries: dict[str, str] = {}
    name = None
    for line in doc[start + len("\nArgs:\n") : end].splitlines():
        if line.startswith("    ") and name:  # a continuation line
            entries[name] += "\n" + line[2:]
        else:
            name = line.strip().partition(":")[0]
            entries[name] = line.strip()
    return entries, start, end


def _indented(entries: list) -> str:
    return "\n".join(textwrap.indent(e, "  ") for e in entries if e)


def _args_section(fn: Callable, doc: str, standard: dict[str, str | None]) -> str:
    """doc with an Args section describing fn's parameters in signature order:
    the docstring's own entries, else the standard ones (key, shape, dtype)."""
    own, start, end = _args_entries(doc)
    names = inspect.signature(fn).parameters
    args = "Args:\n" + _indented([own.get(n) or standard.get(n) for n in names])
    if start >= 0:
        return f"{doc[: start + 1]}{args}{doc[end:]}"
    return insert_section(doc, args)


def _three_draws(name: str, args: str, dtype: str) -> str:
    """The Example most samplers open with: three draws, their shape and dtype."""
    call = f"olympus.random.{name}(k, {args}{', ' if args else ''}(3,))"
    return (
        f"Example:\n  >>> k = olympus.random.key(0)\n  >>> x = {call}\n"
        f"  >>> x.shape, x.dtype\n  ((3,), dtype('{dtype}'))"
    )


def documented_sampler(
    *,
    shape: str = SHAPE,
    dtype: str = FLOAT_DTYPE,
    dtype_error: str | None = NOT_FLOAT,
    returns: str = SAMPLES,
    example: str | None = None,
    example_dtype: str | None = None,
) -> Callable[[Callable], Callable]:
    """A decorator completing a sampler's docstring with the shared text: the
    key, shape and dtype arguments (where its own Args does not describe
    them), Returns (where it has none) and the Raises of a bad key and, when
    it takes a dtype, a bad dtype (before its own Raises entries). With
    `example` (the arguments between the key and the shape, "" for none), the
    Example begins with three draws and their shape and dtype (`example_dtype`,
    by default the default int or float of `dtype`)."""

    def document(fn: Callable) -> Callable:
        doc = inspect.cleandoc(fn.__doc__ or "")
        standard = {"key": KEY, "shape": shape, "dtype": dtype}
        doc = _args_section(fn, doc, standard)
        sections = [] if "\nReturns:\n" in doc else [f"Returns:\n  {returns}"]
        takes_dtype = "dtype" in inspect.signature(fn).parameters
        errors = [BAD_KEY] + ([dtype_error] if dtype_error and takes_dtype else [])
        sections.append("Raises:\n" + _indented(errors))
        if example is not None:
            kind = example_dtype or ("int32" if dtype == INT_DTYPE else "float32")
            sections.append(_three_draws(fn.__name__.lstrip("_"), example, kind))
        fn.__doc__ = doc
        return with_sections(*sections)(fn)

    return document
