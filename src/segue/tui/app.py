"""``segue tui``: the app, its keys, and the state its screens share (:class:`TuiState`, made
here and given to each screen). Every action is a library function the commands also call; this
module only shows them."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar, TextIO

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType

from segue.tui.common import Help, Sheet
from segue.tui.fleet import FleetScreen
from segue.tui.keys import escape_kept_driver
from segue.tui.screen import driver_drawing_on
from segue.tui.state import TuiState
from segue.watch import DEFAULT_INTERVAL_S, WatchPolicy

if TYPE_CHECKING:
    from textual.driver import Driver


__all__ = ["SegueApp", "run_tui"]


class SegueApp(App[None]):
    """The fleet on one screen. ``clock`` and ``agents`` stand in for the machine's clock and
    its agents scan (tests give fixed ones); ``plan`` makes each row's dry run. What the screens
    share is one :class:`TuiState`, made here and given to each screen."""

    TITLE = "segue"
    CSS_PATH = "segue.tcss"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Keys"),
    ]

    def __init__(self, state: TuiState | None = None) -> None:
        super().__init__()
        self.state = state or TuiState()

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this platform, with ``escape`` kept before a named key (an ESC
        then ``enter`` typed within Textual's wait for an escape sequence was one ``enter``)."""
        return escape_kept_driver(super().get_driver_class())

    def on_key(self, event: events.Key) -> None:
        """A key come up from the focused widget, before any binding (the widget's, the
        screen's, the app's) is matched to it: one typed before the sheet on top was on screen
        is dropped, whichever screen it came up through (:class:`Sheet`)."""
        sheet = self.screen
        if isinstance(sheet, Sheet) and not sheet.takes(event):
            event.stop()
            event.prevent_default()  # (App's own handler, the bindings, is not run)
            self.bell()

    def on_mount(self) -> None:
        self.push_screen(FleetScreen(self.state))  # it starts the watch once it is up

    def on_unmount(self) -> None:
        self.state.stop_watch()  # however the app ends, the loop ends with it
        self.state.forget_listing()

    def action_help(self) -> None:
        if isinstance(self.screen, Help):
            return
        keys: list[tuple[str, str]] = []
        for binding in [*type(self.screen).BINDINGS, *type(self).BINDINGS]:
            if isinstance(binding, Binding) and binding.description:
                said = binding.tooltip or binding.description
                keys.append((self.get_key_display(binding), said))
        keys += [
            ("tab", "The next field or button"),
            ("mouse", "Click a key in the footer to do it; click a row, then again to open it"),
        ]
        self.push_screen(Help(keys))

    def action_quit(self) -> None:  # type: ignore[override]
        if self.state.busy():
            self.notify("A switch, rollback or fork is running; q again once it ends.")
            return
        self.state.stop_watch()  # the loop ends after the pass it is in (segue tui waits)
        self.exit()


def run_tui(
    *,
    env: Mapping[str, str] | None = None,
    policy: WatchPolicy | None = None,
    interval: float = DEFAULT_INTERVAL_S,
    remote: bool = True,
    start_watching: bool = False,
    screen: TextIO | None = None,
) -> None:
    """``segue tui``: until ``q``, drawn on ``screen`` (a terminal; default: Textual's own,
    stderr). The session listing is kept between reloads, and from one ``segue tui`` or
    ``segue watch`` to the next (a file unchanged since, by size, time and inode, is not read
    again)."""
    app = SegueApp(
        TuiState(
            env=env,
            policy=policy,
            interval=interval,
            remote=remote,
            start_watching=start_watching,  # (the fleet screen starts it once it is up)
            keep_listing=True,
        )
    )
    if screen is not None:
        app.driver_class = driver_drawing_on(screen, app.driver_class)
    loop = asyncio.new_event_loop()  # run on a loop of ours: asyncio.run would wait at the
    try:  # end for every worker thread, a listing or a store wait included
        app.run(loop=loop)
    finally:
        app.state.forget_listing()
    for thread in app.state.writers():  # a watch pass that was moving agents: let it finish
        sys.stderr.write("segue tui: waiting for the watch's pass to finish…\n")
        thread.join()
    sys.stdout.flush()
    sys.stderr.flush()
    code = app.return_code or 0
    if any(t.is_alive() and not t.daemon for t in threading.enumerate()[1:]):
        os._exit(code)  # only readers are left (a listing, a store wait): no need to wait
    if code:
        raise SystemExit(code)
