"""The printed olympuspr parses back: same text, type-checks, same numbers;
save/load keeps constants, weak types and source lines."""

import json
import subprocess
import sys
import zipfile

import ml_dtypes
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.backends.xla.dispatch import buffer_of
from olympus.ir import (
    OlympusprFormatError,
    OlympusprParseError,
    check_olympuspr,
    load,
    parse,
    save,
)
from olympus.ir.serialize import walk_programs
from olympus.lax.pjit import executable_for

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 4 - 0.5


def _mlp(x):
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    return jnp.sum(jnp.tanh(jnp.dot(x, w)) ** 2)


def _while(x):
    return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))


def _fori(x):
    return lax.fori_loop(0, 3, lambda i, c: c + jnp.sin(c), x)


# Representative programs of the suite: one per family of primitives and transforms.
PROGRAMS = {
    "elementwise": lambda x: jnp.exp(-x) * 3.0 + jnp.sqrt(jnp.abs(x)) - x**3,
    "compare_select": lambda x: (
        jnp.where(x > 0.1, x, -x) + (x <= 0).astype(jnp.float32)
    ),
    "reductions": lambda x: (jnp.sum(x, axis=0), jnp.max(x), jnp.argmax(x, axis=1)),
    "shapes": lambda x: jnp.concatenate([x.T.reshape(6), x[0, 1:], x[::-1, 0]]),
    "dot_const": lambda x: jnp.dot(x, x.T) + np.eye(2, dtype=np.float32),
    "pjit": lambda x: olympus.jit(lambda y: y * 2 + 1)(x) + x,
    "cond": lambda x: lax.cond(x.sum() > 0, lambda y: y + 1, lambda y: y * y, x),
    "while": _while,
    "scan": lambda x: lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(3), x),
    "fori": _fori,
    "grad_mlp": olympus.grad(_mlp),
    "grad_scan": olympus.grad(
        lambda x: jnp.sum(lax.scan(lambda c, r: (c * r, c), jnp.ones(3), x)[0])
    ),
    "grad_cond": olympus.grad(lambda x: lax.cond(True, jnp.sin, jnp.cos, x).sum()),
    "vmap": lambda x: olympus.vmap(lambda r: jnp.dot(r, r) * 2)(x),
    "jvp_pjit": lambda x: olympus.jvp(olympus.jit(jnp.sin), (x,), (x,)),
    "gather_scatter": lambda x: x.at[np.array([1, 0, 1])].add(
        x[np.array([0, 1, 1])] * 2
    ),
    "conv": lambda x: jnp.convolve(x[0], x[1]),
}


def test_dimension_numbers_parse_back_to_their_classes():
    """Gather/scatter/conv dimension numbers print as `Name(field=...)`; they
    used to come back as strings, which the checker could not read (found by
    the fuzzer: a parsed `x.at[i % n].add(...)` program failed to type-check)."""
    from olympus.lax.convolution import ConvDimensionNumbers
    from olympus.lax.slicing import GatherDimensionNumbers, ScatterDimensionNumbers

    wanted = {
        "gather": GatherDimensionNumbers,
        "scatter_add": ScatterDimensionNumbers,
        "conv_general_dilated": ConvDimensionNumbers,
    }
    for name in ("gather_scatter", "conv"):
        closed = olympus.make_olympuspr(PROGRAMS[name])(X)
        parsed = parse(str(closed), list(closed.consts))
        check_olympuspr(parsed)
        for eqn in parsed.olympuspr.eqns:
            if eqn.primitive.name in wanted:
                numbers = eqn.params["dimension_numbers"]
                assert type(numbers) is wanted[eqn.primitive.name], (
                    eqn.primitive.name,
                    numbers,
                )
    with pytest.raises(OlympusprParseError, match="bad GatherDimensionNumbers"):
        parse(
            "{ lambda ; a:f32[2] b:i32[1,1]. let c:f32[1] = gather[dimension_numbers="
            "GatherDimensionNumbers(offset_dims=(), wrong=(0,)) slice_sizes=(1,)] a b in (c,) }"
        )


def _run_compiled(closed, args):
    """Runs a program through the pjit executable (compiled with XLA)."""
    exe = executable_for(closed, "parsed")
    outs = exe.call(
        [buffer_of(c) for c in closed.consts] + [buffer_of(a) for a in args]
    )
    return [np.asarray(o) for o in outs]


@pytest.fixture(params=sorted(PROGRAMS), scope="module")
def traced(request):
    closed = olympus.make_olympuspr(PROGRAMS[request.param])(X)
    return _run_compiled(closed, [X]), closed


