"""``segue checkpoint`` and ``segue checkpoints``: the work is :mod:`segue.checkpointing`; this
module only talks to the user."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import orjson
import typer

from segue.cli.options import JsonOption

__all__ = ["checkpoint_command", "checkpoints_command"]

ThreadArgument = Annotated[
    str | None,
    typer.Argument(
        help="A thread id or unique prefix, or a session it holds (default: this folder's "
        "newest session's thread)."
    ),
]


def _out(obj: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.flush()


def checkpoint_command(
    thread: ThreadArgument = None,
    exact: Annotated[
        bool,
        typer.Option(
            "--exact",
            help="The newest run has just ended (what the CLIs' hooks say): label it exact.",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Snapshot the thread's folder now, as its newest run's checkpoint (the user's HEAD,
    branches, index, stash and files are never touched)."""
    from rich.console import Console

    from segue.checkpointing import checkpoint_now
    from segue.threads.checkpoints import diff_line
    from segue.threads.documents import checkpoint_to_json

    taken = checkpoint_now(thread, exact=exact)
    if as_json:
        _out({**checkpoint_to_json(taken.checkpoint), "notes": list(taken.notes)})
        return
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"thread {taken.thread_id}: {diff_line(taken.checkpoint)}", markup=False)
    console.print(f"  {taken.checkpoint.ref}", style="dim", markup=False)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    for note in taken.notes:
        err.print(f"note: {note}", style="yellow", markup=False)


def checkpoints_command(thread: ThreadArgument = None, as_json: JsonOption = False) -> None:
    """A thread's checkpoints: run, provider, time, files, +/-, exact or approximate."""
    from rich.console import Console

    from segue.checkpointing import list_thread_checkpoints
    from segue.threads.documents import checkpoint_to_json

    found = list_thread_checkpoints(thread)
    if as_json:
        _out(
            {
                "thread": found.thread_id,
                "folder": found.folder,
                "checkpoints": [checkpoint_to_json(c) for c in found.checkpoints],
            }
        )
        return
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"thread {found.thread_id}  {found.folder or ''}", markup=False)
    if not found.checkpoints:
        console.print(
            "No checkpoints yet (segue checkpoint takes one; segue run and the hooks of "
            "segue hooks install take one after every run).",
            markup=False,
        )
        return
    header = ("RUN", "PROVIDER", "TIME", "FILES", "+/-", "KIND", "COMMIT")
    rows = [
        (
            str(c.run_ordinal),
            "-" if c.provider is None else c.provider.value,
            c.created_at.astimezone().strftime("%Y-%m-%d %H:%M:%S"),
            str(len(c.files)),
            f"+{c.added} -{c.removed}",
            c.kind.value,
            c.commit_id[:12],
        )
        for c in found.checkpoints
    ]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        console.print(line.rstrip(), markup=False)
    skipped = {s.path: s.reason for c in found.checkpoints for s in c.skipped}
    for path, reason in list(skipped.items())[:10]:
        console.print(f"left out: {path} ({reason})", style="yellow", markup=False)
