"""The return screen (``r``): the batches that can come back, and for the one chosen what each
agent did on the other side; its return is the switch sheet, as ``segue switch --return``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Label, Static

from segue.model.conversation import Provider
from segue.tui.batch import BatchSheet
from segue.tui.common import Sheet, deliver, guarded, label, one_line
from segue.tui.state import TuiState

if TYPE_CHECKING:
    from segue.fleet.batch import Candidate, FleetPlan
    from segue.fleet.moves import Returnable

__all__ = ["ReturnScreen"]


def _done_there(candidate: Candidate) -> str | None:
    """What the agent did on the other side: the runs its return carries back."""
    thread = None if candidate.preview is None else candidate.preview.thread
    if thread is not None and thread.strategy == "no_handoff":
        return "nothing new there"
    if thread is None or thread.covers is None:
        return None
    first, last = thread.covers
    return f"run {first} there" if first == last else f"runs {first}–{last} there"


class ReturnScreen(Sheet[bool]):
    """Dismissed with True once a return ran."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("enter", "bring_back", "Bring back"),
    ]

    def __init__(self, state: TuiState) -> None:
        super().__init__()
        self.state = state
        self._found: list[Returnable] = []
        self._ran = False

    def compose(self) -> ComposeResult:
        with Vertical(classes="sheet", id="returns"):
            yield Label("Batches that can come back", classes="sheet-title")
            table: DataTable[Any] = DataTable(cursor_type="row", id="batches")
            table.add_columns("BATCH", "MOVED", "FROM → TO", "OUT", "BACK")
            yield table
            yield Static("reading the batches…", id="note")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#batches", DataTable).focus()
        self._load()

    @work(thread=True, exclusive=True, group="returns", exit_on_error=False)
    def _load(self) -> None:
        from segue.fleet.moves import returnable_batches

        state = self.state
        deliver(
            self.app,
            lambda: returnable_batches(state.env, now=state.clock()),
            self._show,
            self._show_failure,
        )

    def _show_failure(self, exc: BaseException) -> None:
        self.query_one("#note", Static).update(Text(one_line(exc), style="red"))

    def _show(self, found: list[Returnable]) -> None:
        from segue.model.times import ago

        self._found = found
        table = self.query_one("#batches", DataTable)
        table.clear()
        now = self.state.clock()
        for n, r in enumerate(found):
            table.add_row(
                r.batch_id[:13],
                ago(r.created_at, now),
                f"{label(r.moved_off)} → {label(r.moved_to)}",
                str(len(r.outstanding)),
                str(len(r.settled)),
                key=str(n),
            )
        note = (
            "enter: see what each agent did there and bring them back"
            if found
            else "No batch to bring back: every moved agent is back, or none was moved."
        )
        self.query_one("#note", Static).update(note)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_bring_back()

    @guarded
    def action_bring_back(self) -> None:
        from segue.fleet.batch import return_plan

        table = self.query_one("#batches", DataTable)
        if not self._found or not table.row_count:
            return
        chosen = self._found[table.cursor_row]
        state = self.state
        settled = {s: "back already, or moved on by a later batch" for s in chosen.settled}
        back_to = chosen.moved_off

        def planner(source: Provider, target: Provider) -> FleetPlan:
            return return_plan(
                chosen.batch_id,
                target=target,
                env=state.env,
                dry_run=True,
                exclude=settled,
                redact_secrets=state.policy.redact_secrets,
                check_usage=True,  # back onto a provider still exhausted: shown, not done
                remote=state.remote,
                now=state.clock(),
            )

        moved_to = chosen.moved_to
        if moved_to is None or back_to is None:
            self.app.notify(f"batch {chosen.batch_id} names no providers", severity="error")
            return
        n = len(chosen.outstanding)
        sheet = BatchSheet(
            state,
            f"Bring back {n} agent{'s' if n != 1 else ''} of batch {chosen.batch_id[:13]}",
            [(moved_to, back_to)],
            planner,
            verb="Bring back",
            describe=_done_there,
        )
        self.app.push_screen(sheet, self._after)

    def _after(self, ran: bool | None) -> None:
        if ran:
            self._ran = True
            self._load()

    def action_close(self) -> None:
        self.dismiss(self._ran)
