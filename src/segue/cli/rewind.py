"""``segue rollback``, ``segue fork``, ``segue checkpoint``, ``segue checkpoints`` and
``segue hooks``: the work is :mod:`segue.rewind`; this module shows the previews, asks once, and
reports."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

from segue.cli import terminal
from segue.cli.grammar import Group, Option, UsageError
from segue.cli.options import (
    PROVIDER,
    JsonOption,
    ThreadArgument,
    picked,
    print_json,
    terminal_answer,
)
from segue.model.conversation import Provider
from segue.model.errors import SegueError

if TYPE_CHECKING:
    from rich.console import Console

    from segue.providers.hooks import HookChange
    from segue.rewind.rollback import RollbackDone, RollbackPlan

__all__ = [
    "checkpoint_command",
    "checkpoints_command",
    "fork_command",
    "hooks_app",
    "rollback_command",
]


def plan_to_json(plan: RollbackPlan) -> dict[str, Any]:
    at = plan.target
    return {
        **picked(plan, "thread=thread_id to_run undo undoes redo files context folder"),
        "checkpoint": None if at is None else picked(at, "id commit=commit_id run=run_ordinal"),
        **picked(
            plan,
            "on_disk=actions left not_in_a_checkpoint=uncovered runs_rolled_back=runs "
            "handoffs_superseded=handoffs",
        ),
        "provider_threads": [
            {"id": pt, "provider": p.value, "what": what} for pt, p, what in plan.provider_threads
        ],
        "refused": plan.refused,
    }


def done_to_json(done: RollbackDone) -> dict[str, Any]:
    safety = done.safety
    return {
        **plan_to_json(done.plan),
        "rollback": done.rollback_id,
        "safety_snapshot": None if safety is None else picked(safety, "id commit=commit_id ref"),
        **picked(done, "done failed sessions=copies notes"),
        "exit_code": 1 if done.failed else 0,
    }


def _print(console: Console, lines: list[tuple[str, str]]) -> None:
    for text, style in lines:
        console.print(text, style=style or None)


def rollback_command(
    thread: ThreadArgument = None,
    to_run: Annotated[
        int | None, Option("--to-run", help="The run to go back to (runs after it go).")
    ] = None,
    undo: Annotated[
        bool,
        Option(
            "--undo",
            help="Undo the last rollback, or the last undo (the folder as it was before it).",
        ),
    ] = False,
    dry_run: Annotated[bool, Option("--dry-run", help="Show the preview; change nothing.")] = False,
    yes: Annotated[bool, Option("--yes", "-y", help="Confirm without asking.")] = False,
    files_only: Annotated[
        bool, Option("--files-only", help="Only the files; the thread stays as it is.")
    ] = False,
    context_only: Annotated[
        bool, Option("--context-only", help="Only the thread; the files stay as they are.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Take a thread back to run N: the folder byte for byte as checkpoint N left it, and the
    runs after it rolled back on every provider (a safety snapshot first: --undo)."""
    from segue.rewind.rollback import plan_rollback, plan_undo, rollback, undo_rollback
    from segue.rewind.rollback_text import done_lines, plan_lines

    if files_only and context_only:
        raise UsageError("--files-only and --context-only exclude each other")
    if undo == (to_run is not None):
        raise UsageError("give --to-run N (the run to go back to), or --undo")
    if to_run is not None and to_run < 1:
        raise UsageError(f"--to-run takes a run's number, from 1 (not {to_run})")
    if undo and (files_only or context_only):
        raise UsageError("--undo puts back what the last rollback changed: no --files-only")
    files, context = not context_only, not files_only
    if undo:
        plan, run = plan_undo(thread), partial(undo_rollback, thread)
    else:
        assert to_run is not None
        plan = plan_rollback(thread, to_run, files=files, context=context)
        run = partial(rollback, thread, to_run, files=files, context=context)
    if as_json and dry_run:
        print_json({**plan_to_json(plan), "dry_run": True})
        return
    console = terminal.console()
    if not as_json:
        _print(console, plan_lines(plan))
    if plan.refused:
        raise SegueError(plan.refused)
    if dry_run:
        console.print("dry run: nothing changed", style="dim")
        return
    if not yes:
        question = "Undo it? [y/N]: " if undo else "Roll back? [y/N]: "
        answer = None if as_json else terminal_answer(question)
        if answer is None:
            raise SegueError("not done: confirm with --yes (no terminal to ask on)")
        if not answer:
            raise SegueError("not done: not confirmed")
    done = run(confirmed=True)
    if as_json:
        print_json(done_to_json(done))
    else:
        _print(console, done_lines(done))
    if done.failed:
        raise SystemExit(1)


