"""Op-by-op conformance: every public `olympus.lax` / `olympus.numpy` function
that JAX also has, called eagerly on edge values, against JAX 0.10.2.

Each function is called with arrays for its required positional parameters
(a small static value where the parameter names a size, an axis or a dtype)
over a grid of dtypes (bool, int8, uint8, int32, float16, bfloat16, float32;
float64 and int64 with x64 on) and shapes ((), (0,), (3,), (2, 3)) filled
with edge values (NaN, +-inf, -0, 0, 1, large, negative, subnormal), and
`jax_oracle.differences` compares the results (shape, dtype, weak type,
value, raising). CI runs one grid cell per function (fixed, picked by the
function's name); `OLYMPUS_SWEEP_FULL=1 pytest tests/test_conformance_sweep.py`
runs the whole grid (benchmarks/conformance.py does too, and tabulates).

A difference fails the test unless ALLOWED names it, with a reason; each
entry is also in docs/differences.md (a test checks).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import pathlib
import zlib

import ml_dtypes
import numpy as np
import pytest
from jax_oracle import JAX, OLYMPUS, agree, differences, run_both, x64

FULL = os.environ.get("OLYMPUS_SWEEP_FULL", "") not in ("", "0")

DTYPES = ["bool", "int8", "uint8", "int32", "float16", "bfloat16", "float32"]
X64_DTYPES = ["float64", "int64"]
SHAPES = [(), (0,), (3,), (2, 3)]

# Called with a small static value instead of an array: a parameter naming a
# size would otherwise be an edge value (2**31 - 1 elements).
STATIC_PARAMS = {
    "shape": (2, 3),
    "new_shape": (3, 2),
    "newshape": (3, 2),
    "sizes": (2,),
    "new_sizes": (3, 2),
    "N": 3,
    "M": 2,
    "n": 2,
    "k": 1,
    "num": 4,
    "size": 3,
    "repeats": 2,
    "reps": 2,
    "axis": 0,
    "dimension": 0,
    "indices_or_sections": 1,
    "new_dtype": np.float32,
    "start_dimension": 0,
    "stop_dimension": 1,
    "rank": 2,
    "start_index": 0,
    "limit_index": 1,
    "slice_size": 1,
    "index": 0,
    "broadcast_dimensions": (0,),
    "permutation": (0,),
    "dimensions": (0,),
}

# One function's static parameters whose names are array operands elsewhere.
STATIC_ARGS = {"lax.integer_pow": {"y": 3}}

# Functions not called: they take callables, files or options, or print.
SKIPPED = {
    **dict.fromkeys(
        "lax.associative_scan lax.cond lax.custom_linear_solve lax.custom_root "
        "lax.fori_loop lax.map lax.reduce lax.reduce_window lax.scan lax.switch "
        "lax.while_loop jnp.apply_along_axis jnp.apply_over_axes jnp.fromfunction "
        "jnp.piecewise jnp.vectorize".split(),
        "takes a Python callable",
    ),
    **dict.fromkeys(
        "jnp.load jnp.save jnp.savez jnp.fromiter jnp.frombuffer "
        "jnp.fromstring".split(),
        "reads or writes files or buffers",
    ),
    **dict.fromkeys(
        "jnp.printoptions jnp.set_printoptions jnp.get_printoptions "
        "jnp.array_repr jnp.array_str jnp.isdtype jnp.issubdtype jnp.promote_types "
        "jnp.result_type jnp.can_cast jnp.broadcast_shapes lax.broadcast_shapes".split(),
        "about dtypes, shapes, options or printing, not arrays",
    ),
}

SKIPPED |= dict.fromkeys(
    ["jnp.gcd", "jnp.lcm"], "JAX's loop never ends at the int minimum (int8 -128)"
)

# Differences that remain, each with its reason (and a line in
# docs/differences.md). A key is `lax.name` / `jnp.name`, or `jnp.name[dtype]`
# for one dtype only.
ALLOWED: dict[str, str] = {
    "jnp.interp[bfloat16]": "numpy/statistics.py: a choice: olympus interpolates bfloat16; JAX 0.10.2 raises ValueError because its dx threshold calls np.finfo, which rejects bfloat16 (a JAX bug)",
    "jnp.ix_[bool]": "numpy/construction.py: a choice: olympus takes a concrete bool sequence as its nonzero positions, as NumPy; JAX 0.10.2 raises NotImplementedError (not implemented there, not an error of the input)",
}


def edge_values(dtype: str) -> list:
    """Edge values of a dtype, cast: NaN, +-inf, -0, 0, 1, large, negative..."""
    if dtype == "bool":
        return [True, False]
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        vals = [0, 1, -1, 2, -7, 100, int(info.max), int(info.min), 3]
        return [v for v in vals if info.min <= v <= info.max]
    info = ml_dtypes.finfo(dtype) if dtype == "bfloat16" else np.finfo(dtype)
    large = float(info.max) / 4
    tiny = float(info.smallest_subnormal)
    return [np.nan, 1.0, -0.0, np.inf, 0.5, -2.5, -np.inf, 0.0, large, -large, tiny]


def edge_array(dtype: str, shape: tuple, offset: int) -> np.ndarray:
    """An array of `shape` cycling through the edge values from `offset`."""
    vals = edge_values(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    picked = [vals[(offset + i) % len(vals)] for i in range(max(n, 1))][:n]
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    if shape == ():
        return np.asarray(vals[offset % len(vals)], dtype=np_dtype)
    return np.asarray(picked, dtype=np_dtype).reshape(shape)


def public_functions() -> list[str]:
    """`lax.f` / `jnp.f` for every callable public name both systems have."""
    names = []
    for prefix, ours, theirs in (("lax", OLYMPUS.lax, JAX.lax), ("jnp", OLYMPUS.jnp, JAX.jnp)):  # fmt: skip
        for name in sorted(dir(ours)):
            if name.startswith("_") or not hasattr(theirs, name):
                continue
            obj = getattr(theirs, name)
            if callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj):
                names.append(f"{prefix}.{name}")
    return names


def _jax_function(qualname: str):
    prefix, name = qualname.split(".", 1)
    return getattr(getattr(JAX, prefix), name)


def required_parameters(qualname: str) -> list[str]:
    """The names of JAX's required positional parameters (one when unknown)."""
    try:
        sig = inspect.signature(_jax_function(qualname))
    except (TypeError, ValueError):
        return ["x"]
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = [
        p.name
        for p in sig.parameters.values()
        if p.kind in kinds and p.default is inspect.Parameter.empty
    ]
    if not params and any(
        p.kind is inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values()
    ):
        return ["x"]
    return params


