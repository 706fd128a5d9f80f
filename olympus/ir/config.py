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
"""

from __future__ import annotations

import contextlib
import dataclasses
import os

from absl import flags as absl_flags


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


_DEFINE = {bool: absl_flags.DEFINE_bool, float: absl_flags.DEFINE_float,
           str: absl_flags.DEFINE_string}


class Config:
    """The options of OPTIONS; unknown names and ill-typed values are errors."""

    def __init__(self, options=OPTIONS, flag_values=absl_flags.FLAGS) -> None:
        self._options = {option.name: option for option in options}
        self._values = {name: _initial_value(o) for name, o in self._options.items()}
        self._listeners: list = []
        self._flags = flag_values
        for option in options:
            self._define_flag(option)

    def _define_flag(self, option: Option) -> None:
        """Registers `--name` with absl; absl then reports parses and assignments."""
        if option.name in self._flags:  # olympus imported twice (e.g. reloaded)
            self._flags[option.name].value = self._values[option.name]
        else:
            _DEFINE[option.kind](option.name, self._values[option.name], option.help,
                                 flag_values=self._flags)
        absl_flags.register_validator(
            option.name, lambda value, name=option.name: self._adopt_flag(name, value),
            flag_values=self._flags)

    def _adopt_flag(self, name: str, value) -> bool:
        """absl validator: runs when absl parses argv or a flag is assigned."""
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
