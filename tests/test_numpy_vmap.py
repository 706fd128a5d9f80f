"""vmap of olympus.numpy functions against stacking: for each function f of the
table, `vmap(f)` over a batch of 3 equals `stack([f(x) for x in xs])`.

Functions come in groups that share their per-example arguments. Two checks:
- per function, `vmap(f)` and f on each example are both traced by olympus and
  run by the NumPy reference interpreter (the batching rules, no XLA compile),
  batched along axis 0, then along the last axis and with unbatched operands;
- per group, every 4th of its functions under ONE `jit(vmap(...))` compiled by
  XLA, against the same per-example results (the batched programs' lowering).
"""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.test_util import reference_call
from olympus.tracer.pytree import tree_flatten

B = 3  # the batch size


def _rng(seed):
    return np.random.default_rng(seed)


# Per-example argument makers: (rng) -> one example.
def normal(*shape):
    return lambda rng: rng.standard_normal(shape).astype(np.float32)


def uniform(low, high, *shape):
    return lambda rng: rng.uniform(low, high, shape).astype(np.float32)


def ints(low, high, *shape):
    return lambda rng: rng.integers(low, high, shape).astype(np.int32)


def bools(*shape):
    return lambda rng: rng.integers(0, 2, shape).astype(bool)


def sorted_normal(*shape):
    return lambda rng: np.sort(rng.standard_normal(shape).astype(np.float32), axis=-1)


def spd(n):
    """Symmetric positive definite: cholesky, solve and eigh are well conditioned."""

    def make(rng):
        a = rng.standard_normal((n, n))
        return (a @ a.T + n * np.eye(n)).astype(np.float32)

    return make


def _first(f):
    """The first output of a function returning a tuple (or a NamedTuple)."""
    return lambda *a: f(*a)[0]


X = normal(2, 3)
linalg = jnp.linalg

