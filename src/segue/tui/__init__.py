"""``segue tui``: the whole fleet on one screen (usage, agents, switch, return, threads, watch),
built with Textual. A face over the library: each action calls the function the matching
command calls.

    from segue.tui import run_tui

    run_tui()  # until q

Each name is imported on first use (Textual is loaded only by ``segue tui``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from segue.support.lazy import lazy_names

if TYPE_CHECKING:
    from segue.tui.app import SegueApp, run_tui

_WHERE = {"SegueApp": "segue.tui.app", "run_tui": "segue.tui.app"}

__all__ = ["SegueApp", "run_tui"]

__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