def arguments(qualname: str, dtype: str, shape: tuple) -> list:
    """The call's arguments: edge arrays, each from another offset (so binary
    ops meet NaN against inf, -0 against 0, ...), or a static value."""
    args, static = [], STATIC_PARAMS | STATIC_ARGS.get(qualname, {})
    for i, param in enumerate(required_parameters(qualname)):
        if param in ("dtype",):
            args.append(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype))
        elif param in static:
            args.append(static[param])
        else:
            args.append(edge_array(dtype, shape, 3 * i))
    return args


def grid(qualname: str, full: bool = FULL) -> list[tuple[str, tuple]]:
    """(dtype, shape) cells: all of them, or one picked by the name (CI)."""
    cells = [(d, s) for d in DTYPES + X64_DTYPES for s in SHAPES]
    if full:
        return cells
    return [cells[zlib.crc32(qualname.encode()) % len(cells)]]


def _call(qualname: str):
    prefix, name = qualname.split(".", 1)
    return lambda ox, *args: getattr(getattr(ox, prefix), name)(*args)


def cell_differences(qualname: str, dtype: str, shape: tuple) -> list[str]:
    """How olympus and JAX differ on one call (empty: they agree)."""
    context = x64() if dtype in X64_DTYPES else contextlib.nullcontext()
    with context:
        args = arguments(qualname, dtype, shape)
        ours, theirs = run_both(_call(qualname), *args)
        try:
            return differences(ours, theirs)
        except Exception as error:  # noqa: BLE001  (a result failed to materialise)
            return [f"result: reading a result raised {type(error).__name__}: {error}"]


def allowed(qualname: str, dtype: str) -> str | None:
    """The allow-list's reason for this function (and dtype), if any."""
    return ALLOWED.get(f"{qualname}[{dtype}]") or ALLOWED.get(qualname)


def sweep(qualname: str, full: bool = FULL) -> list[tuple[str, tuple, list[str]]]:
    """[(dtype, shape, differences)] over the function's cells that differ."""
    found = []
    for dtype, shape in grid(qualname, full):
        diffs = cell_differences(qualname, dtype, shape)
        if diffs:
            found.append((dtype, shape, diffs))
    return found


FUNCTIONS = [f for f in public_functions() if f not in SKIPPED]
# CI calls a fixed half of the functions (picked by name), one cell each: the
# whole list costs about 75 s on 2 cores, most of it compiling each call twice.
SAMPLED = FUNCTIONS if FULL else [f for f in FUNCTIONS if zlib.crc32(f.encode()) % 2]


@pytest.mark.parametrize("qualname", SAMPLED)
def test_agrees_with_jax(qualname):
    new = [
        f"{dtype}{list(shape)}: " + "; ".join(diffs)
        for dtype, shape, diffs in sweep(qualname)
        if allowed(qualname, dtype) is None
    ]
    assert not new, (
        f"{qualname} differs from JAX 0.10.2 (a new difference: fix it, or add it "
        "to ALLOWED with a reason and to docs/differences.md):\n  " + "\n  ".join(new)
    )


