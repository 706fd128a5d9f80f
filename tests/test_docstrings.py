"""Every `>>>` example in olympus's docstrings runs and prints what it shows.

Modules are found by walking the package, so a new module's examples are
tested without listing it here. Examples see only `olympus`, `jnp`, `np` and
`lax` (not their module's globals), so each runs as written in a user's session.
"""

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax


def _modules_with_examples() -> list[str]:
    names = ["olympus"] + [
        info.name
        for info in pkgutil.walk_packages(olympus.__path__, "olympus.")
        if info.name != "olympus.__main__"  # importing it runs the command line
    ]
    return [
        name
        for name in names
        if any(
            t.examples
            for t in doctest.DocTestFinder().find(importlib.import_module(name))
        )
    ]


MODULES = _modules_with_examples()


def test_examples_are_found():
    assert "olympus.api" in MODULES and len(MODULES) >= 5


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    globs = {"olympus": olympus, "jnp": jnp, "np": np, "lax": lax}
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    failed, attempted = doctest.testmod(
        module, globs=globs, optionflags=flags, report=True, verbose=False
    )
    assert attempted and not failed, (
        f"{failed} of {attempted} examples failed in {name}"
    )