def test_original_program_computes_the_function():
    """The reference the round trips compare against is itself right."""
    closed = olympus.make_olympuspr(PROGRAMS["grad_mlp"])(X)
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    t = np.tanh(X @ w)
    want = (2 * t * (1 - t * t)) @ w.T
    np.testing.assert_allclose(
        _run_compiled(closed, [X])[0], want, rtol=1e-5, atol=1e-6
    )


def test_round_trip_text_check_and_values(traced):
    expected, closed = traced
    text = str(closed)
    parsed = parse(text, closed.consts)
    check_olympuspr(parsed)
    assert str(parsed) == text
    for got, want in zip(_run_compiled(parsed, [X]), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_round_trip_keeps_weak_types(traced):
    _, closed = traced
    text = closed.pretty(weak_types=True)
    parsed = parse(text, closed.consts)
    assert parsed.pretty(weak_types=True) == text
    literals = [a for e in closed.eqns for a in e.invars if not hasattr(a, "suffix")]
    parsed_literals = [
        a for e in parsed.eqns for a in e.invars if not hasattr(a, "suffix")
    ]
    assert [a.aval for a in parsed_literals] == [a.aval for a in literals]
    assert parsed.out_avals == closed.out_avals


def test_weak_type_decides_the_dtype_after_the_round_trip():
    """A Python scalar through a jitted function stays weak: added to bf16 it
    gives bf16. Parsed from the default text (no marks) it is a strong f32 and
    promotes the sum to f32; from `pretty(weak_types=True)` it stays weak."""
    from olympus.tracer.evaluation import eval_program

    g = olympus.jit(lambda s: s * 2)
    closed = olympus.make_olympuspr(lambda s: g(s))(3.0)
    bf16 = jnp.ones(2, ml_dtypes.bfloat16)

    def mixed_dtype(program):
        out = eval_program(program.olympuspr, program.consts, [3.0])[0]
        assert float(out) == 6.0
        return (out + bf16).dtype

    assert mixed_dtype(closed) == ml_dtypes.bfloat16
    text = closed.pretty(weak_types=True)
    assert "a:f32[]{weak}" in text and "2.0:f32[]{weak}" in text
    assert mixed_dtype(parse(text)) == ml_dtypes.bfloat16
    assert mixed_dtype(parse(str(closed))) == np.float32  # what the marks are for


def test_weak_marks_only_where_asked():
    text = "{ lambda ; a:f32[]{weak} b:bf16[2]. let c:bf16[2] = mul b 2.0:bf16[]{weak} in (c, a) }"
    closed = parse(text)
    assert [v.aval.weak_type for v in closed.olympuspr.invars] == [True, False]
    assert closed.eqns[0].invars[1].aval.weak_type
    assert "{weak}" not in str(closed)  # the default print is the specification's
    assert closed.pretty(weak_types=True) == (
        "{ lambda ; a:f32[]{weak} b:bf16[2]. let\n"
        "    c:bf16[2] = mul b 2.0:bf16[]{weak}\n"
        "  in (c, a) }"
    )
    with pytest.raises(OlympusprParseError, match="line 1"):
        parse("{ lambda ; a:f32[] {weak}. let in (a,) }")  # the mark follows the ']'


def test_round_trip_with_source_lines(traced):
    _, closed = traced
    text = closed.pretty(source_info=True)
    assert "# " in text and "test_parse.py" in text
    parsed = parse(text, closed.consts)
    assert parsed.pretty(source_info=True) == text
    assert parsed.eqns[0].source_info == closed.eqns[0].source_info


def test_save_load_keeps_everything(traced, tmp_path):
    expected, closed = traced
    path = tmp_path / "program.olympuspr"
    save(closed, path)
    loaded = load(path)
    check_olympuspr(loaded)
    assert loaded.pretty(source_info=True) == closed.pretty(source_info=True)
    assert [v.aval for v in loaded.olympuspr.invars] == [
        v.aval for v in closed.olympuspr.invars
    ]
    infos = [e.source_info for e in loaded.eqns]
    assert infos == [e.source_info for e in closed.eqns]
    for program, original in zip(
        walk_programs(loaded), walk_programs(closed), strict=True
    ):
        for got, want in zip(program.consts, original.consts, strict=True):
            np.testing.assert_array_equal(got, np.asarray(want))
    if (
        closed.consts
    ):  # running the text is covered above; here, that the values came back
        for got, want in zip(_run_compiled(loaded, [X]), expected, strict=True):
            np.testing.assert_array_equal(got, want)


def test_load_in_a_fresh_interpreter(tmp_path):
    """ir imports no lax: the primitives and parameter types a file names are
    registered by olympus.lax, which importing any olympus module loads."""
    closed = olympus.make_olympuspr(PROGRAMS["gather_scatter"])(X)
    path = tmp_path / "program.olympuspr"
    save(closed, path)
    code = f"from olympus.ir.serialize import load; print(load({str(path)!r}).pretty(True))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == closed.pretty(source_info=True) + "\n"


def test_literal_spellings_and_param_kinds():
    text = """{ lambda ; a:f32[3] b:i32[] c:bf16[2]. let
    d:f32[3] = add a -1.5:f32[]
    e:f32[3] = max d -inf:f32[]
    f:i32[] = mul b -7:i32[]
    g:bool[] = and True:bool[] False:bool[]
    h:bf16[2] = mul c 0.10009765625:bf16[]
    i:f32[3] = reduce_sum[axes=()] e
    j:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] i
    k:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3)] i
    l:f32[3,1] = transpose[permutation=(1, 0)] k
  in (f, g, h, j, l, 2.5:f32[]) }"""
    closed = parse(text)
    check_olympuspr(closed)
    assert str(closed) == text
    eqns = closed.eqns
    assert eqns[0].invars[1].val == np.float32(-1.5)
    assert eqns[1].invars[1].val == -np.inf
    assert eqns[3].invars[0].val is np.True_
    assert eqns[4].invars[1].val.dtype == ml_dtypes.bfloat16
    assert eqns[6].params == {"new_dtype": np.dtype("int32"), "weak_type": False}
    assert eqns[7].params == {"dimensions": None, "new_sizes": (1, 3)}
    a, c = np.array([1.0, 2.0, 3.0], np.float32), np.array([1, 2], ml_dtypes.bfloat16)
    f, g, h, j, l, lit = _run_compiled(closed, [a, np.int32(3), c])
    assert (f, g, lit) == (-21, False, 2.5)
    np.testing.assert_array_equal(h, (c * ml_dtypes.bfloat16(0.1)))
    np.testing.assert_array_equal(j, [0, 0, 1])  # truncation toward zero
    np.testing.assert_array_equal(l, [[-0.5], [0.5], [1.5]])


def test_one_line_form_and_names_that_look_like_keywords():
    text = "{ lambda ; in:f32[] let:f32[]. let nan:f32[] = add in let in (nan,) }"
    closed = parse(text)
    assert str(closed) != text  # reprinted with the printer's own names
    assert _run_compiled(closed, [np.float32(1), np.float32(2)])[0] == 3


def test_constvars_by_name_reach_sub_programs(tmp_path):
    text = """{ lambda a:f32[2] ; b:f32[2]. let
    c:f32[2] = pjit[
      name=f
      olympuspr={ lambda d:f32[2] ; e:f32[2]. let f:f32[2] = mul d e in (f,) }
    ] b
    g:f32[2] = add c a
  in (g,) }"""
    closed = parse(
        text, {"a": np.ones(2, np.float32), "d": np.full(2, 3.0, np.float32)}
    )
    sub = closed.eqns[0].params["olympuspr"]
    np.testing.assert_array_equal(sub.consts[0], [3.0, 3.0])
    assert closed.eqns[0].params["name"] == "f"
    path = tmp_path / "sub.olympuspr"
    save(closed, path)  # sub-program constants are saved by name too
    loaded = load(path)
    np.testing.assert_array_equal(
        loaded.eqns[0].params["olympuspr"].consts[0], [3.0, 3.0]
    )
    np.testing.assert_array_equal(loaded.consts[0], [1.0, 1.0])
    assert str(loaded) == text
    quoted = parse(
        text.replace("name=f", "name='my f'"),
        {"a": np.ones(2, np.float32), "d": np.ones(2, np.float32)},
    )
    assert quoted.eqns[0].params["name"] == "my f"
    eager = olympus.tracer.evaluation.eval_program(
        closed.olympuspr, closed.consts, [np.array([1.0, 2.0], np.float32)]
    )
    np.testing.assert_array_equal(np.asarray(eager[0]), [4.0, 7.0])


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "{ lambda ; a:f32[]. let b:f32[] = frobnicate a in (b,) }",
            "unknown primitive 'frobnicate'",
        ),
        (
            "{ lambda ; a:f32[]. let b:f32[] = sin z in (b,) }",
            "variable z is used but never defined",
        ),
        ("{ lambda ; a:q7[]. let in (a,) }", "unknown dtype 'q7'"),
        ("{ lambda ; a:f32[] a:f32[]. let in (a,) }", "variable a is defined twice"),
        ("{ lambda a:f32[3] ; . let in (a,) }", "no value for constvar a:f32[3]"),
        (
            "{ lambda ; a:i32[]. let b:i32[] = add a 1.5:i32[] in (b,) }",
            "'1.5' is not a i32 value",
        ),
        (
            "{ lambda ; a:f32[]. let in (a,) } extra",
            "unexpected text after the program",
        ),
    ],
)
def test_parse_errors_say_what_and_where(text, message):
    with pytest.raises(OlympusprParseError) as info:
        parse(text)
    assert message in str(info.value)
    if "constvar" not in message:  # syntax errors point at the place
        assert "line 1" in str(info.value) and "^" in str(info.value)


