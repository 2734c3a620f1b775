"""``segue thread …``: app threads at the command line. The work is :mod:`segue.threads`; this
module only talks to the user (errors go through the one handler in :mod:`segue.cli.app`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from segue.cli import terminal
from segue.cli.grammar import Argument, Group
from segue.cli.options import JsonOption, print_json

if TYPE_CHECKING:
    from rich.console import Console

    from segue.threads import ThreadGraph

thread_app = Group(
    "thread", "App threads: one conversation across Claude Code and Codex, with its runs."
)


@thread_app.command("adopt")
def adopt_command(
    session: Annotated[str, Argument(help="A session id, a unique id prefix, or a path.")],
    as_json: JsonOption = False,
) -> None:
    """Make a native session an app thread (or show the thread that already holds it)."""
    from segue.switch.journal import open_recording
    from segue.threads import adopt, graph_to_json

    store, _ = open_recording()
    with store:
        graph = adopt(store, session)
    if as_json:
        print_json(graph_to_json(graph))
    else:
        _print_graph(terminal.console(), graph)


@thread_app.command("list")
def list_command(as_json: JsonOption = False) -> None:
    """App threads, newest first."""
    from segue.support.text import short
    from segue.switch.journal import open_recording
    from segue.threads import ThreadStore, summary_to_json
    from segue.transforms.secrets import mask

    store, _ = open_recording()
    with store:
        summaries = ThreadStore(store).list_threads()
    if as_json:
        print_json({"threads": [summary_to_json(s) for s in summaries]})
        return
    if not summaries:
        terminal.console().print("No threads yet (segue thread adopt SESSION makes one).")
        return
    rows = [("ID", "RUNS", "PROVIDERS", "CREATED", "TITLE")]
    for s in summaries:
        created = s.created_at.strftime("%Y-%m-%d %H:%M")
        title = short(mask(s.title or ""))
        rows.append((s.id, str(s.runs), ",".join(s.providers), created, title))
    terminal.print_table(terminal.console(), rows)


@thread_app.command("show")
def show_command(
    thread: Annotated[
        str,
        Argument(help="A thread id or unique prefix, or a session (id or path) it holds."),
    ],
    as_json: JsonOption = False,
) -> None:
    """Sync a thread with its sessions, then show its runs and what each provider thread
    holds (natively, and by handoffs)."""
    from segue.rewind.thread_view import show_thread
    from segue.threads import graph_to_json
    from segue.threads.documents import lineage_lines

    view = show_thread(thread)
    if as_json:
        document = graph_to_json(view.graph)
        document["forks"] = [{"thread": f, "run": n, "title": t} for f, n, t in view.forks]
        print_json({**document, "notes": view.notes})
        return
    console = terminal.console()
    _print_graph(console, view.graph)
    lines = lineage_lines(view.graph, view.forks)
    if lines:
        console.print("")
        for line in lines:
            console.print(line)
    for note in view.notes:
        console.print(f"note: {note}")


def _print_graph(console: Console, graph: ThreadGraph) -> None:
    from segue.threads import documents
    from segue.transforms.secrets import mask

    t = graph.thread
    console.print(f"thread {t.id}  {mask(t.title or '')}")
    if t.cwd:
        console.print(f"  cwd  {t.cwd}")
    terminal.print_table(console, [documents.RUN_COLUMNS, *documents.run_rows(graph)])
    console.print("")
    threads = documents.provider_thread_rows(graph)
    terminal.print_table(console, [documents.PROVIDER_THREAD_COLUMNS, *threads])
    console.print("")
    for line in documents.coverage_lines(graph):
        console.print(line)
