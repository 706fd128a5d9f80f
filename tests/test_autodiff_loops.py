"""Reverse mode through loops: checkpoint inside scan / fori_loop bodies,
lax.map with batch_size, while_loop with max_steps.

Gradients are checked against finite differences (float64, x64 fixture) and
against the same program without checkpoint.
"""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.test_util import check_grads
from olympus.transforms.linearize import linearize_flat
from olympus.tree_util import tree_flatten


def rng_array(shape, seed=0, scale=0.5):
    return np.random.default_rng(seed).standard_normal(shape) * scale


H = rng_array((4,), seed=1)
WS = rng_array((5, 4, 4), seed=2)
BS = rng_array((5, 4), seed=3)


def assert_same_grads(f, g, args, argnums=(0, 1)):
    got = tree_flatten(olympus.grad(f, argnums=argnums)(*args))[0]
    want = tree_flatten(olympus.grad(g, argnums=argnums)(*args))[0]
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


def layer(h, w):
    return jnp.tanh(h @ w), None


def scan_loss(step):
    def loss(ws, h):
        h, _ = lax.scan(step, h, ws)
        return jnp.sum(h * h)

    return loss


# ---- checkpoint inside loop bodies (the bug of issue 16) ----------------------------
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_grad_scan_of_checkpointed_body(x64, argnums):
    """The issue's program: the tanh forward was taken for linear work."""
    loss = scan_loss(olympus.checkpoint(layer))
    plain = scan_loss(layer)
    got = olympus.grad(loss, argnums=argnums)(WS, H)
    want = olympus.grad(plain, argnums=argnums)(WS, H)
    for a, b in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10)
    check_grads(loss, (WS, H), order=1, modes=("rev",))


def test_grad_scan_of_checkpoint_under_jit(x64):
    loss = scan_loss(olympus.checkpoint(layer))
    got = olympus.jit(olympus.grad(loss, argnums=(0, 1)))(WS, H)
    want = olympus.grad(scan_loss(layer), argnums=(0, 1))(WS, H)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10)


def test_checkpoint_in_scan_recomputes_in_backward_pass(x64):
    """The forward scan saves one row per iteration (the carry), not the tanh
    values: the recomputation runs in the backward scan."""

    def residual_bytes(step):
        _, linear = linearize_flat(
            lambda ws, h: [scan_loss(step)(ws, h)], [WS, H], [True, True]
        )
        return sum(np.asarray(c).nbytes for c in linear.consts), str(linear.olympuspr)

    plain, _ = residual_bytes(layer)
    remat, text = residual_bytes(olympus.checkpoint(layer))
    assert "remat(layer)" in text
    assert remat < plain


def test_checkpoint_policy_inside_scan(x64):
    saving = olympus.checkpoint(layer, policy=olympus.checkpoint_policies.dots_saveable)
    assert_same_grads(scan_loss(saving), scan_loss(layer), (WS, H))


def test_checkpoint_in_scan_several_arguments_and_carries(x64):
    def block(carry, xs):
        h, c = carry
        w, b = xs
        h = jnp.tanh(h @ w + b) * jnp.cos(c)
        return (h, c + jnp.sum(h)), h[0]

    def make(step):
        def loss(ws, bs, h):
            (h, c), ys = lax.scan(step, (h, 0.5), (ws, bs))
            return jnp.sum(h) + c + jnp.sum(jnp.sin(ys))

        return loss

    args = (WS, BS, H)
    assert_same_grads(make(olympus.checkpoint(block)), make(block), args, (0, 1, 2))
    check_grads(make(olympus.checkpoint(block)), args, order=1, modes=("rev",))


def test_checkpoint_takes_slice_as_argument_or_closes_over_it(x64):
    """fori_loop: the layer's weight is an argument of the checkpointed function,
    or read from the stacked weights inside it."""

    def as_argument(ws, h):
        ws = jnp.asarray(ws)
        f = olympus.checkpoint(lambda h, w: jnp.tanh(h @ w))
        return jnp.sum(lax.fori_loop(0, 5, lambda i, h: f(h, ws[i]), h))

    def closed_over(ws, h):
        ws = jnp.asarray(ws)

        def body(i, h):
            return olympus.checkpoint(lambda h: jnp.tanh(h @ ws[i]))(h)

        return jnp.sum(lax.fori_loop(0, 5, body, h))

    def plain(ws, h):
        ws = jnp.asarray(ws)
        return jnp.sum(lax.fori_loop(0, 5, lambda i, h: jnp.tanh(h @ ws[i]), h))

    assert_same_grads(as_argument, plain, (WS, H))
    assert_same_grads(closed_over, plain, (WS, H))
    check_grads(as_argument, (WS, H), order=1, modes=("rev",))


