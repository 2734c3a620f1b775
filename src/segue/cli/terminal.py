"""The consoles segue's commands print on: rich's, with each control character in what they
print written out as ``\\xNN`` (a transcript's title, a tool's output, a file name may hold an
escape sequence that would recolour, retitle or clear the terminal, or write its clipboard).
Tabs and line breaks stay; rich's own styling is added after."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.segment import Segment

__all__ = ["console"]

_SHOWN = {
    c: f"\\x{c:02x}"
    for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))
    if c not in (0x09, 0x0A)  # a tab and a line break are text
}


class _Console(Console):
    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(segment.text.translate(_SHOWN), segment.style)
            for segment in buffer
        )


def console(*, stderr: bool = False) -> Console:
    """A console for a command's output (``stderr``: for what goes beside it)."""
    return _Console(stderr=stderr, highlight=False, soft_wrap=True)
