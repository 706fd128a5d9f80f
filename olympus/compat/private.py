"""The few JAX-private modules that ecosystem libraries import at their own
import time, answered with what olympus means by them.

equinox imports `jax._src.traceback_util` in most of its files (to hide its
frames from JAX's filtered tracebacks) and `jax._src.dispatch`; without them
it cannot be imported at all. Each face below is a small module of names that
olympus already has or that have nothing to do under olympus; every other
`jax._src` module is refused with `refusal`'s message.
"""

from __future__ import annotations

import os
import types
from typing import Callable

import numpy as np


def _traceback_util(module: types.ModuleType) -> None:
    # olympus's errors already point at the user's line; the paths are only
    # recorded (flax reads and edits the list).
    import olympus

    module._exclude_paths = [os.path.dirname(olympus.__file__)]
    module.register_exclusion = module._exclude_paths.append
    module.include_frame = lambda frame: (
        not frame.f_code.co_filename.startswith(tuple(module._exclude_paths))
    )
    module.api_boundary = lambda fun=None, **kwargs: (
        fun if fun is not None else (lambda f: f)
    )


def _core(module: types.ModuleType) -> None:
    import olympus.extend.core
    from olympus.tracer.core import current_trace, eval_trace

    for name in olympus.extend.core.__all__:
        setattr(module, name, getattr(olympus.extend.core, name))
    module.trace_state_clean = lambda: current_trace() is eval_trace
    module.physical_aval = lambda aval: aval  # olympus has no extended dtypes


def _flatten_util(module: types.ModuleType) -> None:
    from olympus.flatten_util import ravel_pytree

    module.ravel_pytree = ravel_pytree


def _ad_util(module: types.ModuleType) -> None:
    from olympus.lax.custom_derivatives import stop_gradient_p
    from olympus.transforms.ad_util import Zero

    module.stop_gradient_p = stop_gradient_p
    module.Zero = Zero


class extended(np.generic):
    """JAX's scalar type of extended dtypes; olympus has none, so no array is
    of it: it exists for libraries that subclass it at import (flax's fp8)."""


class ExtendedDType:
    """JAX's base of extended dtypes (see `extended`)."""

    type = extended


def _dtypes(module: types.ModuleType) -> None:
    import olympus.dtypes

    for name in dir(olympus.dtypes):
        if not name.startswith("_"):
            setattr(module, name, getattr(olympus.dtypes, name))
    module.extended = extended
    module.ExtendedDType = ExtendedDType
    module.DType = np.dtype


def _state_types(module: types.ModuleType) -> None:
    from olympus.compat.hijax import AbstractRef

    module.AbstractRef = AbstractRef


def _tree_util(module: types.ModuleType) -> None:
    # flax.nnx asks `type(x) in _registry`: olympus's pytree node types as a
    # user sees them (typed PRNG key arrays are leaves)
    from olympus.tracer.user_trees import UsersRegistry

    module._registry = UsersRegistry()


def _checkify(module: types.ModuleType) -> None:
    import olympus.experimental.checkify as checkify

    for name in dir(checkify):
        if not name.startswith("_"):
            setattr(module, name, getattr(checkify, name))


def _nothing(module: types.ModuleType) -> None:
    """A package (or a module imported only for names looked up under
    `try/except AttributeError`)."""


# name -> (what it is for, how to fill it)
FACES: dict[str, tuple[str, Callable]] = {
    "jax._src": ("JAX's private package", _nothing),
    "jax._src.traceback_util": ("traceback filtering", _traceback_util),
    "jax._src.dispatch": ("eager dispatch (names probed with getattr)", _nothing),
    "jax._src.compiler": (
        "the compiler (chex probes its names with hasattr)",
        _nothing,
    ),
    "jax._src.core": ("the trace state", _core),
    "jax._src.flatten_util": ("ravel_pytree", _flatten_util),
    "jax._src.ad_util": ("stop_gradient_p, Zero", _ad_util),
    "jax._src.dtypes": (
        "olympus.dtypes' names, TypePromotionError among them",
        _dtypes,
    ),
    "jax._src.state": ("JAX's mutable-state package (flax.nnx)", _nothing),
    "jax._src.state.types": ("AbstractRef, the type of a Ref", _state_types),
    "jax._src.tree_util": ("the pytree node registry (flax.nnx)", _tree_util),
    "jax._src.checkify": ("olympus.experimental.checkify's names", _checkify),
}
PACKAGES = {"jax._src", "jax._src.state"}


class PrivateNameError(AttributeError):
    """A name of a JAX-private module that olympus's face of it lacks."""


def face(name: str) -> types.ModuleType:
    """The module `import <name>` gets: FACES' names, and an error naming
    the JAX-private name for any other."""
    purpose, fill = FACES[name]
    module = types.ModuleType(
        name, f"olympus.compat's face of JAX's {name} ({purpose})."
    )
    if name in PACKAGES:
        module.__path__ = []
    fill(module)

    def __getattr__(attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise PrivateNameError(
            f"{name}.{attr} is private to JAX and olympus.compat does not provide "
            f"it; use JAX's public API (jax.*), which olympus mirrors."
        )

    module.__getattr__ = __getattr__
    return module


def refusal(name: str, instead: dict[str, str]) -> str:
    """The message of the ImportError for a JAX module olympus does not answer."""
    use = instead.get(name, "JAX's public API (jax.*), which olympus mirrors")
    return (
        f"{name} is private to JAX (or has no olympus counterpart); a library "
        f"running on olympus through olympus.compat cannot import it. Use "
        f"{use} instead."
    )
