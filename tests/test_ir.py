"""The IR's printer and checker: what users read, and the invariant every
transform's output must keep."""

from __future__ import annotations

import numpy as np
import pytest

from olympus import jit, lax, make_olympuspr
from olympus.errors import OlympusprTypeError
from olympus.ir import check_olympuspr
from olympus.ir.core import ClosedOlympuspr, Eqn, Literal, Olympuspr, ShapedArray, Var
from olympus.ir.printer import var_name
from olympus.lax.elementwise import add_p, mul_p, sin_p
from olympus.lax.pjit import pjit_p

F32_3 = ShapedArray((3,), np.float32)
F32_4 = ShapedArray((4,), np.float32)
ONES3 = np.ones(3, np.float32)


# ---- printer -----------------------------------------------------------------
@pytest.mark.parametrize(
    "index, name",
    [
        (0, "a"),
        (25, "z"),
        (26, "aa"),
        (27, "ab"),
        (51, "az"),
        (52, "ba"),
        (701, "zz"),
        (702, "aaa"),
    ],
)
def test_var_names(index, name):
    assert var_name(index) == name


def test_names_continue_past_z_in_a_program():
    def chain(x):
        for _ in range(27):
            x = lax.sin(x)
        return x

    lines = str(make_olympuspr(chain)(np.float32(1))).splitlines()
    assert lines[-3:] == [
        "    aa:f32[] = sin z",
        "    ab:f32[] = sin aa",
        "  in (ab,) }",
    ]


def test_scalar_literals_are_inline():
    assert str(make_olympuspr(lambda x: x * 3.0)(np.float32(1))) == (
        "{ lambda ; a:f32[]. let\n    b:f32[] = mul a 3.0:f32[]\n  in (b,) }"
    )
    assert "add a 2:i32[]" in str(make_olympuspr(lambda x: lax.add(x, 2))(np.int32(1)))


def test_array_constants_are_hoisted_into_constvars():
    c = np.arange(3, dtype=np.float32)
    closed = make_olympuspr(lambda x: x + c)(ONES3)
    assert str(closed) == (
        "{ lambda a:f32[3] ; b:f32[3]. let\n    c:f32[3] = add b a\n  in (c,) }"
    )
    np.testing.assert_array_equal(np.asarray(closed.consts[0]), c)


def test_several_outputs_are_comma_separated():
    text = str(make_olympuspr(lambda x: (lax.sin(x), lax.cos(x)))(np.float32(1)))
    assert text.endswith("  in (b, c) }")


def test_literal_output_and_params():
    text = str(make_olympuspr(lambda x: (lax.reduce_sum(x, (0,)), 1.0))(ONES3))
    assert "b:f32[] = reduce_sum[axes=(0,)] a" in text
    assert text.endswith("in (b, 1.0:f32[]) }")


def test_source_info_points_at_the_user_line():
    text = make_olympuspr(lambda x: lax.sin(x))(ONES3).pretty(source_info=True)
    assert "b:f32[3] = sin a  # " in text and "test_ir.py:" in text


# ---- checker -----------------------------------------------------------------
def test_checker_rejects_mismatched_operands_and_names_the_equation():
    a, b, c, d = Var(F32_3), Var(F32_4), Var(F32_3), Var(F32_3)
    bad = Olympuspr(
        [], [a, b], [Eqn(sin_p, {}, [a], [c]), Eqn(add_p, {}, [a, b], [d])], [d]
    )
    with pytest.raises(OlympusprTypeError) as info:
        check_olympuspr(bad)
    message = str(info.value)
    assert "equation 1" in message and "add" in message and "f32[3], f32[4]" in message
    assert ">>> d:f32[3] = add a b" in message


def test_checker_rejects_a_wrong_output_type():
    a, b = Var(F32_3), Var(F32_4)
    bad = Olympuspr([], [a], [Eqn(sin_p, {}, [a], [b])], [b])
    with pytest.raises(
        OlympusprTypeError, match=r"sin should produce \(f32\[3\]\), binds \(f32\[4\]\)"
    ):
        check_olympuspr(bad)


