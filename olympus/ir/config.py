"""Global switches, read from the environment at import and set with `update`.

`olympus.config.update("olympus_enable_x64", True)` mirrors JAX's config API.
"""

from __future__ import annotations

import os


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


class Config:
    """Named flags with defaults; unknown names are an error, not a silent no-op."""

    def __init__(self) -> None:
        self._values = {
            "olympus_enable_x64": _env_bool("OLYMPUS_ENABLE_X64", False),
            "olympus_debug_nans": _env_bool("OLYMPUS_DEBUG_NANS", False),
            "olympus_disable_jit": _env_bool("OLYMPUS_DISABLE_JIT", False),
            # log why each jit recompilation happened (olympus/cache_misses.py)
            "olympus_explain_cache_misses": _env_bool("OLYMPUS_EXPLAIN_CACHE_MISSES", False),
            # persistent compilation cache (backends/xla/compiler.py): on by
            # default; its folder (None: $OLYMPUS_COMPILATION_CACHE_DIR, else
            # the user's cache folder); programs compiling faster are not written
            "olympus_compilation_cache": _env_bool("OLYMPUS_COMPILATION_CACHE", True),
            "olympus_compilation_cache_dir": None,
            "olympus_compilation_cache_min_compile_secs": float(
                os.environ.get("OLYMPUS_COMPILATION_CACHE_MIN_COMPILE_SECS", "0.1")),
        }
        self._listeners: list = []

    def update(self, name: str, value) -> None:
        if name not in self._values:
            known = ", ".join(sorted(self._values))
            raise AttributeError(f"unknown config option {name!r}; known: {known}")
        self._values[name] = value
        for listener in self._listeners:
            listener(name, value)

    def read(self, name: str):
        return self._values[name]

    def on_change(self, listener) -> None:
        """Calls `listener(name, value)` after every update (caches use it)."""
        self._listeners.append(listener)

    def __getattr__(self, name: str):
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(name)


config = Config()
