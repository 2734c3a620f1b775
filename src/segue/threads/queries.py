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

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from segue.formats.stamp import Stamp
from segue.model.conversation import Provider
from segue.model.errors import StoreError
from segue.store.database import Row, Transaction, placeholders
from segue.store.ids import new_id
from segue.store.rows import from_row, optional_provider, row_of
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
    ThreadSummary,
    Transfer,
    TurnSlot,
    assemble,
)

__all__ = [
    "Conflict",
    "add_rollback",
    "add_transfer",
    "create_thread",
    "forks_of",
    "list_threads",
    "load_graph",
    "load_rollbacks",
    "lock_thread",
    "native_holders",
    "record_changes",
    "revise_provider_thread",
    "thread_ids_like",
    "threads_of_native",
]

if TYPE_CHECKING:
    from segue.threads.reconcile import Changes

_ID_PREFIX = re.compile(r"[0-9a-f-]+")


def _now() -> datetime:
    return datetime.now(UTC)


def lock_thread(connection: Transaction, thread_id: str) -> None:
    """Serialize writers of one app thread; a missing thread is an error."""
    lock = " FOR UPDATE" if connection.backend == "postgresql" else ""
    query = f"SELECT id FROM app_threads WHERE id = :id{lock}"
    if connection.scalar(query, {"id": thread_id}) is None:
        raise StoreError(f"no thread {thread_id}")


# --------------------------------------------------------------------------- writes


def create_thread(
    connection: Transaction,
    *,
    title: str | None,
    cwd: str | None,
    parent_thread_id: str | None = None,
    parent_run_ordinal: int | None = None,
    parent_checkpoint_id: str | None = None,
) -> AppThread:
    thread = AppThread(
        new_id(), _now(), title, cwd, parent_thread_id, parent_run_ordinal, parent_checkpoint_id
    )
    _insert_thread(connection, thread)
    return thread


def _insert_thread(connection: Transaction, thread: AppThread) -> None:
    connection.insert(app_threads, row_of(thread, app_threads))


def _insert_provider_thread(connection: Transaction, pt: ProviderThread, now: datetime) -> None:
    connection.insert(provider_threads, row_of(pt, provider_threads, created_at=now))
    connection.insert(provider_thread_revisions, _revision_row(pt, 1, now))


def _revision_row(pt: ProviderThread, version: int, now: datetime) -> dict[str, Any]:
    former = [
        {
            "path": f.path,
            "stamp": None if f.stamp is None else f.stamp.to_json(),
            "turns": _turns_json(f.turns),
        }
        for f in pt.former
    ]
    return row_of(
        pt,
        provider_thread_revisions,
        provider_thread_id=pt.id,
        version=version,
        recorded_at=now,
        stamp=None if pt.stamp is None else pt.stamp.to_json(),
        turns=None if pt.turns is None else _turns_json(pt.turns),
        former=former or None,
    )


def _turns_json(turns: Sequence[TurnSlot]) -> list[list[Any]]:
    return [[slot.prompt, slot.run] for slot in turns]


def _turns_of(value: object) -> tuple[TurnSlot, ...] | None:
    """A layout read back from the store; None for a revision without one (or a broken one)."""
    if not isinstance(value, list):
        return None
    slots: list[TurnSlot] = []
    for entry in value:
        if not isinstance(entry, list) or len(entry) != 2:
            return None
        prompt, run = entry
        slots.append(
            TurnSlot(prompt if isinstance(prompt, str) else None, run if type(run) is int else None)
        )
    return tuple(slots)


def _former_of(value: object) -> tuple[FormerFile, ...]:
    if not isinstance(value, list):
        return ()
    out: list[FormerFile] = []
    for entry in value:
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            out.append(
                FormerFile(
                    entry["path"],
                    Stamp.from_json(entry.get("stamp")),
                    _turns_of(entry.get("turns")) or (),
                )
            )
    return tuple(out)


def revise_provider_thread(
    connection: Transaction,
    current: ProviderThread,
    *,
    reason: str,
    native_id: str | None = None,
    path: str | None = None,
    native_turns: int | None = None,
    status: ProviderThreadStatus | None = None,
    model: str | None = None,
) -> int:
    """A new revision of a provider thread (the caller holds the thread's lock); its version."""
    latest = connection.scalar(
        "SELECT max(version) FROM provider_thread_revisions WHERE provider_thread_id = :id",
        {"id": current.id},
    )
    version = int(latest or 0) + 1
    revised = replace(
        current,
        native_id=native_id or current.native_id,
        path=path or current.path,
        native_turns=current.native_turns if native_turns is None else native_turns,
        status=status or current.status,
        reason=reason,
        model=model or current.model,
    )
    connection.insert(provider_thread_revisions, _revision_row(revised, version, _now()))
    return version


