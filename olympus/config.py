"""Global switches. `olympus.config` is this module: its functions are the API.

Every option has three ways in, latest wins:

* the environment at import: `OLYMPUS_ENABLE_X64=1 python train.py` (the
  option's name upper-cased; booleans read 1/true/yes/on and 0/false/no/off);
* code: `olympus.config.update("olympus_enable_x64", True)`, or for a block
  `with olympus.config.override("olympus_enable_x64", True): ...`;
* the command line of an absl program, once `olympus.config.define_absl_flags()`
  has put the options on absl's global `FLAGS` (call it before `absl.app.run`,
  which then parses `--olympus_enable_x64`).

Reads: an option is an attribute (`olympus.config.olympus_enable_x64`) or
`read(name)`; `values` is a copy of all of them. They come from a plain dict
kept in step with the flags, because dtype canonicalisation asks for x64 on
every operation.

Why a module and not a `Config` object inside one: a package attribute
`olympus.config` holding an object would shadow the submodule of the same
name, so `import olympus.config` and `from olympus.config import X` would see
two different things. As a module there is one `olympus.config` for users
and for olympus itself (`from olympus import config`), at the bottom of the
import layers.

absl flags are opt-in: importing absl.flags costs about a tenth of
`import olympus`, and defining flags on a program's global FLAGS is the
program's choice, so nothing about absl happens at import.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os


class UnknownConfigOptionError(AttributeError):
    """A config option name olympus does not define (a typo, or JAX's `jax_*`)."""


class ConfigValueError(TypeError):
    """A config option given a value of the wrong type (e.g. "yes" for a bool)."""


class ConfigEnvironmentError(ValueError):
    """An OLYMPUS_* environment variable whose text cannot be read as its option's type."""


class ConfigLockedError(RuntimeError):
    """An option changed after the part of olympus that reads it once has started
    (e.g. the device count once the backend runs)."""


@dataclasses.dataclass(frozen=True)
class Option:
    """One switch: its name, Python type, built-in default and help text."""

    name: str
    kind: type  # bool, int, float or str
    default: object
    help: str
    allows_none: bool = False
    choices: tuple = ()  # the values a str option takes (empty: any)

    @property
    def env_var(self) -> str:
        return self.name.upper()


OPTIONS = (
    Option(
        "olympus_enable_x64",
        bool,
        False,
        "Enable 64-bit types (int64, uint64, float64, complex128); when off "
        "they narrow to their 32-bit counterparts.",
    ),
    Option(
        "olympus_optimize",
        bool,
        True,
        "Run the optimizer's passes (olympus.optimizer) on every program "
        "before it is lowered; off: jit compiles the traced program as is.",
    ),
    Option(
        "olympus_optimize_stable",
        bool,
        True,
        "With olympus_optimize: include the numerically stable rewrites "
        "(olympus/optimizer/stable.py), e.g. log(1 + exp(x)) -> softplus.",
    ),
    Option(
        "olympus_debug_nans",
        bool,
        False,
        "Raise FloatingPointError where an operation first produces a NaN.",
    ),
    Option(
        "olympus_disable_jit",
        bool,
        False,
        "Run jitted functions op by op in Python (for debugging).",
    ),
    Option(
        "olympus_explain_cache_misses",
        bool,
        False,
        "Log why each jit recompilation happened (olympus/stages.py).",
    ),
    Option(
        "olympus_traceback_filtering",
        str,
        "auto",
        "Cut olympus's own frames from tracebacks of exceptions leaving jit, "
        "grad, vmap, ...: 'auto' (unless a debugger is attached), 'on' or "
        "'off' (olympus/tracer/tracebacks.py).",
        choices=("auto", "on", "off"),
    ),
    Option(
        "olympus_log_compiles",
        bool,
        False,
        "Log each jit compile (function, argument types, seconds) to the "
        "'olympus' logger at WARNING, as JAX's jax_log_compiles does.",
    ),
    Option(
        "olympus_compile_progress",
        str,
        "auto",
        "A line on stderr while one compile runs past "
        "olympus_compile_progress_secs: 'auto' (when stderr is a terminal), "
        "'on' or 'off'.",
        choices=("auto", "on", "off"),
    ),
    Option(
        "olympus_compile_progress_secs",
        float,
        5.0,
        "How long a compile runs before olympus_compile_progress says so.",
    ),
    Option(
        "olympus_default_matmul_precision",
        str,
        None,
        "Precision of the matmuls whose precision= is None: 'bfloat16', "
        "'tensorfloat32' or 'float32' (also 'default', 'high', 'highest'); "
        "None keeps XLA's default. jit keys its cache on it.",
        allows_none=True,
    ),
    Option(
        "olympus_tiered_execution",
        bool,
        False,
        "jit's default for tiered=: a new signature's first calls are "
        "interpreted with NumPy while XLA compiles in the background "
        "(olympus/api.py, jit).",
    ),
    Option(
        "olympus_cpu_classic_emitter",
        str,
        "eager",
        "Which CPU programs XLA compiles with its classic emitter rather than "
        "its MLIR fusion emitters (JAX's choice): 'eager' (eager mode's "
        "one-op programs, which then compile in about half the time), 'all' "
        "(jit programs too: faster compiles, slower steady state on some "
        "programs) or 'none'. benchmarks/README.md, 'Compile time'.",
        choices=("eager", "all", "none"),
    ),
    Option(
        "olympus_compilation_cache",
        bool,
        True,
        "Keep compiled programs in the persistent compilation cache on disk.",
    ),
    Option(
        "olympus_compilation_cache_dir",
        str,
        None,
        "Folder of the persistent compilation cache (default: "
        "$OLYMPUS_COMPILATION_CACHE_DIR, else the user's cache folder).",
        allows_none=True,
    ),
    Option(
        "olympus_compilation_cache_min_compile_secs",
        float,
        0.1,
        "Programs compiling faster than this many seconds are not written "
        "to the persistent compilation cache.",
    ),
    Option(
        "olympus_compilation_cache_max_size",
        float,
        float(2**30),
        "Size limit in bytes of the persistent compilation cache's folder; "
        "least recently used entries are deleted to stay within it "
        "(None or negative: unlimited).",
        allows_none=True,
    ),
    Option(
        "olympus_platforms",
        str,
        None,
        "Comma-separated platforms to run on, in order of preference (e.g. "
        "'cuda,cpu'); the first that starts is used (default: cpu). Read "
        "once, when the backend starts.",
        allows_none=True,
    ),
    Option(
        "olympus_html_max_equations",
        int,
        50,
        "In a notebook's HTML view of a program (olympus/ir/html.py), a "
        "program with more equations than this shows its table collapsed "
        "(a <details> to click open).",
    ),
    Option(
        "olympus_num_cpu_devices",
        int,
        1,
        "How many CPU devices the backend client creates (for sharding "
        "across devices on one machine); read once, when the backend starts.",
    ),
)

_TRUE_WORDS = ("1", "true", "yes", "on")
_FALSE_WORDS = ("0", "false", "no", "off", "")


def _parse_env(option: Option, text: str):
    """The value of an environment variable's text, as `option`'s type."""
    if option.kind is bool:
        word = text.strip().lower()
        if word in _TRUE_WORDS or word in _FALSE_WORDS:
            return word in _TRUE_WORDS
    elif option.kind in (int, float):
        try:
            return option.kind(text)
        except ValueError:
            pass
    elif not option.choices or text in option.choices:
        return text
    else:
        raise ConfigEnvironmentError(
            f"environment variable {option.env_var}={text!r} is not one of "
            f"{', '.join(map(repr, option.choices))}"
        )
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
    if (
        option.kind is float
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
    ):
        return float(value)
    if option.kind is int and isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if option.kind is str and isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        if option.choices and text not in option.choices:
            raise ConfigValueError(
                f"config option {option.name!r} takes one of "
                f"{', '.join(map(repr, option.choices))}, got {text!r}"
            )
        return text
    wanted = option.kind.__name__ + (" or None" if option.allows_none else "")
    raise ConfigValueError(
        f"config option {option.name!r} takes a {wanted}, got {type(value).__name__} {value!r}"
    )


_options = {opt.name: opt for opt in OPTIONS}
_values = {name: _initial_value(opt) for name, opt in _options.items()}
_listeners: list = []
_locked: dict = {}  # option name -> why it can no longer change
_flag_values: list = []  # the absl FlagValues define_absl_flags has defined them on


def define_absl_flags(flag_values=None) -> None:
    """Defines every option as an absl flag, on absl's global `FLAGS` by default.

    Call it before `absl.app.run(main)` so `--olympus_enable_x64` and the other
    options parse from the command line; from then on absl reports parses and
    assignments here and `update` sets the flags too. Calling it again with
    the same FlagValues does nothing. In a program:
    `olympus.config.define_absl_flags(); absl.app.run(main)`. Here, with a
    FlagValues of its own parsing a command line:

    >>> from absl import flags
    >>> flag_values = flags.FlagValues()
    >>> olympus.config.define_absl_flags(flag_values)
    >>> flag_values(["train.py", "--olympus_enable_x64"])
    ['train.py']
    >>> olympus.config.olympus_enable_x64
    True
    >>> olympus.config.update("olympus_enable_x64", False)
    >>> flag_values.olympus_enable_x64
    False
    """
    from absl import flags as absl_flags

    flag_values = absl_flags.FLAGS if flag_values is None else flag_values
    if any(f is flag_values for f in _flag_values):
        return  # defined already
    define = {
        bool: absl_flags.DEFINE_bool,
        int: absl_flags.DEFINE_integer,
        float: absl_flags.DEFINE_float,
        str: absl_flags.DEFINE_string,
    }
    for opt in _options.values():
        name, value = opt.name, _values[opt.name]
        if name in flag_values:  # defined before (olympus reloaded)
            flag_values[name].value = value
        else:
            define[opt.kind](name, value, opt.help, flag_values=flag_values)
        absl_flags.register_validator(
            name, lambda v, name=name: _adopt_flag(name, v), flag_values=flag_values
        )
    _flag_values.append(flag_values)


def _adopt_flag(name: str, value) -> bool:
    """absl validator: runs when absl parses argv or a flag is assigned."""
    from absl import flags as absl_flags

    try:
        value = _checked(_options[name], value)
        _check_unlocked(name, value)
    except (ConfigValueError, ConfigLockedError) as err:
        raise absl_flags.ValidationError(str(err)) from None
    if value != _values[name]:
        _set(name, value)
    return True


def _check_unlocked(name: str, value) -> None:
    why = _locked.get(name)
    if why is not None and value != _values[name]:
        raise ConfigLockedError(
            f"config option {name!r} cannot change to {value!r} (it is "
            f"{_values[name]!r}): {why}"
        )


def _set(name: str, value) -> None:
    _check_unlocked(name, value)
    _values[name] = value
    for listener in _listeners:
        listener(name, value)


def option(name: str) -> Option:
    """The Option called `name`, or UnknownConfigOptionError listing the known ones."""
    found = _options.get(name)
    if found is None:
        known = ", ".join(sorted(_options))
        raise UnknownConfigOptionError(
            f"unknown config option {name!r}; known: {known}"
        )
    return found


def update(name: str, value) -> None:
    """Sets an option (and its absl flag, if defined).

    >>> olympus.config.update("olympus_enable_x64", True)
    >>> jnp.arange(3.0).dtype
    dtype('float64')
    >>> olympus.config.update("olympus_enable_x64", False)
    """
    value = _checked(option(name), value)
    _check_unlocked(name, value)
    for flag_values in _flag_values:
        flag_values[name].value = value
    _set(name, value)


def read(name: str):
    """The current value of an option, e.g. read("olympus_enable_x64")."""
    try:
        return _values[name]
    except KeyError:
        option(name)  # raises UnknownConfigOptionError
        raise


@contextlib.contextmanager
def override(name: str, value):
    """Sets an option for the duration of a `with` block, then restores it.

    >>> with olympus.config.override("olympus_enable_x64", True):
    ...     print(jnp.asarray(1.0).dtype)
    float64
    >>> print(jnp.asarray(1.0).dtype)
    float32
    """
    previous = read(name)
    update(name, value)
    try:
        yield
    finally:
        update(name, previous)


def lock(name: str, why: str) -> None:
    """Refuses later changes of `name` (ConfigLockedError saying `why`); for
    options read once, such as the device count when the backend starts."""
    option(name)
    _locked[name] = why


def on_change(listener) -> None:
    """Calls `listener(name, value)` after every change (caches use it)."""
    _listeners.append(listener)


def __getattr__(name: str):
    """Options read as attributes; `values` is a fresh copy of them all."""
    if name in _values:
        return _values[name]
    if name == "values":
        return dict(_values)
    if name.startswith("_"):
        raise AttributeError(name)
    option(name)  # raises UnknownConfigOptionError (an AttributeError)
    raise AttributeError(name)


def __dir__():
    return [*globals(), "values", *_options]
