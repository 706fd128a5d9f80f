"""How much of NumPy's main namespace olympus.numpy provides: the missing
names are printed, and the count present may only grow (raise FLOOR when
you add functions)."""

import numpy as np

import olympus.numpy as jnp

FLOOR = 411  # measured: 411 of NumPy 2.4's 497 public names


def _public_numpy_names() -> list[str]:
    return sorted(n for n in dir(np) if not n.startswith("_"))


def test_numpy_namespace_coverage_does_not_regress():
    names = _public_numpy_names()
    present = [n for n in names if hasattr(jnp, n)]
    missing = [n for n in names if not hasattr(jnp, n)]
    print(
        f"olympus.numpy has {len(present)} of NumPy's {len(names)} public names; "
        f"missing: {', '.join(missing)}"
    )
    assert len(present) >= FLOOR, (
        f"olympus.numpy lost names: {len(present)} present, floor {FLOOR}"
    )
