"""olympus.config: options read from OLYMPUS_* environment variables at import, set by
`update`, and, once `define_absl_flags()` is called, from `--flags` in an absl program."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from absl import flags as absl_flags

import olympus
import olympus.numpy as jnp
from olympus.errors import (
    ConfigEnvironmentError,
    ConfigValueError,
    UnknownConfigOptionError,
)
from olympus.config import OPTIONS

olympus.config.define_absl_flags()  # this process's absl FLAGS carry the options


def _run_python(source: str, env_updates: dict, *args: str) -> str:
    """Runs `source` in a fresh interpreter (config is read at import) and returns stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OLYMPUS_ENABLE")}
    env.update(env_updates)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


_PRINT_ARANGE_DTYPE = """
    import olympus, olympus.numpy as jnp
    print(jnp.arange(3.0).dtype, olympus.config.olympus_enable_x64)
"""


def test_environment_variable_enables_x64():
    assert (
        _run_python(_PRINT_ARANGE_DTYPE, {"OLYMPUS_ENABLE_X64": "1"}) == "float64 True"
    )
    assert "OLYMPUS_ENABLE_X64" not in os.environ  # this process: the default, off
    assert jnp.arange(3.0).dtype == np.float32 and not olympus.config.olympus_enable_x64


_ABSL_APP = """
    {first}
    {second}

    def main(argv):
        print(jnp.arange(3.0).dtype, jnp.asarray(1).dtype)

    app.run(main)
"""


def test_absl_app_command_line_flag_enables_x64():
    absl_first = _ABSL_APP.format(
        first="from absl import app",
        second="import olympus, olympus.numpy as jnp; olympus.config.define_absl_flags()",
    )
    assert _run_python(absl_first, {}, "--olympus_enable_x64") == "float64 int64"
    assert (
        _run_python(
            absl_first, {"OLYMPUS_ENABLE_X64": "true"}, "--noolympus_enable_x64"
        )
        == "float32 int32"
    )


def test_absl_app_importing_olympus_first_still_gets_the_flags():
    """Importing olympus does not load absl; define_absl_flags() loads it and defines them."""
    olympus_first = _ABSL_APP.format(
        first="import sys, olympus, olympus.numpy as jnp; "
        "assert 'absl.flags' not in sys.modules; olympus.config.define_absl_flags()",
        second="from absl import app",
    )
    assert _run_python(olympus_first, {}, "--olympus_enable_x64") == "float64 int64"


_FLAG_DEFINED = """
    from absl import flags
    import olympus
    print("olympus_enable_x64" in flags.FLAGS, end=" ")
    olympus.config.define_absl_flags()
    olympus.config.define_absl_flags()  # a second call is harmless
    print("olympus_enable_x64" in flags.FLAGS, flags.FLAGS["olympus_debug_nans"].value)
"""


def test_absl_flags_are_defined_only_on_request():
    """`import olympus` leaves absl's FLAGS alone, even with absl.flags loaded first."""
    assert _run_python(_FLAG_DEFINED, {"OLYMPUS_DEBUG_NANS": "1"}) == "False True True"


