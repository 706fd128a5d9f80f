"""Each primitive declares its traits where it is defined, from the vocabulary
of olympus/lax/traits.py, and the passes read them there."""

import ast
import importlib
import pathlib

import pytest

import olympus  # noqa: F401  (defines every primitive)
from olympus.ir.core import Primitive, all_primitives
from olympus.lax.traits import TRAITS, names_with

LAX = pathlib.Path(olympus.__file__).parent / "lax"

_CMP = ("eq", "ne", "lt", "le", "gt", "ge")
# What the passes rely on (the table these declarations replaced).
EXPECTED = {
    "elementwise_unary": {
        *("neg", "exp", "log", "expm1", "log1p", "sin", "cos", "tan", "tanh"),
        *("logistic", "sqrt", "rsqrt", "abs", "sign", "floor", "ceil", "erf"),
        *("not", "round", "integer_pow", "convert_element_type"),
    },
    "scalar_broadcasting": {
        *("add", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2"),
        *("and", "or", "xor", *_CMP),
    },
    "reduction": {
        *("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"),
        *("reduce_and", "reduce_or"),
    },
    "commutative": {"add", "mul", "max", "min", "and", "or", "xor", "eq", "ne"},
    "exact": {
        *("add", "sub", "mul", "div", "rem", "neg", "abs", "max", "min", "sign"),
        *("floor", "ceil", "round", *_CMP, "and", "or", "xor", "not"),
        *("select_n", "clamp", "convert_element_type"),
    },
    "cheap": {
        *("add", "sub", "mul", "neg", "max", "min", "abs", "sign", "select_n"),
        *("convert_element_type", "broadcast_in_dim", "reshape", "squeeze"),
        *("expand_dims", "transpose", "slice", "concatenate"),
        *("optimization_barrier", "name", "stop_gradient", *_CMP),
    },
    "never_merged": {"optimization_barrier", "checkpoint"},
}


def _definitions() -> dict[str, list[tuple[str, str, bool]]]:
    """module -> (variable, its line, whether the call passes `traits=`) for
    each `<name>_p = f(...)` at a lax module's top level."""
    found = {}
    for path in sorted(LAX.rglob("*.py")):
        module = ".".join(path.relative_to(LAX.parent.parent).with_suffix("").parts)
        rows = []
        for node in ast.parse(path.read_text()).body:
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.endswith("_p"):
                    keywords = {k.arg for k in node.value.keywords}
                    rows.append((target.id, node.lineno, "traits" in keywords))
        found[module] = rows
    return found


def test_traits_come_from_the_vocabulary():
    for name, prim in all_primitives.items():
        assert prim.traits <= set(TRAITS), (name, prim.traits - set(TRAITS))


def test_traits_are_declared_where_the_primitive_is_defined():
    declared = set()
    for module, rows in _definitions().items():
        namespace = importlib.import_module(module.removesuffix(".__init__"))
        for variable, line, has_traits in rows:
            prim = getattr(namespace, variable, None)
            if isinstance(prim, Primitive) and prim.traits:
                assert has_traits, f"{module}:{line} {variable} has traits not passed"
                declared.add(prim.name)
    with_traits = {n for n, p in all_primitives.items() if p.traits}
    assert with_traits == declared


def test_no_module_sets_traits_after_definition():
    for path in LAX.parent.rglob("*.py"):
        text = path.read_text()
        if ".traits" not in text:  # no assignment to it can be there (cheap)
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = getattr(node, "targets", [getattr(node, "target", None)])
                for t in targets:
                    if isinstance(t, ast.Attribute) and t.attr == "traits":
                        assert path.name == "core.py" and "ir" in path.parts, path


@pytest.mark.parametrize("trait", sorted(TRAITS))
def test_the_passes_see_the_traits_they_rely_on(trait):
    assert set(names_with(trait)) == EXPECTED[trait]


def test_an_unknown_trait_is_a_key_error():
    with pytest.raises(KeyError, match="not a trait"):
        names_with("associative")
