"""Every primitive of olympus.lax against NumPy, eagerly and under jit.

Each row of CASES names the primitive it exercises, an olympus function of
arrays (built from the public `olympus.lax` functions), a NumPy reference and
the seeded inputs. `test_every_primitive_is_tested` keeps the table complete:
a primitive added to `all_primitives` without a row here (or a declared test
file elsewhere) fails it.
"""

from __future__ import annotations

import math
import pathlib
from typing import Callable, NamedTuple

import ml_dtypes
import numpy as np
import pytest

import olympus
from olympus import lax
from olympus.ir.core import all_primitives
from olympus.lax.pjit import pjit_p
from olympus.test_util import (
    check_against_numpy,
    rand_bool,
    rand_int,
    rand_nonzero_int,
    rand_normal,
    rand_positive,
    rand_uniform,
)

F32, I32, BOOL, C64 = (
    np.dtype(np.float32),
    np.dtype(np.int32),
    np.dtype(np.bool_),
    np.dtype(np.complex64),
)
BF16, U8 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.uint8)


class Case(NamedTuple):
    prim: str
    label: str
    fn: Callable
    ref: Callable
    make_args: Callable  # rng -> tuple of NumPy arrays
    tol: dict = {}

    @property
    def id(self) -> str:
        return f"{self.prim}-{self.label}"


def _spec(shape, dtype) -> str:
    return f"{np.dtype(dtype).name}{list(shape)}".replace(" ", "")


def _arrays(*gens):
    """make_args from (generator, shape, dtype) triples."""
    return lambda rng: tuple(g(rng, s, d) for g, s, d in gens)


