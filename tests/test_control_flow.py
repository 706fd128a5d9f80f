"""cond / switch, while_loop / fori_loop, scan / map: IR, values, jit, errors."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax, make_olympuspr
from olympus.test_util import assert_allclose, check_jit_matches_eager

THIS_FILE = __file__


# ---- the seed's cells (spec 002), unchanged, and the IR they print -------------
def one_of_three(index, arg):
    return lax.switch(
        index, [lambda x: x + 1.0, lambda x: x - 2.0, lambda x: x + 3.0], arg
    )


def func7(arg):
    return lax.cond(
        arg >= 0.0, lambda xtrue: xtrue + 3.0, lambda xfalse: xfalse - 3.0, arg
    )


def func8(arg1, arg2):  # Where `arg2` is a pair.
    return lax.cond(
        arg1 >= 0.0,
        lambda xtrue: xtrue[0],
        lambda xfalse: jnp.array([1]) + xfalse[1],
        arg2,
    )


def func10(arg, n):
    ones = jnp.ones(arg.shape)  # A constant.
    return lax.fori_loop(0, n, lambda i, carry: carry + ones * 3.0 + arg, arg + ones)


def func11(arr, extra):
    ones = jnp.ones(arr.shape)  # A constant

    def body(carry, aelems):
        # carry: running dot-product of the two arrays
        # aelems: a pair with corresponding elements from the two arrays
        ae1, ae2 = aelems
        return (carry + ae1 * ae2 + extra, carry)

    return lax.scan(body, 0.0, (arr, ones))


GOLDEN_ONE_OF_THREE = """\
{ lambda ; a:i32[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[] = clamp 0:i32[] c 2:i32[]
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[]. let g:f32[] = add f 1.0:f32[] in (g,) }
        { lambda ; h:f32[]. let i:f32[] = sub h 2.0:f32[] in (i,) }
        { lambda ; j:f32[]. let k:f32[] = add j 3.0:f32[] in (k,) }
      )
      linear=(False,)
    ] d b
  in (e,) }"""

GOLDEN_FUNC7 = """\
{ lambda ; a:f32[]. let
    b:bool[] = ge a 0.0:f32[]
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = sub e 3.0:f32[] in (f,) }
        { lambda ; g:f32[]. let h:f32[] = add g 3.0:f32[] in (h,) }
      )
      linear=(False,)
    ] c a
  in (d,) }"""

GOLDEN_FUNC8 = """\
{ lambda a:i32[1] ; b:f32[] c:f32[1] d:f32[]. let
    e:bool[] = ge b 0.0:f32[]
    f:i32[] = convert_element_type[new_dtype=int32 weak_type=False] e
    g:f32[1] = cond[
      branches=(
        { lambda ; h:i32[1] i:f32[1] j:f32[]. let
            k:f32[1] = convert_element_type[new_dtype=float32 weak_type=True] h
            l:f32[1] = add k j
          in (l,) }
        { lambda ; m:i32[1] n:f32[1] o:f32[]. let in (n,) }
      )
      linear=(False, False, False)
    ] f a c d
  in (g,) }"""

GOLDEN_FUNC10 = """\
{ lambda ; a:f32[16] b:i32[]. let
    c:f32[16] = broadcast_in_dim[broadcast_dimensions=() shape=(16,)] 1.0:f32[]
    d:f32[16] = add a c
    _:i32[] _:i32[] e:f32[16] = while[
      body_nconsts=2
      body_olympuspr={ lambda ; f:f32[16] g:f32[16] h:i32[] i:i32[] j:f32[16]. let
          k:i32[] = add h 1:i32[]
          l:f32[16] = mul f 3.0:f32[]
          m:f32[16] = add j l
          n:f32[16] = add m g
        in (k i n) }
      cond_nconsts=0
      cond_olympuspr={ lambda ; o:i32[] p:i32[] q:f32[16]. let r:bool[] = lt o p in (r,) }
    ] c a 0:i32[] b d
  in (e,) }"""

GOLDEN_FUNC11 = """\
{ lambda ; a:f32[16] b:f32[]. let
    c:f32[16] = broadcast_in_dim[broadcast_dimensions=() shape=(16,)] 1.0:f32[]
    d:f32[] e:f32[16] = scan[
      length=16
      linear=(False, False, False, False)
      num_carry=1
      num_consts=1
      olympuspr={ lambda ; f:f32[] g:f32[] h:f32[] i:f32[]. let
          j:f32[] = mul h i
          k:f32[] = convert_element_type[new_dtype=float32 weak_type=False] g
          l:f32[] = add k j
          m:f32[] = convert_element_type[new_dtype=float32 weak_type=False] f
          n:f32[] = add l m
        in (n g) }
      reverse=False
      unroll=1
    ] b 0.0:f32[] a c
  in (d e) }"""


def _normalize(text: str) -> str:
    # The printer's separator between several outputs is its own business.
    return text.replace(", ", " ").replace("(", "( ").strip()


@pytest.mark.parametrize(
    "fun, args, golden",
    [
        (one_of_three, (1, 5.0), GOLDEN_ONE_OF_THREE),
        (func7, (5.0,), GOLDEN_FUNC7),
        (func8, (5.0, (jnp.zeros(1), 2.0)), GOLDEN_FUNC8),
        (func10, (np.ones(16), 5), GOLDEN_FUNC10),
        (func11, (np.ones(16), 5.0), GOLDEN_FUNC11),
    ],
    ids=["one_of_three", "func7", "func8", "func10", "func11"],
)
def test_seed_cells_print_the_spec_ir(fun, args, golden):
    assert _normalize(str(make_olympuspr(fun)(*args))) == _normalize(golden)


def test_seed_cells_values_eager_and_jit():
    for i, want in [(1, 3.0), (7, 8.0), (-3, 6.0), (0, 6.0)]:
        assert float(one_of_three(i, 5.0)) == want
        assert float(olympus.jit(one_of_three)(i, 5.0)) == want
    assert float(func7(5.0)) == 8.0 and float(func7(-5.0)) == -8.0
    assert_allclose(func8(5.0, (jnp.zeros(1), 2.0)), np.zeros(1, np.float32))
    assert_allclose(
        olympus.jit(func8)(-5.0, (jnp.zeros(1), 2.0)), np.full(1, 3.0, np.float32)
    )
    x = np.arange(4.0, dtype=np.float32)
    want10 = x + 1.0
    for _ in range(5):
        want10 = want10 + 3.0 + x
    assert_allclose(func10(x, 5), want10)
    assert_allclose(olympus.jit(func10)(x, 5), want10)
    carry, ys = func11(x, 5.0)
    assert_allclose(carry, np.float32(26.0))
    assert_allclose(ys, np.array([0.0, 5.0, 11.0, 18.0], np.float32))


# ---- cond / switch ------------------------------------------------------------------
def test_cond_with_pytree_operands_and_closures():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3,)).astype(np.float32)
    params = {"a": rng.standard_normal((3,)).astype(np.float32), "b": np.float32(2.0)}

    def f(p, x, flag):
        return lax.cond(
            flag > 0,
            lambda p, x: (p["a"] * x + w, p["b"]),
            lambda p, x: (x - w, -p["b"]),
            p,
            x,
        )

    for flag in (1, -1):
        out = f(params, w, flag)
        want = (params["a"] * w + w, 2.0) if flag > 0 else (w - w, -2.0)
        assert_allclose(out[0], want[0])
        assert_allclose(out[1], np.float32(want[1]))
        check_jit_matches_eager(f, (params, w, flag))


def test_switch_clamps_and_matches_python_indexing():
    branches = [lambda x: x * 2.0, lambda x: jnp.sin(x), lambda x: x - 1.0]
    x = np.linspace(-1, 1, 4).astype(np.float32)
    for i in (-2, 0, 1, 2, 9):
        want = [x * 2.0, np.sin(x), x - 1.0][min(max(i, 0), 2)]
        assert_allclose(lax.switch(i, branches, x), want)
        assert_allclose(
            olympus.jit(lambda i, x: lax.switch(i, branches, x))(i, x), want
        )


def test_cond_closes_over_outer_tracers_under_jit():
    def f(x, y):
        return lax.cond(x.sum() > 0, lambda: x * y, lambda: x + y)

    x = np.array([1.0, 2.0], np.float32)
    y = np.array([3.0, 4.0], np.float32)
    assert_allclose(olympus.jit(f)(x, y), x * y)
    assert_allclose(olympus.jit(f)(-x, y), -x + y)
    check_jit_matches_eager(f, (x, y))


def test_cond_branch_mismatch_names_path_types_and_line():
    def f(x):
        return lax.cond(True, lambda x: (x, x), lambda x: (x, x.astype(jnp.int32)), x)

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(TypeError) as info:
        f(np.ones(2, np.float32))
    text = str(info.value)
    assert "output[1]" in text and "f32[2]" in text and "i32[2]" in text
    assert "false_fun" in text and "true_fun" in text
    assert f"{THIS_FILE}:{line}" in text
    with pytest.raises(TypeError, match=r"switch: branches\[2\] returns PyTreeDef"):
        lax.switch(0, [lambda x: (x, x), lambda x: (x, x), lambda x: [x, x]], 1.0)


# ---- while_loop / fori_loop -----------------------------------------------------------
def test_while_loop_with_pytree_carry_matches_python():
    def f(x):
        def cond_fun(c):
            return c["n"] < 10

        def body_fun(c):
            return {"n": c["n"] + 3, "x": c["x"] * 1.5}

        return lax.while_loop(cond_fun, body_fun, {"n": 0, "x": x})

    x = np.array([1.0, -2.0], np.float32)
    out = f(x)
    assert int(out["n"]) == 12
    assert_allclose(out["x"], x * np.float32(1.5) ** 4)
    check_jit_matches_eager(f, (x,))


def test_fori_loop_static_uses_scan_and_traced_uses_while():
    def f(x, n):
        return lax.fori_loop(1, n, lambda i, acc: acc + i * x, jnp.zeros_like(x))

    x = np.array([1.0, 2.0], np.float32)
    static_ir = str(make_olympuspr(lambda x: f(x, 5))(x))
    traced_ir = str(make_olympuspr(f)(x, 5))
    assert "scan[" in static_ir and "while[" not in static_ir
    assert "while[" in traced_ir
    assert_allclose(f(x, 5), x * 10.0)
    assert_allclose(olympus.jit(f)(x, 5), x * 10.0)
    assert_allclose(olympus.jit(f)(x, 0), np.zeros(2, np.float32))
    check_jit_matches_eager(lambda x: f(x, 4), (x,))


def test_while_carry_type_change_is_an_error():
    def f(x):
        return lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1].astype(jnp.int32)), (0, x)
        )

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(TypeError) as info:
        f(np.ones(3, np.float32))
    text = str(info.value)
    assert "carry[1]" in text and "f32[3]" in text and "i32[3]" in text
    assert f"{THIS_FILE}:{line}" in text


def test_while_cond_must_return_a_boolean_scalar():
    with pytest.raises(TypeError, match="bool"):
        lax.while_loop(lambda x: x, lambda x: x + 1.0, 1.0)


# ---- scan / map ---------------------------------------------------------------------
def _scan_reference(f, carry, xs, reverse=False):
    ys = []
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    out = [None] * len(xs)
    for i in order:
        carry, y = f(carry, xs[i])
        out[i] = y
        ys.append(y)
    return carry, np.stack(out)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_pytree_carry_and_xs_matches_python_loop(reverse):
    rng = np.random.default_rng(1)
    xs = {
        "a": rng.standard_normal((5, 2)).astype(np.float32),
        "b": rng.standard_normal((5,)).astype(np.float32),
    }

    def step(carry, x):
        s, p = carry
        s = s + x["a"] * x["b"]
        p = p * 0.5 + x["b"]
        return (s, p), s.sum() + p

    init = (np.zeros(2, np.float32), np.float32(1.0))

    def f(init, xs):
        return lax.scan(step, init, xs, reverse=reverse)

    (s, p), ys = f(init, xs)
    rows = [{"a": xs["a"][i], "b": xs["b"][i]} for i in range(5)]
    np_step = lambda c, x: (
        (c[0] + x["a"] * x["b"], c[1] * np.float32(0.5) + x["b"]),  # noqa: E731
        (c[0] + x["a"] * x["b"]).sum() + c[1] * np.float32(0.5) + x["b"],
    )
    (ws, wp), wys = _scan_reference(np_step, init, rows, reverse)
    assert_allclose(s, ws)
    assert_allclose(p, np.float32(wp))
    assert_allclose(ys, wys.astype(np.float32))
    check_jit_matches_eager(f, (init, xs))


def test_scan_without_xs_and_map():
    def f(x):
        return lax.scan(lambda c, _: (c * 2.0, c), x, None, length=4)

    carry, ys = f(np.float32(1.0))
    assert_allclose(carry, np.float32(16.0))
    assert_allclose(ys, np.array([1.0, 2.0, 4.0, 8.0], np.float32))
    xs = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    assert_allclose(lax.map(lambda r: r.sum() * 2.0, xs), xs.sum(1) * 2.0)
    assert_allclose(olympus.jit(lambda xs: lax.map(jnp.sin, xs))(xs), np.sin(xs))


def test_nested_control_flow_under_jit():
    def f(xs, k):
        def step(c, x):
            c = lax.cond(x > 0, lambda c: c + x, lambda c: c * 0.5, c)
            n = lax.while_loop(lambda n: n * 2 < k, lambda n: n * 2, 1)
            return c, n

        return lax.scan(step, 0.0, xs)

    xs = np.array([1.0, -1.0, 2.0, 3.0], np.float32)
    c, ns = olympus.jit(f)(xs, 5)
    assert_allclose(c, np.float32(((1.0 * 0.5) + 2.0) + 3.0))
    np.testing.assert_array_equal(np.asarray(ns), np.full(4, 4, np.int32))
    check_jit_matches_eager(f, (xs, 5))


def test_scan_mismatched_leading_axes_is_an_error():
    def f(a, b):
        return lax.scan(lambda c, x: (c, x[0] + x[1]), 0.0, (a, b))

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(TypeError) as info:
        f(np.ones(3, np.float32), np.ones(4, np.float32))
    text = str(info.value)
    assert "xs[0]" in text and "xs[1]" in text and "f32[3]" in text and "f32[4]" in text
    assert f"{THIS_FILE}:{line}" in text


def test_scan_carry_type_change_is_an_error():
    def f(x):
        return lax.scan(lambda c, x: (c[None] * x, x), np.float32(0.0), x)

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(TypeError) as info:
        f(np.ones((3, 2), np.float32))
    text = str(info.value)
    assert "carry" in text and "f32[]" in text and "f32[2]" in text
    assert f"{THIS_FILE}:{line}" in text


def test_lowering_uses_case_and_while():
    text = olympus.jit(func7).lower_text(1.0)
    assert '"stablehlo.case"' in text
    text = olympus.jit(func11).lower_text(np.ones(3, np.float32), 1.0)
    assert '"stablehlo.while"' in text and '"stablehlo.dynamic_update_slice"' in text


# ---- differentiation ---------------------------------------------------------------
from olympus.autodiff import grad, jvp  # noqa: E402


def _fd_grad(f64, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of a float64 NumPy reference."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f64(x + d) - f64(x - d)) / (2 * eps)
    return g


def test_cond_jvp_and_grad_in_both_branches():
    def f(x):
        return lax.cond(x.sum() > 0, lambda x: jnp.sin(x) * x, lambda x: x * x * 2.0, x)

    for x in (np.array([0.7, 0.2], np.float32), np.array([-0.7, 0.1], np.float32)):
        t = np.array([1.0, -2.0], np.float32)
        slope = np.cos(x) * x + np.sin(x) if x.sum() > 0 else 4.0 * x
        out, tan = jvp(f, (x,), (t,))
        assert_allclose(tan, slope * t)
        assert_allclose(grad(lambda x: f(x).sum())(x), slope)
        assert_allclose(olympus.jit(grad(lambda x: f(x).sum()))(x), slope)


def test_switch_grad_with_closed_over_constants():
    w = np.array([2.0, -1.0], np.float32)

    def f(i, x):
        return lax.switch(
            i,
            [
                lambda x: (x * w).sum(),
                lambda x: jnp.exp(x).sum(),
                lambda x: (x * x).sum(),
            ],
            x,
        )

    x = np.array([0.3, -0.4], np.float32)
    for i, want in [(0, w), (1, np.exp(x)), (5, 2 * x)]:
        assert_allclose(grad(f, argnums=1)(i, x), want)


def test_while_loop_jvp_matches_finite_differences():
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, c: jnp.sin(c) * x, x)

    def ref(x, n=3):
        c = x
        for _ in range(n):
            c = np.sin(c) * x
        return c

    x = np.float32(0.7)
    _, tan = olympus.jit(lambda x, n: jvp(lambda x: f(x, n), (x,), (np.float32(1.0),)))(
        x, 3
    )
    assert_allclose(tan, np.float32(_fd_grad(ref, np.float64(x))), rtol=1e-5)
    assert "while[" in str(
        make_olympuspr(lambda x, n: jvp(lambda x: f(x, n), (x,), (x,)))(x, 3)
    )


def test_while_loop_reverse_mode_is_refused_clearly():
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, c: c * x, x)

    with pytest.raises(NotImplementedError, match="while"):
        olympus.jit(grad(f))(np.float32(1.5), 3)  # n is traced: a while loop


def test_while_loop_grad_error_names_scan_and_the_loop_line():
    """grad of a while_loop (direct, or a fori_loop with a traced trip count) is a
    TypeError that points to scan / static fori_loop and to the loop's line."""
    from olympus.lax.control_flow.loops import WhileLoopReverseModeError

    def doubling(x):
        return lax.while_loop(lambda c: c < 10.0, lambda c: c * x, x)  # the loop line

    def power(x, n):
        return lax.fori_loop(0, n, lambda i, c: c * x, x)  # the loop line

    for call in (
        lambda: grad(doubling)(np.float32(1.5)),
        lambda: olympus.jit(grad(power))(np.float32(1.5), 3),
    ):
        with pytest.raises(TypeError) as info:
            call()
        assert isinstance(info.value, WhileLoopReverseModeError)
        msg = str(info.value)
        assert "while_loop" in msg and "lax.scan" in msg and "fori_loop" in msg
        where = msg.splitlines()[-1]
        assert THIS_FILE in where
        line = int(where.split(THIS_FILE + ":")[1].split()[0])
        with open(THIS_FILE) as source:
            assert "# the loop line" in source.read().splitlines()[line - 1]
    # a static trip count is a scan: reverse mode works
    assert_allclose(grad(lambda x: power(x, 3))(np.float32(1.5)), 4 * 1.5**3, rtol=1e-6)


