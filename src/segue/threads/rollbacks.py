"""A rollback in the graph: the thread taken back to run N, and undone.

Taking a thread back to run N (:func:`rollback_changes`, pure): every run on the line after N
becomes ``rolled_back`` (a new version; the earlier ones stay); every provider thread that holds
one of them, natively or by a handoff, becomes ``divergent`` (its next turn would be built on
runs that are no longer the thread's), so no switch resumes it as it is; the handoffs that carry
one of them are superseded by the rollback, never deleted. The rollback's record keeps what each
was before, so that :func:`undo_changes` puts it back exactly. Both are recorded with the
rollback's row in one transaction (:func:`record_rollback`).
"""

from __future__ import annotations

from datetime import UTC, datetime

from msgspec.structs import replace

from segue.store import Store, tables
from segue.store.ids import new_id
from segue.store.rows import row_of
from segue.threads import queries
from segue.threads.model import (
    HandoffStatus,
    ProviderThreadStatus,
    Rollback,
    RunStatus,
    ThreadGraph,
    span,
)
from segue.threads.reconcile import Changes

__all__ = ["finish_changes", "record_rollback", "rollback_changes", "undo_changes"]

_QUIET = (ProviderThreadStatus.DIVERGENT, ProviderThreadStatus.MISSING)


def rollback_changes(
    graph: ThreadGraph,
    to_run: int,
    *,
    scope: str,
    safety_checkpoint_id: str | None = None,
    target_checkpoint_id: str | None = None,
    later: frozenset[str] = frozenset(),
    only: frozenset[int] | None = None,
    undoes: str | None = None,
) -> tuple[Rollback, Changes]:
    """The rollback of ``graph`` to run ``to_run`` and the changes that record it; the provider
    threads in ``later`` are named in the rollback but made divergent only by
    :func:`finish_changes` (a session to copy from first). ``only``: just these runs (a redo,
    which rolls back again the runs an undo put back; ``undoes`` names that undo)."""
    undone = [
        r for r in graph.live_runs if r.ordinal > to_run and (only is None or r.ordinal in only)
    ]
    numbers = {r.ordinal for r in undone}
    rollback = Rollback(
        id=new_id(),
        thread_id=graph.thread.id,
        to_run=to_run,
        scope=scope,
        created_at=datetime.now(UTC),
        safety_checkpoint_id=safety_checkpoint_id,
        target_checkpoint_id=target_checkpoint_id,
        runs=tuple((r.ordinal, r.status.value) for r in undone),
        provider_threads=tuple(
            (pt.id, pt.status.value)
            for pt in graph.provider_threads
            if pt.coverage() & numbers and pt.status not in _QUIET
        ),
        handoffs=tuple(
            h.id
            for h in graph.handoffs
            if h.status is not HandoffStatus.SUPERSEDED
            and numbers & set(range(h.covers[0], h.covers[1] + 1))
        ),
        undoes=undoes,
    )
    changes = finish_changes(graph, rollback, later)
    note = f"rolled back: segue rollback {rollback.id} took the thread back to run {to_run}"
    for run in undone:
        changes.run_versions[run.ordinal] = replace(
            run, status=RunStatus.ROLLED_BACK, note=note, version=run.version + 1
        )
    return rollback, changes


def finish_changes(
    graph: ThreadGraph, rollback: Rollback, later: frozenset[str] = frozenset()
) -> Changes:
    """The provider threads ``rollback`` names (but those ``later``) that are not divergent
    yet, made so."""
    changes = Changes.based_on(graph)
    numbers = {n for n, _ in rollback.runs}
    pts = {pt.id: pt for pt in graph.provider_threads}
    for pt_id, _before in rollback.provider_threads:
        pt = pts.get(pt_id)
        if pt is None or pt.status in _QUIET or pt_id in later:
            continue
        reason = (
            f"it holds runs {span(pt.coverage() & numbers)}, which segue rollback {rollback.id} "
            f"rolled back (to run {rollback.to_run})"
        )
        changes.revisions[pt_id] = replace(
            pt, status=ProviderThreadStatus.DIVERGENT, reason=reason, version=pt.version + 1
        )
    return changes


def undo_changes(
    graph: ThreadGraph,
    rollback: Rollback,
    *,
    safety_checkpoint_id: str | None = None,
) -> tuple[Rollback, Changes]:
    """The undo of ``rollback`` (or of a redo) and the changes that record it: its runs and
    provider threads back to what they were (those changed since are left as they are now).
    The undo's record names those it put back, with what they were (so that a redo can roll
    them back again)."""
    changes = Changes.based_on(graph)
    runs = {r.ordinal: r for r in graph.runs}
    restored: list[tuple[int, str]] = []
    returned: list[tuple[str, str]] = []
    for ordinal, before in rollback.runs:
        run = runs.get(ordinal)
        if run and run.status is RunStatus.ROLLED_BACK and rollback.id in (run.note or ""):
            changes.run_versions[ordinal] = replace(
                run, status=RunStatus(before), note=None, version=run.version + 1
            )
            restored.append((ordinal, run.status.value))
    pts = {pt.id: pt for pt in graph.provider_threads}
    for pt_id, before in rollback.provider_threads:
        pt = pts.get(pt_id)
        if pt and pt.status is ProviderThreadStatus.DIVERGENT and rollback.id in (pt.reason or ""):
            changes.revisions[pt_id] = replace(
                pt,
                status=ProviderThreadStatus(before),
                reason=f"segue rollback --undo undid {rollback.id}",
                version=pt.version + 1,
            )
            returned.append((pt_id, pt.status.value))
    undo = Rollback(
        id=new_id(),
        thread_id=graph.thread.id,
        to_run=rollback.to_run,
        scope=rollback.scope,
        created_at=datetime.now(UTC),
        safety_checkpoint_id=safety_checkpoint_id,
        target_checkpoint_id=rollback.safety_checkpoint_id,
        runs=tuple(restored),
        provider_threads=tuple(returned),
        undoes=rollback.id,
    )
    return undo, changes


def record_rollback(
    store: Store, graph: ThreadGraph, rollback: Rollback | None, changes: Changes
) -> None:
    """The rollback (or undo) and its changes, in one transaction; raises
    :class:`segue.threads.queries.Conflict` when the thread changed meanwhile."""
    with store.writing(f"cannot record the rollback of thread {graph.thread.id}") as connection:
        if not changes.empty:
            queries.record_changes(connection, graph.thread.id, changes)
        if rollback is not None:
            connection.insert(tables.rollbacks, row_of(rollback, tables.rollbacks))