def _latest_ordinal(connection: Transaction, thread_id: str) -> int:
    latest = connection.scalar(
        "SELECT max(ordinal) FROM runs WHERE thread_id = :id", {"id": thread_id}
    )
    return int(latest or 0)


def _run_row(run: Run, now: datetime) -> dict[str, Any]:
    return row_of(run, runs, recorded_at=now)


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
        created_at=_now(),
        supersedes=supersedes,
    )
    _insert_transfer(connection, transfer)
    return transfer


def _insert_transfer(connection: Transaction, transfer: Transfer) -> None:
    connection.insert(context_transfers, row_of(transfer, context_transfers))


def _insert_handoff(connection: Transaction, handoff: Handoff) -> None:
    if handoff.supersedes is not None:
        taken = connection.scalar(
            "SELECT id FROM context_handoffs WHERE supersedes = :id", {"id": handoff.supersedes}
        )
        if taken is not None:
            raise StoreError(f"handoff {handoff.supersedes} is already superseded by {taken}")
    connection.insert(
        context_handoffs,
        row_of(
            handoff,
            context_handoffs,
            from_provider_threads=list(handoff.from_provider_threads),
            covers_from=handoff.covers[0],
            covers_to=handoff.covers[1],
        ),
    )


def _insert_decision(
    connection: Transaction,
    thread_id: str,
    *,
    target_provider: str,
    strategy: str,
    form: str | None,
    reason: str,
    provider_thread_id: str | None,
    covers: tuple[int, int] | None,
    inputs: dict[str, Any] | None,
) -> str:
    decision_id = new_id()
    connection.insert(
        decisions,
        {
            "id": decision_id,
            "thread_id": thread_id,
            "target_provider": target_provider,
            "strategy": strategy,
            "form": form,
            "reason": reason,
            "provider_thread_id": provider_thread_id,
            "covers_from": None if covers is None else covers[0],
            "covers_to": None if covers is None else covers[1],
            "inputs": inputs,
            "created_at": _now(),
        },
    )
    return decision_id


# --------------------------------------------------------------------------- reads


def _thread(row: Row) -> AppThread:
    return from_row(AppThread, row)


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
    row = connection.first("SELECT * FROM app_threads WHERE id = :id", key, app_threads.kinds)
    if row is None:
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
    handoffs = tuple(_handoff(h) for h in handoff_rows)
    pts = _provider_threads(connection, thread_id)
    return assemble(
        _thread(row), current.values(), pts, handoffs, load_rollbacks(connection, thread_id)
    )


def _pairs(value: object) -> list[tuple[Any, str]]:
    return [
        (item[0], str(item[1]))
        for item in (value if isinstance(value, list) else ())
        if isinstance(item, list) and len(item) == 2
    ]


def load_rollbacks(connection: Transaction, thread_id: str) -> tuple[Rollback, ...]:
    """The thread's rollbacks (and their undos), oldest first."""
    rows = connection.rows(
        "SELECT * FROM rollbacks WHERE thread_id = :id ORDER BY created_at, id",
        {"id": thread_id},
        rollbacks.kinds,
    )
    return tuple(
        from_row(
            Rollback,
            r,
            runs=tuple((int(n), s) for n, s in _pairs(r["runs"]) if isinstance(n, int)),
            provider_threads=tuple((str(p), s) for p, s in _pairs(r["provider_threads"])),
            handoffs=tuple(str(h) for h in _list(r["handoffs"])),
        )
        for r in rows
    )


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def forks_of(connection: Transaction, thread_id: str) -> list[tuple[str, int | None, str | None]]:
    """The threads forked from ``thread_id``: (id, source run, title), oldest first."""
    rows = connection.tuples(
        "SELECT id, parent_run_ordinal, title FROM app_threads WHERE parent_thread_id = :id "
        "ORDER BY created_at, id",
        {"id": thread_id},
    )
    return [(row[0], row[1], row[2]) for row in rows]