def test_checker_rejects_use_before_define():
    a, b, c = Var(F32_3), Var(F32_3), Var(F32_3)
    bad = Olympuspr([], [a], [Eqn(sin_p, {}, [b], [c]), Eqn(sin_p, {}, [a], [b])], [c])
    with pytest.raises(
        OlympusprTypeError, match="equation 0: sin uses a variable before it is defined"
    ):
        check_olympuspr(bad)


def test_checker_rejects_double_definition_and_undefined_output():
    a, b = Var(F32_3), Var(F32_3)
    twice = Olympuspr(
        [], [a], [Eqn(sin_p, {}, [a], [b]), Eqn(sin_p, {}, [a], [b])], [b]
    )
    with pytest.raises(OlympusprTypeError, match="defined twice"):
        check_olympuspr(twice)
    with pytest.raises(OlympusprTypeError, match="never defined"):
        check_olympuspr(Olympuspr([], [a], [], [b]))


def test_checker_rejects_array_literals_and_mismatched_consts(
    ill_typed_programs_allowed,
):
    a, b = Var(F32_3), Var(F32_3)
    array_literal = Literal(ONES3, F32_3)
    bad = Olympuspr([], [a], [Eqn(add_p, {}, [a, array_literal], [b])], [b])
    with pytest.raises(OlympusprTypeError, match="array literal f32\\[3\\]"):
        check_olympuspr(bad)
    c, x, y = Var(F32_3), Var(F32_3), Var(F32_3)
    program = Olympuspr([c], [x], [Eqn(add_p, {}, [x, c], [y])], [y])
    check_olympuspr(ClosedOlympuspr(program, [ONES3]))
    with pytest.raises(OlympusprTypeError, match=r"const 0 has shape \(4,\)"):
        check_olympuspr(ClosedOlympuspr(program, [np.ones(4, np.float32)]))


def test_checker_descends_into_sub_olympusprs(ill_typed_programs_allowed):
    x, y = Var(F32_3), Var(F32_3)
    inner = Olympuspr(
        [],
        [x],
        [Eqn(mul_p, {}, [x, Literal(np.float32(2), ShapedArray((), np.float32))], [y])],
        [y],
    )
    check_olympuspr(inner)  # well-typed
    bad_y = Var(F32_4)
    bad_inner = Olympuspr([], [x], [Eqn(sin_p, {}, [x], [bad_y])], [bad_y])
    a, out = Var(F32_3), Var(F32_4)
    outer = Olympuspr(
        [],
        [a],
        [
            Eqn(
                pjit_p,
                {"olympuspr": ClosedOlympuspr(bad_inner, []), "name": "f"},
                [a],
                [out],
            )
        ],
        [out],
    )
    with pytest.raises(OlympusprTypeError, match="sin should produce"):
        check_olympuspr(outer)


def test_traced_programs_pass_the_checker_and_are_checked(checked_program_count):
    before = checked_program_count()
    closed = make_olympuspr(
        lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())))
    )(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    check_olympuspr(closed)
    jit(lambda x: lax.exp(x) + 1.0)(ONES3)
    assert (
        checked_program_count() >= before + 3
    )  # make_olympuspr, jit trace, jit compile


def test_every_closed_program_built_in_the_tests_is_checked():
    """conftest checks each ClosedOlympuspr as it is made, so a transform that
    rebuilds an ill-typed sub-program fails at the line that built it."""
    a, b = Var(F32_3), Var(F32_4)
    with pytest.raises(OlympusprTypeError, match="sin should produce"):
        ClosedOlympuspr(Olympuspr([], [a], [Eqn(sin_p, {}, [a], [b])], [b]), [])


def test_replaying_a_weak_literal_keeps_it_weak():
    # `add b 1.0:f32[]` with a weak `b` must stay weak when an interpreter
    # replays it; a NumPy scalar for the literal would make it strong f32.
    import olympus
    import olympus.numpy as jnp
    from olympus.tracer.evaluation import eval_program

    def f(x):
        return olympus.jit(lambda y: y * 1.0)(2.0) + 1.0

    closed = olympus.make_olympuspr(f)(1.0)
    (out,) = eval_program(closed.olympuspr, closed.consts, [3.0])
    assert out.aval.weak_type
    assert (out + jnp.ones(2, jnp.bfloat16)).dtype == jnp.bfloat16
