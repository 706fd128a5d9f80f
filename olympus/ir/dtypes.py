"""Dtypes of the IR: short names, canonicalisation (the x64 switch) and promotion.

Promotion follows JAX's type lattice: Python scalars are *weak* (`i*`, `f*`,
`c*`) and take the dtype of the array they meet, so `x_f16 * 2.0` stays f16.
The result of promoting a set of dtypes is their least upper bound.
"""

from __future__ import annotations

import contextlib
import functools

import ml_dtypes
import numpy as np

from olympus import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (
    np.dtype(t) for t in ("uint8", "uint16", "uint32", "uint64")
)
float16, float32, float64 = (np.dtype(t) for t in ("float16", "float32", "float64"))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)
float8_e4m3b11fnuz = np.dtype(ml_dtypes.float8_e4m3b11fnuz)
float8_e4m3fnuz = np.dtype(ml_dtypes.float8_e4m3fnuz)
float8_e5m2fnuz = np.dtype(ml_dtypes.float8_e5m2fnuz)
float8_e3m4 = np.dtype(ml_dtypes.float8_e3m4)
float8_e4m3 = np.dtype(ml_dtypes.float8_e4m3)
# exponent only (a scale for microscaling formats): no zero, no sign, no inf
float8_e8m0fnu = np.dtype(ml_dtypes.float8_e8m0fnu)
float8_dtypes = (
    float8_e4m3fn,
    float8_e5m2,
    float8_e4m3b11fnuz,
    float8_e4m3fnuz,
    float8_e5m2fnuz,
    float8_e3m4,
    float8_e4m3,
    float8_e8m0fnu,
)
# Floats NumPy does not know: its buffer protocol and type hierarchy miss them,
# and their dtype.kind is unreliable ("V" for most, "f" for float8_e5m2).
ml_dtypes_floats = (bfloat16, *float8_dtypes)

# The zero-information tangent type of integer and boolean values (autodiff).
float0 = np.dtype([("float0", np.void, 0)])

_SHORT_NAMES = {
    bool_: "bool",
    int8: "i8",
    int16: "i16",
    int32: "i32",
    int64: "i64",
    uint8: "u8",
    uint16: "u16",
    uint32: "u32",
    uint64: "u64",
    float16: "f16",
    bfloat16: "bf16",
    float32: "f32",
    float64: "f64",
    complex64: "c64",
    complex128: "c128",
    float8_e4m3fn: "f8_e4m3fn",
    float8_e5m2: "f8_e5m2",
    float8_e4m3b11fnuz: "f8_e4m3b11fnuz",
    float8_e4m3fnuz: "f8_e4m3fnuz",
    float8_e5m2fnuz: "f8_e5m2fnuz",
    float8_e3m4: "f8_e3m4",
    float8_e4m3: "f8_e4m3",
    float8_e8m0fnu: "f8_e8m0fnu",
    float0: "float0",
}

_X64_TO_X32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def short_name(dtype: np.dtype) -> str:
    """The IR's spelling of a dtype: f32, i32, bool, bf16, ..."""
    return _SHORT_NAMES[dtype]


def is_float(dtype) -> bool:
    return dtype in (float16, bfloat16, float32, float64) or dtype in float8_dtypes


def is_complex(dtype) -> bool:
    return dtype == complex64 or dtype == complex128


def is_inexact(dtype) -> bool:
    return is_float(dtype) or is_complex(dtype)


def is_signed_int(dtype) -> bool:
    return dtype in (int8, int16, int32, int64)


def is_unsigned_int(dtype) -> bool:
    return dtype in (uint8, uint16, uint32, uint64)


def is_integer(dtype) -> bool:
    return is_signed_int(dtype) or is_unsigned_int(dtype)


# Float types with no infinities (-inf cast to them is NaN): the float8 kinds
# named "fn" (finite), "fnuz" (finite, unsigned zero) and "fnu" (finite, unsigned).
_NO_INFINITY = (
    float8_e4m3fn,
    float8_e4m3b11fnuz,
    float8_e4m3fnuz,
    float8_e5m2fnuz,
    float8_e8m0fnu,
)


def float_lowest(dtype) -> np.generic:
    """The identity of max over a float type: -inf, or the most negative finite
    value where the type has no infinity (else max's start value would be NaN)."""
    dtype = np.dtype(dtype)
    if dtype in _NO_INFINITY:
        return ml_dtypes.finfo(dtype).min
    return np.array(-np.inf, dtype)[()]


def float_highest(dtype) -> np.generic:
    """The identity of min over a float type: +inf, or the largest finite value."""
    dtype = np.dtype(dtype)
    if dtype in _NO_INFINITY:
        return ml_dtypes.finfo(dtype).max
    return np.array(np.inf, dtype)[()]


def x64_enabled() -> bool:
    return config.read("olympus_enable_x64")


