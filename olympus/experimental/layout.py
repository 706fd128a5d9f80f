"""`olympus.experimental.layout`: JAX's names for an array's memory layout.

olympus places every array in XLA's default (row-major) layout and has no way
to ask for another, so these classes describe layouts without changing any:
code that inspects them (flax maps shardings through `Format`) works, and a
`Layout` with an explicit order other than row-major is refused.
"""

from __future__ import annotations

import dataclasses
from typing import Any


class LayoutError(ValueError):
    """A layout olympus cannot place arrays in (only row-major is supported)."""


@dataclasses.dataclass(frozen=True)
class Layout:
    """The order of an array's dimensions in memory, most major first;
    `None` means the default (row-major). A value: equal, hashed and printed
    by its order."""

    major_to_minor: tuple[int, ...] | None = None

    def __post_init__(self):
        if self.major_to_minor is None:
            return
        order = tuple(int(d) for d in self.major_to_minor)
        if order != tuple(range(len(order))):
            raise LayoutError(
                f"Layout(major_to_minor={order}): olympus places arrays "
                f"row-major only, i.e. major_to_minor={tuple(range(len(order)))} "
                f"or None"
            )
        object.__setattr__(self, "major_to_minor", order)


@dataclasses.dataclass(frozen=True, repr=False)
class Format:
    """A layout together with a sharding (JAX's `Format(layout, sharding)`);
    a value, equal and hashed by both.

    >>> from olympus.experimental.layout import Format, Layout
    >>> Format(Layout(), None).layout
    Layout(major_to_minor=None)
    """

    layout: Layout | None = None
    sharding: Any = None

    def __post_init__(self):
        if self.layout is None:
            object.__setattr__(self, "layout", Layout())

    def __repr__(self) -> str:
        return f"Format({self.layout!r}, {self.sharding!r})"


__all__ = ["Format", "Layout", "LayoutError"]