def test_sweep_covers_the_shared_api():
    """The sweep calls most names both systems have: the skips stay few, and
    each names a function both have."""
    shared = public_functions()
    assert len(FUNCTIONS) > 400
    assert len(SKIPPED) < 40
    assert set(SKIPPED) <= set(shared)
    assert all(key.split("[")[0] in shared for key in ALLOWED)


def test_allow_list_is_documented():
    text = (
        pathlib.Path(__file__).parent.parent / "docs" / "differences.md"
    ).read_text()
    missing = [key for key in ALLOWED if f"`{key.split('[')[0]}`" not in text]
    assert not missing, f"allowed but not in docs/differences.md: {missing}"


def test_edge_arrays_hold_the_edge_values():
    x = edge_array("float32", (11,), 0)
    assert np.isnan(x[0]) and np.isinf(x[3]) and np.signbit(x[2]) and x[10] > 0
    assert x[10] < np.finfo(np.float32).tiny  # a subnormal
    assert edge_array("uint8", (3,), 0).tolist() == [0, 1, 2]
    assert edge_array("bfloat16", (2, 3), 1).dtype == ml_dtypes.bfloat16
    assert edge_array("int8", (0,), 0).shape == (0,)


# ---- differences the sweep found, fixed ------------------------------------------------
@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("dtype", [np.int8, np.bool_, np.float16])
def test_convolutions_promote_to_inexact_as_jax(name, dtype):
    a, v = np.array([1, 0, 3], dtype), np.array([1, 1], dtype)
    run = lambda ox, a, v: getattr(ox.jnp, name)(a, v, mode="full")  # noqa: E731
    agree(run, a, v)
    agree(lambda ox, a, v: ox.jit(lambda a, v: run(ox, a, v))(a, v), a, v)
    agree(lambda ox, a, v: ox.vmap(lambda a: run(ox, a, v))(np.stack([a, a])), a, v)
    typed = lambda ox, a, v: getattr(ox.jnp, name)(  # noqa: E731
        a, v, preferred_element_type=np.int32
    )
    agree(typed, a.astype(np.int8), v.astype(np.int8))


@pytest.mark.parametrize(
    "old, new, shape",
    [
        ("float32", "float16", (3,)),
        ("float32", "uint8", (2, 3)),
        ("int32", "bfloat16", ()),
        ("uint8", "float32", (2, 4)),
        ("float16", "int32", (3, 2)),
        ("float64", "float32", (3,)),  # x64
        ("int64", "float16", (2,)),
        ("float32", "float64", (3, 2)),
        ("float32", "float64", (3,)),  # not 2 parts: both raise
    ],
)
def test_bitcast_convert_type_between_widths_as_jax(old, new, shape):
    """A narrower type adds an axis of parts (least significant first), a
    wider one takes it away."""
    x = edge_array(old, shape, 2)
    new_dtype = ml_dtypes.bfloat16 if new == "bfloat16" else np.dtype(new)
    cast = lambda ox, x: ox.lax.bitcast_convert_type(x, new_dtype)  # noqa: E731
    with x64():
        agree(cast, x)
        agree(lambda ox, x: ox.jit(lambda x: cast(ox, x))(x), x)
        if shape:
            agree(lambda ox, x: ox.vmap(lambda x: cast(ox, x))(x), x)


def test_igamma_grad_a_is_nan_outside_its_domain_as_jax():
    a = np.array(
        [np.nan, -0.0, np.inf, 1, 1, -1, 0, 2, 2, 2, np.inf, 3, 2.5], np.float32
    )
    x = np.array([np.inf, -2.5, -np.inf, np.nan, -1, 1, 1, np.inf, 0, 1e-30, 1, -0.0, 1.5], np.float32)  # fmt: skip
    agree(lambda ox, a, x: ox.lax.igamma_grad_a(a, x), a, x)
    agree(lambda ox, a, x: ox.jit(ox.lax.igamma_grad_a)(a, x), a, x)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int32, np.float16])
@pytest.mark.parametrize("n", [0, 3])
def test_polymul_and_polyder_promote_to_inexact_as_jax(dtype, n):
    p = edge_array(np.dtype(dtype).name, (n,), 1)
    agree(lambda ox, p: ox.jnp.polymul(p, p), p)
    agree(lambda ox, p: ox.jnp.polyder(p), p)
    agree(lambda ox, p: ox.jit(ox.jnp.polyder)(p), p)
    agree(lambda ox, p: ox.vmap(lambda q: ox.jnp.polymul(q, p))(np.stack([p, p])), p)


def test_tri_is_float32_by_default_even_with_x64_as_jax():
    with x64():
        agree(lambda ox: ox.jnp.tri(3, 2, 1))
        agree(lambda ox: ox.jnp.tri(2, dtype=np.int64))
    agree(lambda ox: ox.jit(lambda: ox.jnp.tri(3))())
