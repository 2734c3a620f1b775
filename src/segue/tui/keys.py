"""How keys reach ``segue tui`` from a terminal: ``escape`` is never lost.

A terminal without the kitty keyboard protocol (tmux, where the agents run, among them) sends
``escape`` as a lone ESC byte, and Alt+Enter as ESC then CR. Textual's parser (8.2.8) waits
``ESCDELAY`` (100 ms) after an ESC to tell them apart, and for a key with a name (``enter``,
``tab``, ``space``, ``backspace``, ``ctrl+…``) it then drops the Alt: ESC then CR typed within
the wait is one plain ``enter`` (Textualize/textual#6663). So ``s``, ``escape``, ``enter`` typed
quickly in the fleet reached the switch sheet as ``s``, ``enter``: the cancel was gone and the
enter confirmed the switch (issue 31).

Here ESC before a named key is what the user typed: ``escape``, then the key. Alt with a letter
stays one key (``alt+b``), as Textual makes it; no binding here is Alt with a named key. The
order is kept, so the escape closes a sheet before the key after it arrives.
"""

from __future__ import annotations

from collections.abc import Iterable
from unittest import mock

from textual import events
from textual._xterm_parser import XTermParser
from textual.driver import Driver

__all__ = ["EscapeKeptParser", "escape_kept_driver"]

ESC = "\x1b"


class EscapeKeptParser(XTermParser):
    """Textual's parser, but ESC before a named key is ``escape`` and then that key."""

    def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        if alt:  # the character after an ESC that began no sequence
            plain = list(super()._sequence_to_key_events(sequence))
            if any(len(key.key) > 1 for key in plain):  # a named key: not an alt+ chord here
                return [events.Key("escape", ESC), *plain]
        return super()._sequence_to_key_events(sequence, alt=alt)


def escape_kept_driver(default: type[Driver]) -> type[Driver]:
    """The driver ``segue tui`` runs with: Textual's own for this platform, reading a terminal
    with :class:`EscapeKeptParser` where that is Textual's Linux (and macOS) driver."""
    try:
        from textual.drivers import linux_driver
    except ImportError:  # (Windows: its console reports escape as a key of its own)
        return default
    if default is not linux_driver.LinuxDriver:
        return default

    class EscapeKeptDriver(linux_driver.LinuxDriver):
        def run_input_thread(self) -> None:
            """Textual's own, with the parser above in place of the one it names (for as long
            as it reads: one terminal driver a process)."""
            with mock.patch.object(linux_driver, "XTermParser", EscapeKeptParser):
                super().run_input_thread()

    return EscapeKeptDriver
