"""The consoles segue's commands print on: rich's, with each control character in what they
print written out as ``\\xNN`` (a transcript's title, a tool's output, a file name may hold an
escape sequence that would recolour, retitle or clear the terminal, or write its clipboard).
Line breaks stay, rich expands tabs, and drops a BEL, backspace, CR, VT or FF before it comes
here; its own styling is added after."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING

from segue.cli.options import printable

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["console", "print_table"]


def console(*, stderr: bool = False) -> Console:
    """A console for a command's output (``stderr``: for what goes beside it). Neither markup
    nor emoji codes: a file named ``:smile:.txt`` is printed as it is named."""
    return _console_class()(
        stderr=stderr, highlight=False, soft_wrap=True, markup=False, emoji=False
    )


@cache
def _console_class() -> type[Console]:
    """rich's console, imported with the first one (not at every start), printing each
    segment's text :func:`~segue.cli.options.printable`."""
    from rich.console import Console
    from rich.segment import Segment

    class _Console(Console):
        def _render_buffer(self, buffer: Iterable[Segment]) -> str:
            return super()._render_buffer(
                segment if segment.control else Segment(printable(segment.text), segment.style)
                for segment in buffer
            )

    return _Console


def print_table(
    console: Console, rows: Sequence[tuple[str, ...]], right: Collection[int] = ()
) -> None:
    """Columns padded to their widest cell (the last one left free, the ``right`` ones
    right-aligned); the first row is the heading, and a line cut at a terminal's width."""
    last = len(rows[0]) - 1
    widths = [max(len(row[c]) for row in rows) for c in range(last)]
    for n, row in enumerate(rows):
        cells = [
            row[c].rjust(widths[c]) if c in right else row[c].ljust(widths[c]) for c in range(last)
        ]
        line = "  ".join([*cells, row[last]]).rstrip()
        if console.is_terminal and len(line) > console.width:
            line = line[: console.width - 1] + "…"
        console.print(line, style="bold" if n == 0 else None, markup=False, soft_wrap=True)