def test_scan_grad_rnn_matches_finite_differences():
    w = np.array([[0.5, -0.2], [0.1, 0.3]], np.float32)
    xs = np.arange(6, dtype=np.float32).reshape(3, 2) / 5

    def loss(w, xs):
        def step(c, x):
            return jnp.tanh(w @ c + x), (c * c).sum()

        c, ys = lax.scan(step, jnp.ones(2), xs)
        return c.sum() + ys.sum()

    def ref(w, xs):
        c, total = np.ones(2), 0.0
        for x in xs:
            total += (c * c).sum()
            c = np.tanh(w @ c + x)
        return c.sum() + total

    gw, gxs = grad(loss, argnums=(0, 1))(w, xs)
    assert_allclose(
        gw, _fd_grad(lambda w: ref(w, xs), w).astype(np.float32), rtol=1e-4, atol=1e-5
    )
    assert_allclose(
        gxs, _fd_grad(lambda x: ref(w, x), xs).astype(np.float32), rtol=1e-4, atol=1e-5
    )
    gw_jit, _ = olympus.jit(grad(loss, argnums=(0, 1)))(w, xs)
    assert_allclose(gw_jit, gw, rtol=1e-5)


def test_reverse_scan_and_static_fori_loop_grads():
    xs = np.array([0.5, -1.0, 2.0], np.float32)

    def f(a, xs):
        c, ys = lax.scan(lambda c, x: (c * a + x, c * x), 1.0, xs, reverse=True)
        return c + ys.sum()

    def ref(a, xs=xs.astype(np.float64)):
        c, total = 1.0, 0.0
        for x in xs[::-1]:
            total += c * x
            c = c * a + x
        return c + total

    a = np.float32(0.8)
    assert_allclose(grad(f)(a, xs), np.float32(_fd_grad(ref, np.float64(a))), rtol=1e-5)
    g = grad(lambda a: lax.fori_loop(0, 4, lambda i, c: c * a + i, 1.0))(a)
    assert_allclose(
        g,
        np.float32(
            _fd_grad(lambda a: (((a + 0) * a + 1) * a + 2) * a + 3, np.float64(a))
        ),
        rtol=1e-5,
    )