def test_checkpoint_in_nested_scan(x64):
    """Blocks of layers: an outer scan over blocks, each block an inner scan of
    checkpointed layers, and the whole block checkpointed too."""
    ws = rng_array((3, 2, 4, 4), seed=4)

    def make(inner_step, outer_wrap):
        def block(h, block_ws):
            h, _ = lax.scan(inner_step, h, block_ws)
            return h, None

        def loss(ws, h):
            h, _ = lax.scan(outer_wrap(block), h, ws)
            return jnp.sum(h * h)

        return loss

    plain = make(layer, lambda f: f)
    assert_same_grads(make(olympus.checkpoint(layer), lambda f: f), plain, (ws, H))
    assert_same_grads(make(layer, olympus.checkpoint), plain, (ws, H))
    both = make(olympus.checkpoint(layer), olympus.checkpoint)
    assert_same_grads(both, plain, (ws, H))
    check_grads(both, (ws, H), order=1, modes=("rev",))


def test_checkpoint_in_cond_inside_scan(x64):
    def step(h, w):
        f = olympus.checkpoint(lambda h, w: jnp.tanh(h @ w))
        h = lax.cond(jnp.sum(h) > 0, f, lambda h, w: jnp.sin(h @ w), h, w)
        return h, None

    def plain_step(h, w):
        return (
            lax.cond(
                jnp.sum(h) > 0,
                lambda h, w: jnp.tanh(h @ w),
                lambda h, w: jnp.sin(h @ w),
                h,
                w,
            ),
            None,
        )

    assert_same_grads(scan_loss(step), scan_loss(plain_step), (WS, H))


def test_jvp_and_vmap_of_checkpoint_in_scan(x64):
    loss = scan_loss(olympus.checkpoint(layer))
    check_grads(loss, (WS, H), order=1, modes=("fwd",))
    per_example = olympus.vmap(olympus.grad(loss, argnums=1), in_axes=(None, 0))
    hs = rng_array((3, 4), seed=5)
    want = [olympus.grad(scan_loss(layer), argnums=1)(WS, h) for h in hs]
    np.testing.assert_allclose(
        np.asarray(per_example(WS, hs)), np.stack(want), rtol=1e-10
    )


def test_second_order_through_checkpoint_in_scan(x64):
    loss = scan_loss(olympus.checkpoint(layer))
    hess = olympus.jacfwd(olympus.grad(loss, argnums=1), argnums=1)(WS, H)
    want = olympus.jacfwd(olympus.grad(scan_loss(layer), argnums=1), argnums=1)(WS, H)
    np.testing.assert_allclose(np.asarray(hess), np.asarray(want), rtol=1e-9)


def test_fuzz_seed_58_checkpointed_scan_body_in_fori_loop(x64):
    """Found by the widened fuzzer (constant initial carry, checkpointed scan body):
    MissingRuleError for integer_pow before the fix."""

    def program(v12, v48, v54):
        def l52(i53, p51):
            def s58(p56, p57):
                v59 = p56 - p57
                return lax.integer_pow(jnp.tanh(v59), 3), v59

            _, v63 = lax.scan(olympus.checkpoint(s58), jnp.zeros_like(v54), v12)
            return v63 * 0.5

        return jnp.sum(lax.fori_loop(0, 2, l52, jnp.full_like(v48, 0.5)))

    args = (rng_array((3,), seed=6), rng_array((3,), seed=7), np.float64(-0.2))
    check_grads(program, args, order=1)


def test_fuzz_seed_159_checkpointed_scan_body_returning_none(x64):
    """Found by the widened fuzzer: UnexpectedTracerError before the fix."""

    def program(a1, a2, v1):
        v16 = lax.scan(
            olympus.checkpoint(lambda c, x: (x, None)), jnp.zeros_like(a1), a2
        )[0]
        return lax.cond(jnp.sum(v1) > 0.0, lambda p: p, lambda p: v16 * 2.0, v16)

    for v1 in (np.ones((2, 2)), -np.ones((2, 2))):
        args = (np.float64(0.55), rng_array((3,), seed=8), v1)
        check_grads(program, args, order=1)
        grad = olympus.grad(program, argnums=1)(*args)
        assert grad.tolist() == [0.0, 0.0, 1.0 if v1[0, 0] > 0 else 2.0]


# ---- lax.map with batch_size ---------------------------------------------------------
def _map_fn(x):
    a, b = x
    return {"s": jnp.sin(a) * b, "n": jnp.sum(a * a)}


