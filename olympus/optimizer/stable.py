"""Numerically stable rewrites: a second table on the rules.py engine.

Each row replaces a naive formula that overflows or cancels by the form
olympus.nn uses for the same function, so `log(1 + exp(x))` at x = 100 gives
100 rather than inf. A row never makes a result less accurate: on ordinary
inputs both forms agree to rounding. Rows also cover the shapes reverse mode
gives the naive formulas' gradients (`exp(x) / (1 + exp(x))`, the softmax of
`log(sum(exp(x)))`, `s / (1 + exp(u)) * exp(u)` of `1 / (1 + exp(-x))`, the
`(t / logistic(x)) * (logistic(x) * y)` of `log(logistic(x))`, the products
ending the reverse mode of `log(softmax(x))` along any axes), so a gradient
program is finite where the math is (the stable rows run on the program jit
lowers, after differentiation). A sum along some axes appears spread back by a
`broadcast_in_dim`, or, summed over every axis, as the rank-0 result itself:
such rows are written once and expand to both (`_spread_rows`).
"""

from __future__ import annotations

from olympus.ir import dtypes
from olympus.ir.core import Var
from olympus.optimizer.program import rewrite_pass
from olympus.optimizer.rules import Lit, Op, Rule, is_float, table_step


def _softplus(b, x):
    """max(x, 0) + log1p(exp(-|x|)), as olympus.nn.softplus."""
    positive = b.op("max", x, b.lit(0, x))
    tail = b.op("log1p", b.op("exp", b.op("neg", b.op("abs", x))))
    return b.op("add", positive, tail)


def _producer(m, atom, name: str):
    eqn = m.walk.producer.get(atom) if isinstance(atom, Var) else None
    return eqn if eqn is not None and eqn.primitive.name == name else None


def _not_shifted(m) -> bool:
    """x is not already x' - spread(clamp(max x')): the stable form's own sum."""
    sub = _producer(m, m.x, "sub")
    spread = sub and _producer(m, sub.invars[1], "broadcast_in_dim")
    return not (spread and _producer(m, spread.invars[0], "clamp"))


def _not_nonpositive_form(m) -> bool:
    """x is not already -|y| (the stable form's own log1p(exp(-|y|)))."""
    neg = _producer(m, m.x, "neg")
    return not (neg and _producer(m, neg.invars[0], "abs"))


def _float_x_and(guard):
    return lambda m: is_float("x")(m) and guard(m)


def _kept_dims(ndim: int, axes) -> tuple:
    return tuple(d for d in range(ndim) if d not in set(axes))


def _max_shifted(b, x, axes):
    """(exp(x - m), m) with m the max over `axes` clamped to the finite range,
    so an all -inf (or +inf) slice computes what the naive form does."""
    dtype = x.aval.dtype
    m = b.op("reduce_max", x, axes=axes)
    low, high = (
        b.lit(dtypes.float_lowest(dtype), x),
        b.lit(dtypes.float_highest(dtype), x),
    )
    m = b.op("clamp", low, m, high)
    dims = _kept_dims(x.aval.ndim, axes)
    spread = b.op("broadcast_in_dim", m, shape=x.aval.shape, broadcast_dimensions=dims)
    return b.op("exp", b.op("sub", x, spread)), m


def _axes(m) -> tuple:
    """The softmax's axes: those of the matched sum(exp(x)), `s`, or of the
    denominator `d` a gradient row captured."""
    return tuple((m["s"] if "s" in m else _denominator(m)).params["axes"])


def _log_softmax(m, b):
    """(x - m) - log(sum(exp(x - m))), as olympus.nn.log_softmax."""
    x, axes = m.x, _axes(m)
    e, _ = _max_shifted(b, x, axes)
    shifted = b.eqns[-1].invars[0]  # x - spread(m), the operand of that exp
    log_total = b.op("log", b.op("reduce_sum", e, axes=axes))
    return b.op("sub", shifted, _spread_back(b, log_total, x, axes))


def _logsumexp(m, b):
    axes = _axes(m)
    e, shift = _max_shifted(b, m.x, axes)
    return b.op("add", b.op("log", b.op("reduce_sum", e, axes=axes)), shift)


def _spread_back(b, total, x, axes):
    """A reduction's result over `axes` put back along them (x's shape)."""
    dims = _kept_dims(x.aval.ndim, axes)
    return b.op(
        "broadcast_in_dim", total, shape=x.aval.shape, broadcast_dimensions=dims
    )


def _softmax(b, x, axes):
    e, _ = _max_shifted(b, x, axes)
    return b.op("div", e, _spread_back(b, b.op("reduce_sum", e, axes=axes), x, axes))