# ---- batching ----------------------------------------------------------------------
from olympus.transforms.batching import vmap  # noqa: E402


def test_vmap_cond_with_batched_and_unbatched_predicate():
    xs = np.array([0.5, -1.0, 2.0], np.float32)

    def f(p, x):
        return lax.cond(p, lambda x: jnp.sin(x), lambda x: x * 2.0, x)

    assert_allclose(vmap(f)(xs > 0, xs), np.where(xs > 0, np.sin(xs), xs * 2))
    assert_allclose(vmap(f, in_axes=(None, 0))(True, xs), np.sin(xs))
    assert "cond[" in str(make_olympuspr(vmap(f, in_axes=(None, 0)))(True, xs))
    assert "select_n" in str(make_olympuspr(vmap(f))(xs > 0, xs))
    idx = np.array([2, 0, 1], np.int32)
    got = vmap(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x))(idx, xs)
    assert_allclose(got, np.array([np.exp(xs[0]), np.sin(xs[1]), np.cos(xs[2])]))


def test_vmap_while_loop_with_per_example_trip_counts():
    def collatz_steps(x):
        return lax.while_loop(
            lambda c: c[0] != 1,
            lambda c: (jnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1), c[1] + 1),
            (x, 0),
        )[1]

    def ref(n):
        steps = 0
        while n != 1:
            n, steps = (n // 2 if n % 2 == 0 else 3 * n + 1), steps + 1
        return steps

    ns = np.array([1, 6, 7, 27], np.int32)
    np.testing.assert_array_equal(
        np.asarray(vmap(collatz_steps)(ns)), [ref(int(n)) for n in ns]
    )
    np.testing.assert_array_equal(
        np.asarray(olympus.jit(vmap(collatz_steps))(ns)), [ref(int(n)) for n in ns]
    )


def test_vmap_fori_and_scan_over_other_axes():
    xs = np.array([0.5, -1.0, 2.0], np.float32)
    k = lambda n, x: lax.fori_loop(0, n, lambda i, c: c + x, 0.0)  # noqa: E731
    assert_allclose(vmap(k)(np.array([1, 2, 3], np.int32), xs), xs * [1, 2, 3])
    assert_allclose(olympus.jit(vmap(k, in_axes=(None, 0)))(3, xs), xs * 3)

    def s(w, xs):
        return lax.scan(lambda c, x: (c * w + x, c), 0.0, xs)

    w = np.array([1.0, 0.5], np.float32)
    xss = np.arange(6, dtype=np.float32).reshape(3, 2)
    carry, ys = vmap(s, in_axes=(0, 1))(w, xss)
    for b in range(2):
        c_ref, ys_ref = _scan_reference(
            lambda c, x: (c * w[b] + x, c), np.float32(0.0), xss[:, b]
        )
        assert_allclose(carry[b], np.float32(c_ref))
        assert_allclose(ys[b], ys_ref.astype(np.float32))
    assert_allclose(vmap(lambda x: lax.map(jnp.sin, x))(xss), np.sin(xss))


def test_per_example_gradients_through_scan():
    def loss(w, xs):
        c, _ = lax.scan(lambda c, x: (jnp.tanh(c * w + x), None), 0.0, xs)
        return c

    def ref(w, xs):
        c = 0.0
        for x in xs:
            c = np.tanh(c * w + x)
        return c

    ws = np.array([0.5, -0.3, 1.2], np.float32)
    xs = np.array([0.1, 0.4, -0.2, 0.3], np.float32)
    got = vmap(grad(loss), in_axes=(0, None))(ws, xs)
    want = [
        _fd_grad(lambda w: ref(w, xs.astype(np.float64)), np.float64(w)) for w in ws
    ]
    assert_allclose(got, np.array(want, np.float32), rtol=1e-4, atol=1e-6)


def test_eager_calls_reuse_one_executable_per_structure():
    from olympus.backends.xla import dispatch

    def run(x):
        for i in range(3):
            x = lax.cond(i % 2 == 0, lambda x: x * 2.0, lambda x: jnp.sin(x), x)
            x = lax.fori_loop(0, 2, lambda i, c: c + 1.0, x)
            x = lax.while_loop(lambda c: c < 0.0, lambda c: c + 1.0, x)
        return x

    x = np.float32(0.5)
    first = run(x)
    size = len(dispatch._eager_cache)
    second = run(x)
    assert len(dispatch._eager_cache) == size  # fresh traces, no new compilations
    assert float(first) == float(second)
    # Same structure, different literal: a different program.
    a = lax.cond(True, lambda x: x * 2.0, lambda x: x, x)
    b = lax.cond(True, lambda x: x * 3.0, lambda x: x, x)
    assert (float(a), float(b)) == (1.0, 1.5)
    # Same structure, different weak types: results keep their own types.
    weak = lax.cond(True, lambda: 1.0, lambda: 2.0)
    strong = lax.cond(True, lambda: np.float32(1.0), lambda: np.float32(2.0))
    assert weak.aval.weak_type and not strong.aval.weak_type


def test_fori_loop_carry_error_names_init_val_path_in_both_forms():
    def f(x, n):
        return lax.fori_loop(
            0, n, lambda i, c: {"a": c["a"].astype(jnp.int32)}, {"a": x}
        )

    x = np.ones(2, np.float32)
    for jitted in (
        olympus.jit(f, static_argnums=1),
        olympus.jit(f),
    ):  # scan, then while
        expected = r"fori_loop: carry leaf init_val\['a'\].*f32\[2\].*i32\[2\]"
        with pytest.raises(TypeError, match=expected):
            jitted(x, 3)


def test_scan_of_length_zero_returns_init_and_empty_ys():
    carry, ys = lax.scan(
        lambda c, x: (c + x, x * 2), jnp.zeros(2), np.zeros((0, 2), np.float32)
    )
    assert_allclose(carry, np.zeros(2, np.float32))
    assert np.asarray(ys).shape == (0, 2)


def test_second_derivatives_through_scan_and_cond():
    xs = np.arange(3.0, dtype=np.float32)

    def f(a):
        return lax.scan(lambda c, x: (jnp.sin(c * a) + x, None), 0.5, xs)[0]

    def ref(a):
        c = 0.5
        for x in xs.astype(np.float64):
            c = np.sin(c * a) + x
        return c

    a = np.float32(0.7)
    assert_allclose(
        olympus.hessian(f)(a),
        np.float32(_fd_grad(lambda a: _fd_grad(ref, a, 1e-5), np.float64(a), 1e-4)),
        rtol=1e-3,
    )
    g = olympus.hessian(
        lambda a: lax.cond(a > 0, lambda a: jnp.sin(a) * a, lambda a: a, a)
    )
    assert_allclose(g(a), np.float32(2 * np.cos(0.7) - 0.7 * np.sin(0.7)), rtol=1e-5)
    jac = olympus.jacrev(lambda v: lax.fori_loop(0, 3, lambda i, c: c * v, jnp.ones(2)))
    assert_allclose(
        jac(np.array([1.0, 2.0], np.float32)), np.diag([3.0, 12.0]).astype(np.float32)
    )


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_unroll_gives_the_same_values(reverse):
    xs = np.arange(7, dtype=np.float32)

    def f(xs, unroll):
        return lax.scan(
            lambda c, x: (c * 0.5 + x, c - x), 1.0, xs, reverse=reverse, unroll=unroll
        )

    want_c, want_ys = _scan_reference(
        lambda c, x: (c * np.float32(0.5) + x, c - x), np.float32(1.0), xs, reverse
    )
    for unroll in (1, 3, True):
        c, ys = olympus.jit(f, static_argnums=1)(xs, unroll)
        assert_allclose(c, np.float32(want_c))
        assert_allclose(ys, want_ys.astype(np.float32))
    text = olympus.jit(f, static_argnums=1).lower_text(xs, 3)
    assert (
        text.count('"stablehlo.dynamic_update_slice"') == 3 + 1
    )  # 2 trips of 3, then 1
    assert '"stablehlo.while"' not in olympus.jit(f, static_argnums=1).lower_text(
        xs, True
    )


def test_derivatives_of_batched_loops_with_per_example_trip_counts():
    def h(x):
        return lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0 + 1, x)

    xs = np.array([0.5, 3.0, 20.0], np.float32)
    slopes = np.array([8.0, 4.0, 1.0], np.float32)  # 3, 2 and 0 doublings
    assert_allclose(olympus.vmap(olympus.jacfwd(h))(xs), slopes)
    assert_allclose(olympus.jacfwd(olympus.vmap(h))(xs), np.diag(slopes))
    f = lambda x: lax.cond(x > 0, lambda x: jnp.sin(x) * x, lambda x: x * x * 2.0, x)  # noqa: E731
    ys = np.array([-1.0, 0.5, 2.0], np.float32)
    want = np.where(ys > 0, np.cos(ys) * ys + np.sin(ys), 4 * ys)
    assert_allclose(olympus.vmap(olympus.grad(f))(ys), want)
    assert_allclose(olympus.grad(lambda v: olympus.vmap(f)(v).sum())(ys), want)