def test_bad_environment_value_is_named_at_import():
    source = "import olympus"
    env = {**os.environ, "OLYMPUS_ENABLE_X64": "maybe"}
    done = subprocess.run(
        [sys.executable, "-c", source],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert (
        "ConfigEnvironmentError" in done.stderr
        and "OLYMPUS_ENABLE_X64='maybe'" in done.stderr
    )


def test_update_toggles_x64_and_restores():
    assert not olympus.config.olympus_enable_x64
    olympus.config.update("olympus_enable_x64", True)
    try:
        assert olympus.config.read("olympus_enable_x64") is True
        assert jnp.arange(3.0).dtype == np.float64
        assert olympus.jit(lambda x: x * 2)(np.ones(2)).dtype == np.float64
    finally:
        olympus.config.update("olympus_enable_x64", False)
    assert jnp.arange(3.0).dtype == np.float32
    assert olympus.jit(lambda x: x * 2)(np.ones(2)).dtype == np.float32


def test_override_is_scoped_and_restores_on_error():
    with (
        pytest.raises(RuntimeError),
        olympus.config.override("olympus_enable_x64", True),
    ):
        assert jnp.asarray(1.0).dtype == np.float64
        raise RuntimeError("leave the block")
    assert not olympus.config.olympus_enable_x64


def test_update_keeps_absl_flag_in_step_and_absl_assignment_reaches_config():
    with olympus.config.override("olympus_debug_nans", True):
        assert absl_flags.FLAGS["olympus_debug_nans"].value is True
    assert absl_flags.FLAGS["olympus_debug_nans"].value is False
    absl_flags.FLAGS["olympus_enable_x64"].value = False
    try:
        absl_flags.FLAGS.olympus_enable_x64 = True  # runs absl's validators
        assert olympus.config.olympus_enable_x64 and jnp.arange(2.0).dtype == np.float64
    finally:
        olympus.config.update("olympus_enable_x64", False)
    with pytest.raises(absl_flags.IllegalFlagValueError, match="takes a bool"):
        absl_flags.FLAGS.olympus_enable_x64 = "yes"
    assert absl_flags.FLAGS["olympus_enable_x64"].value is False
    assert olympus.config.olympus_enable_x64 is False


def test_unknown_option_lists_the_known_ones():
    with pytest.raises(UnknownConfigOptionError, match="olympus_enable_x64") as info:
        olympus.config.update("jax_enable_x64", True)
    assert "unknown config option 'jax_enable_x64'" in str(info.value)
    with pytest.raises(UnknownConfigOptionError, match="olympus_debug_nans"):
        olympus.config.read("olympus_debug_nan")
    with pytest.raises(AttributeError):  # so hasattr() works
        olympus.config.olympus_no_such_option  # noqa: B018
    assert not hasattr(olympus.config, "olympus_no_such_option")


@pytest.mark.parametrize(
    "name, value",
    [
        ("olympus_enable_x64", "yes"),
        ("olympus_enable_x64", 1),
        ("olympus_debug_nans", None),
        ("olympus_compilation_cache_min_compile_secs", "0.5"),
        ("olympus_compilation_cache_min_compile_secs", True),
        ("olympus_compilation_cache_dir", 3),
    ],
)
def test_wrong_value_type_raises_and_changes_nothing(name, value):
    before = olympus.config.values
    with pytest.raises(ConfigValueError, match=name):
        olympus.config.update(name, value)
    assert olympus.config.values == before


def test_well_typed_values_are_accepted():
    with olympus.config.override("olympus_compilation_cache_min_compile_secs", 2):
        assert olympus.config.olympus_compilation_cache_min_compile_secs == 2.0
    with olympus.config.override("olympus_enable_x64", np.bool_(True)):
        assert olympus.config.olympus_enable_x64 is True
    import pathlib

    previous = olympus.config.olympus_compilation_cache_dir
    with olympus.config.override(
        "olympus_compilation_cache_dir", pathlib.Path("/tmp/x")
    ):
        assert olympus.config.olympus_compilation_cache_dir == "/tmp/x"
    assert olympus.config.olympus_compilation_cache_dir == previous


def test_every_option_is_an_absl_flag_with_an_environment_variable():
    for option in OPTIONS:
        flag = absl_flags.FLAGS[option.name]
        assert flag.help and option.env_var == option.name.upper()
        assert flag.value == olympus.config.read(option.name)


def test_environment_parsing_of_each_type():
    from olympus.config import _parse_env

    by_name = {o.name: o for o in OPTIONS}
    x64 = by_name["olympus_enable_x64"]
    assert [
        _parse_env(x64, t) for t in ("1", "TRUE", " yes", "on", "0", "off", "No")
    ] == [True] * 4 + [False] * 3
    secs = by_name["olympus_compilation_cache_min_compile_secs"]
    assert _parse_env(secs, "2.5") == 2.5
    with pytest.raises(
        ConfigEnvironmentError, match="OLYMPUS_COMPILATION_CACHE_MIN_COMPILE_SECS"
    ):
        _parse_env(secs, "soon")