# ---- elementwise -------------------------------------------------------------
UNARY_FLOAT = [  # name, lax function, NumPy reference, input generator
    ("exp", lax.exp, np.exp, rand_normal),
    ("log", lax.log, np.log, rand_positive),
    ("expm1", lax.expm1, np.expm1, rand_normal),
    ("log1p", lax.log1p, np.log1p, rand_positive),
    ("sin", lax.sin, np.sin, rand_normal),
    ("cos", lax.cos, np.cos, rand_normal),
    ("tan", lax.tan, np.tan, rand_uniform),
    ("tanh", lax.tanh, np.tanh, rand_normal),
    ("logistic", lax.logistic, lambda x: 1 / (1 + np.exp(-x)), rand_normal),
    ("sqrt", lax.sqrt, np.sqrt, rand_positive),
    ("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), rand_positive),
    ("floor", lax.floor, np.floor, rand_normal),
    ("ceil", lax.ceil, np.ceil, rand_normal),
    ("erf", lax.erf, np.vectorize(math.erf, otypes=[np.float64]), rand_normal),
    ("asin", lax.asin, np.arcsin, rand_uniform),
    ("acos", lax.acos, np.arccos, rand_uniform),
    ("atan", lax.atan, np.arctan, rand_normal),
    ("sinh", lax.sinh, np.sinh, rand_normal),
    ("cosh", lax.cosh, np.cosh, rand_normal),
    ("asinh", lax.asinh, np.arcsinh, rand_normal),
    ("acosh", lax.acosh, np.arccosh, lambda r, s, d: rand_uniform(r, s, d, 1.5, 3.0)),
    ("atanh", lax.atanh, np.arctanh, lambda r, s, d: rand_uniform(r, s, d, -0.9, 0.9)),
]
UNARY_SIGNED = [  # also defined on integers
    ("neg", lax.neg, np.negative),
    ("abs", lax.abs, np.abs),
    ("sign", lax.sign, np.sign),
]
BINARY_NUMERIC = [
    ("add", lax.add, np.add),
    ("sub", lax.sub, np.subtract),
    ("mul", lax.mul, np.multiply),
    ("max", lax.max, np.maximum),
    ("min", lax.min, np.minimum),
]
COMPARISONS = [
    ("eq", lax.eq, np.equal),
    ("ne", lax.ne, np.not_equal),
    ("lt", lax.lt, np.less),
    ("le", lax.le, np.less_equal),
    ("gt", lax.gt, np.greater),
    ("ge", lax.ge, np.greater_equal),
]
BITWISE = [
    ("and", lax.bitwise_and, np.bitwise_and),
    ("or", lax.bitwise_or, np.bitwise_or),
    ("xor", lax.bitwise_xor, np.bitwise_xor),
]


def _trunc_div(a, b):
    """C-style integer division (rounds toward zero), as XLA divides integers."""
    return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(a.dtype)


def _round_half_away(x):
    return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(x.dtype)


_BOOLS = lambda r, s, d: rand_bool(r, s)  # noqa: E731
_GEN_BY_DTYPE = {I32: rand_int, U8: rand_int, BOOL: _BOOLS}

# Every op gets the core variants; a few representatives also get scalar,
# zero-size and bf16 inputs (each new shape/dtype costs two XLA compiles).
CORE_FLOAT = [((2, 3), F32), ((3,), BF16)]
EDGE_FLOAT = [((), F32), ((0,), F32)]
FLOAT_EDGE_OPS = {"exp", "log", "sin", "erf", "add", "div"}


def _same_args(n, shape, dtype, gen=None):
    gen = gen or _GEN_BY_DTYPE.get(dtype, rand_normal)
    return _arrays(*[(gen, shape, dtype)] * n)


def _unary_cases() -> list[Case]:
    cases = []
    for name, fn, ref, gen in UNARY_FLOAT:
        variants = CORE_FLOAT + (EDGE_FLOAT if name in FLOAT_EDGE_OPS else [])
        for shape, dtype in variants:
            cases.append(
                Case(name, _spec(shape, dtype), fn, ref, _arrays((gen, shape, dtype)))
            )
    for name, fn, ref in UNARY_SIGNED:
        variants = [((2, 3), F32), ((4,), I32)] + (
            [((), I32), ((3,), BF16)] if name == "neg" else []
        )
        if name != "abs":  # unsigned: neg wraps around, sign is 0 or 1
            variants.append(((5,), U8))
        for shape, dtype in variants:
            cases.append(
                Case(name, _spec(shape, dtype), fn, ref, _same_args(1, shape, dtype))
            )
    for y in (0, 1, 3, -2):
        cases.append(
            Case(
                "integer_pow",
                f"f32[2,3]-y={y}",
                lambda x, y=y: lax.integer_pow(x, y),
                lambda x, y=y: (x ** np.float32(y)).astype(x.dtype),
                _arrays((rand_positive, (2, 3), F32)),
            )
        )
    cases.append(
        Case(
            "integer_pow",
            "i32[4]-y=3",
            lambda x: lax.integer_pow(x, 3),
            lambda x: x**3,
            _arrays((rand_int, (4,), I32)),
        )
    )
    cases.append(
        Case(
            "integer_pow",
            "bf16[3]-y=2",
            lambda x: lax.integer_pow(x, 2),
            np.square,
            _arrays((rand_normal, (3,), BF16)),
        )
    )
    for shape, dtype, method in [
        ((2, 3), F32, 0),
        ((2, 3), F32, 1),
        ((3,), BF16, 0),
        ((), F32, 1),
    ]:
        halves = lambda rng, s=shape, d=dtype: (  # noqa: E731  exact .5 ties included
            (np.round(rand_normal(rng, s, np.float32) * 4) / 2).astype(d),
        )
        ref = _round_half_away if method == 0 else np.round
        cases.append(
            Case(
                "round",
                f"{_spec(shape, dtype)}-method={method}",
                lambda x, m=method: lax.round(x, m),
                ref,
                halves,
            )
        )
    return cases


def _binary_cases() -> list[Case]:
    cases = []
    for name, fn, ref in BINARY_NUMERIC:
        variants = (
            CORE_FLOAT
            + [((2, 3), I32)]
            + (EDGE_FLOAT if name in FLOAT_EDGE_OPS else [])
        )
        for shape, dtype in variants:
            cases.append(
                Case(name, _spec(shape, dtype), fn, ref, _same_args(2, shape, dtype))
            )
        cases.append(
            Case(
                name,
                "f32[2,3]-with-scalar",
                fn,
                ref,
                _arrays((rand_normal, (2, 3), F32), (rand_normal, (), F32)),
            )
        )
    for shape, dtype in CORE_FLOAT + EDGE_FLOAT:
        cases.append(
            Case(
                "div",
                _spec(shape, dtype),
                lax.div,
                np.divide,
                _arrays((rand_normal, shape, dtype), (rand_positive, shape, dtype)),
            )
        )
    for shape, dtype in CORE_FLOAT:
        cases.append(
            Case(
                "rem",
                _spec(shape, dtype),
                lax.rem,
                np.fmod,
                _arrays((rand_normal, shape, dtype), (rand_positive, shape, dtype)),
            )
        )
    ints = _arrays((rand_int, (2, 4), I32), (rand_nonzero_int, (2, 4), I32))
    cases.append(Case("div", "i32[2,4]-truncates", lax.div, _trunc_div, ints))
    cases.append(Case("rem", "i32[2,4]-sign-of-dividend", lax.rem, np.fmod, ints))
    for shape, dtype in CORE_FLOAT + [((), F32)]:
        cases.append(
            Case(
                "pow",
                _spec(shape, dtype),
                lax.pow,
                np.power,
                _arrays((rand_positive, shape, dtype), (rand_normal, shape, dtype)),
            )
        )
        cases.append(
            Case(
                "atan2",
                _spec(shape, dtype),
                lax.atan2,
                np.arctan2,
                _same_args(2, shape, dtype),
            )
        )
    return cases


def _comparison_and_bitwise_cases() -> list[Case]:
    cases = []
    for name, fn, ref in COMPARISONS:
        variants = [((2, 3), F32)] + {
            "eq": [((), F32), ((0,), F32), ((4,), BOOL), ((3,), BF16)],
            "lt": [((4,), BOOL), ((3,), BF16)],
        }.get(name, [])
        for shape, dtype in variants:
            cases.append(
                Case(name, _spec(shape, dtype), fn, ref, _same_args(2, shape, dtype))
            )
        # equal values on purpose: ties decide le/ge/eq
        cases.append(
            Case(
                name,
                "i32[6]-ties",
                fn,
                ref,
                lambda rng: (
                    np.array([1, 2, 3, 3, -1, 0], I32),
                    np.array([1, 3, 2, 3, -1, 5], I32),
                ),
            )
        )
    for name, fn, ref in BITWISE:
        variants = [((2, 3), BOOL), ((2, 3), I32)] + (
            [((), BOOL), ((0,), I32)] if name == "and" else []
        )
        for shape, dtype in variants:
            cases.append(
                Case(name, _spec(shape, dtype), fn, ref, _same_args(2, shape, dtype))
            )
    for shape, dtype in [((), BOOL), ((2, 3), BOOL), ((2, 3), I32)]:
        cases.append(
            Case(
                "not",
                _spec(shape, dtype),
                lax.bitwise_not,
                np.invert,
                _same_args(1, shape, dtype),
            )
        )
    return cases


def _elementwise_cases() -> list[Case]:
    return _unary_cases() + _binary_cases() + _comparison_and_bitwise_cases()


def _select_and_convert_cases() -> list[Case]:
    boolean = lambda r, s, d: rand_bool(r, s)  # noqa: E731
    which3 = lambda r, s, d: rand_int(r, s, I32, 0, 3)  # noqa: E731
    cases = [
        Case(
            "select_n",
            "bool-f32[2,3]",
            lax.select_n,
            lambda p, a, b: np.where(p, b, a),
            _arrays(
                (boolean, (2, 3), BOOL),
                (rand_normal, (2, 3), F32),
                (rand_normal, (2, 3), F32),
            ),
        ),
        Case(
            "select_n",
            "scalar-bool-i32[4]",
            lax.select_n,
            lambda p, a, b: np.where(p, b, a),
            _arrays((boolean, (), BOOL), (rand_int, (4,), I32), (rand_int, (4,), I32)),
        ),
        Case(
            "select_n",
            "i32-3-cases-f32[2,3]",
            lax.select_n,
            lambda w, *cs: np.choose(w, cs),
            _arrays((which3, (2, 3), I32), *[(rand_normal, (2, 3), F32)] * 3),
        ),
        Case(
            "select_n",
            "bool-bf16[0]",
            lax.select_n,
            lambda p, a, b: np.where(p, b, a),
            _arrays(
                (boolean, (0,), BOOL),
                (rand_normal, (0,), BF16),
                (rand_normal, (0,), BF16),
            ),
        ),
    ]
    conversions = [  # (from, to, generator)
        (F32, I32, lambda r, s, d: rand_normal(r, s, d) * 4),
        (I32, F32, rand_int),
        (F32, BOOL, rand_int),
        (BOOL, F32, lambda r, s, d: rand_bool(r, s)),
        (I32, BOOL, rand_int),
        (F32, BF16, rand_normal),
        (BF16, F32, rand_normal),
    ]
    for src, dst, gen in conversions:
        for shape in [(), (2, 3)] if src == F32 and dst in (I32, BF16) else [(2, 3)]:
            cases.append(
                Case(
                    "convert_element_type",
                    f"{_spec(shape, src)}-to-{dst.name}",
                    lambda x, dst=dst: lax.convert_element_type(x, dst),
                    lambda x, dst=dst: x.astype(dst),
                    lambda rng, gen=gen, shape=shape, src=src: (
                        np.asarray(gen(rng, shape, src)).astype(src),
                    ),
                )
            )
    return cases


def _clamp_cases() -> list[Case]:
    def ref(lo, x, hi):
        return np.minimum(np.maximum(x, lo), hi)

    return [
        Case(
            "clamp",
            "scalar-bounds-f32[2,3]",
            lax.clamp,
            ref,
            lambda rng: (np.float32(-0.5), rand_normal(rng, (2, 3)), np.float32(0.5)),
        ),
        Case(
            "clamp",
            "array-bounds-f32[4]",
            lax.clamp,
            ref,
            lambda rng: (
                np.full(4, -0.3, F32),
                rand_normal(rng, (4,)),
                rand_positive(rng, (4,)),
            ),
        ),
        Case(
            "clamp",
            "i32[5]",
            lax.clamp,
            ref,
            lambda rng: (np.int32(-1), rand_int(rng, (5,)), np.int32(2)),
        ),
    ]


def _complex_cases() -> list[Case]:
    c64 = _arrays((rand_normal, (2, 3), C64))
    return [
        Case("real", "c64[2,3]", lax.real, np.real, c64),
        Case("imag", "c64[2,3]", lax.imag, np.imag, c64),
        Case("real", "c64[]", lax.real, np.real, _arrays((rand_normal, (), C64))),
        Case(
            "complex",
            "f32[2,3]",
            lax.complex,
            lambda a, b: (a + 1j * b).astype(C64),
            _arrays((rand_normal, (2, 3), F32), (rand_normal, (2, 3), F32)),
        ),
        Case(
            "complex",
            "f32[]",
            lax.complex,
            lambda a, b: (a + 1j * b).astype(C64),
            _arrays((rand_normal, (), F32), (rand_normal, (), F32)),
        ),
    ]


# ---- shapes ------------------------------------------------------------------
def _np_pad(x, value, config):
    """lax.pad in NumPy: interior padding, then (possibly negative) edges."""
    for axis, (lo, hi, interior) in enumerate(config):
        n = x.shape[axis]
        if interior and n > 1:
            shape = list(x.shape)
            shape[axis] = n + (n - 1) * interior
            spread = np.full(shape, value, x.dtype)
            index = [slice(None)] * x.ndim
            index[axis] = slice(None, None, interior + 1)
            spread[tuple(index)] = x
            x = spread
        for amount, at_end in ((lo, False), (hi, True)):
            if amount >= 0:
                shape = list(x.shape)
                shape[axis] = amount
                pad = np.full(shape, value, x.dtype)
                x = np.concatenate([x, pad] if at_end else [pad, x], axis=axis)
            else:
                index = [slice(None)] * x.ndim
                index[axis] = slice(None, amount) if at_end else slice(-amount, None)
                x = x[tuple(index)]
    return x


def _np_dynamic_slice(x, *starts_and_sizes):
    n = x.ndim
    starts, sizes = starts_and_sizes[:n], starts_and_sizes[n]
    starts = [int(np.clip(s + d * (s < 0), 0, d - z))  # negatives count from the end
              for s, d, z in zip(starts, x.shape, sizes)]  # fmt: skip
    return x[tuple(slice(s, s + z) for s, z in zip(starts, sizes))]


def _np_dynamic_update_slice(x, update, *starts):
    starts = [int(np.clip(s + d * (s < 0), 0, d - u))
              for s, d, u in zip(starts, x.shape, update.shape)]  # fmt: skip
    out = x.copy()
    out[tuple(slice(s, s + u) for s, u in zip(starts, update.shape))] = update
    return out


def _shape_cases() -> list[Case]:
    x23 = _arrays((rand_normal, (2, 3), F32))
    cases = [
        Case(
            "broadcast_in_dim",
            "f32[3]-to-[2,3]",
            lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)),
            lambda x: np.broadcast_to(x, (2, 3)),
            _arrays((rand_normal, (3,), F32)),
        ),
        Case(
            "broadcast_in_dim",
            "f32[]-to-[2,3]",
            lambda x: lax.broadcast_in_dim(x, (2, 3), ()),
            lambda x: np.broadcast_to(x, (2, 3)),
            _arrays((rand_normal, (), F32)),
        ),
        Case(
            "broadcast_in_dim",
            "i32[3,1]-to-[3,4]",
            lambda x: lax.broadcast_in_dim(x, (3, 4), (0, 1)),
            lambda x: np.broadcast_to(x, (3, 4)),
            _arrays((rand_int, (3, 1), I32)),
        ),
        Case(
            "broadcast_in_dim",
            "bool[2]-to-[2,0]",
            lambda x: lax.broadcast_in_dim(x, (2, 0), (0,)),
            lambda x: np.broadcast_to(x[:, None], (2, 0)),
            _arrays((lambda r, s, d: rand_bool(r, s), (2,), BOOL)),
        ),
        Case(
            "reshape",
            "f32[2,3]-to-[3,2]",
            lambda x: lax.reshape(x, (3, 2)),
            lambda x: x.reshape(3, 2),
            x23,
        ),
        Case(
            "reshape",
            "i32[6]-to-[2,1,3]",
            lambda x: lax.reshape(x, (2, 1, 3)),
            lambda x: x.reshape(2, 1, 3),
            _arrays((rand_int, (6,), I32)),
        ),
        Case(
            "reshape",
            "f32[2,3]-dimensions-(1,0)",
            lambda x: lax.reshape(x, (6,), (1, 0)),
            lambda x: x.T.reshape(6),
            x23,
        ),
        Case(
            "reshape",
            "f32[0,3]-to-[3,0]",
            lambda x: lax.reshape(x, (3, 0)),
            lambda x: x.reshape(3, 0),
            _arrays((rand_normal, (0, 3), F32)),
        ),
        Case(
            "transpose",
            "f32[2,3]",
            lambda x: lax.transpose(x, (1, 0)),
            np.transpose,
            x23,
        ),
        Case(
            "transpose",
            "i32[2,3,4]-(2,0,1)",
            lambda x: lax.transpose(x, (2, 0, 1)),
            lambda x: np.transpose(x, (2, 0, 1)),
            _arrays((rand_int, (2, 3, 4), I32)),
        ),
        Case(
            "squeeze",
            "f32[1,3,1]",
            lambda x: lax.squeeze(x, (0, 2)),
            lambda x: x.reshape(3),
            _arrays((rand_normal, (1, 3, 1), F32)),
        ),
        Case(
            "squeeze",
            "bool[1]",
            lambda x: lax.squeeze(x, (0,)),
            lambda x: x.reshape(()),
            _arrays((lambda r, s, d: rand_bool(r, s), (1,), BOOL)),
        ),
        Case(
            "expand_dims",
            "f32[3]-(0,)",
            lambda x: lax.expand_dims(x, (0,)),
            lambda x: x[None],
            _arrays((rand_normal, (3,), F32)),
        ),
        Case(
            "expand_dims",
            "i32[]-(0,1)",
            lambda x: lax.expand_dims(x, (0, 1)),
            lambda x: x.reshape(1, 1),
            _arrays((rand_int, (), I32)),
        ),
        Case(
            "expand_dims",
            "f32[2,3]-(-1,)",
            lambda x: lax.expand_dims(x, (-1,)),
            lambda x: x[..., None],
            x23,
        ),
        Case(
            "slice",
            "f32[5]-1:4",
            lambda x: lax.slice(x, (1,), (4,)),
            lambda x: x[1:4],
            _arrays((rand_normal, (5,), F32)),
        ),
        Case(
            "slice",
            "f32[7]-strided",
            lambda x: lax.slice(x, (1,), (7,), (2,)),
            lambda x: x[1:7:2],
            _arrays((rand_normal, (7,), F32)),
        ),
        Case(
            "slice",
            "i32[3,4]-2d",
            lambda x: lax.slice(x, (1, 0), (3, 4), (1, 3)),
            lambda x: x[1:3, 0:4:3],
            _arrays((rand_int, (3, 4), I32)),
        ),
        Case(
            "slice",
            "f32[3]-empty",
            lambda x: lax.slice(x, (2,), (2,)),
            lambda x: x[2:2],
            _arrays((rand_normal, (3,), F32)),
        ),
        Case(
            "rev", "f32[2,3]-(0,)", lambda x: lax.rev(x, (0,)), lambda x: x[::-1], x23
        ),
        Case(
            "rev",
            "i32[2,3]-(0,1)",
            lambda x: lax.rev(x, (0, 1)),
            lambda x: x[::-1, ::-1],
            _arrays((rand_int, (2, 3), I32)),
        ),
        Case(
            "concatenate",
            "f32[2,3]+[1,3]-dim0",
            lambda a, b: lax.concatenate([a, b], 0),
            lambda a, b: np.concatenate([a, b], 0),
            _arrays((rand_normal, (2, 3), F32), (rand_normal, (1, 3), F32)),
        ),
        Case(
            "concatenate",
            "i32[2,1]+[2,0]+[2,2]-dim1",
            lambda a, b, c: lax.concatenate([a, b, c], 1),
            lambda a, b, c: np.concatenate([a, b, c], 1),
            _arrays(
                (rand_int, (2, 1), I32),
                (rand_int, (2, 0), I32),
                (rand_int, (2, 2), I32),
            ),
        ),
        Case(
            "concatenate",
            "bool[3]-single",
            lambda a: lax.concatenate([a], 0),
            lambda a: a,
            _arrays((lambda r, s, d: rand_bool(r, s), (3,), BOOL)),
        ),
    ]
    pad_configs = [((1, 2, 0),), ((0, 0, 2),), ((-1, 1, 1),)]
    for config in pad_configs:
        cases.append(
            Case(
                "pad",
                f"f32[3]-{config[0]}".replace(" ", ""),
                lambda x, v, c=config: lax.pad(x, v, c),
                lambda x, v, c=config: _np_pad(x, v, c),
                _arrays((rand_normal, (3,), F32), (rand_normal, (), F32)),
            )
        )
    cases.append(
        Case(
            "pad",
            "i32[2,3]-2d",
            lambda x, v: lax.pad(x, v, ((1, 0, 0), (0, 2, 1))),
            lambda x, v: _np_pad(x, v, ((1, 0, 0), (0, 2, 1))),
            _arrays((rand_int, (2, 3), I32), (rand_int, (), I32)),
        )
    )
    cases.append(
        Case(
            "pad",
            "f32[0]",
            lambda x, v: lax.pad(x, v, ((1, 1, 3),)),
            lambda x, v: _np_pad(x, v, ((1, 1, 3),)),
            _arrays((rand_normal, (0,), F32), (rand_normal, (), F32)),
        )
    )
    for start, label in [(1, "in-bounds"), (4, "clamped"), (-2, "negative-from-end")]:
        cases.append(
            Case(
                "dynamic_slice",
                f"f32[5]-start={start}-{label}",
                lambda x, i: lax.dynamic_slice(x, (i,), (3,)),
                lambda x, i: _np_dynamic_slice(x, i, (3,)),
                lambda rng, start=start: (rand_normal(rng, (5,)), np.int32(start)),
            )
        )
        cases.append(
            Case(
                "dynamic_update_slice",
                f"f32[5]-start={start}-{label}",
                lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
                _np_dynamic_update_slice,
                lambda rng, start=start: (
                    rand_normal(rng, (5,)),
                    rand_normal(rng, (2,)),
                    np.int32(start),
                ),
            )
        )
    cases.append(
        Case(
            "dynamic_slice",
            "i32[3,4]-2d",
            lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)),
            lambda x, i, j: _np_dynamic_slice(x, i, j, (2, 2)),
            lambda rng: (rand_int(rng, (3, 4)), np.int32(1), np.int32(3)),
        )
    )
    cases.append(
        Case(
            "dynamic_update_slice",
            "i32[3,4]-2d",
            lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
            _np_dynamic_update_slice,
            lambda rng: (
                rand_int(rng, (3, 4)),
                rand_int(rng, (2, 2)),
                np.int32(1),
                np.int32(1),
            ),
        )
    )
    return cases