GROUPS = {  # group -> (per-example argument makers, [(name, f)])
    "unary_float": (
        (X,),
        [
            ("abs", jnp.abs),
            ("absolute", jnp.absolute),
            ("negative", jnp.negative),
            ("positive", jnp.positive),
            ("sign", jnp.sign),
            ("floor", jnp.floor),
            ("ceil", jnp.ceil),
            ("round", lambda x: jnp.round(x * 3, 1)),
            ("around", lambda x: jnp.around(x * 3)),
            ("rint", jnp.rint),
            ("trunc", jnp.trunc),
            ("fix", jnp.fix),
            ("sin", jnp.sin),
            ("cos", jnp.cos),
            ("tan", jnp.tan),
            ("tanh", jnp.tanh),
            ("sinh", jnp.sinh),
            ("cosh", jnp.cosh),
            ("arctan", jnp.arctan),
            ("arcsinh", jnp.arcsinh),
            ("asinh", jnp.asinh),
            ("atan", jnp.atan),
            ("exp", jnp.exp),
            ("exp2", jnp.exp2),
            ("expm1", jnp.expm1),
            ("square", jnp.square),
            ("cbrt", jnp.cbrt),
            ("sinc", jnp.sinc),
            ("isfinite", jnp.isfinite),
            ("isinf", jnp.isinf),
            ("isnan", jnp.isnan),
            ("signbit", jnp.signbit),
            ("real", jnp.real),
            ("imag", jnp.imag),
            ("conj", jnp.conj),
            ("conjugate", jnp.conjugate),
            ("angle", jnp.angle),
            ("deg2rad", jnp.deg2rad),
            ("degrees", jnp.degrees),
            ("rad2deg", jnp.rad2deg),
            ("radians", jnp.radians),
            ("fabs", jnp.fabs),
            ("nan_to_num", lambda x: jnp.nan_to_num(jnp.log(x))),
            ("isneginf", jnp.isneginf),
            ("isposinf", jnp.isposinf),
            ("isreal", jnp.isreal),
            ("iscomplex", jnp.iscomplex),
            ("spacing", jnp.spacing),
            ("logical_not", jnp.logical_not),
            ("frexp", jnp.frexp),
            ("modf", jnp.modf),
            ("i0", jnp.i0),
            ("zeros_like", jnp.zeros_like),
            ("ones_like", jnp.ones_like),
            ("full_like", lambda x: jnp.full_like(x, 2.5)),
            ("copy", jnp.copy),
            ("asarray", jnp.asarray),
            ("array", jnp.array),
        ],
    ),
    "unary_unit_interval": (
        (uniform(-0.9, 0.9, 2, 3),),
        [
            ("arcsin", jnp.arcsin),
            ("arccos", jnp.arccos),
            ("arctanh", jnp.arctanh),
            ("asin", jnp.asin),
            ("acos", jnp.acos),
            ("atanh", jnp.atanh),
        ],
    ),
    "unary_positive": (
        (uniform(0.5, 2.5, 2, 3),),
        [
            ("sqrt", jnp.sqrt),
            ("log", jnp.log),
            ("log2", jnp.log2),
            ("log10", jnp.log10),
            ("log1p", jnp.log1p),
            ("reciprocal", jnp.reciprocal),
            ("arccosh", lambda x: jnp.arccosh(x + 1)),
            ("acosh", lambda x: jnp.acosh(x + 1)),
        ],
    ),
    "unary_int": (
        (ints(-40, 40, 2, 3),),
        [
            ("invert", jnp.invert),
            ("bitwise_not", jnp.bitwise_not),
            ("bitwise_invert", jnp.bitwise_invert),
            ("bitwise_count", jnp.bitwise_count),
        ],
    ),
    "binary_float": (
        (X, X),
        [
            ("add", jnp.add),
            ("subtract", jnp.subtract),
            ("multiply", jnp.multiply),
            ("maximum", jnp.maximum),
            ("minimum", jnp.minimum),
            ("fmax", jnp.fmax),
            ("fmin", jnp.fmin),
            ("arctan2", jnp.arctan2),
            ("atan2", jnp.atan2),
            ("hypot", jnp.hypot),
            ("copysign", jnp.copysign),
            ("logaddexp", jnp.logaddexp),
            ("logaddexp2", jnp.logaddexp2),
            ("nextafter", jnp.nextafter),
            ("heaviside", jnp.heaviside),
            ("equal", jnp.equal),
            ("not_equal", jnp.not_equal),
            ("greater", jnp.greater),
            ("greater_equal", jnp.greater_equal),
            ("less", jnp.less),
            ("less_equal", jnp.less_equal),
            ("logical_and", jnp.logical_and),
            ("logical_or", jnp.logical_or),
            ("logical_xor", jnp.logical_xor),
            ("isclose", lambda x, y: jnp.isclose(x, x + 1e-9 * y)),
            ("allclose", lambda x, y: jnp.allclose(x, x + 1e-3 * y)),
            ("array_equal", lambda x, y: jnp.array_equal(x, jnp.round(y))),
            ("array_equiv", lambda x, y: jnp.array_equiv(x, x[0])),
        ],
    ),
    "binary_divisor": (
        (X, uniform(0.5, 2.5, 2, 3)),
        [
            ("divide", jnp.divide),
            ("true_divide", jnp.true_divide),
            ("floor_divide", jnp.floor_divide),
            ("remainder", jnp.remainder),
            ("mod", jnp.mod),
            ("fmod", jnp.fmod),
            ("divmod", jnp.divmod),
            ("power", lambda x, y: jnp.power(y, x)),
            ("pow", lambda x, y: jnp.pow(y, x)),
            ("float_power", lambda x, y: jnp.float_power(y, x)),
        ],
    ),
    "binary_int": (
        (ints(-40, 40, 2, 3), ints(0, 6, 2, 3)),
        [
            ("bitwise_and", jnp.bitwise_and),
            ("bitwise_or", jnp.bitwise_or),
            ("bitwise_xor", jnp.bitwise_xor),
            ("gcd", jnp.gcd),
            ("lcm", jnp.lcm),
            ("left_shift", jnp.left_shift),
            ("right_shift", jnp.right_shift),
            ("bitwise_left_shift", jnp.bitwise_left_shift),
            ("bitwise_right_shift", jnp.bitwise_right_shift),
            ("ldexp", lambda i, e: jnp.ldexp(i.astype(jnp.float32), e)),
        ],
    ),
    "selection": (
        (bools(2, 3), X, X),
        [
            ("where", jnp.where),
            ("select", lambda c, x, y: jnp.select([c, x > 0], [x, y], -1.0)),
            ("clip", lambda c, x, y: jnp.clip(x, -jnp.abs(y), jnp.abs(y))),
            # mode="raise" (the default) needs concrete indices, as in JAX
            (
                "choose",
                lambda c, x, y: jnp.choose(c.astype(jnp.int32), [x, y], mode="clip"),
            ),
        ],
    ),
    "reductions": (
        (normal(2, 4),),
        [
            ("sum", lambda x: jnp.sum(x, axis=1)),
            ("prod", lambda x: jnp.prod(x, axis=0)),
            ("max", jnp.max),
            ("min", lambda x: jnp.min(x, axis=-1, keepdims=True)),
            ("amax", lambda x: jnp.amax(x, axis=0)),
            ("amin", jnp.amin),
            ("mean", lambda x: jnp.mean(x, axis=1)),
            ("std", lambda x: jnp.std(x, axis=1, ddof=1)),
            ("var", jnp.var),
            ("all", lambda x: jnp.all(x > -1, axis=1)),
            ("any", lambda x: jnp.any(x > 1, axis=0)),
            ("argmax", lambda x: jnp.argmax(x, axis=1)),
            ("argmin", jnp.argmin),
            ("average", lambda x: jnp.average(x, axis=1, weights=x[0] ** 2)),
            ("count_nonzero", lambda x: jnp.count_nonzero(x > 0, axis=1)),
            ("ptp", lambda x: jnp.ptp(x, axis=1)),
            ("nansum", lambda x: jnp.nansum(x, axis=0)),
            ("nanmax", lambda x: jnp.nanmax(x, axis=1)),
            ("nanmin", jnp.nanmin),
            ("nanmean", lambda x: jnp.nanmean(x, axis=1)),
            ("nanprod", jnp.nanprod),
            ("nanargmax", lambda x: jnp.nanargmax(x, axis=1)),
            ("nanargmin", jnp.nanargmin),
            ("median", lambda x: jnp.median(x, axis=1)),
            ("percentile", lambda x: jnp.percentile(x, 30.0, axis=1)),
            ("quantile", lambda x: jnp.quantile(x, jnp.asarray([0.25, 0.5]), axis=1)),
            ("cumsum", lambda x: jnp.cumsum(x, axis=1)),
            ("cumprod", jnp.cumprod),
            ("nancumsum", lambda x: jnp.nancumsum(x, axis=0)),
            ("nancumprod", jnp.nancumprod),
            (
                "cumulative_sum",
                lambda x: jnp.cumulative_sum(x, axis=1, include_initial=True),
            ),
            ("cumulative_prod", lambda x: jnp.cumulative_prod(x, axis=0)),
            ("nanvar", lambda x: jnp.nanvar(jnp.where(x > 1, jnp.nan, x), axis=1)),
            ("nanstd", lambda x: jnp.nanstd(jnp.where(x > 1, jnp.nan, x))),
            (
                "nanmedian",
                lambda x: jnp.nanmedian(jnp.where(x > 1, jnp.nan, x), axis=1),
            ),
            (
                "nanquantile",
                lambda x: jnp.nanquantile(jnp.where(x > 1, jnp.nan, x), 0.3, axis=0),
            ),
            (
                "nanpercentile",
                lambda x: jnp.nanpercentile(x, jnp.asarray([20.0, 70.0]), axis=1),
            ),
        ],
    ),
    "sorting": (
        (normal(2, 5), sorted_normal(5)),
        [
            ("sort", lambda x, s: jnp.sort(x, axis=1)),
            ("argsort", lambda x, s: jnp.argsort(x)),
            ("partition", lambda x, s: jnp.partition(x, 2)[:, 2]),
            (
                "argpartition",
                lambda x, s: jnp.take_along_axis(x, jnp.argpartition(x, 1), 1)[:, 1],
            ),
            ("lexsort", lambda x, s: jnp.lexsort((x[0], jnp.round(x[1])))),
            ("searchsorted", lambda x, s: jnp.searchsorted(s, x)),
            (
                "take_along_axis",
                lambda x, s: jnp.take_along_axis(x, jnp.argsort(x, axis=1), 1),
            ),
            ("take", lambda x, s: jnp.take(x, jnp.asarray([4, 0, 2]), axis=1)),
        ],
    ),
    "shapes": (
        (normal(2, 3, 4),),
        [
            ("reshape", lambda x: jnp.reshape(x, (6, 4))),
            ("ravel", jnp.ravel),
            ("transpose", jnp.transpose),
            ("permute_dims", lambda x: jnp.permute_dims(x, (1, 2, 0))),
            ("swapaxes", lambda x: jnp.swapaxes(x, 0, 2)),
            ("moveaxis", lambda x: jnp.moveaxis(x, 0, -1)),
            ("rollaxis", lambda x: jnp.rollaxis(x, 2)),
            ("expand_dims", lambda x: jnp.expand_dims(x, 1)),
            ("squeeze", lambda x: jnp.squeeze(x[:, :1], 1)),
            ("flip", lambda x: jnp.flip(x, 1)),
            ("fliplr", jnp.fliplr),
            ("flipud", jnp.flipud),
            ("roll", lambda x: jnp.roll(x, 2, axis=2)),
            ("rot90", jnp.rot90),
            ("tile", lambda x: jnp.tile(x, (1, 2))),
            ("repeat", lambda x: jnp.repeat(x, 2, axis=1)),
            ("broadcast_to", lambda x: jnp.broadcast_to(x[0], (2, 3, 4))),
            ("broadcast_arrays", lambda x: jnp.broadcast_arrays(x[0, 0], x[:, :, :1])),
            ("atleast_1d", lambda x: jnp.atleast_1d(x[0, 0, 0])),
            ("atleast_2d", lambda x: jnp.atleast_2d(x[0, 0])),
            ("atleast_3d", lambda x: jnp.atleast_3d(x[0])),
            ("concatenate", lambda x: jnp.concatenate([x, x * 2], axis=1)),
            ("concat", lambda x: jnp.concat([x, -x], axis=-1)),
            ("stack", lambda x: jnp.stack([x, -x], 1)),
            ("hstack", lambda x: jnp.hstack([x, x])),
            ("vstack", lambda x: jnp.vstack([x, x])),
            ("dstack", lambda x: jnp.dstack([x, x])),
            ("row_stack", lambda x: jnp.row_stack([x, x])),
            ("column_stack", lambda x: jnp.column_stack([x[0, 0], x[1, 1]])),
            ("block", lambda x: jnp.block([[x[0], x[1]], [x[1], x[0]]])),
            ("append", lambda x: jnp.append(x, x[:1], axis=0)),
            ("split", lambda x: jnp.split(x, 2, axis=2)),
            ("array_split", lambda x: jnp.array_split(x, 3, axis=2)),
            ("hsplit", lambda x: jnp.hsplit(x, 3)),
            ("vsplit", lambda x: jnp.vsplit(x, 2)),
            ("dsplit", lambda x: jnp.dsplit(x, [1])),
            ("unstack", lambda x: jnp.unstack(x, axis=1)),
            ("diagonal", lambda x: jnp.diagonal(x, 1, 1, 2)),
            ("trace", lambda x: jnp.trace(x, 0, 1, 2)),
            ("tril", jnp.tril),
            ("triu", lambda x: jnp.triu(x, 1)),
            ("diag", lambda x: jnp.diag(x[0])),
            ("diagflat", lambda x: jnp.diagflat(x[0, 0])),
            ("matrix_transpose", jnp.matrix_transpose),
            ("resize", lambda x: jnp.resize(x, (5, 5))),
            ("delete", lambda x: jnp.delete(x, 1, axis=2)),
            ("insert", lambda x: jnp.insert(x, 1, 7.0, axis=1)),
            (
                "compress",
                lambda x: jnp.compress(np.array([True, False, True]), x, axis=1),
            ),
            ("astype", lambda x: jnp.astype(x * 4, jnp.int32)),
            ("meshgrid", lambda x: jnp.meshgrid(x[0, 0], x[1, :, 0])),
        ],
    ),
    "products": (
        (normal(3, 3), normal(3)),
        [
            ("matmul", lambda m, v: jnp.matmul(m, m)),
            ("dot", lambda m, v: jnp.dot(m, v)),
            ("inner", lambda m, v: jnp.inner(m, v)),
            ("outer", lambda m, v: jnp.outer(v, v)),
            ("vdot", lambda m, v: jnp.vdot(m, m)),
            ("tensordot", lambda m, v: jnp.tensordot(m, m, 1)),
            ("einsum", lambda m, v: jnp.einsum("ij,j->i", m, v)),
            ("vecdot", lambda m, v: jnp.vecdot(m, v)),
            ("matvec", lambda m, v: jnp.matvec(m, v)),
            ("vecmat", lambda m, v: jnp.vecmat(v, m)),
            ("convolve", lambda m, v: jnp.convolve(m[0], v)),
            ("correlate", lambda m, v: jnp.correlate(m[0], v, "full")),
        ],
    ),
    "linalg": (
        (spd(3), normal(3, 2)),
        [
            ("linalg.inv", lambda a, b: linalg.inv(a)),
            ("linalg.det", lambda a, b: linalg.det(a)),
            ("linalg.slogdet", lambda a, b: linalg.slogdet(a)),
            ("linalg.solve", linalg.solve),
            ("linalg.cholesky", lambda a, b: linalg.cholesky(a)),
            ("linalg.qr", lambda a, b: jnp.abs(linalg.qr(a)[1])),
            ("linalg.svd", lambda a, b: linalg.svd(a, compute_uv=False)),
            ("linalg.eigh", lambda a, b: linalg.eigh(a)[0]),
            ("linalg.eigvalsh", lambda a, b: linalg.eigvalsh(a)),
            ("linalg.norm", lambda a, b: linalg.norm(b)),
            ("linalg.matrix_norm", lambda a, b: linalg.matrix_norm(a)),
            ("linalg.vector_norm", lambda a, b: linalg.vector_norm(b, axis=0)),
            ("linalg.pinv", lambda a, b: linalg.pinv(b)),
            ("linalg.matrix_power", lambda a, b: linalg.matrix_power(a, 3)),
            ("linalg.multi_dot", lambda a, b: linalg.multi_dot([a, a, b])),
            ("linalg.lstsq", lambda a, b: linalg.lstsq(a, b)[0]),
            ("linalg.cond", lambda a, b: linalg.cond(a)),
            ("linalg.matrix_rank", lambda a, b: linalg.matrix_rank(b)),
            ("linalg.trace", lambda a, b: linalg.trace(a)),
            ("linalg.outer", lambda a, b: linalg.outer(a[0], b[:, 0])),
        ],
    ),
}