@pytest.mark.parametrize("length,batch_size", [(7, 3), (6, 3), (5, 1), (4, 4), (3, 8)])
def test_map_batch_size_matches_python_loop(length, batch_size):
    a = rng_array((length, 2), seed=10).astype(np.float32)
    b = rng_array((length,), seed=11).astype(np.float32)[:, None]
    got = lax.map(_map_fn, (a, b), batch_size=batch_size)
    rows = [_map_fn((a[i], b[i])) for i in range(length)]
    for key in ("s", "n"):
        want = np.stack([np.asarray(r[key]) for r in rows])
        np.testing.assert_allclose(np.asarray(got[key]), want, rtol=1e-6)
    jitted = olympus.jit(lambda xs: lax.map(_map_fn, xs, batch_size=batch_size))((a, b))
    np.testing.assert_allclose(np.asarray(jitted["s"]), np.asarray(got["s"]), rtol=1e-6)


def test_map_batch_size_vmaps_chunks_and_remainder():
    """Two chunks of 3 in the scan, the last row by a vmap of its own."""
    text = str(
        olympus.make_olympuspr(lambda xs: lax.map(jnp.sin, xs, batch_size=3))(
            np.ones((7, 2), np.float32)
        )
    )
    assert "length=2" in text and "f32[3,2] = sin" in text and "f32[1,2] = sin" in text
    assert "concatenate" in text


def test_map_batch_size_grad(x64):
    xs = rng_array((7, 3), seed=12)
    w = rng_array((3,), seed=13)

    def loss(w, xs, batch_size):
        return jnp.sum(
            lax.map(lambda x: jnp.tanh(x @ w) ** 2, xs, batch_size=batch_size)
        )

    want = olympus.grad(loss, argnums=(0, 1))(w, xs, None)
    for k in (2, 3, 7, 10):
        got = olympus.grad(loss, argnums=(0, 1))(w, xs, k)
        for g, e in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12)
    check_grads(lambda w, xs: loss(w, xs, 3), (w, xs), order=1)


def test_map_batch_size_rejects_non_positive():
    with pytest.raises(ValueError, match="batch_size"):
        lax.map(jnp.sin, np.ones(3, np.float32), batch_size=0)


# ---- reverse mode through while_loop(..., max_steps=N) -------------------------------
def newton_sqrt(a, max_steps=50):
    """sqrt(a) by Newton's method, iterated until the step is below 1e-12."""

    def going(c):
        y, previous = c
        return jnp.abs(y - previous) > 1e-12

    def step(c):
        y, _ = c
        return 0.5 * (y + a / y), y

    return lax.while_loop(going, step, (a, a + 1.0), max_steps=max_steps)[0]


def test_while_max_steps_forward_equals_while(x64):
    a = np.float64(2.0)
    plain = lax.while_loop(
        lambda c: jnp.abs(c[0] - c[1]) > 1e-12,
        lambda c: (0.5 * (c[0] + a / c[0]), c[0]),
        (a, a + 1.0),
    )[0]
    for run in (newton_sqrt, olympus.jit(newton_sqrt)):
        np.testing.assert_allclose(np.asarray(run(a)), np.asarray(plain), rtol=0)
    with olympus.disable_jit():
        np.testing.assert_allclose(
            np.asarray(newton_sqrt(a)), np.asarray(plain), rtol=0
        )
    # forward-only use stays a while loop, which stops when the condition fails
    text = str(olympus.make_olympuspr(newton_sqrt)(a))
    assert "while[" in text and "max_steps=50" in text and "scan" not in text


def test_while_max_steps_stops_after_max_steps():
    def count(x, n):
        return lax.while_loop(lambda c: c < 100.0, lambda c: c + 1.0, x, max_steps=n)

    for n in (0, 1, 7):
        assert float(count(np.float32(0.0), n)) == n
        assert float(olympus.jit(count, static_argnums=1)(np.float32(0.0), n)) == n
        with olympus.disable_jit():
            assert float(count(np.float32(0.0), n)) == n
    assert float(count(np.float32(95.0), 50)) == 100.0