def _iota_cases() -> list[Case]:
    return [
        Case(
            "iota",
            "i32[5]",
            lambda: lax.iota(np.int32, 5),
            lambda: np.arange(5, dtype=I32),
            lambda rng: (),
        ),
        Case(
            "iota",
            "f32[4]",
            lambda: lax.iota(np.float32, 4),
            lambda: np.arange(4, dtype=F32),
            lambda rng: (),
        ),
        Case(
            "iota",
            "i32[0]",
            lambda: lax.iota(np.int32, 0),
            lambda: np.arange(0, dtype=I32),
            lambda rng: (),
        ),
        Case(
            "iota",
            "broadcasted-i32[2,3]-dim1",
            lambda: lax.broadcasted_iota(np.int32, (2, 3), 1),
            lambda: np.broadcast_to(np.arange(3, dtype=I32), (2, 3)),
            lambda rng: (),
        ),
    ]


# ---- reductions and contractions ---------------------------------------------
def _reduction_cases() -> list[Case]:
    cases = []
    monoids = [
        ("reduce_sum", lax.reduce_sum, np.sum, rand_normal),
        ("reduce_prod", lax.reduce_prod, np.prod, rand_positive),
        (
            "reduce_max",
            lax.reduce_max,
            lambda x, axis: np.max(x, axis, initial=-np.inf),
            rand_normal,
        ),
        (
            "reduce_min",
            lax.reduce_min,
            lambda x, axis: np.min(x, axis, initial=np.inf),
            rand_normal,
        ),
    ]
    variants = [
        ((2, 3), (1,)),
        ((2, 3), (0, 1)),
        ((2, 3, 2), (0, 2)),
        ((0, 3), (0,)),
        ((), ()),
    ]
    for name, fn, ref, gen in monoids:
        for shape, axes in (
            variants if name == "reduce_sum" else [variants[0], variants[3]]
        ):
            cases.append(
                Case(
                    name,
                    f"{_spec(shape, F32)}-axes={axes}".replace(" ", ""),
                    lambda x, fn=fn, axes=axes: fn(x, axes),
                    lambda x, ref=ref, axes=axes: np.asarray(ref(x, axis=axes)).astype(
                        x.dtype
                    ),
                    _arrays((gen, shape, F32)),
                )
            )
        cases.append(
            Case(
                name,
                "i32[2,3]-axes=(0,)",
                lambda x, fn=fn: fn(x, (0,)),
                lambda x, name=name: {
                    "reduce_sum": np.sum,
                    "reduce_prod": np.prod,
                    "reduce_max": np.max,
                    "reduce_min": np.min,
                }[name](x, axis=0).astype(I32),
                _arrays((rand_int, (2, 3), I32)),
            )
        )
        if name in ("reduce_sum", "reduce_max"):
            cases.append(
                Case(
                    name,
                    "bf16[4]-axes=(0,)",
                    lambda x, fn=fn: fn(x, (0,)),
                    lambda x, ref=ref: np.asarray(ref(x, axis=(0,))).astype(np.float32),
                    _arrays((gen, (4,), BF16)),
                )
            )
    for name, fn, ref in [
        ("reduce_and", lax.reduce_and, np.all),
        ("reduce_or", lax.reduce_or, np.any),
    ]:
        for shape, axes in [((2, 3), (1,)), ((2, 0), (1,))]:
            cases.append(
                Case(
                    name,
                    f"{_spec(shape, BOOL)}-axes={axes}".replace(" ", ""),
                    lambda x, fn=fn, axes=axes: fn(x, axes),
                    lambda x, ref=ref, axes=axes: ref(x, axis=axes),
                    _arrays((lambda r, s, d: rand_bool(r, s), shape, BOOL)),
                )
            )
    for name, fn, ref in [
        ("reduce_and", lax.reduce_and, np.bitwise_and.reduce),
        ("reduce_or", lax.reduce_or, np.bitwise_or.reduce),
    ]:
        for dtype in (
            I32,
            np.dtype(np.uint8),
        ):  # bitwise: the identity has every bit set for and
            cases.append(
                Case(
                    name,
                    f"{dtype.name}[2,3]-bitwise",
                    lambda x, fn=fn: fn(x, (1,)),
                    lambda x, ref=ref: ref(x, axis=1),
                    lambda rng, dtype=dtype: (
                        rand_int(rng, (2, 3), dtype, 0, 256).astype(dtype),
                    ),
                )
            )
    for name, fn, ref in [
        ("argmax", lax.argmax, np.argmax),
        ("argmin", lax.argmin, np.argmin),
    ]:
        for shape, axis, dtype in [
            ((2, 3), 1, F32),
            ((2, 3), 0, F32),
            ((3, 5), 1, I32),
        ]:
            gen = (
                rand_int if dtype == I32 else rand_normal
            )  # small ints: ties pick the first index
            cases.append(
                Case(
                    name,
                    f"{_spec(shape, dtype)}-axis={axis}",
                    lambda x, fn=fn, axis=axis: fn(x, axis, np.int32),
                    lambda x, ref=ref, axis=axis: ref(x, axis=axis).astype(I32),
                    _arrays((gen, shape, dtype)),
                )
            )
        cases.append(
            Case(
                name,
                "f32[6]-nan-wins",
                lambda x, fn=fn: fn(x, 0, np.int32),
                lambda x, ref=ref: np.int32(ref(x)),
                lambda rng: (np.array([1, 7, np.nan, -9, np.nan, 3], F32),),
            )
        )
        cases.append(
            Case(
                name,
                "i32[6]-ties-first",
                lambda x, fn=fn: fn(x, 0, np.int32),
                lambda x, ref=ref: np.int32(ref(x)),
                lambda rng: (np.array([2, 9, -4, 9, -4, 2], I32),),
            )
        )
    return cases


