"""docs/api.md is what docs/gen_api.py makes from the code now, so CI catches a
stale API reference; docs/differences.md names only things that exist."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location(
        "gen_api", ROOT / "docs" / "gen_api.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_is_up_to_date():
    # A fresh interpreter, as the command runs: nothing another test imported or
    # patched can leak into the names or signatures compared.
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_api.py"), "--check"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_api_reference_covers_every_listed_module():
    gen_api = _generator()
    text = gen_api.render()
    for name in gen_api.MODULES:
        assert f"\n## {name}\n" in text
    for name in (
        "jit",
        "grad",
        "vmap",
        "sin",
        "scan",
        "split",
        "softmax",
        "tree_map",
        "adam",
        "Conv",
    ):
        assert f"- [`{name}(" in text or f"- [`class {name}(" in text, name


def test_api_reference_shows_whole_docstrings():
    """Issue 29: each public function's Args, Returns, Raises and Example are on
    the page, as Markdown (Args and Raises as lists, the example fenced)."""
    text = _generator().render()
    for qualified, arg, error in (
        ("olympus.numpy.sin", "x", "ArrayLikeTypeError"),
        ("olympus.lax.scan", "f", "ScanShapeError"),
        ("olympus.closure_convert", "*example_args", "TypeError"),
        ("olympus.random.split", "key", "InvalidKeyError"),
    ):
        start = text.index(f"\n### {qualified}\n")
        section = text[start : text.index("\n### ", start + 1)]
        for part in ("**Args**", "**Returns**", "**Raises**", "**Example**"):
            assert part in section, (qualified, part)
        assert f"\n- `{arg}`: " in section and f"\n- `{error}`: " in section
        assert "\n```pycon\n>>> " in section, qualified
    anchor = "(#olympusnumpyabsolute) (alias of `absolute`)"
    assert f"- [`abs(x)`]{anchor}" in text  # an alias links, not repeats
    assert "\n### olympus.numpy.abs\n" not in text


def test_docstring_sections_become_markdown():
    gen_api = _generator()

    def sample(x, *rest):
        """Does a thing.

        More about it.

        - one point,
          over two lines;
        - another.

        Args:
          x: the input, described
            over two lines.
          *rest: more inputs.

        Returns:
          The thing.

        Raises:
          ValueError: x is bad.

        Example:
          >>> 1 + 1
          2
        """

    lines = gen_api.detail("m.sample", "sample", sample)
    page = "\n".join(lines)
    assert page.startswith("### m.sample\n\n```python\nsample(x, *rest)\n```\n")
    assert "Does a thing.\n\nMore about it.\n" in page
    assert "\n- one point, over two lines;\n- another.\n" in page
    assert (
        "- `x`: the input, described over two lines.\n- `*rest`: more inputs." in page
    )
    assert "**Returns**\n\nThe thing.\n" in page
    assert "**Raises**\n\n- `ValueError`: x is bad.\n" in page
    assert page.endswith("**Example**\n\n```pycon\n>>> 1 + 1\n2\n```\n")


def test_public_names_skip_helpers_and_foreign_objects():
    import olympus

    gen_api = _generator()
    modules = [importlib.import_module(m) for m in gen_api.MODULES]
    random_names = gen_api.public_names(olympus.random, modules)
    assert "split" in random_names
    assert "jit" not in random_names  # olympus.jit, documented under olympus
    assert "Sequence" not in random_names and "annotations" not in random_names
    assert "stop_gradient" not in gen_api.public_names(olympus.nn, modules)  # lax's


def test_differences_page_exists_and_is_a_list():
    text = (ROOT / "docs" / "differences.md").read_text()
    assert text.startswith("# Differences from JAX")
    assert text.count("\n- ") >= 20