def add_rollback(connection: Transaction, rollback: Rollback) -> None:
    connection.insert(
        rollbacks,
        row_of(
            rollback,
            rollbacks,
            runs=[list(p) for p in rollback.runs],
            provider_threads=[list(p) for p in rollback.provider_threads],
            handoffs=list(rollback.handoffs),
        ),
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
    latest: dict[str, Any] = {}
    for m in rows:
        latest[m["id"]] = m  # ordered by version: the last one is current
    return [
        from_row(
            ProviderThread,
            m,
            thread_id=thread_id,
            provider=Provider(m["provider"]),
            status=ProviderThreadStatus(m["status"]),
            stamp=Stamp.from_json(m["stamp"]),
            turns=_turns_of(m["turns"]),
            former=_former_of(m["former"]),
        )
        for pt_id, m in latest.items()
    ]


def record_changes(connection: Transaction, thread_id: str, changes: Changes) -> None:
    """Record what a sync or a switch worked out, in the caller's transaction, after checking
    that the store still holds what it was worked out from (else :class:`Conflict`)."""
    now = _now()
    if changes.thread is not None:
        _insert_thread(connection, changes.thread)
    else:
        lock_thread(connection, thread_id)
        _check_base(connection, thread_id, changes)
    for pt in changes.provider_threads:
        _insert_provider_thread(connection, pt, now)
    connection.insert(
        provider_thread_revisions,
        [_revision_row(revised, revised.version, now) for revised in changes.revisions.values()],
    )
    rows = [_run_row(run, now) for run in changes.runs]
    rows += [_run_row(run, now) for run in changes.run_versions.values()]
    connection.insert(runs, rows)
    for transfer in changes.transfers:
        _insert_transfer(connection, transfer)
    for handoff in changes.handoffs:
        _insert_handoff(connection, handoff)
    for d in changes.decisions:
        _insert_decision(
            connection,
            thread_id,
            target_provider=d.target_provider,
            strategy=d.strategy,
            form=d.form,
            reason=d.reason,
            provider_thread_id=d.provider_thread_id,
            covers=d.covers,
            inputs=d.inputs,
        )


class Conflict(StoreError):
    """The thread changed in the store since the changes were worked out."""


def _check_base(connection: Transaction, thread_id: str, changes: Changes) -> None:
    if _latest_ordinal(connection, thread_id) != changes.base_ordinal:
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


def list_threads(connection: Transaction, limit: int | None = None) -> list[ThreadSummary]:
    """App threads, newest first, with their run count and providers."""
    newest = "ORDER BY created_at DESC, id DESC" + ("" if limit is None else " LIMIT :limit")
    heads = connection.rows(
        f"SELECT * FROM app_threads {newest}",
        {} if limit is None else {"limit": limit},
        app_threads.kinds,
    )
    if not heads:
        return []
    listed, params = placeholders("t", [row["id"] for row in heads])
    counts: dict[str, int] = {}
    for thread_id, n in connection.tuples(
        f"SELECT thread_id, count(DISTINCT ordinal) FROM runs WHERE thread_id IN ({listed}) "
        "GROUP BY thread_id",
        params,
    ):
        counts[thread_id] = int(n)
    run_providers = connection.tuples(
        f"SELECT thread_id, provider FROM runs WHERE thread_id IN ({listed}) "
        "ORDER BY thread_id, ordinal",
        params,
    )
    last: dict[str, str] = dict(run_providers)  # (each thread's newest run's, the last one)
    providers: dict[str, list[str]] = {}
    for thread_id, provider in [
        *run_providers,
        *connection.tuples(
            f"SELECT thread_id, provider FROM provider_threads WHERE thread_id IN ({listed}) "
            "ORDER BY created_at",
            params,
        ),
    ]:
        seen = providers.setdefault(thread_id, [])
        if provider not in seen:
            seen.append(provider)
    return [
        ThreadSummary(
            id=row["id"],
            created_at=row["created_at"],
            title=row["title"],
            cwd=row["cwd"],
            runs=counts.get(row["id"], 0),
            providers=tuple(providers.get(row["id"], ())),
            last_provider=optional_provider(last.get(row["id"])),
        )
        for row in heads
    ]


def thread_ids_like(connection: Transaction, prefix: str, limit: int) -> list[str]:
    prefix = prefix.lower()
    if not _ID_PREFIX.fullmatch(prefix):
        return []
    rows = connection.tuples(
        "SELECT id FROM app_threads WHERE id LIKE :prefix ORDER BY id LIMIT :limit",
        {"prefix": f"{prefix}%", "limit": limit},
    )
    return [row[0] for row in rows]


_HELD = (
    "FROM provider_threads AS p JOIN provider_thread_revisions AS v ON v.provider_thread_id = p.id "
)


def threads_of_native(
    connection: Transaction, provider: str | None, native_id: str, *, prefix: bool = False
) -> list[str]:
    """App threads whose provider thread has (or had) this native session id (or one that
    starts with it), of one provider or any."""
    if prefix and not _ID_PREFIX.fullmatch(native_id):
        return []
    match = "v.native_id LIKE :native" if prefix else "v.native_id = :native"
    params: dict[str, Any] = {"native": f"{native_id}%" if prefix else native_id}
    if provider is not None:
        match += " AND p.provider = :provider"
        params["provider"] = provider
    rows = connection.tuples(f"SELECT DISTINCT p.thread_id {_HELD}WHERE {match}", params)
    return [row[0] for row in rows]


def native_holders(connection: Transaction, prefix: str) -> list[tuple[str, str]]:
    """(thread, native session id) for every native id that is ``prefix`` or starts with it."""
    if not _ID_PREFIX.fullmatch(prefix):
        return []
    rows = connection.tuples(
        f"SELECT DISTINCT p.thread_id, v.native_id {_HELD}WHERE v.native_id LIKE :native",
        {"native": f"{prefix}%"},
    )
    return [(row[0], row[1]) for row in rows]