def _dot_cases() -> list[Case]:
    matmul = (((1,), (0,)), ((), ()))
    return [
        Case(
            "dot_general",
            "matmul-f32[2,3]x[3,4]",
            lambda a, b: lax.dot_general(a, b, matmul),
            np.matmul,
            _arrays((rand_normal, (2, 3), F32), (rand_normal, (3, 4), F32)),
        ),
        Case(
            "dot_general",
            "vector-f32[3]x[3]",
            lambda a, b: lax.dot_general(a, b, (((0,), (0,)), ((), ()))),
            np.dot,
            _arrays((rand_normal, (3,), F32), (rand_normal, (3,), F32)),
        ),
        Case(
            "dot_general",
            "batched-f32[2,2,3]x[2,3,4]",
            lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
            np.matmul,
            _arrays((rand_normal, (2, 2, 3), F32), (rand_normal, (2, 3, 4), F32)),
        ),
        Case(
            "dot_general",
            "contract-lhs0-rhs1-f32[3,2]x[4,3]",
            lambda a, b: lax.dot_general(a, b, (((0,), (1,)), ((), ()))),
            lambda a, b: a.T @ b.T,
            _arrays((rand_normal, (3, 2), F32), (rand_normal, (4, 3), F32)),
        ),
        Case(
            "dot_general",
            "outer-f32[2]x[3]",
            lambda a, b: lax.dot_general(a, b, (((), ()), ((), ()))),
            np.outer,
            _arrays((rand_normal, (2,), F32), (rand_normal, (3,), F32)),
        ),
        Case(
            "dot_general",
            "matmul-i32[2,3]x[3,2]",
            lambda a, b: lax.dot_general(a, b, matmul),
            np.matmul,
            _arrays((rand_int, (2, 3), I32), (rand_int, (3, 2), I32)),
        ),
        Case(
            "dot_general",
            "empty-contraction-f32[2,0]x[0,3]",
            lambda a, b: lax.dot_general(a, b, matmul),
            np.matmul,
            _arrays((rand_normal, (2, 0), F32), (rand_normal, (0, 3), F32)),
        ),
        Case(
            "dot_general",
            "matmul-bf16[2,3]x[3,2]",
            lambda a, b: lax.dot_general(a, b, matmul),
            np.matmul,
            _arrays((rand_normal, (2, 3), BF16), (rand_normal, (3, 2), BF16)),
        ),
        Case(
            "dot_general",
            "preferred-f32-from-bf16",
            lambda a, b: lax.dot_general(
                a, b, matmul, preferred_element_type=np.float32
            ),
            lambda a, b: a @ b,
            lambda rng: tuple(
                x.astype(BF16)
                for x in (rand_normal(rng, (2, 3)), rand_normal(rng, (3, 2)))
            ),
            {"rtol": 1e-2, "atol": 1e-2},
        ),
    ]


