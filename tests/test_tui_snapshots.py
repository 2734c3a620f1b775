"""SVG snapshots of each screen of ``segue tui`` over the recorded sessions, compared with the
ones checked in (pytest-textual-snapshot; ``--snapshot-update`` rewrites them after a change a
person has looked at). The fleet screen's snapshot is also the README's screenshot.

The store's ids (and the ids of the Codex sessions a switch writes) are made from a fixed clock
and no randomness here, so a batch, a thread or a session has the same id at every run.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

import segue.formats.codex.fork as codex_fork
import segue.formats.codex.writer as codex_writer
import segue.store.ids as ids
from segue.tui.batch import BatchSheet
from segue.tui.returns import ReturnScreen
from segue.tui.thread import ThreadScreen
from tests.test_tui import NOW, Clock, home, loaded, make_app, text, until, utc

__all__ = ["home", "utc"]  # the fixtures these tests take from tests/test_tui.py

SNAPSHOTS = Path(__file__).parent / "__snapshots__" / "test_tui_snapshots"
README_SHOT = Path(__file__).parents[1] / "docs" / "images" / "tui-fleet.svg"

Compare = Callable[..., bool]


class _Time:
    def __init__(self) -> None:
        self._ns = itertools.count(int(NOW.timestamp() * 1e9), 1_000_000)

    def time_ns(self) -> int:
        return next(self._ns)


@pytest.fixture(autouse=True)
def fixed_ids(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(ids, "time", _Time())
    monkeypatch.setattr(ids, "_random_bits", lambda n: 0)
    monkeypatch.setattr(ids, "_last_ms", 0)
    monkeypatch.setattr(ids, "_counter", 0)
    # the Codex sessions a switch writes are named the same way
    fixed = lambda now=None: ids.new_id()  # noqa: E731
    monkeypatch.setattr(codex_writer, "uuid7", fixed)
    monkeypatch.setattr(codex_fork, "uuid7", fixed)
    yield


def test_fleet(snap_compare: Compare, home: dict[str, str]) -> None:
    assert snap_compare(make_app(home), terminal_size=(120, 30), run_before=loaded)


def test_fleet_at_80_by_24(snap_compare: Compare, home: dict[str, str]) -> None:
    assert snap_compare(make_app(home), terminal_size=(80, 24), run_before=loaded)


def test_fleet_filtered_and_selected(snap_compare: Compare, home: dict[str, str]) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await loaded(pilot)
        await pilot.press("slash", *"codex", "enter", "a")

    assert snap_compare(make_app(home), terminal_size=(120, 30), run_before=before)


async def _sheet(pilot: Pilot[Any]) -> None:
    await loaded(pilot)
    await pilot.press("slash", *"claude", "enter", "a", "s")
    await until(pilot, lambda: isinstance(pilot.app.screen, BatchSheet), "the switch sheet")
    await until(pilot, lambda: "to switch" in text(pilot.app, "#head"), "the plan")  # type: ignore[arg-type]
    await pilot.pause(0.2)


def test_switch_sheet(snap_compare: Compare, home: dict[str, str]) -> None:
    assert snap_compare(make_app(home), terminal_size=(120, 36), run_before=_sheet)


def test_switch_sheet_at_80_by_24(snap_compare: Compare, home: dict[str, str]) -> None:
    assert snap_compare(make_app(home), terminal_size=(80, 24), run_before=_sheet)


def test_switch_done(snap_compare: Compare, home: dict[str, str]) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await _sheet(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: "Switched" in text(pilot.app, "#tally"), "the tally", 120)  # type: ignore[arg-type]
        await pilot.pause(0.3)

    assert snap_compare(make_app(home), terminal_size=(120, 36), run_before=before)


def test_return_screen(snap_compare: Compare, home: dict[str, str]) -> None:
    clock = Clock()

    async def before(pilot: Pilot[Any]) -> None:
        await _sheet(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: "Switched" in text(pilot.app, "#tally"), "the tally", 120)  # type: ignore[arg-type]
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.2)
        await loaded(pilot)
        await pilot.press("r")
        await until(pilot, lambda: isinstance(pilot.app.screen, ReturnScreen), "the returns")
        await until(pilot, lambda: "enter:" in text(pilot.app, "#note"), "the batches")  # type: ignore[arg-type]
        clock.now = NOW + timedelta(hours=2)  # Claude Code's window (22:51) has reset
        await pilot.pause(1.2)  # (the fleet's countdown ticks each second: it has seen the reset)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, BatchSheet), "the return sheet")
        await until(pilot, lambda: "to switch" in text(pilot.app, "#head"), "its plan")  # type: ignore[arg-type]
        table = pilot.app.screen.query_one("#planned", DataTable)
        await until(pilot, lambda: table.row_count > 0, "its rows")
        # (the header is drawn at the columns' widths once laid out with the rows: under load
        # the snapshot caught it drawn at the empty table's)
        await until(
            pilot,
            lambda: table.columns[table.ordered_columns[0].key].get_render_width(table) > 8,
            "the widths",
        )
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.3)

    assert snap_compare(make_app(home, clock), terminal_size=(120, 36), run_before=before)


def test_thread_view(snap_compare: Compare, home: dict[str, str]) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await loaded(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, ThreadScreen), "the thread")
        screen = pilot.app.screen
        assert isinstance(screen, ThreadScreen)
        await until(pilot, lambda: "adopt" in text(pilot.app, "#head"), "no thread yet")  # type: ignore[arg-type]
        await pilot.press("t")
        await until(pilot, lambda: screen.view is not None, "its runs")
        await pilot.wait_for_scheduled_animations()  # (under load, the tables drew late)
        await pilot.pause(0.5)

    assert snap_compare(make_app(home), terminal_size=(120, 30), run_before=before)


def test_keys(snap_compare: Compare, home: dict[str, str]) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await loaded(pilot)
        await pilot.press("question_mark")
        await pilot.pause(0.2)

    assert snap_compare(make_app(home), terminal_size=(100, 30), run_before=before)


def test_the_readme_shows_the_fleet_snapshot() -> None:
    fleet = SNAPSHOTS / "test_fleet.raw"
    assert README_SHOT.read_bytes() == fleet.read_bytes(), (
        "copy tests/__snapshots__/test_tui_snapshots/test_fleet.raw to docs/images/tui-fleet.svg"
    )