def canonicalize_dtype(dtype) -> np.dtype:
    """The dtype the system actually uses: 64-bit types narrow unless x64 is on."""
    dtype = np.dtype(dtype)
    if dtype not in _SHORT_NAMES:
        raise TypeError(f"olympus does not support dtype {dtype}")
    if not x64_enabled():
        return _X64_TO_X32.get(dtype, dtype)
    return dtype


def default_float_dtype() -> np.dtype:
    return float64 if x64_enabled() else float32


def default_int_dtype() -> np.dtype:
    return int64 if x64_enabled() else int32


def default_complex_dtype() -> np.dtype:
    return complex128 if x64_enabled() else complex64


def python_scalar_dtype(value) -> np.dtype:
    """The (weak) dtype given to a Python scalar."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return default_int_dtype()
    if isinstance(value, float):
        return default_float_dtype()
    if isinstance(value, complex):
        return default_complex_dtype()
    raise TypeError(f"not a Python scalar: {value!r}")


# ---- the promotion lattice -------------------------------------------------
# Nodes are dtypes, plus the weak kinds "i*", "f*", "c*" of Python scalars.
_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"

_LATTICE_EDGES = {
    bool_: [_WEAK_INT],
    _WEAK_INT: [uint8, int8],
    uint8: [int16, uint16],
    uint16: [int32, uint32],
    uint32: [int64, uint64],
    uint64: [_WEAK_FLOAT],
    int8: [int16],
    int16: [int32],
    int32: [int64],
    int64: [_WEAK_FLOAT],
    _WEAK_FLOAT: [bfloat16, float16, _WEAK_COMPLEX, *float8_dtypes],
    bfloat16: [float32],
    float16: [float32],
    float32: [float64, complex64],
    float64: [complex128],
    _WEAK_COMPLEX: [complex64],
    complex64: [complex128],
    complex128: [],
    **{f8: [] for f8 in float8_dtypes},
}


def _upper_bounds(node) -> frozenset:
    seen = {node}
    stack = [node]
    while stack:
        for above in _LATTICE_EDGES[stack.pop()]:
            if above not in seen:
                seen.add(above)
                stack.append(above)
    return frozenset(seen)


_UPPER = {node: _upper_bounds(node) for node in _LATTICE_EDGES}


class TypePromotionError(TypeError, ValueError):
    """Two dtypes have no common type in the lattice (e.g. float8 with float32).

    Also a ValueError, so code written against JAX's TypePromotionError catches it.
    """


def _node(dtype: np.dtype, weak: bool):
    if not weak:
        return dtype
    if is_complex(dtype):
        return _WEAK_COMPLEX
    if is_inexact(dtype):
        return _WEAK_FLOAT
    if dtype == bool_:
        return bool_
    return _WEAK_INT


@functools.lru_cache(maxsize=4096)
def _join(nodes: tuple):
    common = frozenset.intersection(*(_UPPER[n] for n in nodes))
    for candidate in common:
        if _UPPER[candidate] == common:
            return candidate
    names = ", ".join(n if isinstance(n, str) else short_name(n) for n in nodes)
    hint = ""
    if any(n in float8_dtypes for n in nodes):
        hint = (
            "; 8-bit floats never promote implicitly (as in JAX): convert "
            "explicitly, e.g. x.astype(jnp.float32)"
        )
    raise TypePromotionError(f"no common dtype for {names}{hint}")


_WEAK_DEFAULTS = {
    _WEAK_INT: default_int_dtype,
    _WEAK_FLOAT: default_float_dtype,
    _WEAK_COMPLEX: default_complex_dtype,
}


# "standard" (the lattice above) or "strict" (no implicit promotion between
# different strong dtypes; a Python scalar only joins a dtype of its kind or a
# wider kind), switched by olympus.numpy_dtype_promotion.
_promotion_mode = ["standard"]
_STRICT_WEAK_JOINS = {
    _WEAK_INT: "iufc",  # 2 joins ints, floats and complex (not bool)
    _WEAK_FLOAT: "fc",
    _WEAK_COMPLEX: "c",
}


@contextlib.contextmanager
def numpy_dtype_promotion(new_val: str):
    """A context setting how mixed dtypes are promoted.

    'standard' is JAX's promotion lattice; 'strict' makes mixing different
    dtypes an error (except a Python scalar with an array of its kind), for
    code that wants every conversion written out.

    Args:
      new_val: 'standard' or 'strict' (JAX's name for the mode).

    Returns:
      A context manager.

    Raises:
      TypePromotionError: in 'strict' mode, an operation mixes dtypes.
      ValueError: `new_val` is not one of the two.

    Example:
      >>> with olympus.numpy_dtype_promotion("strict"):
      ...     jnp.ones(2, jnp.float32) + jnp.ones(2, jnp.int32)
      Traceback (most recent call last):
      ...
      olympus.ir.dtypes.TypePromotionError: ...
    """
    if new_val not in ("standard", "strict"):
        raise ValueError(
            f"numpy_dtype_promotion: mode {new_val!r}; expected 'standard' or 'strict'"
        )
    before = _promotion_mode[0]
    _promotion_mode[0] = new_val
    try:
        yield
    finally:
        _promotion_mode[0] = before


def promotion_mode() -> str:
    """The promotion mode now in force: 'standard' or 'strict'."""
    return _promotion_mode[0]


def set_promotion_mode(mode: str) -> None:
    """Sets the mode outside any `numpy_dtype_promotion` block (JAX's
    `jax_numpy_dtype_promotion` option, under olympus.compat)."""
    if mode not in ("standard", "strict"):
        raise ValueError(
            f"numpy_dtype_promotion: mode {mode!r}; expected 'standard' or 'strict'"
        )
    _promotion_mode[0] = mode


def _strict_join(nodes: tuple):
    strong = {n for n in nodes if not isinstance(n, str)}
    if not strong:
        return _join(nodes)
    (target, *others) = strong
    kind = "c" if is_complex(target) else "f" if is_float(target) else target.kind
    weak_ok = all(kind in _STRICT_WEAK_JOINS[n] for n in nodes if isinstance(n, str))
    if others or not weak_ok:
        names = ", ".join(n if isinstance(n, str) else short_name(n) for n in nodes)
        raise TypePromotionError(
            f"no implicit dtype promotion path for {names} with "
            "numpy_dtype_promotion('strict'); convert explicitly, e.g. "
            "x.astype(y.dtype), or use numpy_dtype_promotion('standard')"
        )
    return target


def promote(dtypes_and_weak) -> tuple[np.dtype, bool]:
    """Least upper bound of (dtype, weak_type) pairs: returns (dtype, weak_type)."""
    nodes = tuple(_node(canonicalize_dtype(d), w) for d, w in dtypes_and_weak)
    strict = _promotion_mode[0] == "strict"
    joined = _strict_join(nodes) if strict else _join(nodes)
    if isinstance(joined, str):
        return canonicalize_dtype(_WEAK_DEFAULTS[joined]()), True
    # Two 32-bit types can join at a 64-bit one (u32 + i8 -> i64): narrow it too.
    return canonicalize_dtype(joined), False


def promote_types(a, b) -> np.dtype:
    """The dtype two dtypes promote to under JAX's rules.

    `jnp.promote_types`: the promoted dtype of two (strong) dtypes.

    Args:
      a: a dtype.
      b: a dtype.

    Returns:
      A numpy dtype.

    Raises:
      TypeError: an argument is not a dtype.

    Example:
      >>> jnp.promote_types(jnp.int8, jnp.uint8)
      dtype('int16')
      >>> jnp.promote_types(jnp.int32, jnp.float16)
      dtype('float16')
    """
    return promote([(np.dtype(a), False), (np.dtype(b), False)])[0]


# ---- the promotion table as data ---------------------------------------------
def _node_name(node) -> str:
    return node if isinstance(node, str) else short_name(node)


_TABLE_ORDER = (
    bool_,
    uint8,
    uint16,
    uint32,
    uint64,
    int8,
    int16,
    int32,
    int64,
    bfloat16,
    float16,
    float32,
    float64,
    complex64,
    complex128,
    *float8_dtypes,
    _WEAK_INT,
    _WEAK_FLOAT,
    _WEAK_COMPLEX,
)


def promotion_table() -> dict[tuple[str, str], str | None]:
    """The binary promotion table: {(a, b): join} over the lattice's type names.

    Names are the IR's (`i8`, `bf16`, `f8_e4m3fn`, ...) plus `i*`, `f*`, `c*`
    for weakly typed Python int, float and complex. Entries are the lattice
    join, i.e. the results with x64 enabled (without it, 64-bit results narrow
    to 32 bits); None marks pairs with no implicit promotion (float8 with any
    other strong float), where `promote_types` raises TypePromotionError.
    """
    table = {}
    for a in _TABLE_ORDER:
        for b in _TABLE_ORDER:
            try:
                joined = _node_name(_join((a, b)))
            except TypePromotionError:
                joined = None
            table[_node_name(a), _node_name(b)] = joined
    return table


def format_promotion_table(names=None) -> str:
    """`promotion_table()` as aligned text, rows and columns in lattice order;
    `-` marks pairs without implicit promotion. `names` picks a subset."""
    table = promotion_table()
    names = list(names or dict.fromkeys(a for a, _ in table))
    width = max(map(len, names)) + 1
    lines = ["".ljust(width) + "".join(n.ljust(width) for n in names)]
    for a in names:
        cells = (table[a, b] or "-" for b in names)
        lines.append(a.ljust(width) + "".join(c.ljust(width) for c in cells))
    return "\n".join(line.rstrip() for line in lines)