def _stop_gradient_cases() -> list[Case]:
    """Forward, stop_gradient is the identity (its derivative is tested with grad)."""
    return [
        Case(
            "stop_gradient",
            _spec(shape, dtype),
            lax.stop_gradient,
            lambda x: x,
            _same_args(1, shape, dtype),
        )
        for shape, dtype in [((2, 3), F32), ((), I32)]
    ]


# ---- pjit --------------------------------------------------------------------
@olympus.jit
def _jitted_inner(x, y):
    return lax.add(lax.mul(x, y), lax.sin(x))


def _pjit_cases() -> list[Case]:
    def ref(x, y):
        return (x * y + np.sin(x)) * 2

    return [
        Case(
            "pjit",
            "nested-jit-f32[2,3]",
            lambda x, y: lax.mul(_jitted_inner(x, y), np.float32(2)),
            ref,
            _arrays((rand_normal, (2, 3), F32), (rand_normal, (2, 3), F32)),
        ),
        Case(
            "pjit",
            "nested-jit-f32[]",
            lambda x, y: lax.mul(_jitted_inner(x, y), np.float32(2)),
            ref,
            _arrays((rand_normal, (), F32), (rand_normal, (), F32)),
        ),
    ]


# ---- bit-level (olympus.lax.bits) ----------------------------------------------
def _bits_cases() -> list[Case]:
    U32 = np.dtype(np.uint32)
    words = lambda r, s, d: r.integers(0, 2**32, s, dtype=np.uint64).astype(U32)  # noqa: E731
    amounts = lambda r, s, d: r.integers(0, 40, s).astype(d)  # noqa: E731  (>= 32 included)
    shifts = [
        (
            "shift_left",
            lax.shift_left,
            lambda x, y: np.where(y < 32, x << np.minimum(y, 31), 0).astype(x.dtype),
        ),
        (
            "shift_right_logical",
            lax.shift_right_logical,
            lambda x, y: np.where(y < 32, x >> np.minimum(y, 31), 0).astype(x.dtype),
        ),
    ]
    cases = [
        Case(
            name,
            "u32[2,3]",
            fn,
            ref,
            _arrays((words, (2, 3), U32), (amounts, (2, 3), U32)),
        )
        for name, fn, ref in shifts
    ]
    cases.append(
        Case(
            "shift_right_arithmetic",
            "i32[2,3]",
            lax.shift_right_arithmetic,
            lambda x, y: (x >> np.minimum(y, 31)).astype(x.dtype),
            _arrays((rand_int, (2, 3), I32), (amounts, (2, 3), I32)),
        )
    )
    cases.append(
        Case(
            "shift_left",
            "u32[3]-by-scalar",
            lambda x: lax.shift_left(x, np.uint32(4)),
            lambda x: (x << 4).astype(x.dtype),
            _arrays((words, (3,), U32)),
        )
    )
    cases.append(
        Case(
            "bitcast_convert_type",
            "f32[2,3]->u32",
            lambda x: lax.bitcast_convert_type(x, np.uint32),
            lambda x: x.view(np.uint32),
            _arrays((rand_normal, (2, 3), F32)),
        )
    )
    cases.append(
        Case(
            "bitcast_convert_type",
            "u32[3]->f32",
            lambda x: lax.bitcast_convert_type(x, np.float32),
            lambda x: x.view(np.float32),
            lambda rng: (np.array([0x3F800000, 0x40490FDB, 0xBF000000], np.uint32),),
        )
    )
    return cases