def test_scan_grad_saves_loop_invariant_residuals_once():
    w = np.array([[0.5, -0.2], [0.1, 0.3]], np.float32)
    xs = np.ones((3, 2), np.float32)

    def loss(w, xs):
        c, _ = lax.scan(
            lambda c, x: (jnp.tanh(jnp.cos(w) @ c + x), None), jnp.ones(2), xs
        )
        return c.sum()

    text = str(make_olympuspr(grad(loss))(w, xs))
    assert (
        "f32[3,2,2]" not in text
    )  # cos(w), sin(w): computed before the loop, not stacked

    def ref(w):
        c = np.ones(2)
        for x in xs:
            c = np.tanh(np.cos(w) @ c + x)
        return c.sum()

    assert_allclose(
        grad(loss)(w, xs), _fd_grad(ref, w).astype(np.float32), rtol=1e-4, atol=1e-6
    )


def test_python_branching_in_a_body_names_the_users_function_and_argument():
    def body(c, x):
        if x["a"] > 0:
            return c, c
        return c, c

    expected = r"(?s)scan body of .*body.*argument\(s\) x\['a'\] of .*body"
    with pytest.raises(TypeError, match=expected):
        lax.scan(body, 0.0, {"a": np.ones(3, np.float32)})

    def update(i, v):
        return v if v["w"] > 0 else v

    with pytest.raises(
        TypeError, match=r"(?s)of .*update.*init_val\[.w.\] of .*update"
    ):
        lax.fori_loop(0, 3, update, {"w": 1.0})
    with pytest.raises(TypeError, match=r"(?s)argument\(s\) xt of"):
        lax.cond(True, lambda xt: xt if xt > 0 else xt, lambda xf: xf, 1.0)


