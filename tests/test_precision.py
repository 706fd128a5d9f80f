"""Matmul precision (issue #15, hints): `precision=` of lax.dot_general / dot
/ jnp.einsum is dot_general's param, printed and parsed back, kept by jvp,
transpose and vmap, and lowered to XLA's precision config; a value that is no
precision is a PrecisionError naming the API and the user's line."""

import re

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.backends.reference import evaluate

A = np.arange(6.0, dtype=np.float32).reshape(2, 3)
B = np.arange(12.0, dtype=np.float32).reshape(3, 4)


def _precisions(closed) -> list[str]:
    return re.findall(r"precision=(\([^)]*\)|None)", str(closed))


def test_precision_is_printed_parsed_and_lowered():
    f = lambda a, b: lax.dot(a, b, precision="highest")  # noqa: E731
    closed = olympus.make_olympuspr(f)(A, B)
    assert _precisions(closed) == ["('HIGHEST', 'HIGHEST')"]
    assert str(olympus.ir.parse(str(closed))) == str(closed)
    text = olympus.jit(f).lower(A, B).as_text()
    assert "precision = [HIGHEST, HIGHEST]" in text
    np.testing.assert_array_equal(olympus.jit(f)(A, B), A @ B)
    np.testing.assert_array_equal(evaluate(closed, A, B)[0], A @ B)


def test_default_precision_prints_and_lowers_as_before():
    closed = olympus.make_olympuspr(jnp.dot)(A, B)
    assert _precisions(closed) == ["None"]
    assert "precision" not in olympus.jit(jnp.dot).lower(A, B).as_text()


def test_precision_survives_grad_and_vmap():
    def loss(a, b):
        return jnp.sum(lax.dot(a, b, precision=(lax.Precision.HIGH, "float32")))

    grads = olympus.make_olympuspr(olympus.grad(loss, argnums=(0, 1)))(A, B)
    # forward (HIGH, HIGHEST); each backward matmul keeps its operand's precision
    assert sorted(_precisions(grads)) == sorted(
        ["('HIGH', 'HIGHEST')", "('HIGHEST', 'HIGH')", "('HIGH', 'HIGHEST')"]
    )
    batched = olympus.make_olympuspr(
        olympus.vmap(lambda a, b: lax.dot(a, b, precision="high"))
    )(A[None], B[None])
    assert _precisions(batched) == ["('HIGH', 'HIGH')"]


def test_einsum_passes_precision():
    closed = olympus.make_olympuspr(
        lambda a, b: jnp.einsum("ij,jk->ik", a, b, precision=lax.Precision.HIGHEST)
    )(A, B)
    assert _precisions(closed) == ["('HIGHEST', 'HIGHEST')"]


def test_unknown_precision_is_a_named_error_at_the_users_line():
    with pytest.raises(
        lax.PrecisionError,
        match=r"lax.dot_general: unknown precision "
        r"'fast' at .*test_precision.py:\d+ .*'highest'",
    ) as info:
        lax.dot(A, B, precision="fast")
    assert isinstance(info.value, ValueError)
    with pytest.raises(lax.PrecisionError, match="unknown precision 3"):
        olympus.jit(
            lambda a, b: lax.dot_general(
                a, b, (((1,), (0,)), ((), ())), precision=("high", 3)
            )
        )(A, B)


def test_default_matmul_precision_context_recompiles_jit():
    f = olympus.jit(jnp.dot)
    assert "precision" not in f.lower(A, B).as_text()
    np.testing.assert_array_equal(f(A, B), A @ B)
    with olympus.default_matmul_precision("float32"):
        assert "precision = [HIGHEST, HIGHEST]" in f.lower(A, B).as_text()
        np.testing.assert_array_equal(f(A, B), A @ B)  # a new signature
        closed = olympus.make_olympuspr(lambda a, b: a @ b)(A, B)
        assert _precisions(closed) == ["('HIGHEST', 'HIGHEST')"]
        # an explicit precision= wins over the default
        explicit = olympus.make_olympuspr(lambda a, b: lax.dot(a, b, precision="high"))(
            A, B
        )
        assert _precisions(explicit) == ["('HIGH', 'HIGH')"]
    assert olympus.config.read("olympus_default_matmul_precision") is None
    assert _precisions(olympus.make_olympuspr(jnp.dot)(A, B)) == ["None"]


def test_default_matmul_precision_rejects_unknown_names_at_the_users_line():
    with pytest.raises(
        lax.PrecisionError,
        match=r"default_matmul_precision: unknown "
        r"precision 'fast' at .*test_precision.py:\d+",
    ):
        with olympus.default_matmul_precision("fast"):
            pass
    with olympus.config.override("olympus_default_matmul_precision", "fast"):
        with pytest.raises(
            lax.PrecisionError, match="olympus_default_matmul_precision"
        ):
            jnp.dot(A, B)


def test_the_optimizer_keeps_each_operands_precision():
    from olympus.optimizer import optimize

    def f(a, b):  # transpose(a . b) is rewritten to b' . a': the pair swaps with them
        return lax.dot(a, b, precision=("high", "highest")).T

    closed = optimize(olympus.make_olympuspr(f)(A, B))
    assert _precisions(closed) == ["('HIGHEST', 'HIGH')"]
    np.testing.assert_array_equal(evaluate(closed, A, B)[0], (A @ B).T)