def test_grad_of_newton_solver_with_max_steps(x64):
    for a in (0.5, 2.0, 9.0):
        np.testing.assert_allclose(
            float(olympus.grad(newton_sqrt)(a)), 0.5 / np.sqrt(a), rtol=1e-10
        )
        np.testing.assert_allclose(
            float(olympus.jit(olympus.grad(newton_sqrt))(a)),
            0.5 / np.sqrt(a),
            rtol=1e-10,
        )
    check_grads(newton_sqrt, (np.float64(3.0),), order=1, modes=("rev",))
    per_example = olympus.vmap(olympus.grad(newton_sqrt))(jnp.array([1.0, 4.0, 16.0]))
    np.testing.assert_allclose(np.asarray(per_example), [0.5, 0.25, 0.125], rtol=1e-10)


@pytest.mark.parametrize("n", [1, 2, 7, 9, 30])
def test_grad_while_max_steps_matches_unrolled_loop(x64, n):
    """A loop that runs all n steps, with closed-over weights: the masked scan
    (padded to a square of steps) gives the unrolled loop's gradient."""
    w, b = rng_array((4, 4), seed=14), rng_array((4,), seed=15)

    def looped(w, b, x):
        def body(c):
            return (c[0] + 1, jnp.tanh(c[1] @ w + b))

        return jnp.sum(lax.while_loop(lambda c: c[0] < n, body, (0, x), max_steps=n)[1])

    def unrolled(w, b, x):
        for _ in range(n):
            x = jnp.tanh(x @ w + b)
        return jnp.sum(x)

    args = (w, b, rng_array((4,), seed=16))
    assert_same_grads(looped, unrolled, args, (0, 1, 2))

    # more steps allowed than taken: the extra steps leave the carry unchanged
    def early(w, b, x):
        def body(c):
            return (c[0] + 1, jnp.tanh(c[1] @ w + b))

        return jnp.sum(
            lax.while_loop(lambda c: c[0] < n, body, (0, x), max_steps=n + 5)[1]
        )

    assert_same_grads(early, unrolled, args, (0, 1, 2))


def test_while_max_steps_saves_about_sqrt_n_carries(x64):
    w = rng_array((16, 16), seed=17) * 0.3

    def loop(w, n):
        return jnp.sum(
            lax.while_loop(
                lambda x: True, lambda x: jnp.tanh(x @ w), jnp.ones(16), max_steps=n
            )
        )

    for n, outer in ((100, 10), (400, 20)):
        _, linear = linearize_flat(lambda w, n=n: [loop(w, n)], [w], [True])
        stacked = [np.shape(c) for c in linear.consts if np.shape(c)[:1] == (outer,)]
        assert (outer, 16) in stacked
        assert sum(np.asarray(c).size for c in linear.consts) < 16 * 16 + 3 * outer * 16


def test_fori_loop_traced_bounds_with_max_steps(x64):
    def power(x, n, max_steps):
        return lax.fori_loop(0, n, lambda i, c: c * x, x, max_steps=max_steps)

    for python_loops in (False, True):
        with olympus.disable_jit(python_loops):
            assert float(power(2.0, 12, 10)) == 2.0**11  # at most 10 steps
            static = lax.fori_loop(0, 12, lambda i, c: c * 2.0, 1.0, max_steps=10)
            assert float(static) == 1024
    grad = olympus.jit(olympus.grad(power), static_argnums=2)
    np.testing.assert_allclose(float(grad(1.5, 3, 10)), 4 * 1.5**3, rtol=1e-12)
    np.testing.assert_allclose(float(grad(1.5, 12, 10)), 11 * 1.5**10, rtol=1e-12)


def test_jvp_of_while_max_steps_stays_a_while(x64):
    text = str(
        olympus.make_olympuspr(lambda a: olympus.jvp(newton_sqrt, (a,), (1.0,)))(2.0)
    )
    assert "while[" in text and "scan" not in text
    _, tangent = olympus.jvp(newton_sqrt, (2.0,), (1.0,))
    np.testing.assert_allclose(float(tangent), 0.5 / np.sqrt(2.0), rtol=1e-10)


def test_while_grad_error_says_to_pass_max_steps():
    from olympus.lax.control_flow.loops import WhileLoopReverseModeError

    def f(x):
        return lax.while_loop(lambda c: c < 10.0, lambda c: c * x, x)

    with pytest.raises(WhileLoopReverseModeError, match="max_steps"):
        olympus.grad(f)(np.float32(1.5))
    with pytest.raises(ValueError, match="max_steps"):
        lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, 1.0, max_steps=-1)


