"""``segue tui``: the options, then :func:`segue.tui.run_tui` (Textual is loaded only here)."""

from __future__ import annotations

from typing import Annotated

from segue.cli.grammar import Option, UsageError
from segue.cli.options import RedactOption
from segue.cli.watch import MAX_SECONDS, watch_policy
from segue.model.errors import SegueError

__all__ = ["tui_command"]


def tui_command(
    under: Annotated[
        str | None, Option("--under", help="Only agents working below this directory.")
    ] = None,
    offline: Annotated[
        bool, Option("--offline", help="Only the session files; ask no usage service.")
    ] = False,
    watching: Annotated[
        bool, Option("--watch", help="Start with the watch loop on (w toggles it).")
    ] = False,
    auto: Annotated[bool, Option("--auto", help="Watch: move without asking.")] = False,
    ask: Annotated[bool, Option("--ask", help="Watch: ask once per move (default).")] = False,
    returns: Annotated[
        str, Option("--return", help="Watch: bring moved agents back: auto, ask, never.")
    ] = "ask",
    interval: Annotated[float, Option("--interval", help="Watch: seconds between passes.")] = 30.0,
    quiet: Annotated[
        float, Option("--quiet", help="Watch: seconds within which no session moves twice.")
    ] = 900.0,
    no_relaunch: Annotated[
        bool, Option("--no-relaunch", help="Do not restart the switched agents' panes.")
    ] = False,
    redact_secrets: RedactOption = False,
) -> None:
    """The whole fleet on one screen: usage, agents, switch, return, threads and the watch
    loop. ? shows every key."""
    policy = watch_policy(auto, ask, returns, quiet, under, offline, no_relaunch, redact_secrets)
    if not 0 < interval <= MAX_SECONDS:  # (nan too)
        raise UsageError(f"--interval {interval}: give a number of seconds above 0")
    from segue.tui.screen import NEEDS_A_TERMINAL, screen_out

    screen = screen_out()  # (stderr, else stdout, else stdin's terminal: never a file)
    if screen is None:
        raise SegueError(NEEDS_A_TERMINAL)
    from segue.tui import run_tui

    try:
        run_tui(
            policy=policy,
            interval=interval,
            remote=not offline,
            start_watching=watching,
            screen=screen.stream,
        )
    finally:
        screen.close()