def test_linearized_scan_marks_its_tangent_operands_linear():
    xs = np.arange(1, 4, dtype=np.float32)

    def f(a):
        return lax.scan(lambda c, x: (c * jnp.sin(x) * a, None), 1.0, xs)[0]

    _, f_jvp = olympus.linearize(f, np.float32(0.5))
    (eqn,) = [
        e
        for e in make_olympuspr(f_jvp)(np.float32(0.5)).eqns
        if e.primitive.name == "scan"
    ]
    tangent_positions = [
        i
        for i, x in enumerate(eqn.invars)
        if x.aval.shape == () and eqn.params["linear"][i]
    ]
    assert tangent_positions and not all(eqn.params["linear"])
    assert_allclose(
        f_jvp(np.float32(1.0)), np.float32(3 * 0.25 * np.prod(np.sin(xs))), rtol=1e-5
    )


def test_disable_jit_runs_control_flow_as_python():
    taken = []

    def double(x):
        taken.append("double")
        return x * 2.0

    def negate(x):
        taken.append("negate")
        return -x

    xs = {"a": np.arange(3.0, dtype=np.float32)}

    def step(c, x):
        return c + x["a"], (c, x["a"] * 2)

    compiled = lax.scan(step, 0.0, xs, reverse=True)
    with olympus.disable_jit():
        assert float(lax.cond(True, double, negate, 1.0)) == 2.0
        assert float(lax.switch(5, [double, negate], 1.0)) == -1.0
        assert taken == ["double", "negate"]  # only the branch taken ran
        assert int(lax.while_loop(lambda c: c < 10, lambda c: c * 2 + 1, 1)) == 15
        assert int(lax.fori_loop(0, 3, lambda i, c: c + i, 0)) == 3
        carry, (cs, doubled) = lax.scan(step, 0.0, xs, reverse=True)
    assert_allclose(carry, compiled[0])
    assert_allclose(cs, compiled[1][0])
    assert_allclose(doubled, compiled[1][1])


