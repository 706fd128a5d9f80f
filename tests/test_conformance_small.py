"""Issue 32: small conformance bugs, each checked against JAX 0.10.2 through the oracle.

Where JAX raises, `agree` only asks that both raise; the tests also name the class
olympus raises, so a bug that raises something unrelated still fails.
"""

import inspect

import numpy as np
import pytest
from jax_oracle import JAX, OLYMPUS, Raised, agree, run_both

import olympus
import olympus.numpy as jnp
from olympus.tracer.errors import ConcretizationTypeError

X = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)


def _raises_like_jax(program, error_class, *args):
    """Both systems raise, and olympus raises `error_class`."""
    ours, theirs = agree(program, *args)
    assert isinstance(ours, Raised) and isinstance(theirs, Raised)
    assert isinstance(ours.error, error_class), ours
    return ours.error


# ---- out-of-range axes ---------------------------------------------------------------
OUT_OF_RANGE_AXIS = {
    "jnp.sort": lambda ox: ox.jnp.sort(X, axis=5),
    "jnp.argsort": lambda ox: ox.jnp.argsort(X, axis=-3),
    "jnp.median": lambda ox: ox.jnp.median(X, axis=5),
    "jnp.quantile": lambda ox: ox.jnp.quantile(X, 0.5, axis=2),
    "jnp.unique": lambda ox: ox.jnp.unique(X, axis=5),
    "nn.softmax": lambda ox: ox.nn.softmax(X, axis=5),
    "nn.logmeanexp": lambda ox: ox.nn.logmeanexp(X, axis=5),
    "nn.one_hot": lambda ox: ox.nn.one_hot(np.array([0, 1]), 2, axis=-3),
    "lax.expand_dims": lambda ox: ox.lax.expand_dims(X, (5,)),
    "lax.expand_dims negative": lambda ox: ox.lax.expand_dims(X, (-4,)),
    "lax.expand_dims repeated": lambda ox: ox.lax.expand_dims(X, (0, 0)),
    "lax.sort": lambda ox: ox.lax.sort(X, dimension=5),
}


@pytest.mark.parametrize("name", list(OUT_OF_RANGE_AXIS))
def test_out_of_range_axis_raises_value_error(name):
    _raises_like_jax(OUT_OF_RANGE_AXIS[name], ValueError)


def test_standardize_out_of_range_axis_raises():
    # JAX's own error is an IndexError from its shape arithmetic; ours names the axis.
    error = _raises_like_jax(lambda ox: ox.nn.standardize(X, axis=5), ValueError)
    assert "axis 5" in str(error)


def _axis_functions():
    """Every jnp / nn function JAX gives an `axis` parameter that olympus also has."""
    for module in ("jnp", "nn"):
        for name in sorted(dir(getattr(JAX, module))):
            theirs = getattr(getattr(JAX, module), name)
            if name.startswith("_") or isinstance(theirs, type) or not callable(theirs):
                continue
            if not hasattr(getattr(OLYMPUS, module), name):
                continue
            try:
                parameters = inspect.signature(theirs).parameters.values()
            except (TypeError, ValueError):
                continue
            required = [
                p
                for p in parameters
                if p.default is p.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.name != "axis"
            ]
            # f(x, axis=5) only: functions that need more arguments are left out.
            if "axis" in {p.name for p in parameters} and len(required) <= 1:
                yield module, name


@pytest.mark.parametrize("module, name", list(_axis_functions()))
def test_axis_5_of_a_2d_array_agrees_with_jax(module, name):
    """f(x, axis=5) on a 2-D array: olympus raises exactly where JAX does."""

    def program(ox):
        return getattr(getattr(ox, module), name)(X, axis=5)

    ours, theirs = run_both(program)
    assert isinstance(ours, Raised) == isinstance(theirs, Raised), (ours, theirs)


def test_in_range_axes_still_work_eagerly_and_under_jit():
    for axis in (-2, -1, 0, 1):
        agree(lambda ox, a=axis: ox.jnp.sort(X, axis=a))
        agree(lambda ox, a=axis: ox.jit(lambda x: ox.nn.softmax(x, axis=a))(X))
        agree(lambda ox, a=axis: ox.jnp.median(X, axis=a))
    agree(lambda ox: ox.lax.expand_dims(X, (-3, 3)))
    agree(lambda ox: ox.jnp.unique(X, axis=-1))


# ---- sizes, classes and leaves JAX refuses -----------------------------------------
ONE_BY_ONE = np.ones((1, 1), np.float32)


