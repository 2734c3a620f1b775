"""``segue thread …``: app threads at the command line. The work is :mod:`segue.threads`; this
module only talks to the user (errors go through the one handler in :mod:`segue.cli.app`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

from segue.cli.grammar import Argument
from segue.cli.options import JsonOption, command_group, print_json

if TYPE_CHECKING:
    from rich.console import Console

    from segue.threads import ThreadGraph

thread_app = command_group(
    "thread", "App threads: one conversation across Claude Code and Codex, with its runs."
)


def _console() -> Console:
    from segue.cli.terminal import console

    return console()


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
        _print_graph(_console(), graph)


@thread_app.command("list")
def list_command(as_json: JsonOption = False) -> None:
    """App threads, newest first."""
    from segue.support.text import short
    from segue.switch.journal import open_recording
    from segue.threads import summary_to_json
    from segue.transforms.secrets import mask

    store, _ = open_recording()
    with store:
        from segue.threads.repository import ThreadStore

        summaries = ThreadStore(store).list_threads()
    if as_json:
        print_json({"threads": [summary_to_json(s) for s in summaries]})
        return
    console = _console()
    if not summaries:
        console.print("No threads yet (segue thread adopt SESSION makes one).", markup=False)
        return
    rows = [
        (
            s.id,
            str(s.runs),
            ",".join(s.providers),
            s.created_at.strftime("%Y-%m-%d %H:%M"),
            short(mask(s.title or "")),
        )
        for s in summaries
    ]
    _rows(console, ("ID", "RUNS", "PROVIDERS", "CREATED", "TITLE"), rows)


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

    view = show_thread(thread)
    if as_json:
        document = graph_to_json(view.graph)
        document["forks"] = [{"thread": f, "run": n, "title": t} for f, n, t in view.forks]
        print_json({**document, "notes": view.notes})
        return
    console = _console()
    _print_graph(console, view.graph)
    from segue.threads.documents import lineage_lines

    lines = lineage_lines(view.graph, view.forks)
    if lines:
        console.print("", markup=False)
        for line in lines:
            console.print(line, markup=False)
    for note in view.notes:
        console.print(f"note: {note}", markup=False)


def _rows(console: Console, header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    """Aligned columns; the last one takes what is left of the line."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header) - 1)]
    for row in (header, *rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        console.print("  ".join([*cells, row[-1]]).rstrip(), markup=False)


def _print_graph(console: Console, graph: ThreadGraph) -> None:
    from segue.threads import coverage_lines
    from segue.threads.documents import (
        PROVIDER_THREAD_COLUMNS,
        RUN_COLUMNS,
        provider_thread_rows,
        run_rows,
    )
    from segue.transforms.secrets import mask

    t = graph.thread
    console.print(f"thread {t.id}  {mask(t.title or '')}", markup=False)
    if t.cwd:
        console.print(f"  cwd  {t.cwd}", markup=False)
    _rows(console, RUN_COLUMNS, run_rows(graph))
    console.print("", markup=False)
    _rows(console, PROVIDER_THREAD_COLUMNS, provider_thread_rows(graph))
    console.print("", markup=False)
    for line in coverage_lines(graph):
        console.print(line, markup=False)
