"""``segue rollback`` and ``segue fork``: the work is :mod:`segue.rewind`; this module shows the
preview, asks once, and reports."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from segue.cli.grammar import Argument, Option, UsageError
from segue.cli.options import JsonOption, print_json, terminal_answer
from segue.model.errors import SegueError

if TYPE_CHECKING:
    from rich.console import Console

    from segue.rewind.rollback import RollbackDone, RollbackPlan

__all__ = ["fork_command", "rollback_command"]


def plan_to_json(plan: RollbackPlan) -> dict[str, Any]:
    return {
        "thread": plan.thread_id,
        "to_run": plan.to_run,
        "undo": plan.undo,
        "undoes": plan.undoes,
        "redo": plan.redo,
        "files": plan.files,
        "context": plan.context,
        "folder": plan.folder,
        "checkpoint": None
        if plan.target is None
        else {
            "id": plan.target.id,
            "commit": plan.target.commit_id,
            "run": plan.target.run_ordinal,
        },
        "on_disk": [{"path": a.path, "action": a.action} for a in plan.actions],
        "left": [{"path": s.path, "reason": s.reason} for s in plan.left],
        "not_in_a_checkpoint": [{"path": a.path, "action": a.action} for a in plan.uncovered],
        "runs_rolled_back": list(plan.runs),
        "handoffs_superseded": list(plan.handoffs),
        "provider_threads": [
            {"id": pt, "provider": p.value, "what": what} for pt, p, what in plan.provider_threads
        ],
        "refused": plan.refused,
    }


def done_to_json(done: RollbackDone) -> dict[str, Any]:
    return {
        **plan_to_json(done.plan),
        "rollback": done.rollback_id,
        "safety_snapshot": None
        if done.safety is None
        else {"id": done.safety.id, "commit": done.safety.commit_id, "ref": done.safety.ref},
        "done": [{"path": a.path, "action": a.action} for a in done.done],
        "failed": [{"path": s.path, "reason": s.reason} for s in done.failed],
        "sessions": [
            {
                "provider": c.provider.value,
                "session_id": c.session_id,
                "path": c.path,
                "resume_command": c.resume_command,
                "problem": c.problem,
            }
            for c in done.copies
        ],
        "notes": list(done.notes),
        "exit_code": 1 if done.failed else 0,
    }


def _print(console: Console, lines: list[tuple[str, str]]) -> None:
    for text, style in lines:
        console.print(text, style=style or None, markup=False)


def _print_plan(console: Console, plan: RollbackPlan) -> None:
    from segue.rewind.rollback_text import plan_lines

    _print(console, plan_lines(plan))


def rollback_command(
    thread: Annotated[
        str | None,
        Argument(
            help="A thread id or unique prefix, or a session it holds (default: this folder's)."
        ),
    ] = None,
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
    from segue.cli.terminal import console as terminal_console
    from segue.rewind.rollback import plan_rollback, plan_undo, rollback, undo_rollback

    if files_only and context_only:
        raise UsageError("--files-only and --context-only exclude each other")
    if undo == (to_run is not None):
        raise UsageError("give --to-run N (the run to go back to), or --undo")
    if to_run is not None and to_run < 1:
        raise UsageError(f"--to-run takes a run's number, from 1 (not {to_run})")
    console = terminal_console(stderr=as_json)
    if undo and (files_only or context_only):
        raise UsageError("--undo puts back what the last rollback changed: no --files-only")
    if undo:
        plan = plan_undo(thread)
    else:
        assert to_run is not None
        plan = plan_rollback(thread, to_run, files=not context_only, context=not files_only)
    if as_json and dry_run:
        print_json({**plan_to_json(plan), "dry_run": True})
        return
    if not as_json:
        _print_plan(console, plan)
    if plan.refused:
        raise SegueError(plan.refused)
    if dry_run:
        console.print("dry run: nothing changed", style="dim", markup=False)
        return
    if undo:
        _confirm(yes, "Undo it?", as_json)
        done = undo_rollback(thread, confirmed=True)
    else:
        assert to_run is not None
        _confirm(yes, "Roll back?", as_json)
        done = rollback(
            thread, to_run, files=not context_only, context=not files_only, confirmed=True
        )
    _report(console, done, as_json)


def _confirm(yes: bool, question: str, as_json: bool) -> None:
    if yes:
        return
    answer = None if as_json else terminal_answer(f"{question} [y/N]: ")
    if answer is None:
        raise SegueError("not done: confirm with --yes (no terminal to ask on)")
    if not answer:
        raise SegueError("not done: not confirmed")


def _report(console: Console, done: RollbackDone, as_json: bool) -> None:
    from segue.rewind.rollback_text import done_lines

    if as_json:
        print_json(done_to_json(done))
    else:
        _print(console, done_lines(done))
    if done.failed:
        raise SystemExit(1)


def fork_command(
    thread: Annotated[
        str | None,
        Argument(
            help="A thread id or unique prefix, or a session it holds (default: this folder's)."
        ),
    ] = None,
    at_run: Annotated[int | None, Option("--at-run", help="The run the fork starts after.")] = None,
    into: Annotated[
        str | None,
        Option("--into", help="The fork's folder (default: <folder>-fork-<N> beside it)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """A new thread from run N: its files a git worktree at checkpoint N (a copy outside git),
    its provider chosen by its first segue run (the user's checkout is never switched)."""
    from segue.cli.terminal import console as terminal_console
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
                "thread": forked.thread_id,
                "parent": forked.parent_thread_id,
                "at_run": forked.at_run,
                "checkpoint": {"id": forked.checkpoint.id, "commit": forked.checkpoint.commit_id},
                "folder": forked.folder,
                "worktree": forked.worktree,
                "notes": list(forked.notes),
            }
        )
        return
    console = terminal_console()
    how = "a git worktree" if forked.worktree else "a copy"
    console.print(
        f"thread {forked.thread_id}: a fork of {forked.parent_thread_id} at run {forked.at_run}",
        markup=False,
    )
    console.print(
        f"  files: {forked.folder} ({how} of checkpoint {forked.checkpoint.commit_id[:12]})",
        markup=False,
    )
    console.print(
        f"  next: cd {forked.folder} && segue run --thread {forked.thread_id} "
        "[--provider claude|codex] PROMPT",
        style="dim",
        markup=False,
    )
    for note in forked.notes:
        console.print(f"note: {note}", style="yellow", markup=False)