def test_parsed_program_must_still_type_check():
    # (the test suite's conftest may already check it when the program is built)
    with pytest.raises(olympus.ir.OlympusprTypeError, match="sin should produce"):
        check_olympuspr(parse("{ lambda ; a:f32[3]. let b:f32[2] = sin a in (b,) }"))


def test_save_bfloat16_consts_and_weak_types(tmp_path):
    w = np.array([1.5, -2.0], ml_dtypes.bfloat16)
    closed = olympus.make_olympuspr(lambda x: x * w + 2)(np.ones(2, ml_dtypes.bfloat16))
    path = tmp_path / "bf16.olympuspr"
    save(closed, path)
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        assert archive.read("program.txt").decode() == closed.pretty(source_info=True)
    assert manifest["format"] == "olympuspr" and manifest["version"] == 1
    assert manifest["consts"][0]["dtype"] == "bfloat16"
    loaded = load(path)
    assert loaded.consts[0].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(loaded.consts[0], w)
    weak = [
        lit.aval.weak_type
        for e in loaded.eqns
        for lit in e.invars
        if not hasattr(lit, "suffix")
    ]
    assert weak == [
        lit.aval.weak_type
        for e in closed.eqns
        for lit in e.invars
        if not hasattr(lit, "suffix")
    ]