def _full(b, t, x):
    """t over x's shape (a scalar cotangent, e.g. of sum(f(x)), is spread)."""
    if t.aval.shape == x.aval.shape:
        return t
    return b.op("broadcast_in_dim", t, shape=x.aval.shape, broadcast_dimensions=())


def _scaled_softmax(m, b):
    """t * softmax(x), t spread as the rule's broadcast spreads it (1 * s is
    simplified away)."""
    x, axes = m.x, _axes(m)
    t = m.t
    if "spread" in m and t.aval.shape not in ((), x.aval.shape):
        t = b.op("broadcast_in_dim", t, **m.spread.params)
    return b.op("mul", t, _softmax(b, x, axes))


def _sum_times_softmax(b, m):
    """spread(sum(t)) * softmax(x): the part of log_softmax's gradient that
    flows through the denominator."""
    x, axes = m.x, _axes(m)
    total = b.op("reduce_sum", _full(b, m.t, x), axes=axes)
    return b.op("mul", _spread_back(b, total, x, axes), _softmax(b, x, axes))


def _log_softmax_grad(m, b):
    return b.op("sub", _full(b, m.t, m.x), _sum_times_softmax(b, m))


def _spreads_back(m, spread, axes) -> bool:
    """`spread` (a broadcast_in_dim equation, or None: the reduction's own
    rank-0 result used as it is) puts a reduction over `axes` back over x's
    shape along exactly those axes."""
    x = m.x
    if spread is None:
        return len(axes) == x.aval.ndim
    params = spread.params
    return tuple(params["shape"]) == x.aval.shape and tuple(
        params["broadcast_dimensions"]
    ) == _kept_dims(x.aval.ndim, axes)


def _spread_matches(m) -> bool:
    """The (optional) broadcast puts sum(exp(x)) back along the summed axes."""
    return is_float("x")(m) and _spreads_back(m, m.get("spread"), _axes(m))


def _denominator(m):
    """The reduce_sum equation of sum(exp(x)) when `d` is that sum spread back
    along the summed axes (or a sum over every axis, as it is); else None."""
    spread = _producer(m, m.d, "broadcast_in_dim")
    total = _producer(m, spread.invars[0] if spread else m.d, "reduce_sum")
    e = total and _producer(m, total.invars[0], "exp")
    if not e or e.invars[0] is not m.x:
        return None
    return total if _spreads_back(m, spread, tuple(total.params["axes"])) else None


def _log_softmax_backward(m) -> bool:
    """`d` is the softmax's denominator; t is of x's shape (or a scalar, spread);
    the cotangent's own sum `r` (if any) runs over the softmax's axes and is
    spread back along them."""
    if not is_float("x")(m) or m.t.aval.shape not in ((), m.x.aval.shape):
        return False
    total = _denominator(m)
    if total is None:
        return False
    axes = tuple(total.params["axes"])
    r = m.get("r")
    return r is None or (
        tuple(r.params["axes"]) == axes and _spreads_back(m, m.get("spread"), axes)
    )


class _Spread:
    """A reduction's result put back over x's shape: `broadcast_in_dim` (captured
    as "spread"), or, for a reduction over every axis, the rank-0 result as it
    is (simplify drops the broadcast of a scalar operand). `_spread_rows`
    writes a row for each."""

    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner


def _spread_variants(pattern, spread: bool):
    if type(pattern) is _Spread:
        inner = _spread_variants(pattern.inner, spread)
        return Op("broadcast_in_dim", inner, name="spread") if spread else inner
    if type(pattern) is not Op:
        return pattern
    operands = (_spread_variants(p, spread) for p in pattern.operands)
    return Op(pattern.prim, *operands, name=pattern.name, of_scalar=pattern.of_scalar)


def _spread_rows(name: str, pattern, replacement, when) -> list[Rule]:
    """`name` with the broadcast, `name_scalar` without (a sum over every axis)."""
    return [
        Rule(name, _spread_variants(pattern, True), replacement, when),
        Rule(f"{name}_scalar", _spread_variants(pattern, False), replacement, when),
    ]


def _logistic(m, b):
    return b.op("logistic", m.x)


def _log_sigmoid(m, b):
    return b.op("neg", _softplus(b, b.op("neg", m.x)))


