"""`olympus.experimental.layout`: JAX's names for an array's memory layout.

olympus places every array in XLA's default (row-major) layout and has no way
to ask for another, so these classes describe layouts without changing any:
code that inspects them (flax maps shardings through `Format`) works, and a
`Layout` with an explicit order other than row-major is refused.
"""

from __future__ import annotations

from typing import Any


class LayoutError(ValueError):
    """A layout olympus cannot place arrays in (only row-major is supported)."""


class Layout:
    """The order of an array's dimensions in memory, most major first;
    `None` means the default (row-major)."""

    def __init__(self, major_to_minor: tuple[int, ...] | None = None):
        if major_to_minor is not None:
            order = tuple(int(d) for d in major_to_minor)
            if order != tuple(range(len(order))):
                raise LayoutError(
                    f"Layout(major_to_minor={order}): olympus places arrays "
                    f"row-major only, i.e. major_to_minor={tuple(range(len(order)))} "
                    f"or None"
                )
            major_to_minor = order
        self.major_to_minor = major_to_minor

    def __eq__(self, other) -> bool:
        return isinstance(other, Layout) and self.major_to_minor == other.major_to_minor

    def __hash__(self) -> int:
        return hash(self.major_to_minor)

    def __repr__(self) -> str:
        return f"Layout(major_to_minor={self.major_to_minor})"


class Format:
    """A layout together with a sharding (JAX's `Format(layout, sharding)`).

    >>> from olympus.experimental.layout import Format, Layout
    >>> Format(Layout(), None).layout
    Layout(major_to_minor=None)
    """

    def __init__(self, layout: Layout | None = None, sharding: Any = None):
        self.layout = layout if layout is not None else Layout()
        self.sharding = sharding

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Format)
            and self.layout == other.layout
            and self.sharding == other.sharding
        )

    def __hash__(self) -> int:
        return hash((self.layout, self.sharding))

    def __repr__(self) -> str:
        return f"Format({self.layout!r}, {self.sharding!r})"


__all__ = ["Format", "Layout", "LayoutError"]