ROWS = [(group, name, f) for group, (_, rows) in GROUPS.items() for name, f in rows]
BATCH_ATOL = {"linalg": 2e-4, "products": 1e-5}


def _examples(group):
    """B examples of the group's arguments, the same ones for every check."""
    makers = GROUPS[group][0]
    rng = _rng(sorted(GROUPS).index(group))
    return [tuple(make(rng) for make in makers) for _ in range(B)]


def _stacked(examples):
    return tuple(np.stack(arg) for arg in zip(*examples))


def _leaves(tree):
    return [np.asarray(leaf) for leaf in tree_flatten(tree)[0]]


def _per_example(f, examples):
    """f on each example (olympus, reference interpreter), leaves stacked."""
    outs = [_leaves(reference_call(f, *example)) for example in examples]
    return [np.stack(leaf) for leaf in zip(*outs)]


def _assert_same(got, want, atol, label):
    assert len(got) == len(want), f"{label}: {len(got)} outputs, want {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (
            f"{label} output {i}: {g.dtype}{g.shape}, want {w.dtype}{w.shape}"
        )
        np.testing.assert_allclose(
            g, w, rtol=1e-5, atol=atol, err_msg=f"{label} output {i}"
        )


@pytest.mark.parametrize("group, name, f", ROWS, ids=[f"{g}-{n}" for g, n, _ in ROWS])
def test_vmap_equals_stacked_examples(group, name, f):
    examples = _examples(group)
    got = _leaves(reference_call(olympus.vmap(f), *_stacked(examples)))
    _assert_same(got, _per_example(f, examples), BATCH_ATOL.get(group, 1e-6), name)


