"""A rollback's preview and its report as lines for a person, each with its style (``""``,
``"yellow"``, ``"red"``, ``"dim"``): what ``segue rollback`` prints and ``segue tui`` shows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from segue.support.text import quoted

if TYPE_CHECKING:
    from segue.rewind.rollback import RollbackDone, RollbackPlan
    from segue.workspace.restore import FileAction

__all__ = ["SHOWN", "done_lines", "plan_lines"]

SHOWN = 20  # files named before "… and N more"

Line = tuple[str, str]


def _capped(lines: list[Line], more: str = "") -> list[Line]:
    """The first :data:`SHOWN` lines, then how many more there are."""
    if len(lines) <= SHOWN:
        return lines
    return [*lines[:SHOWN], (f"  … and {len(lines) - SHOWN} more{more}", "")]


def _files(title: str, actions: Iterable[FileAction]) -> list[Line]:
    lines = [(f"  {a.action:<9} {quoted(a.path)}", "") for a in actions]
    return [(title, ""), *_capped(lines)] if lines else []


def plan_lines(plan: RollbackPlan) -> list[Line]:
    """The preview: what changes on disk, and in the thread."""
    if plan.redo:
        what = "undo the last undo (its runs rolled back again):"
    elif plan.undo:
        what = "undo the last rollback:"
    else:
        what = f"roll back to run {plan.to_run}:"
    lines: list[Line] = [(f"thread {plan.thread_id}: {what}", "")]
    if plan.files and plan.folder:
        c = plan.target
        at = "" if c is None else f" (checkpoint {c.commit_id[:12]}, {c.kind.value})"
        lines.append((f"files in {plan.folder}{at}", ""))
        if not plan.actions and not plan.undo:
            lines.append(("  nothing changes on disk", ""))
        lines += _files("  on disk:", plan.actions)
        left = [(f"  left      {quoted(s.path)} ({s.reason})", "") for s in plan.left]
        lines += _capped(left, " left as they are")
        if plan.uncovered:
            n = len(plan.uncovered)
            lines.append(
                (
                    f"  {n} change{'s' if n != 1 else ''} since the last checkpoint, kept in the "
                    "safety snapshot (segue rollback --undo puts them back):",
                    "yellow",
                )
            )
            lines += [(f"    {quoted(a.path)}", "yellow") for a in plan.uncovered[:SHOWN]]
    if plan.context:
        runs = ", ".join(map(str, plan.runs)) or "none"
        done = "put back on the line" if plan.undo and not plan.redo else "rolled back"
        lines.append((f"thread: runs {done}: {runs}", ""))
        if plan.handoffs:
            lines.append((f"  handoffs superseded: {len(plan.handoffs)}", ""))
        lines += [(f"  {p.value} {pt_id[:13]}: {w}", "") for pt_id, p, w in plan.provider_threads]
    return lines


def done_lines(done: RollbackDone) -> list[Line]:
    """The report of a rollback (or an undo) that was made."""
    plan = done.plan
    what = "undone" if plan.undo else f"rolled back to run {plan.to_run}"
    if plan.redo:
        what = "undo undone: rolled back again"
    lines: list[Line] = [(f"thread {plan.thread_id}: {what} (rollback {done.rollback_id})", "")]
    if (
        plan.undo
        and not plan.redo
        and plan.runs
        and not any("went on after" in n for n in done.notes)
    ):
        lines.append((f"runs back on the thread's line: {', '.join(map(str, plan.runs))}", ""))
    lines += _files("files:", done.done)
    lines += [(f"  failed    {quoted(s.path)}: {s.reason}", "red") for s in done.failed]
    for c in done.copies:
        if c.session_id:
            lines.append(
                (f"{c.provider.value}: a new session at run {plan.to_run}: {c.session_id}", "")
            )
            lines.append((f"  {c.resume_command}", "dim"))
        else:
            lines.append(
                (
                    f"{c.provider.value}: no session at run {plan.to_run} ({c.problem}); the "
                    "next run there starts one",
                    "yellow",
                )
            )
    if done.safety is not None:
        lines.append((f"safety snapshot {done.safety.commit_id[:12]} ({done.safety.ref})", "dim"))
    lines += [(f"note: {note}", "yellow") for note in done.notes]
    return lines
