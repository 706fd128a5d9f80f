"""float8 dtypes end to end: host round trips, casts against ml_dtypes, arithmetic
computed in f32 and rounded once, reductions, the IR's spelling, promotion and grad."""

import ml_dtypes
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.ir import dtypes
from olympus.ir.parser import parse

FLOAT8 = [pytest.param(np.dtype(d), id=np.dtype(d).name) for d in dtypes.float8_dtypes]


def _bits(x) -> np.ndarray:
    """The raw bytes of a float8 array: compares NaN payloads and signed zeros too."""
    return np.asarray(x).view(np.uint8)


def _assert_same_float8(got, want) -> None:
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_array_equal(_bits(got), _bits(want))


def _representable_f32(dtype, n=64, seed=0) -> np.ndarray:
    """f32 values exactly representable in `dtype`, away from its overflow edge."""
    rng = np.random.default_rng(seed)
    if dtype == dtypes.float8_e8m0fnu:  # powers of two only
        return np.ldexp(1.0, rng.integers(-20, 21, n)).astype(np.float32)
    top = float(ml_dtypes.finfo(dtype).max) / 4
    return rng.uniform(-top, top, n).astype(np.float32).astype(dtype).astype(np.float32)


def _roundable_f32(dtype, n=64, seed=1) -> np.ndarray:
    """f32 values that need rounding to `dtype`, subnormals and halfway cases included."""
    rng = np.random.default_rng(seed)
    if dtype == dtypes.float8_e8m0fnu:
        # positive and f32-normal: XLA on CPU flushes f32 subnormals (e8m0's
        # lowest exponents) to zero, which e8m0 cannot hold
        return np.ldexp(rng.uniform(1, 2, n), rng.integers(-120, 120, n)).astype(
            np.float32
        )
    info = ml_dtypes.finfo(dtype)
    top, tiny = float(info.max), float(info.smallest_subnormal)
    grid = _representable_f32(dtype, n, seed)
    halfway = (grid[:-1] + grid[1:]) / 2  # ties round to even
    return np.concatenate(
        [
            rng.uniform(-top, top, n),
            rng.uniform(-8 * tiny, 8 * tiny, n),
            halfway,
            [0.0, -0.0],
        ]
    ).astype(np.float32)


@pytest.mark.parametrize("dtype", FLOAT8)
def test_device_round_trip_keeps_every_bit_pattern(dtype):
    every = np.arange(256, dtype=np.uint8).view(dtype)
    _assert_same_float8(jnp.asarray(every), every)
    _assert_same_float8(olympus.device_put(every), every)
    _assert_same_float8(olympus.device_get(olympus.device_put(every)), every)
    _assert_same_float8(olympus.jit(lambda x: x[::-1])(every), every[::-1])
    x = jnp.asarray(_representable_f32(dtype), dtype=dtype)
    assert x.dtype == dtype and jnp.asarray(x).dtype == dtype
    np.testing.assert_array_equal(
        np.asarray(x).astype(np.float32), _representable_f32(dtype)
    )


# The value tests below run every float8 type through one jitted program (one
# compile), and eagerly only for float8_e4m3fn (each eager op compiles its own).
ALL = list(dtypes.float8_dtypes)
EAGER = [dtypes.float8_e4m3fn]


def _check_each_dtype(fn, make_inputs, want_fn) -> None:
    """fn(*inputs) == want_fn(*inputs) bit for bit for every float8 type: all
    types under one jit, EAGER types op by op. fn may return a dict of results."""
    inputs = {d.name: make_inputs(d) for d in ALL}
    jitted = olympus.jit(lambda ins: {k: fn(*v) for k, v in ins.items()})(inputs)
    for d in ALL:
        want = want_fn(*inputs[d.name])
        got = {"jit": jitted[d.name]}
        if d in EAGER:
            got["eager"] = fn(*map(jnp.asarray, inputs[d.name]))
        for how, out in got.items():
            for key in want:
                try:
                    _assert_same_float8(out[key], want[key])
                except AssertionError as err:
                    raise AssertionError(f"{d.name} {key} ({how})") from err


def test_cast_from_f32_rounds_like_ml_dtypes():
    _check_each_dtype(
        lambda x: {d.name: lax.convert_element_type(x, d) for d in ALL},
        lambda d: (_roundable_f32(d),),
        lambda x: {d.name: x.astype(d) for d in ALL},
    )
    x = _roundable_f32(dtypes.float8_e4m3fn)
    _assert_same_float8(
        jnp.asarray(x).astype(jnp.float8_e4m3fn), x.astype(dtypes.float8_e4m3fn)
    )


def test_cast_to_wider_types_is_exact():
    wide = {"f32": np.float32, "f16": np.float16, "bf16": dtypes.bfloat16}
    every = {d.name: np.arange(256, dtype=np.uint8).view(d) for d in ALL}
    results = olympus.jit(
        lambda e: {k: {w: v.astype(t) for w, t in wide.items()} for k, v in e.items()}
    )(every)
    for d in ALL:
        outputs = [results[d.name]]
        if d in EAGER:
            outputs.append(
                {w: jnp.asarray(every[d.name]).astype(t) for w, t in wide.items()}
            )
        for outs in outputs:
            for w, t in wide.items():
                with np.errstate(over="ignore"):  # e8m0's 2**127 is inf in f16
                    want = every[d.name].astype(np.float32).astype(t)
                assert outs[w].dtype == np.dtype(t)  # NaNs compare equal only as f32:
                np.testing.assert_array_equal(
                    np.asarray(outs[w]).astype(np.float32),
                    want.astype(np.float32),
                    err_msg=f"{d} {w}",
                )