@pytest.mark.parametrize("group", list(GROUPS))
def test_vmap_over_the_last_axis_and_with_unbatched_operands(group):
    """in_axes=-1 for every operand, then (0, None, ...): the first operand batched,
    the others shared by all examples (one test per group, to stay fast)."""
    examples = _examples(group)
    stacked = _stacked(examples)
    shared = examples[0][1:]
    first_only = [(x,) + shared for x in stacked[0]]
    for name, f in GROUPS[group][1]:
        moved = tuple(np.moveaxis(a, 0, -1) for a in stacked)
        got = _leaves(reference_call(olympus.vmap(f, in_axes=-1), *moved))
        _assert_same(got, _per_example(f, examples), BATCH_ATOL.get(group, 1e-6), name)
        if shared:
            in_axes = (0,) + (None,) * len(shared)
            got = _leaves(
                reference_call(olympus.vmap(f, in_axes=in_axes), stacked[0], *shared)
            )
            _assert_same(
                got,
                _per_example(f, first_only),
                BATCH_ATOL.get(group, 1e-6),
                f"{name} with unbatched operands",
            )


# XLA compiles ~0.1 s per batched function here, the whole table ~20 s of CPU: the
# XLA check takes every XLA_STRIDE-th function of each group (the reference check
# above covers all of them).
XLA_STRIDE = 4


@pytest.mark.parametrize("group", list(GROUPS))
def test_jit_vmap_of_group_on_xla(group):
    """A sample of the group's functions batched in one XLA program (one compile)."""
    functions = [f for _, f in GROUPS[group][1][::XLA_STRIDE]]
    whole = lambda *args: [f(*args) for f in functions]
    examples = _examples(group)
    got = _leaves(olympus.jit(olympus.vmap(whole))(*_stacked(examples)))
    _assert_same(
        got, _per_example(whole, examples), BATCH_ATOL.get(group, 2e-6) * 10, group
    )


def test_table_covers_at_least_150_names():
    names = {name for _, name, _ in ROWS}
    assert len(names) == len(ROWS), "a name appears twice in the table"
    assert len(names) >= 150, len(names)
    for name in names:
        module, _, attr = name.rpartition(".")
        assert hasattr(jnp.linalg if module else jnp, attr), name
