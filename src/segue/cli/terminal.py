"""The consoles segue's commands print on: rich's, with each control character in what they
print written out as ``\\xNN`` (a transcript's title, a tool's output, a file name may hold an
escape sequence that would recolour, retitle or clear the terminal, or write its clipboard).
Line breaks stay, rich expands tabs, and drops a BEL, backspace, CR, VT or FF before it comes
here; its own styling is added after."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.segment import Segment

from segue.cli.options import printable

__all__ = ["console"]


class _Console(Console):
    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(printable(segment.text), segment.style)
            for segment in buffer
        )


def console(*, stderr: bool = False) -> Console:
    """A console for a command's output (``stderr``: for what goes beside it). Neither markup
    nor emoji codes: a file named ``:smile:.txt`` is printed as it is named."""
    return _Console(stderr=stderr, highlight=False, soft_wrap=True, markup=False, emoji=False)