def _hypot(m, b):
    """m * sqrt(1 + (n / m)**2), m = max(|x|, |y|), n = min(|x|, |y|); the ratio
    of 0 / 0 (both zero) or inf / inf (both infinite) is taken as 0."""
    x, y = b.op("abs", m.x), b.op("abs", m.y)
    big, small = b.op("max", x, y), b.op("min", x, y)
    ratio = b.op("div", small, big)
    zero = b.lit(0, ratio, weak_type=False)
    if ratio.aval.shape:
        zero = b.op(
            "broadcast_in_dim", zero, shape=ratio.aval.shape, broadcast_dimensions=()
        )
    ratio = b.op("select_n", b.op("ne", ratio, ratio), ratio, zero)
    one = b.lit(1, ratio)
    return b.op("mul", big, b.op("sqrt", b.op("add", one, b.op("mul", ratio, ratio))))


def _squares(m) -> bool:
    return is_float("x", "y")(m) and m.p.params["y"] == 2 and m.q.params["y"] == 2


_EXP_SUM = Op("reduce_sum", Op("exp", "x"), name="s")

RULES: list[Rule] = [
    # log(1 + exp(x)) -> max(x, 0) + log1p(exp(-|x|))
    Rule(
        "softplus",
        Op("log", Op("add", Lit(1), Op("exp", "x"))),
        lambda m, b: _softplus(b, m.x),
        _float_x_and(_not_nonpositive_form),
    ),
    # log1p(exp(x)) -> max(x, 0) + log1p(exp(-|x|))
    Rule(
        "softplus_log1p",
        Op("log1p", Op("exp", "x")),
        lambda m, b: _softplus(b, m.x),
        _float_x_and(_not_nonpositive_form),
    ),
    # log(logistic(x)) -> -(max(-x, 0) + log1p(exp(-|x|)))
    Rule("log_sigmoid", Op("log", Op("logistic", "x")), _log_sigmoid, is_float("x")),
    # log(1 + x) -> log1p(x)
    Rule(
        "log1p",
        Op("log", Op("add", Lit(1), "x")),
        lambda m, b: b.op("log1p", m.x),
        is_float("x"),
    ),
    # exp(x) - 1 -> expm1(x)
    Rule(
        "expm1",
        Op("sub", Op("exp", "x"), Lit(1)),
        lambda m, b: b.op("expm1", m.x),
        is_float("x"),
    ),
    # 1 / (1 + exp(-x)) -> logistic(x)
    Rule(
        "logistic",
        Op("div", Lit(1), Op("add", Lit(1), Op("exp", Op("neg", "x")))),
        _logistic,
        is_float("x"),
    ),
    # exp(x) / (1 + exp(x)) -> logistic(x)
    Rule(
        "logistic_ratio",
        Op("div", Op("exp", "x"), Op("add", Lit(1), Op("exp", "x"))),
        _logistic,
        is_float("x"),
    ),
    # (1 / (1 + exp(x))) * exp(x) -> logistic(x)         (reverse mode of log(1 + exp(x)))
    Rule(
        "logistic_grad",
        Op("mul", Op("div", Lit(1), Op("add", Lit(1), Op("exp", "x"))), Op("exp", "x")),
        _logistic,
        is_float("x"),
    ),
    # 1 - logistic(x) -> logistic(-x)                   (no cancellation for large x)
    Rule(
        "logistic_complement",
        Op("sub", Lit(1), Op("logistic", "x")),
        lambda m, b: b.op("logistic", b.op("neg", m.x)),
        is_float("x"),
    ),
    # (s / (1 + exp(u))) * exp(u) -> s * logistic(u)     (reverse mode of 1 / (1 + exp(-x)))
    Rule(
        "logistic_ratio_grad",
        Op("mul", Op("div", "s", Op("add", Lit(1), Op("exp", "u"))), Op("exp", "u")),
        lambda m, b: b.op("mul", m.s, b.op("logistic", m.u)),
        is_float("u"),
    ),
    # t * (s / (1 + exp(u))) * exp(u) -> t * (s * logistic(u))   (the same, scaled)
    Rule(
        "logistic_ratio_grad_scaled",
        Op(
            "mul",
            Op("mul", "t", Op("div", "s", Op("add", Lit(1), Op("exp", "u")))),
            Op("exp", "u"),
        ),
        lambda m, b: b.op("mul", m.t, b.op("mul", m.s, b.op("logistic", m.u))),
        is_float("u"),
    ),
    # -(s / (1 + exp(u))) * exp(u) -> -(s * logistic(u))  (the same, of a scalar:
    # simplify makes the cotangent's -1 * f a neg)
    Rule(
        "logistic_ratio_grad_neg",
        Op(
            "mul",
            Op("neg", Op("div", "s", Op("add", Lit(1), Op("exp", "u")))),
            Op("exp", "u"),
        ),
        lambda m, b: b.op("neg", b.op("mul", m.s, b.op("logistic", m.u))),
        is_float("u"),
    ),
    # (t / logistic(x)) * (logistic(x) * y) -> t * y     (reverse mode of log(logistic(x)))
    Rule(
        "log_sigmoid_grad",
        Op(
            "mul",
            Op("div", "t", Op("logistic", "x")),
            Op("mul", Op("logistic", "x"), "y"),
        ),
        lambda m, b: b.op("mul", m.t, m.y),
        is_float("x"),
    ),
    # -(t / logistic(x)) * (logistic(x) * y) -> -(t * y)   (the same, negated)
    Rule(
        "log_sigmoid_grad_neg",
        Op(
            "mul",
            Op("neg", Op("div", "t", Op("logistic", "x"))),
            Op("mul", Op("logistic", "x"), "y"),
        ),
        lambda m, b: b.op("neg", b.op("mul", m.t, m.y)),
        is_float("x"),
    ),
    # sqrt(x * x + y * y) -> hypot: m * sqrt(1 + (n / m)**2)  (no overflow of x * x)
    Rule(
        "hypot",
        Op("sqrt", Op("add", Op("mul", "x", "x"), Op("mul", "y", "y"))),
        _hypot,
        is_float("x", "y"),
    ),
    # sqrt(x**2 + y**2) -> hypot                        (the same, as integer_pow)
    Rule(
        "hypot_pow",
        Op(
            "sqrt",
            Op(
                "add",
                Op("integer_pow", "x", name="p"),
                Op("integer_pow", "y", name="q"),
            ),
        ),
        _hypot,
        _squares,
    ),
    # log(sum(exp(x))) -> m + log(sum(exp(x - m))), m = max(x) clamped finite
    Rule("logsumexp", Op("log", _EXP_SUM), _logsumexp, _float_x_and(_not_shifted)),
]
# The reverse mode of log(softmax(x)), softmax = exp(x) / d, d = sum(exp(x)):
# log's backward divides t by the softmax, which underflows to 0 where x is far
# below the max (t / 0 = inf), and the factors only cancel in the product with
# exp(x) that ends the chain; at x large, d = inf and sum(...) / d * exp(x) is
# 0 * inf. Each row takes the whole product to the closed form.
_SOFTMAX = Op("div", Op("exp", "x"), "d")
_NUMERATOR = Op("div", Op("div", "t", _SOFTMAX), "d")  # (t / softmax) / d
_DENOMINATOR = _Spread(
    Op(
        "reduce_sum",
        Op("mul", Op("neg", Op("div", "t", _SOFTMAX)), Op("div", _SOFTMAX, "d")),
        name="r",
    )
)  # spread(sum(-(t / softmax) * (softmax / d)))
# ((t / softmax(x)) / d) * exp(x) -> t
RULES.append(
    Rule(
        "log_softmax_grad_numerator",
        Op("mul", _NUMERATOR, Op("exp", "x")),
        lambda m, b: _full(b, m.t, m.x),
        _log_softmax_backward,
    )
)
# spread(sum(-(t / softmax(x)) * (softmax(x) / d))) * exp(x) -> -spread(sum(t)) * softmax(x)
RULES += _spread_rows(
    "log_softmax_grad_denominator",
    Op("mul", _DENOMINATOR, Op("exp", "x")),
    lambda m, b: b.op("neg", _sum_times_softmax(b, m)),
    _log_softmax_backward,
)
# ((t / softmax(x)) / d + spread(sum(...))) * exp(x) -> t - spread(sum(t)) * softmax(x)
RULES += _spread_rows(
    "log_softmax_grad",
    Op("mul", Op("add", _NUMERATOR, _DENOMINATOR), Op("exp", "x")),
    _log_softmax_grad,
    _log_softmax_backward,
)
# log(exp(x) / spread(sum(exp(x)))) -> (x - m) - spread(log(sum(exp(x - m))))
RULES += _spread_rows(
    "log_softmax",
    Op("log", Op("div", Op("exp", "x"), _Spread(_EXP_SUM))),
    _log_softmax,
    _spread_matches,
)
# spread(t / sum(exp(x))) * exp(x) -> spread(t) * softmax(x)   (reverse mode of log(sum(exp(x))))
RULES += _spread_rows(
    "softmax_grad",
    Op("mul", _Spread(Op("div", "t", _EXP_SUM)), Op("exp", "x")),
    _scaled_softmax,
    _spread_matches,
)

step = table_step(RULES, "stable")
stable = rewrite_pass(step)
