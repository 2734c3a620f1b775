"""The switch sheet: a fleet switch (or a return) as ``segue switch --from …`` makes it. The plan
with each agent's dry run, the direction, the arrival compaction and the relaunch, one
confirmation (the confirm button has the focus: ``enter`` confirms, ``escape`` cancels), then
live progress per agent and the tally. A failure is its row; the batch goes on."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Label,
    RadioButton,
    RadioSet,
    Select,
    Static,
)

from segue.fleet.batch import ArrivalCompact, Candidate, FleetPlan, FleetResult, Outcome, run_fleet
from segue.model.conversation import Provider
from segue.model.units import format_bytes
from segue.support.text import short
from segue.tui.common import PROJECT_CHARS, Sheet, countdown, deliver, from_thread, label, one_line
from segue.tui.state import TuiState

__all__ = ["BatchSheet", "arrival_default"]

Planner = Callable[[Provider, Provider], FleetPlan]

COMPACTION = [
    ("auto (by size)", ArrivalCompact.AUTO.value),
    ("on", ArrivalCompact.ON.value),
    ("off", ArrivalCompact.OFF.value),
]


def arrival_default(plan: FleetPlan) -> tuple[ArrivalCompact, str]:
    """The arrival compaction a plan's sizes call for, and why: on when every agent arrives
    above half the target's window, off when none does, else auto (each as its size says)."""
    planned = [c.preview for c in plan.to_switch if c.preview is not None]
    if not planned:
        return ArrivalCompact.AUTO, ""
    big = sum(1 for p in planned if p.plan.measure_after.tokens > p.plan.target.context_window // 2)
    why = f"{big} of {len(planned)} above half of {label(plan.target)}'s window"
    if big == len(planned):
        return ArrivalCompact.ON, why
    if big == 0:
        return ArrivalCompact.OFF, why
    return ArrivalCompact.AUTO, why


def _secrets(candidate: Candidate) -> Text:
    """`` · 2 secrets carried as they are`` (or ``… replaced by markers``), after a row's plan."""
    plan = None if candidate.preview is None else candidate.preview.plan
    if plan is None or not plan.secrets:
        return Text("")
    n = sum(plan.secrets.values())
    said = f" · {n} secret{'s' if n != 1 else ''} "
    if plan.secrets_redacted:
        return Text(said + "replaced by markers", style="yellow")
    return Text(said + "carried as they are (segue tui --redact-secrets)", style="bold red")


class BatchSheet(Sheet[bool]):
    """Dismissed with True once a batch ran (the fleet then reloads)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self,
        state: TuiState,
        title: str,
        directions: Sequence[tuple[Provider, Provider]],
        planner: Planner,
        *,
        start: int = 0,
        verb: str = "Switch",
        describe: Callable[[Candidate], str | None] | None = None,
        elsewhere: Callable[[Provider], int] | None = None,
    ) -> None:
        super().__init__()
        self.state = state
        self._title, self._directions, self._planner = title, list(directions), planner
        self._index = start
        self._verb = verb
        self._describe = describe  # a word on each agent before its plan
        self._elsewhere = elsewhere  # how many chosen agents a direction leaves out
        self._plan: FleetPlan | None = None
        self._phase = "planning"  # planning → planned → running → done
        self._confirmed = False  # confirmed before the plan was made: run it when it is
        self._touched = False  # the user chose a compaction: no default overrides it
        self._rows: dict[int, int] = {}  # id(candidate) → its row
        self._generation = 0  # the plan asked for last: an older one that arrives is dropped

    def compose(self) -> ComposeResult:
        with Vertical(classes="sheet", id="batch"):
            yield Label(self._title, classes="sheet-title")
            if len(self._directions) > 1:
                with RadioSet(id="direction"):
                    for n, (source, target) in enumerate(self._directions):
                        name = f"{label(source)} → {label(target)}"
                        yield RadioButton(name, value=n == self._index)
            with Horizontal(classes="options"):
                yield Label("Compact on arrival ")
                yield Select(
                    COMPACTION, value=ArrivalCompact.AUTO.value, allow_blank=False, id="compact"
                )
                yield Checkbox("Relaunch in panes", value=True, id="relaunch")
            yield Static("planning…", id="head")
            table: DataTable[Any] = DataTable(cursor_type="row", id="planned")
            table.add_columns("AGENT", "PROJECT", "PLAN", "STATE", "SIZE")
            yield table
            yield Static("", id="tally")
            with Horizontal(classes="buttons"):
                yield Button(self._verb, variant="primary", id="confirm")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#confirm", Button).focus()
        self._make_plan()

    # -- planning ---------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="plan", exit_on_error=False)
    def _make_plan(self) -> None:
        generation = self._generation
        source, target = self._directions[self._index]
        deliver(
            self.app,
            lambda: self._planner(source, target),
            lambda plan: self._show_plan(plan, generation),
            lambda exc: self._plan_failed(exc, generation),
        )

    def _plan_failed(self, exc: BaseException, generation: int) -> None:
        if generation != self._generation or self._phase != "planning":
            return
        self._phase = "failed"
        self.query_one("#head", Static).update(Text(one_line(exc), style="red"))
        self.query_one("#confirm", Button).disabled = True
        self.query_one("#cancel", Button).focus()

    def _show_plan(self, plan: FleetPlan, generation: int) -> None:
        if generation != self._generation or self._phase != "planning":
            return  # a plan for a direction no longer chosen, or after the batch began
        self._plan, self._phase = plan, "planned"
        scope = f"; under {plan.under}" if plan.under else ""
        scope += "; secrets replaced by markers" if plan.redact_secrets else ""
        head = (
            f"{label(plan.source)} → {label(plan.target)} ({plan.reason}{scope}; "
            f"{len(plan.to_switch)} of {len(plan.candidates)} to switch)"
        )
        said = Text(head, style="bold")
        if plan.blocked:  # a return onto a provider still exhausted: shown, never run
            said.append(
                f"\n{plan.blocked}: not moved back (segue switch --return --force moves them "
                "anyway)",
                style="bold red",
            )
        left = 0 if self._elsewhere is None else self._elsewhere(plan.source)
        if left:
            said.append(
                f"\n{left} selected on another provider stay where they are (choose their "
                "direction above to switch them)",
                style="yellow",
            )
        self.query_one("#head", Static).update(said)
        table = self.query_one("#planned", DataTable)
        table.clear()
        self._rows = {}
        now = self.state.clock()
        for n, c in enumerate(plan.candidates):
            state = c.state + (f" · {countdown(c.reset_at, now)}" if c.reset_at else "")
            if c.skip or c.error:
                planned = Text(c.plan_line, style="dim" if c.skip else "red")
            else:
                word = None if self._describe is None else self._describe(c)
                planned = Text(f"{word} · " if word else "", style="cyan")
                planned.append(c.loss_line or "")
                planned.append_text(_secrets(c))
            project = short(os.path.basename((c.cwd or "?").rstrip("/")) or "?", PROJECT_CHARS)
            table.add_row(c.who, project, planned, state, format_bytes(c.size), key=str(n))
            self._rows[id(c)] = n
        self.call_after_refresh(_redraw_header, table)
        mode, why = arrival_default(plan)
        self.query_one("#tally", Static).update("\n".join(filter(None, (plan.tally_line(), why))))
        if not self._touched:
            self.query_one("#compact", Select).value = mode.value
        self.query_one("#relaunch", Checkbox).value = any(c.pane for c in plan.to_switch)
        if plan.blocked:
            self._confirmed = False
            self.query_one("#confirm", Button).disabled = True
            self.query_one("#cancel", Button).focus()
        if self._confirmed:
            self._start()

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        if self._phase in ("running", "done") or event.index == self._index:
            return
        self._index = event.index
        self._generation += 1
        self._confirmed = False  # a yes was for the direction shown then, not this one
        self._plan = None
        self._phase = "planning"
        self.query_one("#head", Static).update("planning…")
        self.query_one("#planned", DataTable).clear()
        self.query_one("#confirm", Button).disabled = False
        self._make_plan()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.has_focus:
            self._touched = True

    # -- running ----------------------------------------------------------------------------

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.action_cancel()
        elif self._phase == "planning":
            self._confirmed = True
            self.query_one("#head", Static).update("planning… (it goes ahead once planned)")
        elif self._phase == "planned":
            self._start()
        elif self._phase == "done":
            self.dismiss(True)

    def _start(self) -> None:
        plan = self._plan
        assert plan is not None
        self._confirmed = False
        if plan.blocked:
            self.app.notify(plan.blocked, severity="error")
            return
        if not plan.to_switch:
            self.app.notify("Nothing to switch.", severity="warning")
            return
        self._phase = "running"
        self.query("#confirm, #cancel, #compact, #relaunch, RadioSet").set(disabled=True)
        relaunch = self.query_one("#relaunch", Checkbox).value
        compact = ArrivalCompact(str(self.query_one("#compact", Select).value))
        n = len(plan.to_switch)
        self.query_one("#tally", Static).update(f"{n} agent{'s' if n != 1 else ''} on the way…")
        self._run(plan, relaunch, compact)

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def _run(self, plan: FleetPlan, relaunch: bool, compact: ArrivalCompact) -> None:
        def carry_out() -> FleetResult:
            with self.state.writing():
                return run_fleet(
                    plan,
                    env=self.state.env,
                    relaunch=relaunch,
                    arrival_compact=compact,
                    progress=lambda o: from_thread(self.app, self._show_outcome, o),
                )

        deliver(self.app, carry_out, self._finished, self._run_failed)

    def _cell(self, outcome: Outcome) -> Text:
        if outcome.switch is not None:
            line = outcome.switch.plan.loss_line
            text = Text("✓ ", style="green")
            text.append(line)
            for note in outcome.notes:
                text.append(f"; {note}", style="dim")
            return text
        if outcome.error:
            return Text(f"✗ failed: {outcome.error}", style="red")
        return Text(f"skipped: {outcome.candidate.skip}", style="dim")

    def _show_outcome(self, outcome: Outcome) -> None:
        n = self._rows.get(id(outcome.candidate))
        if n is not None:
            table = self.query_one("#planned", DataTable)
            table.update_cell(str(n), table.ordered_columns[2].key, self._cell(outcome))

    def _run_failed(self, exc: BaseException) -> None:
        self._done(Text(one_line(exc), style="red"))

    def _finished(self, result: FleetResult) -> None:
        for outcome in result.outcomes:
            self._show_outcome(outcome)
        lines = Text(result.tally_line(), style="bold")
        for note in result.notes:
            lines.append(f"\nnote: {note}", style="yellow")
        if result.batch_id:
            lines.append(f"\nbatch {result.batch_id} (r brings it back)", style="dim")
        self._done(lines)

    def _done(self, tally: Text) -> None:
        """The batch over: its tally shown, and the sheet's one button closes it."""
        self._phase = "done"
        self.query_one("#tally", Static).update(tally)
        button = self.query_one("#confirm", Button)
        button.label, button.disabled = "Close", False
        self.query_one("#cancel", Button).display = False
        button.focus()

    def action_cancel(self) -> None:
        if self._phase == "running":
            self.app.notify("The batch is running; it finishes first.", severity="warning")
            return
        self.dismiss(self._phase == "done")


def _redraw_header(table: DataTable[Any]) -> None:
    """The table's header drawn again once its columns have their widths (Textual 8.2 could
    keep the header it drew at the empty table's widths, under the rows drawn at theirs)."""
    table.show_header = False
    table.show_header = True