def test_load_refuses_other_files_and_newer_versions(tmp_path):
    not_zip = tmp_path / "a.txt"
    not_zip.write_text("hello")
    with pytest.raises(OlympusprFormatError, match="not a zip archive"):
        load(not_zip)
    newer = tmp_path / "newer.olympuspr"
    with zipfile.ZipFile(newer, "w") as archive:
        archive.writestr(
            "manifest.json", json.dumps({"format": "olympuspr", "version": 99})
        )
        archive.writestr("program.txt", "{ lambda ; a:f32[]. let in (a,) }")
    with pytest.raises(
        OlympusprFormatError, match="version 99; this olympus reads versions up to 1"
    ):
        load(newer)


def test_save_refuses_programs_holding_python_functions(tmp_path):
    closed = olympus.make_olympuspr(lambda x: olympus.debug.print("{}", x) or x * 2)(X)
    with pytest.raises(
        OlympusprFormatError, match="debug_callback holds a Python function"
    ):
        save(closed, tmp_path / "p.olympuspr")
    assert not (tmp_path / "p.olympuspr").exists()


def test_a_shared_sub_program_stays_shared():
    """One jitted function called at two nesting depths: printed twice with the
    same names (and different indentation), parsed back into one object."""
    g = olympus.jit(lambda y: jnp.sin(y) * 2 + y)

    def f(x):
        return g(x) + lax.cond(x.sum() > 0, g, lambda v: v, x)

    closed = olympus.make_olympuspr(f)(X)
    text = str(closed)
    parsed = parse(text)
    assert str(parsed) == text
    inner = parsed.eqns[-2].params["branches"][1].eqns[0].params["olympuspr"]
    assert parsed.eqns[0].params["olympuspr"] is inner
    np.testing.assert_allclose(
        _run_compiled(parsed, [X])[0], 2 * (2 * np.sin(X) + X), rtol=1e-6
    )


def test_a_rewritten_equations_source_line_parses_back():
    closed = olympus.make_olympuspr(lambda x: jnp.log(1 + jnp.exp(x)), optimize=True)(
        1.0
    )
    text = closed.pretty(source_info=True)
    assert "rewritten by stable" in text
    again = olympus.ir.parse(text, list(closed.consts))
    lines = [e.source_info.line for e in again.eqns]
    assert lines == [e.source_info.line for e in closed.eqns] and None not in lines
