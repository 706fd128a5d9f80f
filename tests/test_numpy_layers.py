"""olympus.numpy's modules are layered: each imports (at its top or inside a
function) only modules listed before it in LAYERS, so the package has no
import circle and reads bottom-up. A new module takes its place in LAYERS."""

import ast
import pathlib

import olympus.numpy

LAYERS = [
    "ufunc_docs",  # docstrings and the sections families share (no numpy imports)
    "reduction_docs",
    "core",  # conversion to arrays, promotion, broadcasting, stack, float layouts
    "compiled",  # entry points under jit
    "ufuncs",
    "integer_math",
    "float_math",
    "comparisons",  # isclose, allclose, array_equal
    "float_bits",
    "signal",
    "windows",
    "indexing",  # x[idx], x.at[idx], take
    "creation",  # full, zeros, ones, empty, *_like, arange, linspace, eye
    "shaping",  # reshape, transposes, squeeze, concatenate, hstack, vstack
    "rearranging",  # flip, roll, tile, repeat, split
    "diagonals",  # triu, tril, diagonal, diag
    "reductions",  # sum, ..., dot, cumsum, nonzero, trace
    "construction",  # ranges, grids, ix_
    "index_tricks",  # unravel_index, ravel_multi_index, mask_indices
    "einsum",
    "products",
    "linalg",
    "sorting",
    "nanfunctions",
    "statistics",
    "setops",
    "functional",
    "padding",
    "polynomial",
    "joining",
    "ufunc_objects",  # jnp.ufunc objects (add.reduce, ...) and frompyfunc
    "packing",  # packbits, unpackbits, arrays from bytes, text, files
    "fft",  # the Array API fft extension
    "array_api",
    "methods",  # operators and methods of Array and tracers
]


def _numpy_imports(path: pathlib.Path) -> set[str]:
    """The olympus.numpy modules that `path` imports, wherever the import is."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom) or node.module is None:
            continue
        if node.module == "olympus.numpy":
            found |= {alias.name for alias in node.names}
        elif node.module.startswith("olympus.numpy."):
            found.add(node.module.split(".")[2])
    return found


def test_every_numpy_module_imports_only_the_layers_below_it():
    folder = pathlib.Path(olympus.numpy.__file__).parent
    modules = {p.stem: p for p in folder.glob("*.py") if p.stem != "__init__"}
    assert sorted(modules) == sorted(LAYERS), "place new numpy modules in LAYERS"
    upward = [
        f"{name} imports {target}"
        for name, path in modules.items()
        for target in _numpy_imports(path)
        if LAYERS.index(target) >= LAYERS.index(name)
    ]
    assert not upward, upward
