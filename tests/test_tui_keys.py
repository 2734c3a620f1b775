"""Keys typed ahead of a sheet (issue 31): ``s``, ``escape``, ``enter`` typed within 50 ms in the
fleet switched it. Two things went wrong. Textual's terminal parser took ESC then CR within its
wait for an escape sequence (100 ms) as Alt+Enter and dropped the Alt: the sheet got a plain
``enter``, never the ``escape``. And a key typed before the sheet was on screen, reaching the app
once the sheet had focused its confirm button, confirmed what the user had not seen.

Here: a real ``segue tui`` in tmux is typed ``s``, ``escape``, ``enter`` 20 ms apart; the parser
keeps the escape; a key stamped before a sheet's first paint is no answer to it (the switch
sheet, a question, a text prompt, the key help), while ``escape`` closes a sheet however early
it comes and an ``enter`` typed with the sheet in view confirms as before."""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot

from segue.store import open_store
from segue.tui.app import SegueApp
from segue.tui.batch import BatchSheet
from segue.tui.common import AskText, Help, Question, Sheet
from segue.tui.keys import EscapeKeptParser
from segue_testbed.fixtures import all_fixtures
from segue_testbed.tmux_lab import TmuxLab
from tests.test_fleet import home
from tests.test_tui import make_app, run, sessions_of, text, until

__all__ = ["home"]

CHARACTERS = {"enter": "\r", "escape": "\x1b"}
FIXTURES = all_fixtures()


def typed(app: SegueApp, key: str) -> events.Key:
    """A key as the terminal driver makes it: stamped with the moment it is read."""
    event = events.Key(key, CHARACTERS.get(key, key))
    event.set_sender(app)
    return event


def deliver(app: SegueApp, *keys: events.Key) -> None:
    """Into the app's queue, without waiting for the app to take them (as the driver does)."""
    for key in keys:
        app.post_message(key)


def batches(env: dict[str, str]) -> list[Any]:
    with open_store(env=env) as store:
        return list(store.list_batches())


async def fleet_selected(pilot: Pilot[Any]) -> None:
    """The two parked Claude Code sessions, filtered and selected."""
    await pilot.press("slash", *"claude", "enter", "a")
    await pilot.pause(0.1)


def test_escape_kept_before_a_named_key_typed_within_the_escape_wait() -> None:
    def keys(*chunks: str) -> list[str]:
        parser = EscapeKeptParser()
        out: list[Any] = []
        for chunk in chunks:
            out += parser.feed(chunk)
            time.sleep(0.02)
        time.sleep(0.15)  # past Textual's wait for the rest of an escape sequence
        out += parser.tick()
        return [e.key for e in out if isinstance(e, events.Key)]

    assert keys("s", "\x1b", "\r") == ["s", "escape", "enter"]
    assert keys("\x1b", " ") == ["escape", "space"]
    assert keys("\x1b") == ["escape"]
    assert keys("\x1ba") == ["alt+a"]  # Alt with a letter is still one key
    assert keys("\x1b[A") == ["up"]  # and a sequence still a key
    assert keys("\x1b[27u") == ["escape"]  # (the kitty keyboard protocol's escape)


def test_an_enter_typed_before_the_switch_sheet_was_shown_confirms_nothing(
    home: dict[str, str],
) -> None:
    """The app busy: ``s`` and ``enter`` typed, the enter taken once the sheet is up with its
    confirm button focused. It confirms nothing; an ``enter`` typed then switches."""
    app = make_app(home)
    before = sessions_of(home, "codex")

    async def body(pilot: Pilot[Any]) -> None:
        await fleet_selected(pilot)
        ahead = [typed(app, "s"), typed(app, "enter")]
        deliver(app, ahead[0])
        await until(pilot, lambda: isinstance(app.screen, BatchSheet), "the switch sheet")
        sheet = app.screen
        await until(pilot, lambda: "to switch" in text(app, "#head"), "the plan")
        await pilot.pause(0.2)
        assert app.focused is not None and app.focused.id == "confirm"
        deliver(app, ahead[1])
        await pilot.pause(1.0)
        assert app.screen is sheet
        assert "Would switch 2 agents to Codex" in text(app, "#tally"), text(app, "#tally")
        assert sessions_of(home, "codex") == before
        assert isinstance(sheet, BatchSheet) and sheet.shown

        await pilot.press("enter")  # typed with the plan in view: it goes ahead
        await until(pilot, lambda: "Switched" in text(app, "#tally"), "the tally", 120)
        assert "Switched 2 agents to Codex: 2 native" in text(app, "#tally")

    run(app, body)
    assert len(sessions_of(home, "codex") - before) == 2
    assert len(batches(home)) == 1


