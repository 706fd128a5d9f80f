"""olympus.compat: run a library written for JAX on olympus, unmodified.

Opt-in, before the library is imported:

    import olympus.compat
    olympus.compat.install()
    import optax  # its `import jax.numpy as jnp` is olympus.numpy

or from the command line: `python -m olympus.compat train.py --steps 10`.

`install()` puts a finder first on `sys.meta_path` that answers `import jax.X`
with olympus's real module `olympus.X` (aliases, nothing re-implemented).
`jax` itself is a thin module that forwards to `olympus` and holds
`jax.config`, which reads and sets olympus's options under their JAX names
(`jax_enable_x64` is `olympus_enable_x64`); `JAX_*` environment variables are
read as the matching `OLYMPUS_*` ones. A JAX-private module (`jax._src...`)
outside the few that libraries need at import raises `CompatImportError`
naming it and the public API to use, and a JAX name olympus lacks raises
`CompatAttributeError` naming it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
import types

from olympus import config
from olympus.compat import private
from olympus.ir import dtypes as ir_dtypes

JAX_VERSION = "0.10.2"  # the JAX release whose API olympus mirrors

# JAX modules whose olympus counterpart has another name.
RENAMED_MODULES = {
    "jax.experimental.hijax": "olympus.compat.hijax",
    "jax.custom_derivatives": "olympus.lax.custom_derivatives",
    "jax.core": "olympus.extend.core",
    "jax.api_util": "olympus.extend.linear_util",
}
# JAX names olympus spells another way (looked up on the top-level `jax`).
RENAMED_NAMES = {"make_jaxpr": "make_olympuspr"}
# Top-level JAX names answered by olympus.compat's faces.
COMPAT_NAMES = {
    "log_compiles": "olympus.compat.logging_faces",
}
# What to use instead of a JAX name olympus lacks, where there is an answer.
INSTEAD = {
    "jax.lib": "olympus.backends.xla (olympus's runtime; not a public API)",
    "jax.tools": "nothing: olympus has no counterpart",
    "jax.export": "olympus.stages (jit(f).lower(...).compile())",
}


class CompatImportError(ImportError):
    """A library imported a JAX module olympus has no counterpart of
    (usually a JAX-private `jax._src` module)."""


class CompatAttributeError(AttributeError):
    """A library used a `jax.*` name olympus does not define."""


class CompatInstallError(RuntimeError):
    """`install()` called after the real JAX was imported in this process."""


def _missing_name(module: str, name: str) -> CompatAttributeError:
    instead = INSTEAD.get(
        f"{module}.{name}", "the olympus API documented in docs/api.md"
    )
    return CompatAttributeError(
        f"{module}.{name}: olympus (running this JAX library through "
        f"olympus.compat) has no `{name}` in {module}; use {instead}, or "
        f"report the name as missing from olympus's JAX API."
    )


def _olympus_module_name(name: str) -> str:
    for jax_name, olympus_name in RENAMED_MODULES.items():
        if name == jax_name or name.startswith(jax_name + "."):
            return olympus_name + name[len(jax_name) :]
    return "olympus" + name[len("jax") :]


# ---- jax.config: olympus's options under JAX's names --------------------------
def olympus_option_name(jax_name: str) -> str:
    """`jax_enable_x64` -> `olympus_enable_x64`; raises for a JAX option
    olympus does not have."""
    if jax_name.startswith("olympus_"):
        return jax_name
    name = "olympus_" + jax_name.removeprefix("jax_")
    config.option(name)  # UnknownConfigOptionError names the option
    return name


# JAX options whose olympus counterpart is state outside olympus.config:
# name -> (read, update).
STATE_OPTIONS = {
    "jax_numpy_dtype_promotion": (
        ir_dtypes.promotion_mode,
        ir_dtypes.set_promotion_mode,
    ),
}


class JaxConfig:
    """`jax.config`: `update`, `read` and attribute reads in JAX's spelling,
    forwarded to `olympus.config`."""

    def update(self, name: str, value) -> None:
        if name in STATE_OPTIONS:
            return STATE_OPTIONS[name][1](value)
        config.update(olympus_option_name(name), value)

    def read(self, name: str):
        if name in STATE_OPTIONS:
            return STATE_OPTIONS[name][0]()
        return config.read(olympus_option_name(name))

    def __getattr__(self, name: str):
        if name.startswith("jax_"):
            return self.read(name)
        return getattr(config, name)


def _read_jax_environment() -> None:
    """`JAX_ENABLE_X64=1` acts as `OLYMPUS_ENABLE_X64=1` (olympus read its own
    variables at import; an `OLYMPUS_*` one set too wins)."""
    for key, text in os.environ.items():
        if not key.startswith("JAX_") or f"OLYMPUS_{key[4:]}" in os.environ:
            continue
        if key.lower() in STATE_OPTIONS:
            STATE_OPTIONS[key.lower()][1](text)
            continue
        try:
            name = olympus_option_name(key.lower())
        except AttributeError:
            continue  # a JAX variable olympus has no option for
        # config's own parser, so the spellings accepted are OLYMPUS_*'s.
        config.update(name, config._parse_env(config.option(name), text))


# ---- the top-level `jax` module ------------------------------------------------
class JaxModule(types.ModuleType):
    """`jax`: forwards every name to `olympus` (its submodules to olympus's),
    except `config` and `__version__`, which speak JAX's names."""

    def __getattr__(self, name: str):
        import olympus

        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(olympus, name, None)
        if isinstance(value, types.ModuleType):
            # through the finder, so its missing names are named as JAX's
            return importlib.import_module(f"jax.{name}")
        if value is not None or hasattr(olympus, name):
            return value
        if name in RENAMED_NAMES:
            return getattr(olympus, RENAMED_NAMES[name])
        if name in COMPAT_NAMES:
            return getattr(importlib.import_module(COMPAT_NAMES[name]), name)
        if name in private.FACES or importlib.util.find_spec(
            _olympus_module_name(f"jax.{name}")
        ):
            return importlib.import_module(f"jax.{name}")
        raise _missing_name("jax", name)

    def __dir__(self):
        import olympus

        return sorted(set(dir(olympus)) | set(self.__dict__))


def _jax_module() -> JaxModule:
    module = JaxModule("jax", "JAX's API, answered by olympus (olympus.compat).")
    module.__path__ = []  # a package: `jax.numpy` and friends come from the finder
    module.__version__ = JAX_VERSION
    module.__version_info__ = tuple(int(p) for p in JAX_VERSION.split("."))
    module.config = JaxConfig()
    return module


# ---- JAX names on olympus's real modules --------------------------------------
def _name_missing_with_jax_name(module: types.ModuleType, jax_name: str) -> None:
    """A missing attribute of `module` raises CompatAttributeError naming the
    JAX module it was reached as (wrapping a module `__getattr__` it has)."""
    previous = module.__dict__.get("__getattr__")
    if getattr(previous, "jax_name", None):
        return

    def __getattr__(name: str):
        if previous is not None:
            try:
                return previous(name)
            except AttributeError:
                pass
        if name.startswith("__"):
            raise AttributeError(name)
        if f"{jax_name}.{name}" in RENAMED_MODULES:  # `from jax.x import sub`
            return importlib.import_module(f"{jax_name}.{name}")
        raise _missing_name(jax_name, name)

    __getattr__.jax_name = jax_name
    module.__getattr__ = __getattr__


class JaxFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers `import jax...` with olympus's modules."""

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname != "jax" and not fullname.startswith("jax."):
            return None
        module = self._module_for(fullname)
        spec = importlib.util.spec_from_loader(
            fullname, self, is_package=hasattr(module, "__path__")
        )
        spec.loader_state = (module, module.__dict__.get("__spec__"))
        return spec

    def _module_for(self, fullname: str) -> types.ModuleType:
        if fullname == "jax":
            return _jax_module()
        if fullname in private.FACES:
            return private.face(fullname)
        if fullname.startswith("jax._src") or fullname in INSTEAD:
            raise CompatImportError(private.refusal(fullname, INSTEAD))
        olympus_name = _olympus_module_name(fullname)
        try:
            module = importlib.import_module(olympus_name)
        except ModuleNotFoundError as err:
            if err.name != olympus_name:
                raise
            raise CompatImportError(
                f"{fullname}: olympus has no module {olympus_name}, so this JAX "
                f"module cannot be imported through olympus.compat; report it "
                f"as missing from olympus's JAX API."
            ) from None
        _name_missing_with_jax_name(module, fullname)
        return module

    def create_module(self, spec):
        return spec.loader_state[0]

    def exec_module(self, module) -> None:
        # The import system stamped the jax spec on olympus's module; put back
        # its own, so `olympus.numpy.__spec__.name` stays "olympus.numpy".
        _, original = module.__spec__.loader_state
        if original is not None:
            module.__spec__ = original


_finder = JaxFinder()


def installed() -> bool:
    """Whether `import jax` answers with olympus in this process."""
    return _finder in sys.meta_path


def install() -> None:
    """Makes `import jax` and `jax.*` resolve to olympus (call it before the
    JAX library is imported); a second call does nothing."""
    if installed():
        return
    real = sys.modules.get("jax")
    if real is not None:
        raise CompatInstallError(
            f"olympus.compat.install(): the real JAX ({real.__file__}) is already "
            f"imported in this process, and its modules cannot be swapped out "
            f"under the libraries holding them; call install() before anything "
            f"imports jax (or run `python -m olympus.compat script.py`)."
        )
    sys.meta_path.insert(0, _finder)
    _read_jax_environment()


__all__ = [
    "CompatAttributeError",
    "CompatImportError",
    "CompatInstallError",
    "JAX_VERSION",
    "install",
    "installed",
    "olympus_option_name",
]