# ---- reverse mode through control flow nested in control flow --------------------------
# Partial evaluation used to split loop and branch bodies equation by equation, so a
# differentiated inner cond / scan was staged whole (primal work included) into the
# linear program, which then could not be transposed (fuzz seeds 8, 34, 88, ...).
def _cond_in_scan(x):
    step = lambda c, _: (lax.cond(c > 0, jnp.sin, jnp.cos, c), None)
    return lax.scan(step, x, None, length=3)[0]


def _cond_in_cond(x):
    inner = lambda y: lax.cond(y > 1, jnp.exp, jnp.tanh, y) * y
    return lax.cond(x > 0, inner, jnp.cos, x)


def _scan_in_scan(x):
    def outer(c, _):
        inner = lambda d, _: (jnp.sin(d) * c, None)
        return lax.scan(inner, c, None, length=2)[0], None

    return lax.scan(outer, x, None, length=3)[0]


def _scan_in_cond(x):
    def taken(y):
        return lax.scan(lambda d, _: (jnp.tanh(d) * y, None), y, None, length=2)[0]

    return lax.cond(x > 0, taken, jnp.cos, x)


def _cond_in_scan_over_xs(x):
    def step(c, x_row):
        c = lax.cond(x_row > 0, lambda v: v * jnp.exp(x_row * 0.1), lambda v: v**2, c)
        return c, jnp.sin(c) * x_row

    c, ys = lax.scan(step, x[0], x)
    return c + ys.sum()


