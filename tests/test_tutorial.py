"""docs/tutorial.ipynb runs top to bottom in a real Jupyter kernel (nbclient,
ipykernel's "python3" spec) and prints what its text says it prints.

The kernel starts with this checkout first on PYTHONPATH, so it imports this
checkout's olympus, not whichever one is installed. Cells are found by their tag.
"""

import asyncio
import os
from pathlib import Path

import nbclient
import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_code_cell

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "tutorial.ipynb"
CELL_TIMEOUT_S = 120
TOTAL_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    # Not in the stored notebook: which olympus the kernel imported.
    nb.cells.append(
        new_code_cell(
            "import olympus as _o; print(_o.__file__)", metadata={"tags": ["origin"]}
        )
    )
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(tmp_path_factory.mktemp("nb"))}},
    )
    # `env` goes to the kernel manager's start_kernel: the kernel's environment.
    run = client.async_execute(env={**os.environ, "PYTHONPATH": path})
    asyncio.run(asyncio.wait_for(run, TOTAL_TIMEOUT_S))
    return {
        tag: cell
        for cell in nb.cells
        if cell.cell_type == "code"
        for tag in cell.metadata.get("tags", [])
    }


def _stdout(cell) -> str:
    return "".join(
        o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout"
    )


def _numbers(text: str) -> np.ndarray:
    cleaned = text.replace("[", " ").replace("]", " ")
    return np.array([float(t) for t in cleaned.split()])


def test_stored_notebook_has_no_outputs_and_uses_python3():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert nb.metadata.kernelspec.name == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def test_kernel_runs_this_checkout(executed):
    assert _stdout(executed["origin"]).strip().startswith(str(ROOT / "olympus"))


def test_no_cell_raised(executed):
    for tag, cell in executed.items():
        assert not [o for o in cell.outputs if o.output_type == "error"], tag


def test_jit_grad_vmap_values(executed):
    xs = np.arange(4.0)
    (value,) = _numbers(_stdout(executed["jit"]))
    assert value == pytest.approx(np.sum(np.sin(xs) + 2.0), rel=1e-6)
    grad_lines = _stdout(executed["grad"]).split("\n")
    np.testing.assert_allclose(
        _numbers(grad_lines[0]), np.sin(xs) + 2.0, rtol=1e-6, atol=1e-6
    )
    assert grad_lines[1] == "True"
    np.testing.assert_array_equal(_numbers(_stdout(executed["vmap"])), [5.0, 50.0])


def test_control_flow_values(executed):
    np.testing.assert_array_equal(_numbers(_stdout(executed["cond"])), [0, 2, 4, 6])
    np.testing.assert_array_equal(
        _numbers(_stdout(executed["scan"])), [6.0, 0.0, 1.0, 3.0, 6.0]
    )
    assert _stdout(executed["while_loop"]).strip() == "128"


def test_pytree_gradient_keeps_the_structure(executed):
    lines = _stdout(executed["pytrees"]).split("\n")
    assert lines[0] == "{'b': (3,), 'w': (2, 3)}"
    assert lines[1] == "2"


def test_printed_ir(executed):
    ir = _stdout(executed["ir"])
    assert ir.startswith("{ lambda ; a:f32[4] b:f32[4]. let")
    for eqn in ("c:f32[4] = sin b", "g:f32[] = reduce_sum[axes=(0,)] f", "in (g,) }"):
        assert eqn in ir, eqn
    source = _stdout(executed["ir_source"])
    assert "c:f32[4] = sin b  # " in source and "(loss)" in source
    assert "broadcast_in_dim" in _stdout(executed["ir_grad"])


def test_optimizer_removes_the_repeated_sin(executed):
    plain, optimized = _stdout(executed["optimize"]).split("}\n{")
    assert plain.count("= sin a") == 2
    assert optimized.count("= sin a") == 1
    assert "add c c" in optimized


def test_html_view_of_a_program(executed):
    outputs = executed["html"].outputs
    (result,) = [o for o in outputs if o.output_type == "execute_result"]
    assert "<table" in result.data["text/html"]
    assert "lambda" in result.data["text/plain"]


def test_stepper(executed):
    text = _stdout(executed["stepper"])
    assert "-> f:f32[4] = add c e" in text
    assert "return jnp.sin(v) * 2.0 + jnp.sin(v) * 2.0" in text
    *_, c_line, result_line = text.strip().split("\n")
    xs = np.arange(4.0)
    np.testing.assert_allclose(_numbers(c_line), 2 * np.sin(xs), rtol=1e-6)
    np.testing.assert_allclose(_numbers(result_line), 4 * np.sin(xs), rtol=1e-6)


def test_sharding_on_one_device(executed):
    lines = _stdout(executed["sharding"]).split("\n")
    assert lines[0] == "P('data',)"
    assert float(lines[1]) == 56.0
