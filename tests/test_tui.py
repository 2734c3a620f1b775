"""``segue tui`` driven by Textual's pilot over the recorded sessions of both CLIs: the fleet
screen, the filter, the selection, the switch sheet (nothing happens before its confirmation),
the return, the thread view, the watch panel, the keys, and failures as one notification."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, DataTable, RadioButton, RichLog, Static

from segue.store import open_store
from segue.tui.app import SegueApp
from segue.tui.batch import BatchSheet
from segue.tui.common import Help, Question
from segue.tui.fleet import FleetScreen
from segue.tui.returns import ReturnScreen
from segue.tui.state import TuiState
from segue.tui.thread import ThreadScreen
from segue.watch import Mode, WatchPolicy
from segue_testbed.fixtures import all_fixtures
from segue_testbed.postgres import PostgresServer
from tests.test_fleet import home

__all__ = ["home"]  # every recorded session of both providers in one scratch home

FIXTURES = all_fixtures()
# A moment when the recorded limits had not reset yet (Claude's rate_limited resets 22:51 that
# day; the Codex ones in 2030), as in tests/test_fleet.py.
NOW = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)
SIZE = (120, 36)


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local times shown in UTC, whatever zone the machine is in."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


def make_app(
    env: dict[str, str],
    clock: Callable[[], datetime] | None = None,
    *,
    redact: bool = False,
    **options: Any,
) -> SegueApp:
    policy = WatchPolicy(
        move=Mode.ASK, returns=Mode.NEVER, remote=False, relaunch=False, redact_secrets=redact
    )
    return SegueApp(
        TuiState(
            **options,
            env=env,
            policy=policy,
            remote=False,
            clock=clock or (lambda: NOW),
            agents=lambda: [],
            refresh_every=0,  # read again only when told (each test says when)
        )
    )


async def until(pilot: Pilot[Any], ready: Callable[[], bool], what: str, wait: float = 60) -> None:
    deadline = time.monotonic() + wait
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def fleet(app: SegueApp) -> FleetScreen:
    return next(s for s in app.screen_stack if isinstance(s, FleetScreen))


def text(app: SegueApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def rows(table: DataTable[Any]) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(n)] for n in range(table.row_count)]


def planned(app: SegueApp) -> bool:
    screen = fleet(app)
    view = screen.view
    return view is not None and all(
        r.label is not None or r.plan_note is not None or r.problem is not None for r in view.rows
    )


async def loaded(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, SegueApp)
    await until(pilot, lambda: planned(app), "the fleet and its plans")
    await pilot.pause(0.1)


def run(app: SegueApp, body: Callable[[Pilot[Any]], Awaitable[None]]) -> None:
    async def go() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot)
            await body(pilot)

    asyncio.run(go())


def sessions_of(env: dict[str, str], provider: str) -> set[Path]:
    folder = Path(env["HOME"]) / (".claude/projects" if provider == "claude" else ".codex")
    pattern = "*.jsonl"
    return {p for p in folder.rglob(pattern)}


def test_the_fleet_screen_shows_usage_and_every_stuck_agent_with_its_plan(
    home: dict[str, str],
) -> None:
    clock = Clock()
    app = make_app(home, clock)

    async def body(pilot: Pilot[Any]) -> None:
        banners = [str(w.render()) for w in app.screen.query(".banner").results(Static)]
        assert any(b.startswith("Codex") and "exhausted" in b for b in banners), banners
        claude = next(b for b in banners if b.startswith("Claude Code"))
        assert "resets in 1h 51m" in claude and "22:51 UTC" in claude, claude
        table = app.screen.query_one("#agents", DataTable)
        shown = rows(table)
        parked = [r for r in shown if "parked" in r[4]]
        assert {r[3] for r in parked} == {
            "claude-api_key_rate…",
            "claude-rate_limited",
            "codex-stuck_agent",
            "codex-usage_limited",
        }
        assert all(r[5].startswith("native") for r in parked), shown
        assert "4 parked" in text(app, "#status")
        # the countdown is live: a minute later, the row and the banner say so
        clock.now = NOW + timedelta(minutes=1)
        await pilot.pause(1.3)
        later = rows(table)
        assert any("1h 50m" in r[4] for r in later), later

    run(app, body)


def test_filter_select_and_the_switch_sheet_change_nothing_until_confirmed(
    home: dict[str, str],
) -> None:
    app = make_app(home)
    before = sessions_of(home, "codex")

    async def body(pilot: Pilot[Any]) -> None:
        table = app.screen.query_one("#agents", DataTable)
        await pilot.press("slash", *"clauderate")
        await pilot.pause(0.2)
        assert [r[3] for r in rows(table)][:1] == ["claude-rate_limited"]
        await pilot.press("escape")  # the filter goes
        await pilot.pause(0.1)
        assert table.row_count == 4
        await pilot.press("space")
        assert len(fleet(app).selected) == 1
        await pilot.press("slash", *"claude", "enter", "a")
        await pilot.pause(0.1)
        assert {r.provider.value for r in fleet(app).chosen()} == {"claude"}
        assert "2 selected" in text(app, "#status") or "3 selected" in text(app, "#status")
        await pilot.press("escape", "escape")  # the filter, then the selection
        await pilot.pause(0.1)
        assert not fleet(app).selected
        await pilot.press("slash", *"claude", "enter", "a", "s")
        await until(pilot, lambda: isinstance(app.screen, BatchSheet), "the switch sheet")
        sheet = app.screen
        assert app.focused is not None and app.focused.id == "confirm"
        await until(pilot, lambda: "to switch" in text(app, "#head"), "the plan")
        assert "Claude Code → Codex" in text(app, "#head")
        assert "Would switch 2 agents to Codex: 2 native" in text(app, "#tally")
        await pilot.press("escape")  # cancelled
        await pilot.pause(0.2)
        assert app.screen is not sheet and isinstance(app.screen, FleetScreen)
        assert sessions_of(home, "codex") == before
        assert not (Path(home["SEGUE_DATA_DIR"]) / "segue.db").exists()

    run(app, body)


def test_a_confirmed_switch_shows_progress_and_the_tally_then_comes_back(
    home: dict[str, str],
) -> None:
    clock = Clock()
    app = make_app(home, clock)
    before = sessions_of(home, "codex")

    async def body(pilot: Pilot[Any]) -> None:
        await pilot.press("slash", *"claude", "enter", "a", "s")
        await until(pilot, lambda: isinstance(app.screen, BatchSheet), "the switch sheet")
        await pilot.press("enter")  # confirmed before the plan is made: it goes ahead after
        await until(pilot, lambda: "Switched" in text(app, "#tally"), "the tally", 120)
        assert "Switched 2 agents to Codex: 2 native" in text(app, "#tally")
        done = rows(app.screen.query_one("#planned", DataTable))
        assert all(r[2].startswith("✓ native") for r in done), done
        assert app.focused is not None and app.focused.id == "confirm"  # now: Close
        await pilot.pause(0.3)  # a button takes no second press within 0.2 s
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, FleetScreen), "the fleet")
        await loaded(pilot)
        table = app.screen.query_one("#agents", DataTable)
        moved = [r for r in rows(table) if r[2] == "Claude Code"]
        assert all(r[5].startswith("moved to codex in batch") for r in moved), moved
        written = sessions_of(home, "codex") - before
        assert len(written) == 2

        # the return: the batch, what each did there, and back
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ReturnScreen), "the return screen")
        batches = app.screen.query_one("#batches", DataTable)
        await until(pilot, lambda: batches.row_count == 1, "the batch")
        assert rows(batches)[0][2:4] == ["Claude Code → Codex", "2"]
        # at 21:00 Claude Code's window (the recorded limit) resets only at 22:51: the return
        # sheet says so, and cannot be confirmed
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, BatchSheet), "the return sheet")
        await until(pilot, lambda: "still exhausted" in text(app, "#head"), "the refusal")
        assert "2026-11-29 22:51 UTC" in text(app, "#head") and "--force" in text(app, "#head")
        assert app.screen.query_one("#confirm", Button).disabled
        await pilot.press("enter")  # the focus is on Cancel
        await until(pilot, lambda: isinstance(app.screen, ReturnScreen), "the return screen")
        with open_store(env=home) as store:
            assert len(store.list_batches()) == 1  # nothing moved back
        clock.now = NOW + timedelta(hours=2)  # the window has reset
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, BatchSheet), "the return sheet")
        await until(pilot, lambda: "to switch" in text(app, "#head"), "the return plan")
        plan = rows(app.screen.query_one("#planned", DataTable))
        assert all(r[2].startswith("nothing new there · native") for r in plan), plan
        await pilot.press("enter")
        await until(pilot, lambda: "Switched" in text(app, "#tally"), "the return's tally", 120)
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReturnScreen), "the return screen")
        await until(pilot, lambda: batches.row_count == 0, "no batch left to return")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, FleetScreen), "the fleet")
        await loaded(pilot)
        again = [r for r in rows(table) if r[2] == "Claude Code"]
        assert not any(r[5].startswith("moved") for r in again), again

    run(app, body)
    with open_store(env=home) as store:
        listed = store.list_batches()
    assert len(listed) == 2 and {str(s.to_provider) for s in listed} == {"codex", "claude"}


def test_the_thread_view_adopts_the_session_and_shows_its_runs(home: dict[str, str]) -> None:
    app = make_app(home)

    async def body(pilot: Pilot[Any]) -> None:
        await pilot.press("slash", *"clauderate", "enter")
        await pilot.pause(0.1)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ThreadScreen), "the thread view")
        screen = app.screen
        assert isinstance(screen, ThreadScreen)
        # as segue thread show: a session no thread holds is said so, and t adopts it
        await until(pilot, lambda: "segue thread adopt" in text(app, "#head"), "the refusal")
        await pilot.press("t")
        await until(pilot, lambda: screen.view is not None, "the thread")
        runs = rows(screen.query_one("#runs", DataTable))
        assert [(r[0], r[1], r[4]) for r in runs][-1][1:] == ("claude", "failed")
        cover = rows(screen.query_one("#coverage", DataTable))
        assert cover[0][:2] == ["L1", "claude"]
        await pilot.press("b")  # a rollback asks for the run, then previews
        await pilot.pause(0.2)
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert isinstance(app.screen, ThreadScreen)
        await pilot.press("b", "enter")
        # no checkpoint of this folder: one line, no traceback, nothing changed
        await until(pilot, lambda: bool(app._notifications), "the refusal")
        said = [n.message for n in app._notifications]
        assert any("no snapshot of this folder" in m for m in said), said
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, FleetScreen), "back on the fleet")

    run(app, body)


def test_a_broken_session_is_a_row_with_its_problem(home: dict[str, str]) -> None:
    folder = Path(home["HOME"]) / ".claude" / "projects" / "-tmp-broken"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "0b7e2d3c-1111-4222-8333-944445555666.jsonl")  # never a hang
    (folder / "0b7e2d3c-1111-4222-8333-944445555667.jsonl").symlink_to(folder / "gone")
    app = make_app(home)

    async def body(pilot: Pilot[Any]) -> None:
        table = app.screen.query_one("#agents", DataTable)
        broken = [r for r in rows(table) if r[1] == "✗"]
        assert [r[7] for r in broken] == ["0b7e2d3c-1111"] * 2, rows(table)
        said = sorted(r[5] for r in broken)
        assert "is a FIFO, not a regular session file" in said[0], said
        assert "No such file" in said[1], said
        assert table.row_count == 6  # and the others are still there

    run(app, body)


def test_watch_runs_in_the_panel_and_asks_before_a_move(home: dict[str, str]) -> None:
    app = make_app(home)
    before = sessions_of(home, "claude")

    async def body(pilot: Pilot[Any]) -> None:
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, Question), "watch's question", 120)
        assert "Would switch" in text(app, ".details")
        # it came up unasked: an enter meant for another screen never says yes
        assert app.focused is not None and app.focused.id == "no"
        await pilot.press("enter")  # declined
        log = fleet(app).query_one("#watchlog", RichLog)
        await until(
            pilot, lambda: any("move_declined" in str(line) for line in log.lines), "the log"
        )
        assert "watching" in text(app, "#status")
        await pilot.press("w")
        await until(pilot, lambda: not app.state.watching, "watch to stop")
        assert any("watch: stopped" in str(line) for line in log.lines)

    run(app, body)
    assert sessions_of(home, "claude") == before


def test_help_lists_every_key_and_quit_ends(home: dict[str, str]) -> None:
    app = make_app(home)

    async def body(pilot: Pilot[Any]) -> None:
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, Help), "the keys")
        keys = rows(app.screen.query_one("#keys", DataTable))
        assert {"/", "space", "a", "s", "r", "w", "q", "?"} <= {k for k, _ in keys}
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, FleetScreen), "the fleet")
        await pilot.press("q")
        await pilot.pause(0.2)
        assert not app.is_running

    run(app, body)


def test_a_store_that_cannot_be_read_is_a_line_never_a_traceback(home: dict[str, str]) -> None:
    store = Path(home["SEGUE_DATA_DIR"]) / "segue.db"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"this is not a database\n" * 64)
    app = make_app(home)

    async def body(pilot: Pilot[Any]) -> None:
        assert fleet(app).view is not None and fleet(app).view.rows  # type: ignore[union-attr]
        await pilot.press("r")
        await pilot.pause(0.5)
        await until(
            pilot,
            lambda: isinstance(app.screen, ReturnScreen) and "segue" in text(app, "#note"),
            "the return screen's line",
        )
        note = text(app, "#note")
        assert "\n" not in note.strip() and "Traceback" not in note, note

    run(app, body)
    assert store.read_bytes().startswith(b"this is not a database")


def test_segue_tui_without_a_terminal_says_so(home: dict[str, str]) -> None:
    from tests.segue_cli import segue

    done = segue(["tui"], {**home, "PATH": os.environ["PATH"]})
    assert done.returncode == 1 and "needs a terminal" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    bad = segue(["tui", "--return", "sometimes"], {**home, "PATH": os.environ["PATH"]})
    assert bad.returncode != 0 and "--return 'sometimes'" in bad.stderr, bad.stderr


def test_the_state_runs_one_watch_loop_at_a_time_and_q_waits_only_for_the_others() -> None:
    """What the screens share, without an app: a loop started while the last one still runs
    its pass waits for it, or ends if stopped first; a switch keeps ``q`` from ending the app,
    the watch loop does not (it stops after its pass)."""
    state = TuiState(env={}, clock=lambda: NOW, agents=list)
    assert state.scan_agents() == [] and state.clock() == NOW and not state.watching
    first = state.start_watch()
    turns: list[bool] = []
    in_pass, end_pass = threading.Event(), threading.Event()

    def loop(stop: threading.Event) -> None:
        with state.watch_turn(stop) as turn:
            turns.append(turn)
            if turn:
                with state.watch_writing():
                    in_pass.set()
                    end_pass.wait(10)

    old = threading.Thread(target=loop, args=(first,))
    old.start()
    assert in_pass.wait(10) and state.busy() == [] and state.writers() == [old]
    state.stop_watch()
    second = state.start_watch()
    assert state.watching and first.is_set()
    late = threading.Thread(target=loop, args=(second,))
    late.start()
    time.sleep(0.3)
    assert turns == [True]  # the new loop waits for the old one's pass
    state.stop_watch()
    late.join(10)
    assert turns == [True, False]  # stopped before its turn came: it never ran
    end_pass.set()
    old.join(10)
    with state.writing():
        assert state.busy() == [threading.current_thread()]
    assert state.writers() == []


def test_segue_tui_watch_starts_the_loop_once_the_screen_is_up(home: dict[str, str]) -> None:
    app = make_app(home, start_watching=True)

    async def body(pilot: Pilot[Any]) -> None:
        await until(pilot, lambda: isinstance(app.screen, Question), "watch's question", 120)
        await pilot.press("n")
        log = fleet(app).query_one("#watchlog", RichLog)
        await until(pilot, lambda: any("move_declined" in str(x) for x in log.lines), "the log")
        assert log.lines[0].text.startswith("watch: on")
        await pilot.press("w", "w")  # off and on again while its pass may still run
        await until(pilot, lambda: app.state.watching, "the loop again")
        await pilot.pause(1.0)
        said = [n.message for n in app._notifications]
        assert not any("already running" in m for m in said), said

    run(app, body)


def test_a_plan_for_a_direction_no_longer_chosen_never_runs(home: dict[str, str]) -> None:
    from segue.fleet import batch

    app = make_app(home)
    slow = batch.plan_fleet

    def plan_slowly(*args: Any, **kwargs: Any) -> Any:
        time.sleep(1.0)
        return slow(*args, **kwargs)

    async def body(pilot: Pilot[Any]) -> None:
        batch.plan_fleet = plan_slowly
        try:
            await pilot.press("a", "s")  # agents of both providers: two directions
            await until(pilot, lambda: isinstance(app.screen, BatchSheet), "the sheet")
            await pilot.press("enter")  # yes, while the first direction is being planned
            other = [b for b in app.screen.query(RadioButton) if not b.value]
            other[0].value = True  # the other direction chosen
            await pilot.pause(3.0)
            # the yes was for the direction shown then: nothing ran, the new plan is shown
            assert "Switched" not in text(app, "#tally")
            assert "to switch" in text(app, "#head")
        finally:
            batch.plan_fleet = slow

    run(app, body)
    assert not (Path(home["SEGUE_DATA_DIR"]) / "segue.db").exists()


@pytest.mark.parametrize("args", [["--quiet", "inf"], ["--quiet", "1e20"], ["--interval", "inf"]])
def test_spans_no_clock_takes_are_one_line(home: dict[str, str], args: list[str]) -> None:
    from tests.segue_cli import segue

    done = segue(["tui", *args], {**home, "PATH": os.environ["PATH"]})
    assert done.returncode == 2 and "give a number of seconds" in done.stderr, done.stderr
    watched = segue(["watch", "--once", *args], {**home, "PATH": os.environ["PATH"]})
    assert watched.returncode == 2 and "give a number of seconds" in watched.stderr
    unit = segue(["watch", "--print-unit", *args], {**home, "PATH": os.environ["PATH"]})
    assert unit.returncode == 2 and unit.stdout == "", unit.stdout  # no unit that cannot start


def test_the_switch_sheet_says_what_secrets_go_and_redact_secrets_makes_them_markers(
    home: dict[str, str],
) -> None:
    from segue.transforms.secrets import marker
    from tests.test_disk_truth import _plant_last_claude_prompt
    from tests.test_hostile import KEYS

    parked = next(f for f in FIXTURES if f.name == "claude-rate_limited")
    source = Path(home["HOME"]) / Path(parked.spec["transcript"]).relative_to("home")
    key = KEYS["aws_key"]
    _plant_last_claude_prompt(source, key)
    before = sessions_of(home, "codex")

    async def sheet(pilot: Pilot[Any]) -> list[list[str]]:
        app = pilot.app
        assert isinstance(app, SegueApp)
        await pilot.press("slash", *"clauderate", "enter", "a", "s")
        await until(pilot, lambda: isinstance(app.screen, BatchSheet), "the switch sheet")
        await until(pilot, lambda: "to switch" in text(app, "#head"), "the plan")
        return rows(app.screen.query_one("#planned", DataTable))

    def said(planned: list[list[str]]) -> list[str]:  # (both rate-limited Claude sessions)
        assert len(planned) == 2, planned
        return [r[2] for r in planned if "secret" in r[2]]

    async def carried(pilot: Pilot[Any]) -> None:
        (plan,) = said(await sheet(pilot))
        assert "1 secret carried as they are (segue tui --redact-secrets)" in plan, plan
        await pilot.press("escape")

    run(make_app(home), carried)

    redacting = make_app(home, redact=True)

    async def redacted(pilot: Pilot[Any]) -> None:
        (plan,) = said(await sheet(pilot))
        assert "1 secret replaced by markers" in plan, plan
        assert "secrets replaced by markers" in text(redacting, "#head")
        await pilot.press("enter")
        await until(pilot, lambda: "Switched" in text(redacting, "#tally"), "the tally", 120)

    run(redacting, redacted)
    written = "".join(p.read_text() for p in sessions_of(home, "codex") - before)
    assert key not in written and marker("aws_key") in written


@pytest.mark.parametrize("redirected", ["stderr", "stdout and stderr"])
def test_segue_tui_draws_on_the_terminal_never_into_a_redirected_file(
    home: dict[str, str], tmp_path: Path, redirected: str
) -> None:
    """``segue tui 2>log`` draws on stdout's terminal, ``segue tui >out 2>log`` on the terminal
    its keys come from: the files get none of the screen (Textual alone draws on stderr)."""
    import fcntl
    import pty
    import struct
    import subprocess
    import sys
    import termios
    import threading

    master, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    shown = bytearray()

    def read() -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(master, 65536):
                shown.extend(chunk)

    log, out = tmp_path / "stderr", tmp_path / "stdout"
    with log.open("wb") as err, out.open("wb") as written:
        child = subprocess.Popen(
            [sys.executable, "-m", "segue", "tui", "--offline"],
            stdin=terminal,
            stdout=terminal if redirected == "stderr" else written,
            stderr=err,
            env={**home, "TERM": "xterm-256color"},
            start_new_session=True,  # (no controlling terminal: the one it draws on is stdin's)
        )
    os.close(terminal)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while b"the fleet" not in shown and child.poll() is None:
            assert time.monotonic() < deadline, (bytes(shown[-500:]), log.read_bytes()[:500])
            time.sleep(0.1)
        time.sleep(0.5)
        os.write(master, b"q")
        assert child.wait(60) == 0, log.read_bytes()[-500:]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        reader.join(10)
        os.close(master)
    assert b"\x1b[?1049h" in shown  # the alternate screen, on the terminal
    assert b"\x1b[" not in log.read_bytes() and b"\x1b[" not in out.read_bytes()
    assert log.read_bytes() == b"", log.read_bytes()[:300]


def test_the_store_the_tui_names_never_shows_its_password(
    home: dict[str, str], postgres: PostgresServer
) -> None:
    url = postgres.url("nope") + "?password=hunter2&sslpassword=k3y"
    app = make_app({**home, "SEGUE_DATABASE_URL": url})

    async def body(pilot: Pilot[Any]) -> None:
        await pilot.press("r")
        await until(
            pilot,
            lambda: isinstance(app.screen, ReturnScreen) and "nope" in text(app, "#note"),
            "the return screen's line",
        )
        note = text(app, "#note")
        assert "password=***&sslpassword=***" in note, note
        assert "hunter2" not in note and "k3y" not in note

    run(app, body)
