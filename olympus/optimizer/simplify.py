"""Algebraic simplification: a table of rewrite rules (engine: rules.py).

Every row preserves values exactly under IEEE arithmetic, NaN, infinities and
the sign of zero included. Hence no `x * 0 -> 0` (NaN and inf times 0 are
NaN) and no `x + 0.0 -> x` for floats (-0.0 + 0.0 is +0.0); `x + -0.0` and
`x - 0.0` are exact. Rules on constants match real (float or integer)
operands only: for complex numbers even `x * 1` turns an infinite part into NaN.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from olympus.lax.traits import names_with
from olympus.ir import dtypes
from olympus.ir.core import Var
from olympus.optimizer.program import defer, is_effectful, rewrite_pass
from olympus.optimizer.rules import (
    Lit,
    NoMatch,
    Op,
    Rule,
    is_float,
    is_real,
    table_step,
)


def _is_integer(*names):
    return lambda m: all(dtypes.is_integer(m[n].aval.dtype) for n in names)


def _params_is(name: str, key: str, value):
    return lambda m: m[name].params[key] == value


def _neg(m, b):
    return b.op("neg", m.x)


def _binary(prim):
    return lambda m, b: b.op(prim, m.x, m.y)


def _plain_reshape(*names):
    def check(m) -> bool:
        for n in names:
            dims = m[n].params.get("dimensions")
            if dims is not None and tuple(dims) != tuple(range(len(dims))):
                return False
        return True

    return check


def _identity_permutation(m) -> bool:
    perm = tuple(m.t.params["permutation"])
    return perm == tuple(range(len(perm)))


def _composed_transpose(m, b):
    p, q = m.inner.params["permutation"], m.outer.params["permutation"]
    return b.op("transpose", m.x, permutation=tuple(int(p[j]) for j in q))


def _composed_broadcast(m, b):
    inner, outer = m.inner.params["broadcast_dimensions"], m.outer.params
    dims = tuple(int(outer["broadcast_dimensions"][d]) for d in inner)
    return b.op(
        "broadcast_in_dim", m.x, shape=tuple(outer["shape"]), broadcast_dimensions=dims
    )


def _unit_dims_moved(m, b):
    """broadcast_in_dim of a reshape that only adds or drops size-1 axes, as
    one broadcast_in_dim of the reshape's operand (a size-1 axis may go to any
    output axis, in order)."""
    x_shape, y_shape = m.x.aval.shape, m.r.outvars[0].aval.shape
    x_big = [i for i, d in enumerate(x_shape) if d != 1]
    y_big = [i for i, d in enumerate(y_shape) if d != 1]
    if [x_shape[i] for i in x_big] != [y_shape[i] for i in y_big]:
        raise NoMatch("the reshape moves data")
    out = m.outer.params
    ndim, y_dims = len(out["shape"]), out["broadcast_dimensions"]
    fixed = {i: int(y_dims[j]) for i, j in zip(x_big, y_big)}
    dims, prev = [], -1
    for i in range(len(x_shape)):
        if i in fixed:
            dim = fixed[i]
        else:
            bound = min([fixed[k] for k in fixed if k > i], default=ndim)
            dim = next(
                (d for d in range(prev + 1, bound) if d not in fixed.values()), None
            )
        if dim is None or dim <= prev:
            raise NoMatch("no increasing axis order")
        dims.append(dim)
        prev = dim
    return b.op(
        "broadcast_in_dim",
        m.x,
        shape=tuple(out["shape"]),
        broadcast_dimensions=tuple(dims),
    )


def _dot_swap(m) -> tuple | None:
    """The transpose that swaps a dot_general's free blocks (batch axes first)."""
    (lc, rc), (lb, _) = m.dot.params["dimension_numbers"]
    nb = len(lb)
    nl = m.a.aval.ndim - len(lc) - nb
    nr = m.b.aval.ndim - len(rc) - nb
    return (*range(nb), *range(nb + nl, nb + nl + nr), *range(nb, nb + nl))


def _swaps_free_blocks(m) -> bool:
    return tuple(m.t.params["permutation"]) == _dot_swap(m)


def _swapped_dot(m, b):
    (lc, rc), (lb, rb) = m.dot.params["dimension_numbers"]
    precision = m.dot.params.get("precision")  # one per operand: swapped with them
    params = dict(
        m.dot.params,
        dimension_numbers=((rc, lc), (rb, lb)),
        precision=None if precision is None else tuple(precision[::-1]),
    )
    return b.op("dot_general", m.b, m.a, **params)


def _round_trip_exact(m) -> bool:
    """convert(convert(x, w), back) is x when w holds every value of x's dtype."""
    src, wide = m.x.aval.dtype, m.inner.outvars[0].aval.dtype
    if src == np.bool_:
        return True
    try:
        return bool(np.can_cast(src, wide, "safe")) and not dtypes.is_complex(wide)
    except TypeError:
        return False


def _no_axes(integers_only: bool):
    def check(m) -> bool:
        if integers_only and not dtypes.is_integer(m.x.aval.dtype):
            return False
        return tuple(m.r.params["axes"]) == ()

    return check