@pytest.mark.parametrize(
    "f", [_cond_in_scan, _cond_in_cond, _scan_in_scan, _scan_in_cond]
)
@pytest.mark.parametrize("x", [0.5, 1.5, -0.7])
def test_grad_through_nested_control_flow_matches_finite_differences(f, x):
    from olympus.test_util import check_grads

    check_grads(f, (np.float32(x),), order=1, modes=("rev",))
    assert_allclose(
        olympus.jit(olympus.grad(f))(np.float32(x)),
        olympus.grad(f)(np.float32(x)),
        rtol=1e-5,
    )


def test_grad_through_cond_in_scan_over_xs_matches_finite_differences():
    from olympus.test_util import check_grads

    x = np.array([0.3, -0.4, 0.8, -1.1], np.float32)
    check_grads(_cond_in_scan_over_xs, (x,), order=1, modes=("rev",))


def test_vjp_of_cond_in_cond_closing_over_differentiated_values():
    """The inner cond used to be staged whole, primal work included, into the linear
    program, so the outer cond's primal outputs (and vjp's primal result) were values
    of the linear program: linearize tracers, which escaped (UnexpectedTracerError
    under jit; fuzz seeds 9, 60, 66, ...)."""

    def f(x, y, z):
        def taken(_):
            return lax.cond(jnp.sum(y) > 0.0, lambda b: b * z, lambda b: z, y)

        return y - lax.cond(jnp.sum(x) > 0.0, taken, lambda a: a, y)

    x = np.array([1.0, 2.0], np.float32)
    y = np.array([1.0, -2.0], np.float32)
    z = np.array([0.5, 3.0], np.float32)
    ct = np.array([1.0, -1.0], np.float32)

    def pullback(xs, ct):
        out, vjp_fun = olympus.vjp(f, *xs)
        return out, vjp_fun(ct)

    out, (ct_x, ct_y, ct_z) = pullback((x, y, z), ct)
    assert isinstance(out, olympus.Array)
    assert_allclose(out, y - z)  # sum(y) < 0: the inner cond returns z
    assert_allclose(ct_x, np.zeros(2))
    assert_allclose(ct_y, ct)
    assert_allclose(ct_z, -ct)
    jit_out, jit_cts = olympus.jit(pullback)((x, y, z), ct)
    assert_allclose(jit_out, out)
    for a, b in zip(jit_cts, (ct_x, ct_y, ct_z)):
        assert_allclose(a, b)
    # and with the other inner branch taken, whose result reads y and z
    y2 = np.array([1.0, 2.0], np.float32)
    out2, (_, ct_y2, ct_z2) = olympus.jit(pullback)((x, y2, z), ct)
    assert_allclose(out2, y2 - y2 * z)
    assert_allclose(ct_y2, ct * (1 - z))
    assert_allclose(ct_z2, -ct * y2)


def test_linearize_of_while_loop_with_nested_cond_returns_concrete_primal():
    """A while loop's known (primal) carries run now; a nested cond taking a tangent
    used to make them unknown, so linearize returned a tracer as its primal output."""

    def f(x):
        def body(c):
            i, v = c
            return i + 1, lax.cond(v > 0, jnp.sin, jnp.cos, v) * 1.5

        return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]

    x = np.float32(0.5)
    out, f_lin = olympus.linearize(f, x)
    assert isinstance(out, olympus.Array)
    assert_allclose(out, f(x))
    eps = np.float32(1e-3)
    assert_allclose(
        f_lin(np.float32(1.0)), (f(x + eps) - f(x - eps)) / (2 * eps), rtol=1e-2
    )
