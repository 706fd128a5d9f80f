"""The table of NumPy rules, keyed by primitive name: the family modules
(rules, linalg, slicing, windowed) register into it, the interpreter reads it.

A rule takes the operands as NumPy arrays and the equation's params as
keywords, and returns an array (or a list, for multiple-result primitives).
"""

from __future__ import annotations

from typing import Callable

reference_rules: dict[str, Callable] = {}


def rule(*names: str):
    """Registers one function as the rule of each named primitive."""

    def register(fn):
        for name in names:
            reference_rules[name] = fn
        return fn

    return register