# ---- checkpoint_policies.memory_budget -----------------------------------------------
def test_memory_budget_policy_trades_memory_for_recomputation(x64):
    """A scan of checkpointed 4-layer blocks: the residuals grow with the budget
    (never past it per block), the recomputation shrinks, the gradient stays."""
    ws, h = rng_array((6, 4, 8, 8), seed=18), rng_array((2, 8), seed=19)
    act = h.nbytes  # one activation

    def block(h, wb):
        for i in range(4):
            h = jnp.tanh(h @ wb[i])
        return h, None

    def measure(policy):
        loss = scan_loss(olympus.checkpoint(block, policy=policy))
        _, linear = linearize_flat(lambda ws, h: [loss(ws, h)], [ws, h], [True, True])
        text = str(linear.olympuspr)
        return (
            olympus.grad(loss)(ws, h),
            sum(np.asarray(c).nbytes for c in linear.consts),
            text.count("= tanh"),
        )

    plain_grad = olympus.grad(scan_loss(block))(ws, h)
    nothing = measure(olympus.checkpoint_policies.nothing_saveable)
    previous = None
    for k in (0, 1, 2, 4, 8):
        grad, res, tanhs = measure(olympus.checkpoint_policies.memory_budget(k * act))
        np.testing.assert_allclose(np.asarray(grad), np.asarray(plain_grad), rtol=1e-10)
        assert nothing[1] <= res <= nothing[1] + 6 * k * act
        if previous is not None:
            assert res >= previous[0] and tanhs <= previous[1]
        previous = (res, tanhs)
    assert measure(olympus.checkpoint_policies.memory_budget(0))[1:] == nothing[1:]
    assert (
        previous[1] == 0
    )  # with 4 activations a block saves each tanh: no recomputation


def test_memory_budget_policy_prints_and_checks_its_argument(x64):
    policy = olympus.checkpoint_policies.memory_budget(1024)
    f = olympus.checkpoint(lambda x: jnp.sum(jnp.sin(jnp.sin(x))), policy=policy)
    text = str(olympus.make_olympuspr(olympus.grad(f))(np.ones(3)))
    assert "policy=memory_budget(1024)" in text
    check_grads(f, (np.ones(3),), order=1)
    with pytest.raises(ValueError, match="memory_budget"):
        olympus.checkpoint_policies.memory_budget(-1)


def test_fuzz_seed_27_map_nested_in_fori_loop_from_constant_carry(x64):
    """No checkpoint: a scan (lax.map) inside a fori_loop body whose carry starts
    constant. The stale split gave 'const 0 has shape () but its constvar is f32[1]'."""

    def program(v13, v19):
        def body(i, p):
            return lax.map(lambda q: jnp.dot(v13, q), p) * 0.5

        return lax.fori_loop(0, 2, body, jnp.zeros_like(v19) + v19[0, 0])

    args = (rng_array((1, 1), seed=20), rng_array((1, 1), seed=21))
    check_grads(program, args, order=1)
    olympus.make_olympuspr(olympus.grad(lambda *a: jnp.sum(program(*a))))(*args)


def test_fuzz_seed_182_checkpointed_fori_body_closing_over_input(x64):
    def program(v2, v28, v45):
        v38 = lax.fori_loop(
            0, 2, olympus.checkpoint(lambda i, p: v28 * 0.5 + p), jnp.zeros_like(v2)
        )
        v39 = jnp.where(v38 > 0.0, v38, 0.1 * v38)
        return lax.cond(jnp.sum(v38) > 0.0, lambda p: v45 * p, lambda p: v38, v39)

    check_grads(
        program, (np.float64(0.89), np.float64(-0.33), np.float64(0.19)), order=1
    )
    check_grads(
        program, (np.float64(0.89), np.float64(0.33), np.float64(0.19)), order=1
    )


def test_while_max_steps_nested_in_scan_cond_and_checkpoint(x64):
    def in_scan(a, xs):
        def body(c, x):
            y = lax.while_loop(
                lambda y: jnp.abs(y * y - x * c) > 1e-10,
                lambda y: 0.5 * (y + x * c / y),
                x * c + 1.0,
                max_steps=40,
            )
            return c + 0.1 * y, y

        c, ys = lax.scan(body, a, xs)
        return c + jnp.sum(ys)

    check_grads(in_scan, (1.5, np.array([1.0, 2.0, 3.0])), order=1, modes=("rev",))

    def in_cond(a):
        def power(a):
            return lax.while_loop(
                lambda y: y < 10.0, lambda y: y * a, 1.0, max_steps=20
            )

        return lax.cond(a > 0, power, lambda a: a, a)

    check_grads(in_cond, (1.5,), order=1, modes=("rev",))
    got = olympus.jit(olympus.grad(olympus.checkpoint(in_cond)))(1.5)
    np.testing.assert_allclose(float(got), 6 * 1.5**5, rtol=1e-12)  # 1.5**6 > 10