def _scalar(name):
    return lambda m: m[name].aval.shape == ()


def _use_counts(walk) -> dict:
    """How often each variable of the walk's program is read by live equations
    and outputs (dead readers, which dce drops, do not count). Kept up to date
    by `Walk.replace`."""
    uses = walk.memo.get("uses")
    if uses is None:
        program = walk.olympuspr
        reads = list(program.outvars)  # literals too: they are never asked for
        live = set(reads)
        for e in reversed(program.eqns):
            for v in e.outvars:
                if v in live:
                    break
            else:
                if not is_effectful(e):
                    continue
            reads += e.invars
            live.update(e.invars)
        uses = walk.memo["uses"] = Counter(reads)
        for old, new in walk.subst.items():
            if type(new) is Var:
                uses[new] = uses.get(new, 0) + uses.get(old, 0)
    return uses


def _only_here(*names):
    """The reshapes `names` are plain and read by the rewritten equation alone,
    so moving them after it adds no equation."""

    plain = [_plain_reshape(n) for n in names]

    def check(m) -> bool:
        uses, here = _use_counts(m.walk), m.e.invars
        for n, is_plain in zip(names, plain):
            out = m[n].outvars[0]
            if not is_plain(m) or out not in here:  # read through a hint
                return False
            if uses.get(out, 0) != here.count(out):
                defer(m.e)  # the other reader may be rewritten away later
                return False
        return len(names) < 2 or m.x.aval.shape == m.y.aval.shape

    return check


def _then_reshape(*operands):
    """op(x, ...) then the reshape the rewritten equation's result had."""

    def build(m, b):
        inner = b.op(m.e.primitive.name, *(m[n] for n in operands), **m.e.params)
        shape = m.e.outvars[0].aval.shape
        return b.op("reshape", inner, new_sizes=shape, dimensions=None)

    return build


def _scalar_and_only_here(name):
    only_here = _only_here(name)
    return lambda m: m.s.aval.shape == () and only_here(m)


_UNARY = names_with("elementwise_unary")
_REDUCTIONS = names_with("reduction")
_BROADCASTING = names_with("scalar_broadcasting")

