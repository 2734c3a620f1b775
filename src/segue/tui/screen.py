"""The terminal ``segue tui`` draws on (Textual draws on ``sys.__stderr__`` whatever it is).

Its keys come from stdin, which must be a terminal. It draws on stderr when that is a terminal,
else on stdout when that is one (``segue tui 2>log``: the screen is not written into the log),
else on the terminal stdin is (``segue tui >out 2>log``). Without a terminal to draw on, segue
tui refuses in one line. Textual is not loaded here: the command checks before it loads it.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NamedTuple, TextIO

if TYPE_CHECKING:
    from textual.driver import Driver

__all__ = ["NEEDS_A_TERMINAL", "ScreenOut", "driver_drawing_on", "screen_out"]

NEEDS_A_TERMINAL = "segue tui needs a terminal (for scripts: segue agents, segue switch)"


class ScreenOut(NamedTuple):
    """Where the screen is drawn: ``stream``, and whether segue opened it (and closes it)."""

    stream: TextIO
    opened: bool

    def close(self) -> None:
        if self.opened:
            self.stream.close()


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and os.isatty(stream.fileno())
    except (OSError, ValueError):  # (closed, or no descriptor)
        return False


def screen_out() -> ScreenOut | None:
    """The terminal to draw on, or None when there is none (or stdin, the keys, is none)."""
    keys = sys.__stdin__
    if not _is_terminal(keys):
        return None
    for stream in (sys.__stderr__, sys.__stdout__):
        if _is_terminal(stream):
            assert stream is not None
            return ScreenOut(stream, opened=False)
    assert keys is not None
    try:  # the terminal the keys come from
        name = os.ttyname(keys.fileno())
        opened = open(name, "w", encoding="utf-8", errors="replace")  # noqa: SIM115
    except OSError:
        return None
    if not _is_terminal(opened):
        opened.close()
        return None
    return ScreenOut(opened, opened=True)


def driver_drawing_on(stream: TextIO, default: type[Driver]) -> type[Driver]:
    """Textual's terminal driver (``default``), drawing on ``stream`` and sized by it. Another
    driver (Windows, or one ``$TEXTUAL_DRIVER`` names) is kept as it is."""
    from textual.drivers.linux_driver import LinuxDriver

    if not issubclass(default, LinuxDriver) or stream is sys.__stderr__:
        return default
    base: type[LinuxDriver] = default

    class OnTerminal(base):  # type: ignore[valid-type,misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            self._file = stream

        def _get_terminal_size(self) -> tuple[int, int]:
            try:
                size = os.get_terminal_size(stream.fileno())
            except (OSError, ValueError):
                return super()._get_terminal_size()  # type: ignore[no-any-return]
            return size.columns or 80, size.lines or 25

    return OnTerminal
