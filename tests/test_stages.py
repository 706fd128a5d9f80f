"""Ahead-of-time stages: jit(f).trace(...).lower().compile() and what each shows."""

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.errors import OlympusTypeError

W = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 0.0]], np.float32)


def _layer(x, scale):
    return {"out": jnp.tanh(jnp.dot(x, W)) * scale, "norm": jnp.sum(x * x)}


def test_trace_lower_compile_run():
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 6
    traced = olympus.jit(_layer).trace(x, 2.0)
    assert "dot_general" in str(traced.olympuspr) and "tanh" in str(traced.olympuspr)
    olympus.ir.check_olympuspr(traced.olympuspr)
    assert traced.out_info["out"].shape == (2, 2)
    assert traced.out_info["norm"].dtype == np.float32
    lowered = traced.lower()
    text = lowered.as_text()
    assert (
        text.startswith("module")
        and "stablehlo.dot_general" in text
        and "stablehlo.tanh" in text
    )
    assert '"stablehlo.tanh"(' in lowered.as_text(
        generic=True
    )  # the form olympus emits
    compiled = lowered.compile()
    out = compiled(x, 2.0)
    np.testing.assert_allclose(np.asarray(out["out"]), np.tanh(x @ W) * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out["norm"]), np.sum(x * x), rtol=1e-6)
    # new values of the same types reuse the executable
    out = compiled(x + 1, -1.0)
    np.testing.assert_allclose(np.asarray(out["out"]), -np.tanh((x + 1) @ W), rtol=1e-6)


def test_from_shape_dtype_structs():
    spec = olympus.ShapeDtypeStruct((4,), np.int32)
    lowered = olympus.jit(lambda a, b: a * b + 1).lower(spec, spec)
    assert "tensor<4xi32>" in lowered.as_text()
    compiled = lowered.compile()
    a = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(compiled(a, a)), a * a + 1)


def test_cost_and_memory_analysis():
    x = olympus.ShapeDtypeStruct((8, 8), np.float32)
    compiled = olympus.jit(lambda a: a @ a).lower(x).compile()
    cost = compiled.cost_analysis()
    assert cost["flops"] >= 2 * 8 * 8 * 8 - 8 * 8  # a matmul's multiply-adds
    memory = compiled.memory_analysis()
    assert memory.argument_size_in_bytes == 8 * 8 * 4
    assert memory.output_size_in_bytes == 8 * 8 * 4
    assert "HloModule" in compiled.as_text()


def test_static_arguments_fixed_at_trace_time():
    f = olympus.jit(lambda x, n: x**n, static_argnums=1)
    compiled = f.trace(np.float32(3.0), 3).lower().compile()
    assert "integer_pow[y=3]" in str(f.trace(np.float32(3.0), 3).olympuspr)
    assert float(compiled(np.float32(2.0))) == 8.0


def test_constants_travel_with_the_executable():
    c = np.array([10.0, 20.0], np.float32)
    compiled = olympus.jit(lambda x: x + c).lower(np.zeros(2, np.float32)).compile()
    np.testing.assert_array_equal(
        np.asarray(compiled(np.ones(2, np.float32))), [11.0, 21.0]
    )


def test_compiled_rejects_other_types_and_structures():
    compiled = olympus.jit(lambda x: x * 2).lower(np.zeros(3, np.float32)).compile()
    with pytest.raises(
        OlympusTypeError, match="argument 0 is f32\\[4\\], compiled for f32\\[3\\]"
    ):
        compiled(np.zeros(4, np.float32))
    with pytest.raises(OlympusTypeError, match="structured as"):
        compiled(np.zeros(3, np.float32), np.zeros(3, np.float32))


def test_stages_of_a_loaded_program(tmp_path):
    closed = olympus.make_olympuspr(lambda x, y: (jnp.dot(x, W), y * 2))(
        np.ones((2, 3), np.float32), np.float32(1)
    )
    olympus.ir.save(closed, tmp_path / "p.olympuspr")
    loaded = olympus.ir.load(tmp_path / "p.olympuspr")
    compiled = olympus.stages.Traced.from_olympuspr(loaded, "p").lower().compile()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out, twice = compiled(x, np.float32(4))
    np.testing.assert_allclose(np.asarray(out), x @ W, rtol=1e-6)
    assert float(twice) == 8.0


