"""Global switches, each defined once as an absl flag.

Every option has three ways in, latest wins:

* the environment at import: `OLYMPUS_ENABLE_X64=1 python train.py` (the
  option's name upper-cased; booleans read 1/true/yes/on and 0/false/no/off);
* the command line of an absl program: `python train.py --olympus_enable_x64`
  (the flags live on absl's global `FLAGS`, so `absl.app.run` parses them);
* code: `olympus.config.update("olympus_enable_x64", True)`, or for a block
  `with olympus.config.override("olympus_enable_x64", True): ...`.

Reads (`olympus.config.olympus_enable_x64`, `config.read(name)`) come from a
plain dict kept in step with the flags, because dtype canonicalisation asks
for x64 on every operation.

Importing absl.flags costs about a tenth of `import olympus`, so the flags are
defined when absl.flags is loaded: at once if it already is, else by a
one-shot import hook the moment the program imports it (before any
`absl.app.run` can parse the command line).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys


class UnknownConfigOptionError(AttributeError):
    """A config option name olympus does not define (a typo, or JAX's `jax_*`)."""


class ConfigValueError(TypeError):
    """A config option given a value of the wrong type (e.g. "yes" for a bool)."""


class ConfigEnvironmentError(ValueError):
    """An OLYMPUS_* environment variable whose text cannot be read as its option's type."""


@dataclasses.dataclass(frozen=True)
class Option:
    """One switch: its name, Python type, built-in default and help text."""

    name: str
    kind: type  # bool, float or str
    default: object
    help: str
    allows_none: bool = False

    @property
    def env_var(self) -> str:
        return self.name.upper()


OPTIONS = (
    Option("olympus_enable_x64", bool, False,
           "Enable 64-bit types (int64, uint64, float64, complex128); when off "
           "they narrow to their 32-bit counterparts."),
    Option("olympus_debug_nans", bool, False,
           "Raise FloatingPointError where an operation first produces a NaN."),
    Option("olympus_disable_jit", bool, False,
           "Run jitted functions op by op in Python (for debugging)."),
    Option("olympus_explain_cache_misses", bool, False,
           "Log why each jit recompilation happened (olympus/cache_misses.py)."),
    Option("olympus_compilation_cache", bool, True,
           "Keep compiled programs in the persistent compilation cache on disk."),
    Option("olympus_compilation_cache_dir", str, None,
           "Folder of the persistent compilation cache (default: "
           "$OLYMPUS_COMPILATION_CACHE_DIR, else the user's cache folder).",
           allows_none=True),
    Option("olympus_compilation_cache_min_compile_secs", float, 0.1,
           "Programs compiling faster than this many seconds are not written "
           "to the persistent compilation cache."),
    Option("olympus_compilation_cache_max_size", float, float(2**30),
           "Size limit in bytes of the persistent compilation cache's folder; "
           "least recently used entries are deleted to stay within it "
           "(None or negative: unlimited).",
           allows_none=True),
)

_TRUE_WORDS = ("1", "true", "yes", "on")
_FALSE_WORDS = ("0", "false", "no", "off", "")


def _parse_env(option: Option, text: str):
    """The value of an environment variable's text, as `option`'s type."""
    if option.kind is bool:
        word = text.strip().lower()
        if word in _TRUE_WORDS or word in _FALSE_WORDS:
            return word in _TRUE_WORDS
    elif option.kind is float:
        try:
            return float(text)
        except ValueError:
            pass
    else:
        return text
    raise ConfigEnvironmentError(
        f"environment variable {option.env_var}={text!r} is not a {option.kind.__name__} "
        f"(booleans take one of {', '.join(_TRUE_WORDS + _FALSE_WORDS[:-1])})"
    )


def _initial_value(option: Option):
    text = os.environ.get(option.env_var)
    return option.default if text is None else _parse_env(option, text)


def _checked(option: Option, value):
    """`value` as the option's type, or ConfigValueError naming what was expected."""
    if value is None and option.allows_none:
        return None
    if option.kind is bool and type(value).__name__ in ("bool", "bool_"):
        return bool(value)
    if option.kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if option.kind is str and isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    wanted = option.kind.__name__ + (" or None" if option.allows_none else "")
    raise ConfigValueError(
        f"config option {option.name!r} takes a {wanted}, got {type(value).__name__} {value!r}"
    )


class Config:
    """The options of OPTIONS; unknown names and ill-typed values are errors."""

    def __init__(self, options=OPTIONS) -> None:
        self._options = {option.name: option for option in options}
        self._values = {name: _initial_value(o) for name, o in self._options.items()}
        self._listeners: list = []
        self._flags = None  # absl's FlagValues, once the flags are defined

    def define_absl_flags(self, flag_values=None) -> None:
        """Defines every option as an absl flag, on absl's global FLAGS by default.

        Runs by itself when absl.flags is imported; call it to use another
        FlagValues. From then on absl reports parses and assignments here.
        """
        from absl import flags as absl_flags

        flag_values = absl_flags.FLAGS if flag_values is None else flag_values
        if flag_values is self._flags:
            return  # defined already
        self._flags = flag_values
        define = {bool: absl_flags.DEFINE_bool, float: absl_flags.DEFINE_float,
                  str: absl_flags.DEFINE_string}
        for option in self._options.values():
            name, value = option.name, self._values[option.name]
            if name in self._flags:  # defined before (olympus reloaded)
                self._flags[name].value = value
            else:
                define[option.kind](name, value, option.help, flag_values=self._flags)
            absl_flags.register_validator(
                name, lambda v, name=name: self._adopt_flag(name, v), flag_values=self._flags)

    def _adopt_flag(self, name: str, value) -> bool:
        """absl validator: runs when absl parses argv or a flag is assigned."""
        from absl import flags as absl_flags

        try:
            value = _checked(self._options[name], value)
        except ConfigValueError as err:
            raise absl_flags.ValidationError(str(err)) from None
        if value != self._values[name]:
            self._set(name, value)
        return True

    def _set(self, name: str, value) -> None:
        self._values[name] = value
        for listener in self._listeners:
            listener(name, value)

    def option(self, name: str) -> Option:
        option = self._options.get(name)
        if option is None:
            known = ", ".join(sorted(self._options))
            raise UnknownConfigOptionError(f"unknown config option {name!r}; known: {known}")
        return option

    def update(self, name: str, value) -> None:
        """Sets an option (and its absl flag); e.g. update("olympus_enable_x64", True)."""
        value = _checked(self.option(name), value)
        if self._flags is not None:
            self._flags[name].value = value
        self._set(name, value)

    def read(self, name: str):
        try:
            return self._values[name]
        except KeyError:
            self.option(name)  # raises UnknownConfigOptionError
            raise

    @contextlib.contextmanager
    def override(self, name: str, value):
        """Sets an option for the duration of a `with` block, then restores it."""
        previous = self.read(name)
        self.update(name, value)
        try:
            yield
        finally:
            self.update(name, previous)

    @property
    def values(self) -> dict:
        """A copy of every option's current value, by name."""
        return dict(self._values)

    def on_change(self, listener) -> None:
        """Calls `listener(name, value)` after every change (caches use it)."""
        self._listeners.append(listener)

    def __getattr__(self, name: str):
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        if name.startswith("_"):
            raise AttributeError(name)
        self.option(name)  # raises UnknownConfigOptionError
        raise AttributeError(name)

    def __dir__(self):
        return [*super().__dir__(), *self._options]


config = Config()


class _DefineFlagsOnAbslImport:
    """`sys.meta_path` finder: lets the other finders locate absl.flags and wraps
    its loader so that the flags are defined right after it loads (the loader
    then removes this finder)."""

    def find_spec(self, name, path, target=None):
        if name != "absl.flags":
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _ThenDefineFlags(spec.loader)
                return spec
        return None


class _ThenDefineFlags:
    """A loader that runs `loader`, then `config.define_absl_flags()`."""

    def __init__(self, loader) -> None:
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        module.__loader__ = module.__spec__.loader = self.loader  # leave no trace
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _DefineFlagsOnAbslImport)]
        config.define_absl_flags()

    def __getattr__(self, name: str):  # is_package, get_source, ... for tools
        return getattr(self.loader, name)


if "absl.flags" in sys.modules:
    config.define_absl_flags()
else:
    sys.meta_path.insert(0, _DefineFlagsOnAbslImport())