def test_s_escape_enter_typed_20_ms_apart_switches_nothing(home: dict[str, str]) -> None:
    """Into the app's queue as typed: the escape, handled in order, closes the sheet."""
    app = make_app(home)
    before = sessions_of(home, "codex")

    async def body(pilot: Pilot[Any]) -> None:
        await fleet_selected(pilot)
        for key in ("s", "escape", "enter"):
            deliver(app, typed(app, key))
            await asyncio.sleep(0.02)
        await pilot.pause(3.0)  # (a confirmed switch would be running by now)
        assert not any(isinstance(s, BatchSheet) for s in app.screen_stack), app.screen_stack

    run(app, body)
    assert sessions_of(home, "codex") == before
    assert not batches(home)


SHEETS: dict[str, tuple[Callable[[], Sheet[Any]], tuple[str, ...], Any]] = {
    # a sheet, the keys that answer it, and the answer they give
    "question": (
        lambda: Question("Roll back to run 2?", "…", yes="Roll back"),
        ("enter", "y"),
        True,
    ),
    "ask": (lambda: AskText("Roll back to run", "the run to go back to", "2"), ("enter",), "2"),
    "help": (lambda: Help([("b", "Rollback")]), ("q",), None),
}


@pytest.mark.parametrize("kind", list(SHEETS))
def test_every_sheet_takes_no_key_typed_before_it_was_shown_but_escape(
    home: dict[str, str], kind: str
) -> None:
    """The rollback's question (and the watch's), the run prompt, the key help: the rule of the
    switch sheet. An ``escape`` typed before a sheet was shown still closes it."""
    make, answering, answer = SHEETS[kind]
    app = make_app(home)
    answers: list[Any] = []

    async def body(pilot: Pilot[Any]) -> None:
        def gone(sheet: Sheet[Any]) -> Callable[[], bool]:
            return lambda: app.screen is not sheet

        async def up(early: str) -> tuple[Sheet[Any], events.Key]:
            key = typed(app, early)  # typed before the sheet came up
            sheet = make()
            app.push_screen(sheet, answers.append)
            await until(pilot, lambda: app.screen is sheet and sheet.shown, "the sheet")
            await pilot.pause(0.1)
            return sheet, key

        for early in answering:
            sheet, key = await up(early)
            deliver(app, key)
            await pilot.pause(0.3)
            assert app.screen is sheet and not answers, (early, answers)
            await pilot.press(early)  # typed with the sheet in view
            await until(pilot, gone(sheet), "the answer")
            assert answers == [answer]
            answers.clear()

        sheet, key = await up("escape")
        deliver(app, key)
        await until(pilot, gone(sheet), "escape to close it")
        assert answers == [False if kind == "question" else None]

    run(app, body)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_s_escape_enter_typed_20_ms_apart_into_segue_tui_in_tmux_switches_nothing(
    home: dict[str, str], tmp_path: Path
) -> None:
    """Issue 31 as it happened: the keys through a terminal (tmux sends ESC, then CR). Only the
    recorded sessions are rows (``--under``), and no pane is relaunched whatever happens."""
    env = {**home, "LANG": "C.UTF-8", "TERM": "xterm-256color"}
    before = {p: sessions_of(home, p) for p in ("claude", "codex")}
    under = str(Path(FIXTURES[0].spec["cwd"]).parent)
    with TmuxLab(cols=140, rows=40) as lab:
        segue = [sys.executable, "-m", "segue"]
        argv = [*segue, "tui", "--offline", "--under", under, "--no-relaunch"]
        tui = lab.window("segue", argv, cwd=tmp_path, env=env)
        rows = re.compile(r"rows: \d+ running, [1-9]\d* parked")
        lab.wait_for(tui, lambda: rows.search(lab.screen(tui)) is not None, 60)
        lab.wait_for(tui, lambda: "planning" not in lab.screen(tui), 60)
        lab.tmux("send-keys", "-t", tui, "a")
        lab.wait_for(tui, "selected", 10)
        for key in ("s", "Escape", "Enter"):
            lab.tmux("send-keys", "-t", tui, key)
            time.sleep(0.02)
        time.sleep(3.0)  # (a confirmed switch would be running by now)
        screen = lab.screen(tui)
        assert not re.search(r"Switch \d+ agent|Switched", screen), screen
        lab.tmux("send-keys", "-t", tui, "q")
    assert {p: sessions_of(home, p) for p in ("claude", "codex")} == before
    assert not batches(home)