_OPS = {
    "add": (lambda a, b: a + b, np.add),
    "mul": (lambda a, b: a * b, np.multiply),
    "max": (jnp.maximum, np.maximum),
    "abs": (lambda a, b: jnp.abs(a), lambda a, b: np.abs(a)),
    "neg": (lambda a, b: -a, lambda a, b: np.negative(a)),
}


def test_elementwise_ops_round_the_f32_result_once():
    _check_each_dtype(
        lambda x, y: {name: op(x, y) for name, (op, _) in _OPS.items()},
        lambda d: (
            _representable_f32(d, seed=2).astype(d),
            _representable_f32(d, seed=3).astype(d),
        ),
        lambda x, y: {
            name: ref(x.astype(np.float32), y.astype(np.float32)).astype(x.dtype)
            for name, (_, ref) in _OPS.items()
        },
    )


def test_reductions_match_numpy_in_f32():
    # small multiples of 1/4: every partial sum is exact in float8, so the
    # order XLA adds in cannot change the result
    rng = np.random.default_rng(4)
    quarters = rng.integers(-4, 5, (3, 4)) / 4
    _check_each_dtype(
        lambda x: {
            "sum": jnp.sum(x, axis=1),
            "max": jnp.max(x, axis=0),
            "min": jnp.min(x),
        },
        lambda d: (quarters.astype(d),),
        lambda x: {
            k: np.asarray(v).astype(x.dtype)
            for k, v in (
                ("sum", x.astype(np.float32).sum(axis=1)),
                ("max", x.astype(np.float32).max(axis=0)),
                ("min", x.astype(np.float32).min()),
            )
        },
    )


@pytest.mark.parametrize("dtype", FLOAT8)
def test_printed_ir_names_float8_and_parses_back(dtype):
    name = dtypes.short_name(dtype)
    closed = olympus.make_olympuspr(
        lambda a: (a.astype(jnp.float32) * 2).astype(dtype)
    )(np.ones(3, dtype))
    text = str(closed)
    assert f"a:{name}[3]" in text and f"{name}[3] = convert_element_type" in text
    again = parse(text)
    assert str(again) == text and again.in_avals[0].dtype == dtype


def test_float8_promotion_follows_jax():
    x = jnp.ones(3, dtypes.float8_e4m3fn)
    for out in (
        x * 2.0,
        x + 1,
        olympus.jit(lambda a: a * 2.0)(x),
        x + jnp.ones(3, jnp.int32),
    ):
        assert out.dtype == dtypes.float8_e4m3fn
    with pytest.raises(olympus.errors.TypePromotionError, match="f8_e4m3fn, f32"):
        x + jnp.ones(3, jnp.float32)
    with pytest.raises(olympus.errors.TypePromotionError, match="8-bit floats"):
        olympus.jit(lambda a, b: a * b)(x, jnp.ones(3, dtypes.float8_e5m2))
    with pytest.raises(olympus.errors.TypePromotionError):
        x + jnp.ones(3, jnp.bfloat16)
    np.testing.assert_array_equal(
        np.asarray(x + jnp.ones(3, jnp.float32).astype(x.dtype)),
        np.full(3, 2, dtypes.float8_e4m3fn),
    )


def test_grad_through_float8_cast_rounds_the_cotangent():
    """d/dx sum(q(x)**2) with q a round trip through float8: the straight-through
    gradient 2*q(x), whose cotangent is itself rounded to float8 on the way back."""
    xs = {d.name: _roundable_f32(d, n=8) for d in ALL}

    def loss(xs):
        return sum(jnp.sum(xs[d.name].astype(d).astype(jnp.float32) ** 2) for d in ALL)

    def q(v, d):
        return v.astype(d).astype(np.float32)

    eager = olympus.grad(lambda xs: loss({**xs, **{d.name: xs[d.name] for d in EAGER}}))
    for grads in (olympus.jit(olympus.grad(loss))(xs), eager(xs)):
        for d in ALL:
            got = np.asarray(grads[d.name])
            assert got.dtype == np.float32
            np.testing.assert_array_equal(
                got, q(2 * q(xs[d.name], d), d), err_msg=d.name
            )


@pytest.mark.parametrize(
    "dtype", [dtypes.float8_e4m3fn, dtypes.float8_e5m2], ids=lambda d: d.name
)
def test_vmap_over_float8_matches_a_loop(dtype):
    x = _representable_f32(dtype, n=12, seed=5).astype(dtype).reshape(3, 4)
    y = _representable_f32(dtype, n=12, seed=6).astype(dtype).reshape(3, 4)
    fn = olympus.jit(lambda a, b: jnp.max(a * b) - jnp.abs(b[0]))
    want = np.stack([np.asarray(fn(a, b)) for a, b in zip(x, y)])
    _assert_same_float8(olympus.vmap(fn)(x, y), want)
    _assert_same_float8(olympus.jit(olympus.vmap(fn))(x, y), want)


def test_saved_program_keeps_float8_constants_and_literals(tmp_path):
    from olympus.ir import serialize

    for dtype in dtypes.float8_dtypes:
        const = np.arange(256, dtype=np.uint8).view(dtype)[120:136]  # NaN patterns too
        closed = olympus.make_olympuspr(
            lambda a, const=const: a * 2.0 + jnp.asarray(const)
        )(np.ones(16, dtype))
        text = str(closed)
        assert f"2.0:{dtypes.short_name(dtype)}[]" in text
        assert str(parse(text, closed.consts)) == text
        path = tmp_path / f"{dtype.name}.zip"
        serialize.save(closed, path)
        loaded = serialize.load(path)
        assert str(loaded) == text
        (saved,) = loaded.consts
        _assert_same_float8(saved, const)