CASES = (
    _elementwise_cases()
    + _select_and_convert_cases()
    + _clamp_cases()
    + _complex_cases()
    + _shape_cases()
    + _iota_cases()
    + _reduction_cases()
    + _dot_cases()
    + _stop_gradient_cases()
    + _pjit_cases()
    + _bits_cases()
)


def _run_both_ways(case: Case, args) -> None:
    """Eager against NumPy; then jit against NumPy twice (NumPy, then device
    arguments), tracing only once."""
    check_against_numpy(case.fn, case.ref, args, **case.tol)
    traces = []

    def traced(*a):
        traces.append(1)
        return case.fn(*a)

    jitted = olympus.jit(traced)
    check_against_numpy(jitted, case.ref, args, **case.tol)
    on_device = olympus.device_put(tuple(args))  # the second call takes jit's fast path
    check_against_numpy(lambda *_: jitted(*on_device), case.ref, args, **case.tol)
    assert len(traces) == 1, f"jit retraced {case.id} on an identical call"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_primitive_matches_numpy(case: Case):
    rng = np.random.default_rng(0)
    _run_both_ways(case, case.make_args(rng))


def test_pjit_equation_appears_and_runs_eagerly():
    """Nested jit stages one `pjit` equation; binding it eagerly runs the sub-program."""
    x, y = np.float32([1.0, 2.0]), np.float32([3.0, -1.0])
    closed = olympus.make_olympuspr(lambda x, y: _jitted_inner(x, y))(x, y)
    (eqn,) = closed.eqns
    assert eqn.primitive is pjit_p and eqn.params["name"] == "_jitted_inner"
    (out,) = pjit_p.bind(x, y, **eqn.params)
    np.testing.assert_allclose(np.asarray(out), x * y + np.sin(x), rtol=1e-6)


