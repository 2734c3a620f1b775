"""The thread view (``enter`` on a row): the app thread holding the session, synced with the
disk as ``segue thread show`` syncs it. Its runs, the coverage table (each provider thread's
native runs and handoffs), its checkpoints with their diff summaries, the lineage of forks and
rollbacks; and from here a rollback (its preview, then one confirmation) and a fork."""

from __future__ import annotations

from collections.abc import Callable
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
from segue.tui.common import AskText, Question, from_thread, one_line
from segue.tui.state import TuiState

if TYPE_CHECKING:
    from segue.rewind.rollback import RollbackPlan
    from segue.rewind.thread_view import ThreadView

__all__ = ["ThreadScreen"]


def _lines(lines: list[tuple[str, str]]) -> Text:
    text = Text()
    for n, (line, style) in enumerate(lines):
        text.append(("\n" if n else "") + line, style=style or "")
    return text


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
        self._load()

    def action_reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="thread", exit_on_error=False)
    def _load(self, adopting: bool = False) -> None:
        from segue.rewind.thread_view import show_thread

        state, app = self.state, self.app
        try:
            view = show_thread(self.ref, state.env, adopting=adopting)
        except Exception as exc:
            from_thread(app, self._failed, exc)
            return
        from_thread(app, self._show, view)

    def _failed(self, exc: BaseException) -> None:
        text = Text(one_line(exc), style="red")
        if "segue thread adopt" in str(exc):  # as segue thread show says, and t does it
            text.append("\nt makes this session an app thread (segue thread adopt).", style="")
        self.query_one("#head", Static).update(text)

    def action_adopt(self) -> None:
        if self.view is None:
            self._load(adopting=True)

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
        for row in run_rows(graph):
            runs.add_row(*row)
        cover = self.query_one("#coverage", DataTable)
        cover.clear()
        for row in provider_thread_rows(graph):
            cover.add_row(*row)
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

    def _run_number(self, answer: str | None) -> int | None:
        if answer is None or not answer.strip():
            return None
        try:
            return int(answer.strip())
        except ValueError:
            self.app.notify(f"{answer.strip()!r} is not a run number", severity="error")
            return None

    def _default_run(self) -> str:
        table = self.query_one("#runs", DataTable)
        if self.view is None or not table.row_count:
            return ""
        return str(self.view.graph.runs[table.cursor_row].ordinal)

    def _ask_run(self, title: str, placeholder: str, then: Callable[[int], object]) -> None:
        """A run number asked for (the cursor's run offered), then ``then`` with it."""
        if self.view is None:
            return

        def answered(answer: str | None) -> None:
            run = self._run_number(answer)
            if run is not None:
                then(run)

        self.app.push_screen(AskText(title, placeholder, self._default_run()), answered)

    def action_rollback(self) -> None:
        self._ask_run("Roll back to run", "the run to go back to", self._preview)

    @work(thread=True, exclusive=True, group="rollback", exit_on_error=False)
    def _preview(self, run: int) -> None:
        from segue.rewind.rollback import plan_rollback

        state, app = self.state, self.app
        assert self.view is not None
        try:
            plan = plan_rollback(self.view.graph.thread.id, run, env=state.env)
        except Exception as exc:
            from_thread(app, self._notify_failure, exc)
            return
        from_thread(app, self._confirm_rollback, plan)

    def _told(self, text: str, title: str) -> None:
        self.app.notify(text, title=title, timeout=12)

    def _notify_failure(self, exc: BaseException) -> None:
        self.app.notify(one_line(exc), severity="error", timeout=8)

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

    @work(thread=True, exclusive=True, group="rollback", exit_on_error=False)
    def _rollback(self, run: int) -> None:
        from segue.rewind.rollback import rollback
        from segue.rewind.rollback_text import done_lines

        state, app = self.state, self.app
        assert self.view is not None
        try:
            with state.writing():
                done = rollback(self.view.graph.thread.id, run, confirmed=True, env=state.env)
        except Exception as exc:
            from_thread(app, self._notify_failure, exc)
            return
        report = "\n".join(line for line, _ in done_lines(done))
        from_thread(app, self._told, report, "Rolled back")
        self._load()

    def action_fork(self) -> None:
        self._ask_run("Fork at run", "the run the fork starts from", self._fork)

    @work(thread=True, exclusive=True, group="fork", exit_on_error=False)
    def _fork(self, run: int) -> None:
        from segue.rewind.fork import fork_thread

        state, app = self.state, self.app
        assert self.view is not None
        try:
            with state.writing():
                forked = fork_thread(self.view.graph.thread.id, run, env=state.env)
        except Exception as exc:
            from_thread(app, self._notify_failure, exc)
            return
        where = "a git worktree" if forked.worktree else "a copy"
        said = (
            f"thread {forked.thread_id} at run {forked.at_run} in {forked.folder} ({where}); "
            "its first segue run picks the provider"
        )
        from_thread(app, self._told, said, "Forked")
        self._load()
