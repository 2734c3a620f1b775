"""The thread graph's queries, each on a connection inside a transaction the caller holds.

Rows are only inserted. A provider thread's changing facts (native id, file, turns accounted
for, status) are numbered revisions; a run's later status is a new version of the run; a
handoff or transfer that replaces another names it in ``supersedes`` (one successor at most,
enforced by a unique index). "Current" is computed when reading.

Writers that number rows (runs, revisions) first lock the app thread's row
(:func:`lock_thread`): PostgreSQL's ``SELECT … FOR UPDATE``; on SQLite the write transaction
already holds the database's write lock from its start.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from msgspec import to_builtins

from segue.formats.stamp import Stamp
from segue.model.conversation import Provider
from segue.model.errors import StoreError
from segue.store.database import Row, Transaction, placeholders
from segue.store.ids import new_id
from segue.store.rows import from_json, from_row, optional_provider, row_of
from segue.store.tables import (
    Kind,
    app_threads,
    context_handoffs,
    context_transfers,
    decisions,
    provider_thread_revisions,
    provider_threads,
    rollbacks,
    runs,
)
from segue.threads.model import (
    AppThread,
    FormerFile,
    Handoff,
    HandoffForm,
    HandoffStatus,
    HandoffStrategy,
    ProviderThread,
    ProviderThreadStatus,
    Rollback,
    Run,
    RunStatus,
    ThreadGraph,
    Transfer,
    TurnSlot,
    assemble,
)

__all__ = [
    "Conflict",
    "add_transfer",
    "load_graph",
    "lock_thread",
    "record_changes",
    "threads_of_native",
]

if TYPE_CHECKING:
    from segue.threads.reconcile import Changes


def lock_thread(connection: Transaction, thread_id: str) -> None:
    """Serialize writers of one app thread; a missing thread is an error."""
    lock = " FOR UPDATE" if connection.backend == "postgresql" else ""
    query = f"SELECT id FROM app_threads WHERE id = :id{lock}"
    if connection.scalar(query, {"id": thread_id}) is None:
        raise StoreError(f"no thread {thread_id}")


def _revision_row(pt: ProviderThread, version: int, now: datetime) -> dict[str, Any]:
    return row_of(
        pt,
        provider_thread_revisions,
        provider_thread_id=pt.id,
        version=version,
        recorded_at=now,
        stamp=to_builtins(pt.stamp),
        turns=to_builtins(pt.turns),  # [[prompt hash, run], …]
        former=to_builtins(pt.former) or None,  # [{path, stamp, turns}, …]
    )


def add_transfer(
    connection: Transaction,
    thread_id: str,
    *,
    type: str,
    source_provider_thread_id: str | None,
    target_provider_thread_id: str | None,
    source_run_ordinal: int | None,
    resolution: str,
    status: str,
    supersedes: str | None = None,
) -> Transfer:
    transfer = Transfer(
        id=new_id(),
        thread_id=thread_id,
        type=type,
        source_provider_thread_id=source_provider_thread_id,
        target_provider_thread_id=target_provider_thread_id,
        source_run_ordinal=source_run_ordinal,
        resolution=resolution,
        status=status,
        created_at=datetime.now(UTC),
        supersedes=supersedes,
    )
    connection.insert(context_transfers, row_of(transfer, context_transfers))
    return transfer


def _insert_handoff(connection: Transaction, handoff: Handoff) -> None:
    if handoff.supersedes is not None:
        taken = connection.scalar(
            "SELECT id FROM context_handoffs WHERE supersedes = :id", {"id": handoff.supersedes}
        )
        if taken is not None:
            raise StoreError(f"handoff {handoff.supersedes} is already superseded by {taken}")
    first, last = handoff.covers
    row = row_of(handoff, context_handoffs, covers_from=first, covers_to=last)
    connection.insert(context_handoffs, row)


def _handoff(m: Row) -> Handoff:
    return from_row(
        Handoff,
        m,
        from_provider_threads=tuple(m["from_provider_threads"] or ()),
        covers=(m["covers_from"], m["covers_to"]),
        strategy=HandoffStrategy(m["strategy"]),
        form=HandoffForm(m["form"]),
        status=HandoffStatus(m["status"]),
        created_by_provider=optional_provider(m["created_by_provider"]),
    )


_RUN_KINDS: tuple[Kind, ...] = (
    "int", "text", "text", "int", "text", "text", "text", "time", "time", "int", "text",
)  # fmt: skip


def load_graph(connection: Transaction, thread_id: str) -> ThreadGraph | None:
    """The app thread as it is now; None when there is no such thread."""
    key = {"id": thread_id}
    heads = connection.rows("SELECT * FROM app_threads WHERE id = :id", key, app_threads.kinds)
    if not heads:
        return None
    current: dict[int, Run] = {}
    rows = connection.tuples(  # the hot loop of a decision: rows unpacked as tuples
        "SELECT ordinal, provider, provider_thread_id, native_turn, status, prompt, handoff_id, "
        "started_at, ended_at, version, note FROM runs WHERE thread_id = :id "
        "ORDER BY ordinal, version",
        key,
        _RUN_KINDS,
    )
    statuses = {status.value: status for status in RunStatus}
    unknown = RunStatus.UNKNOWN
    for ordinal, provider, pt, turn, status, prompt, handoff, started, ended, version, note in rows:
        current[ordinal] = Run(
            thread_id, ordinal, Provider(provider), pt, turn, statuses.get(status, unknown), prompt,
            handoff, started, ended, version, note,
        )  # fmt: skip
    handoff_rows = connection.rows(
        "SELECT * FROM context_handoffs WHERE thread_id = :id ORDER BY created_at, id",
        key,
        context_handoffs.kinds,
    )
    rollback_rows = connection.rows(
        "SELECT * FROM rollbacks WHERE thread_id = :id ORDER BY created_at, id",
        key,
        rollbacks.kinds,
    )
    return assemble(
        from_row(AppThread, heads[0]),
        current.values(),
        _provider_threads(connection, thread_id),
        [_handoff(h) for h in handoff_rows],
        [_rollback(r) for r in rollback_rows],
    )


def _rollback(r: Row) -> Rollback:
    return from_row(
        Rollback,
        r,
        runs=from_json(r["runs"], tuple[tuple[int, str], ...], ()),
        provider_threads=from_json(r["provider_threads"], tuple[tuple[str, str], ...], ()),
        handoffs=from_json(r["handoffs"], tuple[str, ...], ()),
    )


def _provider_threads(connection: Transaction, thread_id: str) -> list[ProviderThread]:
    rows = connection.rows(
        "SELECT p.id AS id, p.provider AS provider, p.origin AS origin, "
        "p.created_at AS created_at, v.version AS version, v.native_id AS native_id, "
        "v.path AS path, v.native_turns AS native_turns, v.status AS status, "
        "v.reason AS reason, v.model AS model, v.stamp AS stamp, v.turns AS turns, "
        "v.former AS former FROM provider_threads AS p "
        "JOIN provider_thread_revisions AS v ON v.provider_thread_id = p.id "
        "WHERE p.thread_id = :id ORDER BY p.created_at, p.id, v.version",
        {"id": thread_id},
    )
    latest = {m["id"]: m for m in rows}  # ordered by version: the last one is current
    return [
        from_row(
            ProviderThread,
            m,
            thread_id=thread_id,
            provider=Provider(m["provider"]),
            status=ProviderThreadStatus(m["status"]),
            stamp=from_json(m["stamp"], Stamp | None),
            turns=from_json(m["turns"], tuple[TurnSlot, ...] | None),
            former=from_json(m["former"], tuple[FormerFile, ...], ()),
        )
        for m in latest.values()
    ]


def record_changes(connection: Transaction, thread_id: str, changes: Changes) -> None:
    """Record what a sync or a switch worked out, in the caller's transaction, after checking
    that the store still holds what it was worked out from (else :class:`Conflict`)."""
    now = datetime.now(UTC)
    if changes.thread is not None:
        connection.insert(app_threads, row_of(changes.thread, app_threads))
    else:
        lock_thread(connection, thread_id)
        _check_base(connection, thread_id, changes)
    new = changes.provider_threads
    connection.insert(
        provider_threads, [row_of(pt, provider_threads, created_at=now) for pt in new]
    )
    revisions = [_revision_row(pt, 1, now) for pt in new]
    revisions += [_revision_row(pt, pt.version, now) for pt in changes.revisions.values()]
    connection.insert(provider_thread_revisions, revisions)
    rows = [*changes.runs, *changes.run_versions.values()]
    connection.insert(runs, [row_of(run, runs, recorded_at=now) for run in rows])
    connection.insert(context_transfers, [row_of(t, context_transfers) for t in changes.transfers])
    for handoff in changes.handoffs:
        _insert_handoff(connection, handoff)
    connection.insert(
        decisions,
        [
            row_of(
                d,
                decisions,
                id=new_id(),
                thread_id=thread_id,
                covers_from=None if d.covers is None else d.covers[0],
                covers_to=None if d.covers is None else d.covers[1],
                created_at=now,
            )
            for d in changes.decisions
        ],
    )


class Conflict(StoreError):
    """The thread changed in the store since the changes were worked out."""


def _check_base(connection: Transaction, thread_id: str, changes: Changes) -> None:
    latest = connection.scalar(
        "SELECT max(ordinal) FROM runs WHERE thread_id = :id", {"id": thread_id}
    )
    if int(latest or 0) != changes.base_ordinal:
        raise Conflict(f"thread {thread_id} got new runs meanwhile")
    if not changes.revisions:
        return
    listed, params = placeholders("pt", changes.revisions)
    versions = dict(
        connection.tuples(
            "SELECT provider_thread_id, max(version) FROM provider_thread_revisions "
            f"WHERE provider_thread_id IN ({listed}) GROUP BY provider_thread_id",
            params,
        )
    )
    for pt_id in changes.revisions:
        if versions.get(pt_id) != changes.base_versions.get(pt_id):
            raise Conflict(f"provider thread {pt_id} was revised meanwhile")


def threads_of_native(connection: Transaction, provider: str, native_id: str) -> list[str]:
    """App threads whose provider thread of ``provider`` has (or had) this native session id."""
    rows = connection.tuples(
        "SELECT DISTINCT p.thread_id FROM provider_threads AS p JOIN provider_thread_revisions "
        "AS v ON v.provider_thread_id = p.id "
        "WHERE v.native_id = :native AND p.provider = :provider",
        {"native": native_id, "provider": provider},
    )
    return [row[0] for row in rows]