@pytest.mark.parametrize(
    "const",
    [
        np.array([[True, False, True], [False, False, True]]),
        np.zeros((0, 3), bool),
        np.arange(6).reshape(2, 3).astype(BF16),
        np.array([1 + 2j, 3j, -1], C64),
        np.array([np.nan, -np.inf, -0.0, 1e-45], F32),
    ],
    ids=["bool[2,3]", "bool[0,3]", "bf16[2,3]", "c64[3]", "f32-special"],
)
def test_constants_of_a_sub_program_lower_exactly(const):
    """pjit bodies with consts are inlined: their consts become StableHLO constants."""
    closed = olympus.make_olympuspr(lambda x: (x, const))(np.zeros_like(const))
    assert len(closed.consts) == 1
    run = olympus.jit(lambda x: pjit_p.bind(x, olympuspr=closed, name="f")[1])
    out = np.asarray(run(np.zeros_like(const)))
    assert out.dtype == const.dtype
    np.testing.assert_array_equal(out, const)  # bit-exact, -0.0 and denormals included
    np.testing.assert_array_equal(out.view(np.uint8), const.view(np.uint8))


# Primitives whose tests live in another file (control flow, autodiff helpers, ...):
# a new primitive is either a row of CASES or named here with its test file.
# name -> (test file, text that file must contain: the user-facing name)
TESTED_ELSEWHERE: dict[str, tuple[str, str]] = {
    "pure_callback": ("test_callback.py", "pure_callback"),
    "io_callback": ("test_callback.py", "io_callback"),
    "cond": ("test_control_flow.py", "lax.cond"),
    "while": ("test_control_flow.py", "lax.while_loop"),
    "scan": ("test_control_flow.py", "lax.scan"),
    "custom_jvp_call": ("test_autodiff.py", "custom_jvp"),
    "custom_vjp_call": ("test_autodiff.py", "custom_vjp"),
    "custom_vmap_call": ("test_custom_vmap.py", "custom_vmap"),
    "custom_lin": (
        "test_autodiff.py",
        "custom_vjp",
    ),  # what grad makes of a custom_vjp call
    "checkpoint": ("test_autodiff.py", "olympus.checkpoint"),
    "optimization_barrier": (
        "test_autodiff.py",
        "optimization_barrier",
    ),  # checkpoint's recompute
    "name": (
        "test_autodiff.py",
        "checkpoint_name",
    ),  # tags values for checkpoint policies
    "hint": ("test_hints.py", "olympus.hint"),  # annotations for the compiler
    "sharding_constraint": ("test_sharding.py", "lax.with_sharding_constraint"),
    "shard_map": ("test_shard_map.py", "olympus.shard_map"),
    "psum": ("test_shard_map.py", "lax.psum"),
    "pmax": ("test_shard_map.py", "lax.pmax"),
    "pmin": ("test_shard_map.py", "lax.pmin"),
    "all_gather": ("test_shard_map.py", "lax.all_gather"),
    "psum_scatter": ("test_shard_map.py", "lax.psum_scatter"),
    "ppermute": ("test_shard_map.py", "lax.ppermute"),
    "axis_index": ("test_shard_map.py", "lax.axis_index"),
    "all_to_all": ("test_shard_map.py", "lax.all_to_all"),
    # the primitive of lax.pcast(to='varying') (JAX 0.10.2 has no lax.pvary)
    "pvary": ("test_sharding_api.py", "lax.pcast"),
    # zeros_like/full_like inside a shard_map body (the check_vma types)
    "vary_like": ("test_shard_map_loop_carries.py", "jnp.zeros_like"),
    "cholesky": ("test_linalg.py", "lax_linalg.cholesky"),
    "triangular_solve": ("test_linalg.py", "lax_linalg.triangular_solve"),
    "lu": ("test_linalg.py", "lax_linalg.lu"),
    "eigh": ("test_linalg.py", "lax_linalg.eigh"),
    "eig": ("test_linalg.py", "lax_linalg.eig("),
    "geqrf": ("test_linalg.py", "lax_linalg.geqrf"),
    "householder_product": ("test_linalg.py", "lax_linalg.householder_product"),
    "svd": ("test_linalg.py", "lax_linalg.svd"),
    "qr": ("test_linalg.py", "lax_linalg.qr"),
    "gather": ("test_gather_scatter.py", "lax.gather"),
    "scatter": ("test_gather_scatter.py", "lax.scatter,"),
    "scatter_add": ("test_gather_scatter.py", "lax.scatter_add"),
    "scatter_mul": ("test_gather_scatter.py", "lax.scatter_mul"),
    "scatter_min": ("test_gather_scatter.py", "lax.scatter_min"),
    "scatter_max": ("test_gather_scatter.py", "lax.scatter_max"),
    "sort": ("test_sorting.py", "lax.sort"),
    "top_k": ("test_top_k.py", "lax.top_k"),
    "approx_top_k": ("test_top_k.py", "lax.approx_max_k"),
    "conv_general_dilated": ("test_convolution.py", "lax.conv_general_dilated"),
    "reduce_window_sum": ("test_windowed.py", "lax.reduce_window_sum"),
    "reduce_window_max": ("test_windowed.py", "lax.reduce_window_max"),
    "fft": ("test_array_api.py", "olympus.lax.fft"),
    "erfc": ("test_scipy.py", "lax.erfc"),
    "erf_inv": ("test_scipy.py", "lax.erf_inv"),
    "lgamma": ("test_scipy.py", "lax.lgamma"),
    "digamma": ("test_scipy.py", "lax.digamma"),
    "polygamma": ("test_scipy.py", "lax.polygamma"),
    "population_count": ("test_lax_parity.py", "lax.population_count"),
    "reduce_precision": ("test_lax_parity.py", "lax.reduce_precision"),
    "cbrt": ("test_lax_more.py", "lax.cbrt"),
    "clz": ("test_lax_more.py", "lax.clz"),
    "is_finite": ("test_lax_more.py", "lax.is_finite"),
    "reduce_xor": ("test_lax_more.py", "lax.reduce_xor"),
    "igamma": ("test_incomplete_special.py", "lax.igamma"),
    "igammac": ("test_incomplete_special.py", "lax.igammac"),
    "igamma_grad_a": ("test_incomplete_special.py", "lax.igamma_grad_a"),
    "random_gamma_grad": ("test_incomplete_special.py", "lax.random_gamma_grad"),
    "regularized_incomplete_beta": ("test_incomplete_special.py", "lax.betainc"),
    "zeta": ("test_incomplete_special.py", "lax.zeta"),
    "bessel_i0e": ("test_incomplete_special.py", "lax.bessel_i0e"),
    "bessel_i1e": ("test_incomplete_special.py", "lax.bessel_i1e"),
}


