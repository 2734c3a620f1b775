"""``segue checkpoint``, ``segue checkpoints`` and ``segue hooks``: the work is
:mod:`segue.rewind`; this module only talks to the user."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from segue.cli.grammar import Argument, Option
from segue.cli.options import PROVIDER, JsonOption, command_group, print_json
from segue.model.conversation import Provider

if TYPE_CHECKING:
    from segue.providers.hooks import HookChange

__all__ = ["checkpoint_command", "checkpoints_command", "hooks_app"]

ThreadArgument = Annotated[
    str | None,
    Argument(
        help="A thread id or unique prefix, or a session it holds (default: this folder's "
        "newest session's thread)."
    ),
]


def checkpoint_command(
    thread: ThreadArgument = None,
    exact: Annotated[
        bool,
        Option(
            "--exact",
            help="The newest run has just ended (what the CLIs' hooks say): label it exact.",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Snapshot the thread's folder now, as its newest run's checkpoint (the user's HEAD,
    branches, index, stash and files are never touched)."""
    from segue.cli.terminal import console as terminal_console
    from segue.rewind import checkpoint_now
    from segue.threads.checkpoints import diff_line
    from segue.threads.documents import checkpoint_to_json

    taken = checkpoint_now(thread, exact=exact)
    if as_json:
        print_json({**checkpoint_to_json(taken.checkpoint), "notes": list(taken.notes)})
        return
    console = terminal_console()
    console.print(f"thread {taken.thread_id}: {diff_line(taken.checkpoint)}", markup=False)
    console.print(f"  {taken.checkpoint.ref}", style="dim", markup=False)
    err = terminal_console(stderr=True)
    for note in taken.notes:
        err.print(f"note: {note}", style="yellow", markup=False)


def checkpoints_command(thread: ThreadArgument = None, as_json: JsonOption = False) -> None:
    """A thread's checkpoints: run, provider, time, files, +/-, exact or approximate."""
    from segue.cli.terminal import console as terminal_console
    from segue.rewind import list_thread_checkpoints
    from segue.threads.documents import checkpoint_to_json

    found = list_thread_checkpoints(thread)
    if as_json:
        print_json(
            {
                "thread": found.thread_id,
                "folder": found.folder,
                "checkpoints": [checkpoint_to_json(c) for c in found.checkpoints],
            }
        )
        return
    console = terminal_console()
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


hooks_app = command_group(
    "hooks",
    "The CLIs' end-of-turn hooks: a checkpoint as each turn ends, and the usage-limit signal.",
)

ProvidersOption = Annotated[
    list[Provider] | None,
    Option("--provider", "-p", kind=PROVIDER, help="Only this CLI (repeat for several)."),
]
DryRunOption = Annotated[bool, Option("--dry-run", help="Say what would change; change nothing.")]


def _print_changes(
    changes: list[tuple[Provider, HookChange | None]], dry_run: bool, as_json: bool
) -> None:
    from segue.cli.terminal import console as terminal_console

    if as_json:
        print_json(
            {
                "dry_run": dry_run,
                "hooks": [
                    {
                        "provider": p.value,
                        "supported": c is not None,
                        "file": None if c is None else str(c.path),
                        "changed": False if c is None else c.changed,
                        "what": "no end-of-turn hook" if c is None else c.what,
                        "copy": None if c is None or c.copy is None else str(c.copy),
                        "error": None if c is None else c.error,
                    }
                    for p, c in changes
                ],
                "exit_code": 1 if any(c is not None and c.error for _, c in changes) else 0,
            }
        )
        if any(c is not None and c.error for _, c in changes):
            raise SystemExit(1)
        return
    console = terminal_console()
    for provider, change in changes:
        if change is None:
            console.print(f"{provider.value}: has no end-of-turn hook", markup=False)
            continue
        if change.error is not None:
            console.print(f"{provider.value}: {change.error}", style="red", markup=False)
            continue
        would = "would be: " if dry_run and change.changed else ""
        console.print(f"{provider.value}: {would}{change.what} ({change.path})", markup=False)
        if change.copy is not None:
            console.print(f"  the file as it was: {change.copy}", style="dim", markup=False)
    if any(c is not None and c.error for _, c in changes):
        raise SystemExit(1)


@hooks_app.command("install")
def hooks_install(
    provider: ProvidersOption = None, dry_run: DryRunOption = False, as_json: JsonOption = False
) -> None:
    """Add a Claude Code Stop (and StopFailure rate_limit) hook and a Codex notify program
    that run segue hook: a checkpoint as each turn ends. Nothing of yours is removed; running
    it twice changes nothing."""
    from segue.rewind import install_hooks

    _print_changes(install_hooks(provider, dry_run=dry_run), dry_run, as_json)


@hooks_app.command("uninstall")
def hooks_uninstall(
    provider: ProvidersOption = None, dry_run: DryRunOption = False, as_json: JsonOption = False
) -> None:
    """Take out exactly what segue hooks install put in (a notify program of yours that
    segue's ran after is put back)."""
    from segue.rewind import uninstall_hooks

    _print_changes(uninstall_hooks(provider, dry_run=dry_run), dry_run, as_json)