def test_float_sizes_are_refused():
    from olympus.lax.ops import ShapeSizeTypeError

    for program in (
        lambda ox: ox.lax.broadcast(X, (41.0,)),
        lambda ox: ox.lax.broadcast_in_dim(ONE_BY_ONE, (43.0, 47), (0, 1)),
        lambda ox: ox.lax.full((53.0,), 1.0),
        lambda ox: ox.lax.reshape(np.ones(59, np.float32), (59.0,)),
        lambda ox: ox.lax.iota(np.int32, 61.0),
        lambda ox: ox.lax.pad(np.ones(67, np.float32), np.float32(0), [(1.0, 0, 0)]),
    ):
        # Odd sizes: JAX caches shapes, and since 2.0 == 2 a float shape left
        # in its cache breaks later JAX calls with the same int shape.
        _raises_like_jax(program, ShapeSizeTypeError)
    # Other sizes than above: JAX caches shapes, and 2.0 == 2 would hit its cache.
    agree(lambda ox: ox.lax.broadcast(X, (np.int64(4),)))
    agree(lambda ox: ox.lax.full((np.int32(5),), 1.0))


def test_traced_size_still_names_the_tracer():
    with pytest.raises(ConcretizationTypeError):
        olympus.jit(lambda n: olympus.lax.full((n,), 1.0))(2)


def test_one_hot_float_class_count_is_refused():
    _raises_like_jax(lambda ox: ox.nn.one_hot(np.array([0, 1]), 2.5), TypeError)
    agree(lambda ox: ox.nn.one_hot(np.array([0, 1]), np.array(2)))


def test_stop_gradient_refuses_a_string_leaf():
    _raises_like_jax(lambda ox: ox.lax.stop_gradient({"a": X, "b": "s"}), TypeError)
    _raises_like_jax(
        lambda ox: ox.jit(lambda x: ox.lax.stop_gradient((x, "s"))[0])(X), TypeError
    )
    agree(lambda ox: ox.grad(lambda x: x * ox.lax.stop_gradient(x))(3.0))


# ---- nan-reductions ------------------------------------------------------------------
NAN_X = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]], np.float32)
MASK = np.array([True, False, True])


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean", "nanmax", "nanmin"])
def test_nan_reductions_take_where(name):
    initial = {"initial": -1.0} if name in ("nanmax", "nanmin") else {}
    agree(lambda ox: getattr(ox.jnp, name)(NAN_X, where=MASK, **initial))
    agree(lambda ox: getattr(ox.jnp, name)(NAN_X, axis=1, where=MASK, **initial))
    agree(
        lambda ox: ox.jit(lambda x: getattr(ox.jnp, name)(x, where=MASK, **initial))(
            NAN_X
        )
    )


@pytest.mark.parametrize("name", ["nansum", "nanmax", "nanargmax", "nancumsum"])
def test_nan_function_errors_name_the_function(name):
    error = _raises_like_jax(lambda ox: getattr(ox.jnp, name)([1.0, 2.0]), TypeError)
    assert f"jnp.{name} " in str(error)


# ---- shift ops: JAX keeps lax strict -------------------------------------------------
def test_shift_right_logical_same_dtype_agrees():
    agree(lambda ox: ox.lax.shift_right_logical(np.uint32([8, 16]), np.uint32(2)))
    agree(lambda ox: ox.lax.shift_right_logical(np.int32([8, -16]), 2))


# ---- values jit must know ------------------------------------------------------------
def test_choose_raise_mode_under_jit_raises_as_jax():
    def program(ox, mode):
        choose = lambda i: ox.jnp.choose(i, [X[0], X[1]], mode=mode)  # noqa: E731
        return ox.jit(choose)(np.array([0, 1, 0]))

    _raises_like_jax(program, ConcretizationTypeError, "raise")
    agree(program, "clip")
    agree(lambda ox: ox.jnp.choose(np.array([0, 1, 0]), [X[0], X[1]], mode="raise"))
    _raises_like_jax(
        lambda ox: ox.jnp.choose(np.array([0, 2]), [X[0, :2], X[1, :2]]), ValueError
    )


def test_compress_of_a_numpy_condition_under_jit_runs():
    """JAX raises (its own jnp.compress is jitted, so the condition is abstract);
    olympus reads the concrete condition, on purpose (docs/differences.md)."""
    condition = np.array([True, False])
    ours, theirs = run_both(
        lambda ox: ox.jit(lambda a: ox.jnp.compress(condition, a, axis=0))(X)
    )
    assert isinstance(theirs, Raised)
    np.testing.assert_array_equal(ours, X[:1])
    _raises_like_jax(
        lambda ox: ox.jit(lambda c, a: ox.jnp.compress(c, a, axis=0))(condition, X),
        ConcretizationTypeError,
    )
    agree(lambda ox: ox.jit(lambda a: ox.jnp.compress(condition, a, axis=0, size=1))(X))
    agree(lambda ox: ox.jnp.compress(condition, X, axis=0))
    agree(lambda ox: ox.vmap(lambda a: ox.jnp.compress(MASK, a))(X))


