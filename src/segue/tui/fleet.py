"""The fleet screen (home): a usage banner per provider with a live countdown, and the agents
table (running agents and parked sessions, each with what a switch would do), filtered with
``/``, selected with ``space`` and ``a``, switched with ``s``; and the watch loop (``w``), run
with the same policy as ``segue watch``, its log in a panel beside the table."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.fuzzy import Matcher
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, RichLog, Static
from textual.worker import get_current_worker

from segue.model.conversation import Provider
from segue.model.units import format_bytes
from segue.support.text import short
from segue.tui.common import (
    PROJECT_CHARS,
    Question,
    banner,
    countdown,
    from_thread,
    glyph,
    guarded,
    label,
    one_line,
    told_failure,
)
from segue.tui.state import TuiState
from segue.watch import Mode

if TYPE_CHECKING:  # the switch machinery is loaded by the worker, after the first paint; the
    # screens a key brings up (thread, returns, batch) load it too, so they are imported when
    # their key is pressed
    from segue.fleet.view import FleetRow, FleetView
    from segue.watch import WatchEvent

__all__ = ["FleetScreen"]

COLUMNS = {  # key: heading (the plan before the size and the session, so it shows at 80 wide)
    "sel": "",
    "glyph": "",
    "provider": "PROVIDER",
    "project": "PROJECT",
    "state": "STATE",
    "plan": "PLAN",
    "size": "SIZE",
    "session": "SESSION",
}


def _plan_cell(row: FleetRow) -> Text:
    if row.problem:
        return Text(row.problem, style="red")
    if row.away:
        return Text(row.away, style="cyan")
    if row.plan_note:
        return Text(row.plan_note, style="dim")
    if row.label is None:
        return Text("…", style="dim")
    style = {"native": "green", "raw": "yellow", "shrunk": "magenta"}.get(row.label, "")
    text = Text(row.label, style=style)
    loss = row.loss_line or ""
    if loss.startswith(row.label):
        loss = loss[len(row.label) :].lstrip(" :—-")
    if loss:
        text.append(f" {loss}", style="dim")
    return text


def _state_cell(row: FleetRow, now: Any) -> str:
    if row.reset_at is not None and row.state == "parked":
        return f"parked · {countdown(row.reset_at, now)}"
    return row.state


def _signature(row: FleetRow) -> object:
    """What a row's dry run depends on, as far as the listing tells."""
    return (row.size, row.state, row.reset_at, row.away, row.pid)


def _haystack(row: FleetRow) -> str:
    words = (row.provider.value, label(row.provider), row.project, row.session_id, row.state)
    return " ".join((*words, row.pane or "", row.title, row.label or ""))


class FleetScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", tooltip="Filter the rows (fuzzy)"),
        Binding("space", "toggle_row", "Select", tooltip="Select the row, or unselect it"),
        Binding("a", "select_all", "All", tooltip="Select every row shown (again: none)"),
        Binding("s", "switch", "Switch", tooltip="Switch the selection (else the row)"),
        Binding("r", "returns", "Return", tooltip="Bring a moved batch back"),
        Binding("enter", "open", "Open the row's thread", show=False),
        Binding("w", "toggle_watch", "Watch", tooltip="Start or stop the watch loop"),
        Binding("ctrl+r", "reload", "Reload", tooltip="Read usage, agents, sessions again"),
        Binding("escape", "clear", "Clear the filter, then the selection", show=False),
    ]

    def __init__(self, state: TuiState) -> None:
        super().__init__()
        self.state = state
        self.view: FleetView | None = None
        self.selected: set[str] = set()
        self.query_text = ""
        self._shown: list[FleetRow] = []
        self._plans: dict[str, tuple[object, str | None, str | None, str | None]] = {}
        self._said: set[str] = set()  # the problems already told

    def compose(self) -> ComposeResult:
        yield Static("segue — the fleet", id="title")
        yield Horizontal(id="banners")
        with Horizontal(id="body"):
            with Vertical(id="main"):
                table: DataTable[Any] = DataTable(
                    cursor_type="row", zebra_stripes=True, id="agents"
                )
                for key, name in COLUMNS.items():
                    table.add_column(name, key=key)
                yield table
                yield Input(placeholder="filter (fuzzy): provider, project, state…", id="filter")
                yield Static("reading the usage, the agents and the sessions…", id="status")
            yield RichLog(id="watchlog", wrap=True, markup=False, max_lines=500)
        yield Footer()

    def on_mount(self) -> None:
        under = self.state.under
        if under is not None and not os.path.isdir(os.path.expanduser(under)):
            self.app.notify(f"--under {under}: no such folder", severity="warning", timeout=8)
        self.query_one("#filter", Input).display = False
        self.query_one("#watchlog", RichLog).display = False
        self.query_one("#agents", DataTable).focus()
        self.set_interval(1.0, self._tick)
        if self.state.refresh_every > 0:
            self.set_interval(self.state.refresh_every, self._refresh)
        self.action_reload()
        if self.state.start_watching and not self.state.watching:
            self.action_toggle_watch()

    def _refresh(self) -> None:
        """The fleet read again, now and then (not while a reload is still at work)."""
        busy = any(w.group == "load" and not w.is_finished for w in self.workers)
        if not busy and self.app.screen is self:
            self.action_reload()

    # -- loading ----------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def action_reload(self) -> None:
        from segue.fleet.view import load_fleet, plan_rows

        state, app = self.state, self.app
        try:
            state.remember_listing()
            view = load_fleet(
                state.env,
                now=state.clock(),
                remote=state.remote,
                under=state.under,
                agents=state.scan_agents(),
            )
            for row in view.rows:  # a row as it was at the last plan keeps that plan
                known = self._plans.get(row.key)
                if known is not None and known[0] == _signature(row):
                    row.label, row.loss_line, row.plan_note = known[1:]
            from_thread(app, self._show, view)
            if state.plan:
                worker = get_current_worker()
                plan_rows(
                    view,
                    state.env,
                    done=lambda row: from_thread(app, self._planned, row),
                    redact_secrets=state.policy.redact_secrets,  # (as the sheet's switch does)
                    stop=lambda: worker.is_cancelled,
                )
                from_thread(app, self._status)
        except Exception as exc:
            from_thread(app, self._failed, exc)

    def _failed(self, exc: BaseException) -> None:
        told_failure(self.app, exc)
        self._status()

    def _show(self, view: FleetView) -> None:
        self.view = view
        keys = {r.key for r in view.rows}
        self.selected &= keys
        self._banners()
        self._fill()
        for problem in view.problems:
            if problem not in self._said:
                self.app.notify(f"skipped {problem}", severity="warning", timeout=6)
        self._said = set(view.problems)

    def _planned(self, row: FleetRow) -> None:
        self._plans[row.key] = (_signature(row), row.label, row.loss_line, row.plan_note)
        table = self.query_one("#agents", DataTable)
        if row in self._shown:
            with contextlib.suppress(KeyError):
                table.update_cell(row.key, "plan", _plan_cell(row), update_width=True)

    def _banners(self) -> None:
        holder = self.query_one("#banners", Horizontal)
        view = self.view
        if view is None:
            return
        now = self.state.clock()
        have = list(holder.query(Static))
        if len(have) != len(view.usages):
            holder.remove_children()
            have = [Static(classes="banner") for _ in view.usages]
            holder.mount_all(have)
        for widget, usage in zip(have, view.usages, strict=True):
            widget.update(banner(usage, label(usage.provider), now))
            widget.set_class(usage.exhausted, "exhausted")

    def _fill(self) -> None:
        table = self.query_one("#agents", DataTable)
        view = self.view
        cursor = self._cursor_key()
        table.clear()
        rows = [] if view is None else view.rows
        if self.query_text:
            matcher = Matcher(self.query_text)
            scored = [(matcher.match(_haystack(r)), n, r) for n, r in enumerate(rows)]
            rows = [r for score, _, r in sorted(scored, key=lambda s: (-s[0], s[1])) if score > 0]
        self._shown = rows
        now = self.state.clock()
        for row in rows:
            table.add_row(
                self._sel_cell(row.key),
                glyph(row.state),
                label(row.provider),
                short(row.project, PROJECT_CHARS),
                _state_cell(row, now),
                _plan_cell(row),
                format_bytes(row.size) if row.size else "",
                row.pane or row.session_id[:13],
                key=row.key,
            )
        if cursor is not None and cursor in {r.key for r in rows}:
            table.move_cursor(row=table.get_row_index(cursor))
        self._status()

    def _status(self) -> None:
        view = self.view
        if view is None:
            return
        parked = sum(1 for r in view.rows if r.state == "parked")
        live = sum(1 for r in view.rows if r.agent is not None)
        words = [f"{len(view.rows)} rows: {live} running, {parked} parked"]
        if not view.rows:
            under = self.state.under
            words.append(
                "no agent is running and no session is parked"
                + (f" below {under}" if under else "")
            )
        if self.query_text:
            words.append(f"{len(self._shown)} match “{self.query_text}”")
        if self.selected:
            words.append(f"{len(self.selected)} selected")
        if self.state.plan and any(
            r.label is None and r.plan_note is None and r.problem is None for r in view.rows
        ):
            words.append("planning each switch…")
        if self.state.watching:
            words.append("watching")
        self.query_one("#status", Static).update(" · ".join(words))

    def _tick(self) -> None:
        """The countdowns, every second."""
        if self.view is None:
            return
        self._banners()
        now = self.state.clock()
        table = self.query_one("#agents", DataTable)
        for row in self._shown:
            if row.reset_at is not None and row.state == "parked":
                with contextlib.suppress(KeyError):
                    table.update_cell(row.key, "state", _state_cell(row, now))

    # -- filter and selection ---------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.query_text = event.value.strip()
            self._fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self.query_one("#agents", DataTable).focus()

    def action_clear(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus or self.query_text:
            box.value = ""
            box.display = False
            self.query_text = ""
            self._fill()
            self.query_one("#agents", DataTable).focus()
        elif self.selected:
            self.selected.clear()
            self._fill()

    def _cursor_key(self) -> str | None:
        table = self.query_one("#agents", DataTable)
        try:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        except Exception:  # no cursor row
            return None
        return None if key.value is None else str(key.value)

    def _sel_cell(self, key: str) -> Text | str:
        return Text("✔", style="bold green") if key in self.selected else " "

    def _mark(self, keys: Iterable[str]) -> None:
        table = self.query_one("#agents", DataTable)
        for key in keys:
            with contextlib.suppress(KeyError):
                table.update_cell(key, "sel", self._sel_cell(key))
        self._status()

    def action_toggle_row(self) -> None:
        key = self._cursor_key()
        if key is None:
            return
        self.selected.symmetric_difference_update({key})
        self._mark([key])
        self.query_one("#agents", DataTable).action_cursor_down()

    def action_select_all(self) -> None:
        shown = {r.key for r in self._shown}
        if shown and shown <= self.selected:
            self.selected -= shown
        else:
            self.selected |= shown
        self._mark(shown)

    def chosen(self) -> list[FleetRow]:
        """The selection, else the row under the cursor."""
        rows = [] if self.view is None else self.view.rows
        if self.selected:
            return [r for r in rows if r.key in self.selected]
        key = self._cursor_key()
        return [r for r in rows if r.key == key]

    # -- actions ----------------------------------------------------------------------------

    @guarded
    def action_switch(self) -> None:
        from segue.fleet.batch import plan_fleet
        from segue.fleet.moves import sessions_away
        from segue.running.target import default_target
        from segue.tui.batch import BatchSheet

        rows = [r for r in self.chosen() if r.path is not None and r.state != "error"]
        if not rows:
            self.app.notify("Select agents first (space, or a for all).", severity="warning")
            return
        state = self.state
        exhausted = [] if self.view is None else self.view.exhausted
        providers = sorted({r.provider for r in rows}, key=lambda p: p.value)
        on_exhausted = [p for p in providers if p in exhausted]
        first = (
            on_exhausted[0]
            if len(on_exhausted) == 1
            else max(providers, key=lambda p: sum(1 for r in rows if r.provider is p))
        )
        usages = None if self.view is None else self.view.usages
        directions = [(p, default_target(p, state.env, usages=usages)) for p in providers]

        def planner(source: Provider, target: Provider) -> Any:
            on_source = [str(r.path) for r in rows if r.provider is source]
            return plan_fleet(
                source,
                target,
                sessions=on_source,
                env=state.env,
                agents=state.scan_agents(),
                under=state.under,
                exclude=sessions_away(state.env),  # moved already: the return brings it back
                redact_secrets=state.policy.redact_secrets,
            )

        n = len(rows)
        sheet = BatchSheet(
            state,
            f"Switch {n} agent{'s' if n != 1 else ''}",
            directions,
            planner,
            start=providers.index(first),
            elsewhere=lambda source: sum(1 for r in rows if r.provider is not source),
        )
        self.app.push_screen(sheet, self._after_batch)

    def _after_batch(self, ran: bool | None) -> None:
        if ran:
            self.selected.clear()
            self.action_reload()

    @guarded
    def action_returns(self) -> None:
        from segue.tui.returns import ReturnScreen

        self.app.push_screen(ReturnScreen(self.state), self._after_batch)

    @guarded
    def action_open(self) -> None:
        from segue.tui.thread import ThreadScreen

        key = self._cursor_key()
        rows = [] if self.view is None else [r for r in self.view.rows if r.key == key]
        if not rows or rows[0].path is None:
            self.app.notify("No session file to open.", severity="warning")
            return
        self.app.push_screen(ThreadScreen(self.state, str(rows[0].path)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "agents":
            self.action_open()

    # -- the watch loop ---------------------------------------------------------------------

    def action_toggle_watch(self) -> None:
        state = self.state
        if state.watching:
            state.stop_watch()
            self.app.notify("Watch stops after the pass it is in.")
            self.watch_line("watch: stopped")
            self.watch_shown(False)
            return
        stop = state.start_watch()
        policy = state.policy
        how = "moves on its own" if policy.move is Mode.AUTO else "asks before each move"
        self.watch_line(f"watch: on, every {state.interval:g} s; {how}, returns {policy.returns}")
        self.watch_shown(True)
        self._watch(stop)

    @work(thread=True, group="watch", exit_on_error=False)
    def _watch(self, stop: threading.Event) -> None:
        from segue.watch import watch

        state, app = self.state, self.app
        asks = state.policy.move is Mode.ASK or state.policy.returns is Mode.ASK
        try:
            with state.watch_turn(stop) as turn:
                if not turn:  # stopped before a loop stopped a moment ago ended its pass
                    return
                state.remember_listing()  # the app's listing is the outer one, not the loop's
                with state.watch_writing():
                    watch(
                        state.policy,
                        interval=state.interval,
                        env=state.env,
                        ask=partial(self._ask, stop=stop) if asks else None,
                        emit=lambda event: from_thread(app, self._watch_event, event),
                        stop=stop,
                    )
        except Exception as exc:
            from_thread(app, self._watch_failed, stop, exc)

    def _ask(self, text: str, stop: threading.Event) -> bool:
        """A watch question (from its thread): a sheet with the preview and one key."""
        app = self.app
        answered = threading.Event()
        answer = [False]

        def given(yes: bool | None) -> None:
            answer[0] = bool(yes)
            answered.set()

        def show() -> None:
            app.bell()
            # it may come up over anything: a key meant for another screen never says yes
            app.push_screen(Question("segue watch", text, focus_yes=False), given)

        from_thread(app, show)
        while not answered.wait(0.5):
            if stop.is_set() or not app.is_running:
                return False
        return answer[0]

    def _watch_event(self, event: WatchEvent) -> None:
        self.watch_line(event.line())
        if event.kind in ("moved", "returned"):
            self.action_reload()

    def _watch_failed(self, stop: threading.Event, exc: BaseException) -> None:
        self.state.watch_ended(stop)
        self.watch_line(f"watch: ended: {one_line(exc)}")
        told_failure(self.app, exc)
        self.watch_shown(False)

    def watch_line(self, line: str) -> None:
        log = self.query_one("#watchlog", RichLog)
        log.display = True
        log.write(line)

    def watch_shown(self, on: bool) -> None:
        log = self.query_one("#watchlog", RichLog)
        log.display = on or bool(log.lines)
        self._status()
