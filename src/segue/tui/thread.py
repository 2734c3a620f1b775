"""The thread view (``enter`` on a row): the app thread holding the session, synced with the
disk as ``segue thread show`` syncs it. Its runs, the coverage table (each provider thread's
native runs and handoffs), its checkpoints with their diff summaries, the lineage of forks and
rollbacks; and from here a rollback (its preview, then one confirmation) and a fork."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from segue.support.text import short
from segue.threads.documents import PROVIDER_THREAD_COLUMNS, RUN_COLUMNS
from segue.tui.common import AskText, Question, deliver, one_line, told_failure
from segue.tui.state import TuiState

if TYPE_CHECKING:
    from segue.rewind.rollback import RollbackPlan
    from segue.rewind.thread_view import ThreadView

__all__ = ["ThreadScreen"]


class ThreadScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("b", "rollback", "Rollback", tooltip="Roll back to a run (preview first)"),
        Binding("f", "fork", "Fork", tooltip="Fork the thread at a run"),
        Binding("t", "adopt", "Make it a thread", tooltip="Make the session an app thread"),
        Binding("ctrl+r", "reload", "Reload"),
    ]

    def __init__(self, state: TuiState, ref: str) -> None:
        super().__init__()
        self.state = state
        self.ref = ref
        self.view: ThreadView | None = None

    def compose(self) -> ComposeResult:
        yield Static("segue — thread", id="title")
        with VerticalScroll(id="thread"):
            yield Static("reading the thread…", id="head")
            yield Static("Runs", classes="section")
            runs: DataTable[Any] = DataTable(cursor_type="row", id="runs")
            runs.add_columns(*RUN_COLUMNS)
            yield runs
            yield Static("Coverage", classes="section")
            cover: DataTable[Any] = DataTable(show_cursor=False, id="coverage")
            cover.add_columns(*PROVIDER_THREAD_COLUMNS)
            yield cover
            yield Static("", id="handoffs")
            yield Static("Checkpoints", classes="section")
            marks: DataTable[Any] = DataTable(show_cursor=False, id="checkpoints")
            marks.add_columns("RUN", "KIND", "TAKEN", "FILES", "+/-", "SUMMARY")
            yield marks
            yield Static("", id="lineage")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#runs", DataTable).focus()
        self.action_reload()

    @work(thread=True, exclusive=True, group="thread", exit_on_error=False)
    def action_reload(self, adopting: bool = False) -> None:
        from segue.rewind.thread_view import show_thread

        deliver(
            self.app,
            lambda: show_thread(self.ref, self.state.env, adopting=adopting),
            self._show,
            self._failed,
        )

    def _failed(self, exc: BaseException) -> None:
        text = Text(one_line(exc), style="red")
        if "segue thread adopt" in str(exc):  # as segue thread show says, and t does it
            text.append("\nt makes this session an app thread (segue thread adopt).", style="")
        self.query_one("#head", Static).update(text)

    def action_adopt(self) -> None:
        if self.view is None:
            self.action_reload(adopting=True)

    def _show(self, view: ThreadView) -> None:
        from segue.threads import coverage_lines
        from segue.threads.checkpoints import diff_line
        from segue.threads.documents import lineage_lines, provider_thread_rows, run_rows

        self.view = view
        graph = view.graph
        t = graph.thread
        head = Text(f"thread {t.id}", style="bold")
        head.append(f"  {t.title or ''}")
        if t.cwd:
            head.append(f"\n{t.cwd}", style="dim")
        for note in view.notes:
            head.append(f"\nnote: {note}", style="yellow")
        self.query_one("#head", Static).update(head)
        runs = self.query_one("#runs", DataTable)
        runs.clear()
        runs.add_rows(run_rows(graph))
        cover = self.query_one("#coverage", DataTable)
        cover.clear()
        cover.add_rows(provider_thread_rows(graph))
        self.query_one("#handoffs", Static).update("\n".join(coverage_lines(graph)))
        marks = self.query_one("#checkpoints", DataTable)
        marks.clear()
        for c in view.checkpoints:
            marks.add_row(
                str(c.run_ordinal),
                c.kind.value,
                c.created_at.astimezone().strftime("%Y-%m-%d %H:%M"),
                str(len(c.files)),
                f"+{c.added} -{c.removed}",
                short(diff_line(c), 90),
            )
        lines = lineage_lines(graph, view.forks)
        self.query_one("#lineage", Static).update("\n".join(lines))

    def action_back(self) -> None:
        self.app.pop_screen()

    # -- rollback and fork ------------------------------------------------------------------

    def _ask_run(self, title: str, placeholder: str, then: Callable[[int], object]) -> None:
        """A run number asked for (the cursor's run offered), then ``then`` with it."""
        table = self.query_one("#runs", DataTable)
        if self.view is None:
            return
        offered = str(self.view.graph.runs[table.cursor_row].ordinal) if table.row_count else ""

        def answered(answer: str | None) -> None:
            answer = (answer or "").strip()
            try:
                run = int(answer) if answer else None
            except ValueError:
                self.app.notify(f"{answer!r} is not a run number", severity="error")
                return
            if run is not None:
                then(run)

        self.app.push_screen(AskText(title, placeholder, offered), answered)

    def action_rollback(self) -> None:
        self._ask_run("Roll back to run", "the run to go back to", self._preview)

    @work(thread=True, exclusive=True, group="rollback", exit_on_error=False)
    def _preview(self, run: int) -> None:
        from segue.rewind.rollback import plan_rollback

        deliver(
            self.app,
            lambda: plan_rollback(self._app_thread(), run, env=self.state.env),
            self._confirm_rollback,
            partial(told_failure, self.app),
        )

    def _app_thread(self) -> str:
        assert self.view is not None
        return self.view.graph.thread.id

    def _confirm_rollback(self, plan: RollbackPlan) -> None:
        from segue.rewind.rollback_text import plan_lines

        details = "\n".join(line for line, _ in plan_lines(plan))
        if plan.refused:
            self.app.notify(plan.refused, severity="error", timeout=8)
            return
        question = Question(f"Roll back to run {plan.to_run}?", details, yes="Roll back")

        def answered(yes: bool | None) -> None:
            if yes:
                self._rollback(plan.to_run)

        self.app.push_screen(question, answered)

    def _written(self, write: Callable[[], str], title: str) -> None:
        """In a worker: ``write`` (a writer segue tui waits for), what it says told, and the
        thread read again."""

        def done(said: str) -> None:
            self.app.notify(said, title=title, timeout=12)
            self.action_reload()

        def written() -> str:
            with self.state.writing():
                return write()

        deliver(self.app, written, done, partial(told_failure, self.app))

    @work(thread=True, exclusive=True, group="rollback", exit_on_error=False)
    def _rollback(self, run: int) -> None:
        from segue.rewind.rollback import rollback
        from segue.rewind.rollback_text import done_lines

        def roll() -> str:
            done = rollback(self._app_thread(), run, confirmed=True, env=self.state.env)
            return "\n".join(line for line, _ in done_lines(done))

        self._written(roll, "Rolled back")

    def action_fork(self) -> None:
        self._ask_run("Fork at run", "the run the fork starts from", self._fork)

    @work(thread=True, exclusive=True, group="fork", exit_on_error=False)
    def _fork(self, run: int) -> None:
        from segue.rewind.fork import fork_thread

        def fork() -> str:
            forked = fork_thread(self._app_thread(), run, env=self.state.env)
            where = "a git worktree" if forked.worktree else "a copy"
            return (
                f"thread {forked.thread_id} at run {forked.at_run} in {forked.folder} ({where}); "
                "its first segue run picks the provider"
            )

        self._written(fork, "Forked")