# ---- loops keep weak types -----------------------------------------------------------
O3 = np.ones(3, np.float32)
WEAK_LOOPS = {
    "fori float carry": lambda ox: ox.lax.fori_loop(0, 3, lambda i, c: c + 1.0, 0.0),
    "fori index weak": lambda ox: ox.lax.fori_loop(0, 3, lambda i, c: c + i, 0),
    "fori index weak jit": lambda ox: ox.jit(
        lambda: ox.lax.fori_loop(0, 3, lambda i, c: c + i, 0)
    )(),
    "scan python carry": lambda ox: ox.lax.scan(
        lambda c, _: (c + 1.0, c), 0.0, None, length=3
    ),
    "scan carry made strong": lambda ox: ox.lax.scan(
        lambda c, x: (c + x, c * 2.0), 0.0, O3
    ),
    "scan carry made strong jit": lambda ox: ox.jit(
        lambda: ox.lax.scan(lambda c, x: (c + x, c), 0.0, O3)
    )(),
    "scan vmap": lambda ox: ox.vmap(
        lambda v: ox.lax.scan(lambda c, x: (c + x * v, c), 0.0, O3)
    )(O3),
    "grad through fori const": lambda ox: ox.grad(
        lambda x: ox.lax.fori_loop(0, 3, lambda i, c: c * x, 1.0)
    )(2.0),
    "grad through scan init": lambda ox: ox.grad(
        lambda x: ox.lax.scan(lambda c, xx: (c * xx, c), x, O3)[0]
    )(2.0),
    "jit grad through scan const": lambda ox: ox.jit(
        ox.grad(lambda x: ox.lax.scan(lambda c, _: (c * x, c), 1.0, None, length=3)[0])
    )(2.0),
    "while carry made strong": lambda ox: ox.lax.while_loop(
        lambda c: c < 3, lambda c: c + np.float32(1), 0.0
    ),
}


@pytest.mark.parametrize("name", list(WEAK_LOOPS))
def test_loops_keep_jax_weak_types(name):
    agree(WEAK_LOOPS[name])


def test_fori_index_is_weak_int32_in_the_body():
    seen = []

    def body(i, c):
        seen.append(olympus.dtypes.is_weakly_typed(i))
        return c + i

    olympus.lax.fori_loop(0, 3, body, jnp.float32(0))
    assert seen and all(seen)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.jnp.zeros((17.0,)),
        lambda ox: ox.jnp.ones((2, 19.0)),
        lambda ox: ox.jnp.full((23.0,), 1.0),
        lambda ox: ox.jnp.empty((29.0,)),
        lambda ox: ox.jnp.broadcast_to(ox.jnp.ones(3), (31.0, 3)),
        lambda ox: ox.jnp.reshape(ox.jnp.ones(111), (37.0, 3)),
        lambda ox: ox.jnp.zeros(np.array([2, 3])),
        lambda ox: ox.jnp.zeros((np.int64(2), 3)),
    ],
    ids=[
        "zeros",
        "ones",
        "full",
        "empty",
        "broadcast_to",
        "reshape",
        "np-shape",
        "np-int",
    ],
)
def test_float_sizes_in_jnp_shapes_are_refused_as_jax(program):
    """A float size is a TypeError (ShapeSizeTypeError), never rounded. The
    sizes are odd on purpose: JAX caches shapes, and since 2.0 == 2 a float
    shape left in its cache breaks later JAX calls with the int shape."""
    agree(program)


MASK = np.array([[True, True, False], [True, False, True]])


@pytest.mark.parametrize(
    "name", ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "max", "min"]
)
def test_where_masks_with_and_without_initial_as_jax(name):
    """max/min (nan or not) refuse where= without initial=, as JAX; with it,
    and for the others, the mask and the NaNs both leave elements out."""
    f = lambda ox: getattr(ox.jnp, name)  # noqa: E731
    agree(lambda ox, a, w: f(ox)(a, axis=1, where=w), NAN_X, MASK)
    if name != "nanmean":
        agree(lambda ox, a, w: f(ox)(a, axis=1, where=w, initial=-2.0), NAN_X, MASK)
    agree(lambda ox, a: f(ox)(a > 2, axis=0), NAN_X)
    agree(lambda ox: f(ox)(ox.jnp.array([np.nan, np.nan])))
