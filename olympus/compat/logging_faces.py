"""`jax.log_compiles` under olympus.compat: olympus's `olympus_log_compiles`,
with each compile also logged on the 'jax' logger in JAX's words
("Finished XLA compilation of jit(f) in ... sec"), which tests written for JAX
read (optax's `test_utils.log_compilations` asserts a second call compiles
nothing)."""

from __future__ import annotations

import contextlib
import logging

from olympus import config


class _ToJaxLogger(logging.Handler):
    """Re-logs olympus's "Compiled jit(f) for (...) in t s" as JAX's line."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if not message.startswith("Compiled jit("):
            return
        name = message[len("Compiled ") : message.index(" for (")]
        seconds = message.rsplit(" in ", 1)[1].removesuffix(" s")
        logging.getLogger("jax").warning(
            "Finished XLA compilation of %s in %s sec", name, seconds
        )


@contextlib.contextmanager
def log_compiles(new_val: bool = True):
    """Inside the block, each jit compile is logged at WARNING on the
    'olympus' logger and, in JAX's words, on the 'jax' logger."""
    olympus_logger = logging.getLogger("olympus")
    handler = _ToJaxLogger()
    before = config.read("olympus_log_compiles")
    config.update("olympus_log_compiles", bool(new_val))
    olympus_logger.addHandler(handler)
    try:
        yield
    finally:
        olympus_logger.removeHandler(handler)
        config.update("olympus_log_compiles", before)