RULES: list[Rule] = [
    # x * 1 -> x
    Rule("mul_one", Op("mul", "x", Lit(1)), "x"),
    # x / 1 -> x
    Rule("div_one", Op("div", "x", Lit(1)), "x"),
    # x - 0 -> x          (x - (+0) is x for every x, -0 included)
    Rule("sub_zero", Op("sub", "x", Lit(0)), "x"),
    # x + -0.0 -> x       (floats: -0 is the additive identity, +0 is not)
    Rule("add_neg_zero", Op("add", "x", Lit(-0.0)), "x"),
    # x + 0 -> x          (integers)
    Rule("add_zero_int", Op("add", "x", Lit(0)), "x", _is_integer("x")),
    # x * -1 -> -x
    Rule("mul_minus_one", Op("mul", "x", Lit(-1)), _neg, is_real("x")),
    # -0.0 - x -> -x      (floats)
    Rule("neg_zero_sub", Op("sub", Lit(-0.0), "x"), _neg, is_float("x")),
    # 0 - x -> -x         (integers)
    Rule("zero_sub_int", Op("sub", Lit(0), "x"), _neg, _is_integer("x")),
    # x + -y -> x - y
    Rule("add_neg", Op("add", "x", Op("neg", "y")), _binary("sub")),
    # x - -y -> x + y
    Rule("sub_neg", Op("sub", "x", Op("neg", "y")), _binary("add")),
    # -x * -y -> x * y
    Rule("neg_mul_neg", Op("mul", Op("neg", "x"), Op("neg", "y")), _binary("mul")),
    # -x / -y -> x / y
    Rule("neg_div_neg", Op("div", Op("neg", "x"), Op("neg", "y")), _binary("div")),
    # -(-x) -> x
    Rule("neg_neg", Op("neg", Op("neg", "x")), "x"),
    # |-x| -> |x|
    Rule("abs_neg", Op("abs", Op("neg", "x")), lambda m, b: b.op("abs", m.x)),
    # ||x|| -> |x|
    Rule(
        "abs_abs",
        Op("abs", Op("abs", "x", name="inner")),
        lambda m, b: m.inner.outvars[0],
    ),
    # max(x, x) -> x
    Rule("max_same", Op("max", "x", "x"), "x"),
    # min(x, x) -> x
    Rule("min_same", Op("min", "x", "x"), "x"),
    # x & x -> x
    Rule("and_same", Op("and", "x", "x"), "x"),
    # x | x -> x
    Rule("or_same", Op("or", "x", "x"), "x"),
    # ~~x -> x
    Rule("not_not", Op("not", Op("not", "x")), "x"),
    # select_n(p, x, x) -> x
    Rule("select_same", Op("select_n", "p", "x", "x"), "x"),
    # x ** 1 -> x         (integer_pow)
    Rule("pow_one", Op("integer_pow", "x", name="e"), "x", _params_is("e", "y", 1)),
    # convert(x) to x's own dtype and weak_type -> x
    Rule("convert_same", Op("convert_element_type", "x"), "x"),
    # convert(convert(x, wider), x's dtype) -> x     (the wider dtype holds x exactly)
    Rule(
        "convert_round_trip",
        Op("convert_element_type", Op("convert_element_type", "x", name="inner")),
        "x",
        _round_trip_exact,
    ),
    # reshape(x) to x's own shape -> x
    Rule("reshape_same", Op("reshape", "x", name="r"), "x", _plain_reshape("r")),
    # reshape(reshape(x)) -> reshape(x)
    Rule(
        "reshape_reshape",
        Op("reshape", Op("reshape", "x", name="inner"), name="outer"),
        lambda m, b: b.op(
            "reshape", m.x, new_sizes=m.outer.params["new_sizes"], dimensions=None
        ),
        _plain_reshape("inner", "outer"),
    ),
    # transpose(x, identity) -> x
    Rule(
        "transpose_identity", Op("transpose", "x", name="t"), "x", _identity_permutation
    ),
    # transpose(transpose(x, p), q) -> transpose(x, p[q])
    Rule(
        "transpose_transpose",
        Op("transpose", Op("transpose", "x", name="inner"), name="outer"),
        _composed_transpose,
    ),
    # expand_dims(x) -> reshape(x)       (only size-1 axes added: the reshape rows then apply)
    Rule(
        "expand_dims_reshape",
        Op("expand_dims", "x", name="e"),
        lambda m, b: b.op(
            "reshape", m.x, new_sizes=m.e.outvars[0].aval.shape, dimensions=None
        ),
    ),
    # broadcast_in_dim(x) to x's own shape -> x
    Rule("broadcast_same", Op("broadcast_in_dim", "x"), "x"),
    # broadcast_in_dim(broadcast_in_dim(x, d1), d2) -> broadcast_in_dim(x, d2[d1])
    Rule(
        "broadcast_broadcast",
        Op("broadcast_in_dim", Op("broadcast_in_dim", "x", name="inner"), name="outer"),
        _composed_broadcast,
    ),
    # broadcast_in_dim(reshape(x)) -> broadcast_in_dim(x)   (the reshape only moves 1-axes)
    Rule(
        "broadcast_reshape",
        Op("broadcast_in_dim", Op("reshape", "x", name="r"), name="outer"),
        _unit_dims_moved,
        _plain_reshape("r"),
    ),
    # transpose(dot_general(a, b)) -> dot_general(b, a)   (the same sums of products)
    Rule(
        "transpose_dot",
        Op("transpose", Op("dot_general", "a", "b", name="dot"), name="t"),
        _swapped_dot,
        _swaps_free_blocks,
    ),
]
# reduce(x, axes=()) -> x     (a float sum is 0 + x, and 0 + -0.0 is +0.0: integers only)
RULES += [
    Rule(f"{r}_no_axes", Op(r, "x", name="r"), "x", _no_axes(r == "reduce_sum"))
    for r in _REDUCTIONS
]
# x op broadcast_in_dim(s) -> x op s, and broadcast_in_dim(s) op y -> s op y   (s: a scalar)
RULES += [
    Rule(
        f"{p}_scalar_right",
        Op(p, "x", Op("broadcast_in_dim", "y", of_scalar=True)),
        _binary(p),
    )
    for p in _BROADCASTING
]
RULES += [
    Rule(
        f"{p}_scalar_left",
        Op(p, Op("broadcast_in_dim", "x", of_scalar=True), "y"),
        _binary(p),
    )
    for p in _BROADCASTING
]
# Reshapes move after elementwise work, towards the broadcast or reshape that
# absorbs them (keepdims reductions leave such chains): only when the reshape
# has no other reader, so no equation is added.
# u(reshape(x)) -> reshape(u(x))
RULES += [
    Rule(
        f"{u}_reshape",
        Op(u, Op("reshape", "x", name="r"), name="e"),
        _then_reshape("x"),
        _only_here("r"),
    )
    for u in _UNARY
]
# reshape(x) op s -> reshape(x op s), s op reshape(x) -> reshape(s op x)   (s: a scalar)
RULES += [
    Rule(
        f"{p}_reshape_scalar_{side}",
        Op(
            p,
            *(Op("reshape", "x", name="r") if v == "x" else v for v in order),
            name="e",
        ),
        _then_reshape(*order),
        _scalar_and_only_here("r"),
    )
    for side, order in (("right", ("x", "s")), ("left", ("s", "x")))
    for p in _BROADCASTING
]
# reshape(x) op reshape(y) -> reshape(x op y)   (x and y of one shape)
RULES += [
    Rule(
        f"{p}_reshape_both",
        Op(p, Op("reshape", "x", name="r"), Op("reshape", "y", name="q"), name="e"),
        _then_reshape("x", "y"),
        _only_here("r", "q"),
    )
    for p in _BROADCASTING
]

step = table_step(RULES, "simplify")
simplify = rewrite_pass(step)