def test_every_primitive_is_tested():
    tested = {case.prim for case in CASES}
    tests_dir = pathlib.Path(__file__).parent
    missing = []
    for name in sorted(all_primitives):
        if name in tested:
            continue
        filename, usage = TESTED_ELSEWHERE.get(name, (None, None))
        path = tests_dir / filename if filename else None
        if path is None or not path.exists() or usage not in path.read_text():
            missing.append(name)
    assert not missing, (
        f"primitives without a test in tests/test_primitives.py: {missing}"
    )
    assert not tested - set(all_primitives), "CASES names primitives that do not exist"


# A primitive whose public function has another name; "custom_lin" has none on
# purpose: it only exists inside linearize, where custom_vjp's backward rule waits.
PUBLIC_NAME = {
    "approx_top_k": "lax.approx_max_k",
    "pvary": "lax.pcast",
    "vary_like": "olympus.numpy.zeros_like",
    "not": "lax.bitwise_not",
    "and": "lax.bitwise_and",
    "or": "lax.bitwise_or",
    "xor": "lax.bitwise_xor",
    "while": "lax.while_loop",
    "pjit": "olympus.jit",
    "custom_jvp_call": "olympus.custom_jvp",
    "custom_vjp_call": "olympus.custom_vjp",
    "custom_vmap_call": "olympus.custom_batching.custom_vmap",
    "checkpoint": "olympus.checkpoint",
    "name": "olympus.ad_checkpoint.checkpoint_name",
    "sharding_constraint": "lax.with_sharding_constraint",
    "shard_map": "olympus.shard_map",
    "pure_callback": "olympus.pure_callback",
    "io_callback": "olympus.experimental.io_callback",
    "regularized_incomplete_beta": "lax.betainc",
    **{
        n: f"lax.linalg.{n}"
        for n in (
            "cholesky",
            "triangular_solve",
            "lu",
            "eigh",
            "eig",
            "geqrf",
            "householder_product",
            "svd",
            "qr",
        )
    },
}


def _public_function(path: str):
    module, _, name = path.rpartition(".")
    root = {"lax": lax, "olympus": olympus}[module.split(".")[0]]
    for part in module.split(".")[1:]:
        root = getattr(root, part)
    return getattr(root, name, None)


def test_every_primitive_has_a_public_function():
    """Issue #6: `olympus.lax` has a public function for every primitive."""
    missing = [
        name
        for name in sorted(all_primitives)
        if name != "custom_lin"
        and not callable(_public_function(PUBLIC_NAME.get(name, f"lax.{name}")))
    ]
    assert not missing, f"primitives without a public function: {missing}"


# ---- the comparison helpers themselves -------------------------------------------
def test_check_against_numpy_catches_wrong_values_shapes_and_dtypes():
    x = np.float32([1.0, 2.0])
    check_against_numpy(lax.neg, np.negative, (x,))
    with pytest.raises(AssertionError):
        check_against_numpy(lax.neg, np.positive, (x,))
    with pytest.raises(AssertionError, match="shape"):
        check_against_numpy(lambda x: lax.reduce_sum(x, (0,)), lambda x: x, (x,))
    with pytest.raises(AssertionError, match="dtype"):
        check_against_numpy(lax.neg, lambda x: (-x).astype(np.int32), (x,))