def fork_command(
    thread: ThreadArgument = None,
    at_run: Annotated[int | None, Option("--at-run", help="The run the fork starts after.")] = None,
    into: Annotated[
        str | None,
        Option("--into", help="The fork's folder (default: <folder>-fork-<N> beside it)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """A new thread from run N: its files a git worktree at checkpoint N (a copy outside git),
    its provider chosen by its first segue run (the user's checkout is never switched)."""
    from segue.rewind.fork import fork_thread

    if at_run is None:
        raise UsageError("give --at-run N (the run the fork starts after)")
    if at_run < 1:
        raise UsageError(f"--at-run takes a run's number, from 1 (not {at_run})")
    if into is not None and not into.strip():  # (not the default folder: say one, or leave it)
        raise UsageError("--into needs a folder (leave --into out for <folder>-fork-<N>)")
    forked = fork_thread(thread, at_run, into=into)
    if as_json:
        print_json(
            {
                **picked(forked, "thread=thread_id parent=parent_thread_id at_run"),
                "checkpoint": picked(forked.checkpoint, "id commit=commit_id"),
                **picked(forked, "folder worktree notes"),
            }
        )
        return
    how = "a git worktree" if forked.worktree else "a copy"
    f, commit = forked, forked.checkpoint.commit_id[:12]
    run = f"segue run --thread {f.thread_id} [--provider claude|codex] PROMPT"
    lines = [
        (f"thread {f.thread_id}: a fork of {f.parent_thread_id} at run {f.at_run}", ""),
        (f"  files: {f.folder} ({how} of checkpoint {commit})", ""),
        (f"  next: cd {f.folder} && {run}", "dim"),
        *((f"note: {note}", "yellow") for note in f.notes),
    ]
    _print(terminal.console(), lines)


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
    from segue.rewind import checkpoint_now
    from segue.threads.checkpoints import diff_line
    from segue.threads.documents import checkpoint_to_json

    taken = checkpoint_now(thread, exact=exact)
    if as_json:
        print_json({**checkpoint_to_json(taken.checkpoint), "notes": list(taken.notes)})
        return
    console = terminal.console()
    console.print(f"thread {taken.thread_id}: {diff_line(taken.checkpoint)}")
    console.print(f"  {taken.checkpoint.ref}", style="dim")
    err = terminal.console(stderr=True)
    for note in taken.notes:
        err.print(f"note: {note}", style="yellow")


def checkpoints_command(thread: ThreadArgument = None, as_json: JsonOption = False) -> None:
    """A thread's checkpoints: run, provider, time, files, +/-, exact or approximate."""
    from segue.rewind import list_thread_checkpoints
    from segue.threads.documents import checkpoint_to_json

    found = list_thread_checkpoints(thread)
    if as_json:
        checkpoints = [checkpoint_to_json(c) for c in found.checkpoints]
        print_json({**picked(found, "thread=thread_id folder"), "checkpoints": checkpoints})
        return
    console = terminal.console()
    console.print(f"thread {found.thread_id}  {found.folder or ''}")
    if not found.checkpoints:
        console.print(
            "No checkpoints yet (segue checkpoint takes one; segue run and the hooks of "
            "segue hooks install take one after every run).",
        )
        return
    rows = [("RUN", "PROVIDER", "TIME", "FILES", "+/-", "KIND", "COMMIT")]
    for c in found.checkpoints:
        provider = "-" if c.provider is None else c.provider.value
        when = c.created_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        files, lines = str(len(c.files)), f"+{c.added} -{c.removed}"
        rows.append(
            (str(c.run_ordinal), provider, when, files, lines, c.kind.value, c.commit_id[:12])
        )
    terminal.print_table(console, rows)
    skipped = {s.path: s.reason for c in found.checkpoints for s in c.skipped}
    for path, reason in list(skipped.items())[:10]:
        console.print(f"left out: {path} ({reason})", style="yellow")


hooks_app = Group(
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
    failed = any(c is not None and c.error for _, c in changes)
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
                "exit_code": 1 if failed else 0,
            }
        )
    else:
        console = terminal.console()
        for provider, change in changes:
            if change is None:
                console.print(f"{provider.value}: has no end-of-turn hook")
            elif change.error is not None:
                console.print(f"{provider.value}: {change.error}", style="red")
            else:
                would = "would be: " if dry_run and change.changed else ""
                console.print(f"{provider.value}: {would}{change.what} ({change.path})")
                if change.copy is not None:
                    console.print(f"  the file as it was: {change.copy}", style="dim")
    if failed:
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