def test_stages_show_in_notebooks():
    traced = olympus.jit(lambda x: jnp.sin(x) + 1).trace(np.zeros(2, np.float32))
    assert '<td class="prim">sin</td>' in traced._repr_html_()
    html = traced.lower()._repr_html_()
    assert html.startswith('<pre class="stablehlo">module') and "stablehlo.sine" in html


def test_donation_through_aot_compiled():
    """donate_argnums holds for `jit(f).lower(...).compile()` as for `jit(f)`:
    the donated buffer is aliased to the output and the argument is deleted."""
    f = olympus.jit(lambda x, n, y: x * n + y, static_argnums=1, donate_argnums=(0,))
    spec = olympus.ShapeDtypeStruct((64,), np.float32)
    lowered = f.lower(spec, 2.0, spec)
    assert "tf.aliasing_output" in lowered.as_text(generic=True)
    compiled = lowered.compile()
    x, y = (olympus.device_put(np.ones(64, np.float32)) for _ in range(2))
    address = x._buf.unsafe_buffer_pointer()
    out = compiled(x, y)
    np.testing.assert_allclose(np.asarray(out), np.full(64, 3.0))
    assert out._buf.unsafe_buffer_pointer() == address
    assert x.is_deleted() and not y.is_deleted()
    with pytest.raises(RuntimeError, match="donated"):
        compiled(x, y)


def test_aot_compile_checks_array_sizes_as_jit_does():
    f = olympus.jit(lambda x: jnp.ones((10**5, 10**5, 10)) + x)
    lowered = f.lower(np.float32(1))  # lowering a big program is fine
    with pytest.raises(olympus.errors.ArrayTooLargeError, match="GiB"):
        lowered.compile()


def test_jit_caches_the_compiled_stage():
    """jit is a cache of Compiled stages: a miss traces, lowers and compiles,
    and AOT compiles the same program for the same arguments."""
    f = olympus.jit(lambda x, n: x * n, static_argnums=1)
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(f(x, 2)), x * 2)
    (entry,) = f._cache.values()
    assert isinstance(entry, olympus.stages.Compiled)
    aot = f.lower(x, 2)
    assert entry.executable.text == aot.as_text(generic=True) == f.lower_text(x, 2)
    np.testing.assert_array_equal(np.asarray(aot.compile()(x)), x * 2)


def test_lowered_as_text_takes_jaxs_signature():
    def scoped(x):
        with olympus.named_scope("blk"):
            return x + 1

    lowered = olympus.jit(scoped).lower(np.ones(3, np.float32))
    plain = lowered.as_text()
    assert lowered.as_text("stablehlo") == plain and "loc(" not in plain
    located = lowered.as_text(debug_info=True)
    assert '"blk/add"' in located and "test_stages.py" in located
    with pytest.raises(ValueError, match="dialect 'hlo'"):
        lowered.as_text("hlo")


def test_log_compiles_names_the_function_its_types_and_time(caplog):
    def scaled_sum(x):
        return (x * 3.0).sum()

    with olympus.config.override("olympus_log_compiles", True):
        with caplog.at_level("WARNING", logger="olympus"):
            olympus.jit(scaled_sum).lower(np.ones((2, 5), np.float32)).compile()
    (record,) = [r for r in caplog.records if "Compiled jit(" in r.getMessage()]
    assert "jit(scaled_sum) for (f32[2,5])" in record.getMessage()
    assert record.getMessage().endswith(" s")


def test_compile_progress_line_on_stderr_only_when_asked(capsys):
    def lowered():  # a new function each time: a jit's executables are cached
        return olympus.jit(lambda x: x * 2.0 + 1.0).lower(np.ones(7, np.float32))

    with olympus.config.override("olympus_compile_progress", "off"):
        lowered().compile()
    assert "olympus: compil" not in capsys.readouterr().err
    with olympus.config.override("olympus_compile_progress", "on"):
        with olympus.config.override("olympus_compile_progress_secs", 1e-6):
            lowered().compile()
    assert "olympus: compiled jit(<lambda>) in " in capsys.readouterr().err


def test_compiler_ir_gives_jaxs_objects():
    lowered = olympus.jit(lambda x: x * 2.0 + 1.0).lower(np.ones(3, np.float32))
    module = lowered.compiler_ir()
    assert "stablehlo.multiply" in str(module)
    assert str(lowered.compiler_ir("stablehlo")) == str(module)
    hlo = lowered.compiler_ir("hlo").as_hlo_text()
    assert "multiply(" in hlo and "f32[3]" in hlo
    with pytest.raises(ValueError, match="unknown dialect 'tosa'"):
        lowered.compiler_ir("tosa")
