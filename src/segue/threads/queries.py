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
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Row, func, select
from sqlalchemy.engine import Connection

from segue.formats.stamp import Stamp
from segue.model.conversation import Provider
from segue.model.errors import StoreError
from segue.store.ids import new_id
from segue.store.rows import from_row, optional_provider, row_of
from segue.store.schema import (
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
    "NewRun",
    "add_handoff",
    "add_provider_thread",
    "add_runs",
    "add_transfer",
    "create_thread",
    "list_threads",
    "load_graph",
    "lock_thread",
    "native_holders",
    "record_changes",
    "record_decision",
    "revise_provider_thread",
    "revise_runs",
    "thread_ids_like",
    "threads_of_native",
]

if TYPE_CHECKING:
    from segue.threads.reconcile import Changes

_ID_PREFIX = re.compile(r"[0-9a-f-]+")


@dataclass(frozen=True, slots=True)
class NewRun:
    """A run to record: the next ordinals of the app thread are given in order."""

    provider_thread_id: str
    native_turn: int
    prompt: str
    status: RunStatus = RunStatus.COMPLETED
    started_at: datetime | None = None
    ended_at: datetime | None = None
    handoff_id: str | None = None


def _now() -> datetime:
    return datetime.now(UTC)


def lock_thread(connection: Connection, thread_id: str) -> None:
    """Serialize writers of one app thread; a missing thread is an error."""
    query = select(app_threads.c.id).where(app_threads.c.id == thread_id)
    if connection.dialect.name == "postgresql":
        query = query.with_for_update()
    if connection.execute(query).first() is None:
        raise StoreError(f"no thread {thread_id}")


# --------------------------------------------------------------------------- writes


def create_thread(
    connection: Connection,
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


def _insert_thread(connection: Connection, thread: AppThread) -> None:
    connection.execute(app_threads.insert().values(**row_of(thread, app_threads)))


def add_provider_thread(
    connection: Connection,
    thread_id: str,
    *,
    provider: Provider,
    origin: str,
    native_id: str,
    path: str,
    native_turns: int,
    model: str | None,
    reason: str | None = None,
) -> str:
    """A new provider thread (its first revision, active); returns its id."""
    pt = ProviderThread(
        id=new_id(),
        thread_id=thread_id,
        provider=provider,
        origin=origin,
        native_id=native_id,
        path=path,
        native_turns=native_turns,
        status=ProviderThreadStatus.ACTIVE,
        model=model,
        version=1,
        reason=reason,
    )
    _insert_provider_thread(connection, pt, _now())
    return pt.id


def _insert_provider_thread(connection: Connection, pt: ProviderThread, now: datetime) -> None:
    connection.execute(
        provider_threads.insert().values(**row_of(pt, provider_threads, created_at=now))
    )
    connection.execute(provider_thread_revisions.insert().values(**_revision_row(pt, 1, now)))


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
    connection: Connection,
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
    r = provider_thread_revisions.c
    latest = connection.execute(
        select(func.max(r.version)).where(r.provider_thread_id == current.id)
    ).scalar_one()
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
    connection.execute(
        provider_thread_revisions.insert().values(**_revision_row(revised, version, _now()))
    )
    return version


def add_runs(connection: Connection, thread_id: str, new: Sequence[NewRun]) -> list[Run]:
    """Record runs as the app thread's next ordinals (the caller holds the thread's lock)."""
    if not new:
        return []
    latest = connection.execute(
        select(func.max(runs.c.ordinal)).where(runs.c.thread_id == thread_id)
    ).scalar_one()
    pts = dict(
        connection.execute(
            select(provider_threads.c.id, provider_threads.c.provider).where(
                provider_threads.c.thread_id == thread_id
            )
        ).all()
    )
    now = _now()
    out: list[Run] = []
    for n, spec in enumerate(new, start=int(latest or 0) + 1):
        if spec.provider_thread_id not in pts:
            raise StoreError(
                f"provider thread {spec.provider_thread_id} is not in thread {thread_id}"
            )
        out.append(
            Run(
                thread_id=thread_id,
                ordinal=n,
                provider=Provider(pts[spec.provider_thread_id]),
                provider_thread_id=spec.provider_thread_id,
                native_turn=spec.native_turn,
                status=spec.status,
                prompt=spec.prompt,
                handoff_id=spec.handoff_id,
                started_at=spec.started_at,
                ended_at=spec.ended_at,
            )
        )
    connection.execute(runs.insert(), [_run_row(run, now) for run in out])
    return out


def revise_runs(connection: Connection, changed: Sequence[Run]) -> None:
    """Record new versions of runs (a later status); each is the given run with version + 1."""
    now = _now()
    rows = []
    for run in changed:
        row = _run_row(run, now)
        row["version"] = run.version + 1
        rows.append(row)
    if rows:
        connection.execute(runs.insert(), rows)


def _run_row(run: Run, now: datetime) -> dict[str, Any]:
    return row_of(run, runs, recorded_at=now)


def add_transfer(
    connection: Connection,
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


def _insert_transfer(connection: Connection, transfer: Transfer) -> None:
    connection.execute(context_transfers.insert().values(**row_of(transfer, context_transfers)))


def add_handoff(
    connection: Connection,
    thread_id: str,
    *,
    to_provider_thread_id: str,
    from_provider_threads: Sequence[str],
    covers: tuple[int, int],
    strategy: HandoffStrategy,
    form: HandoffForm,
    status: HandoffStatus = HandoffStatus.READY,
    text: str | None = None,
    items: list[dict[str, Any]] | None = None,
    created_by_provider: Provider | None = None,
    transfer_id: str | None = None,
    target_run_ordinal: int | None = None,
    supersedes: str | None = None,
) -> Handoff:
    """Record a handoff. A handoff that replaces another names it in ``supersedes``: recording a
    second successor of the same handoff is refused."""
    if status is HandoffStatus.SUPERSEDED:
        raise StoreError("a handoff is superseded by recording its successor, not by its status")
    handoff = Handoff(
        id=new_id(),
        thread_id=thread_id,
        to_provider_thread_id=to_provider_thread_id,
        from_provider_threads=tuple(from_provider_threads),
        covers=covers,
        strategy=strategy,
        form=form,
        status=status,
        created_at=_now(),
        text=text,
        items=items,
        created_by_provider=created_by_provider,
        transfer_id=transfer_id,
        target_run_ordinal=target_run_ordinal,
        supersedes=supersedes,
    )
    _insert_handoff(connection, handoff)
    return handoff


def _insert_handoff(connection: Connection, handoff: Handoff) -> None:
    if handoff.supersedes is not None:
        h = context_handoffs.c
        taken = connection.execute(select(h.id).where(h.supersedes == handoff.supersedes)).first()
        if taken is not None:
            raise StoreError(f"handoff {handoff.supersedes} is already superseded by {taken[0]}")
    connection.execute(
        context_handoffs.insert().values(
            **row_of(
                handoff,
                context_handoffs,
                from_provider_threads=list(handoff.from_provider_threads),
                covers_from=handoff.covers[0],
                covers_to=handoff.covers[1],
            )
        )
    )


def record_decision(
    connection: Connection,
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
    connection.execute(
        decisions.insert().values(
            id=decision_id,
            thread_id=thread_id,
            target_provider=target_provider,
            strategy=strategy,
            form=form,
            reason=reason,
            provider_thread_id=provider_thread_id,
            covers_from=None if covers is None else covers[0],
            covers_to=None if covers is None else covers[1],
            inputs=inputs,
            created_at=_now(),
        )
    )
    return decision_id


# --------------------------------------------------------------------------- reads


def _thread(row: Row[Any]) -> AppThread:
    return from_row(AppThread, row._mapping)


def _handoff(row: Row[Any]) -> Handoff:
    m = row._mapping
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


def load_graph(connection: Connection, thread_id: str) -> ThreadGraph | None:
    """The app thread as it is now; None when there is no such thread."""
    row = connection.execute(select(app_threads).where(app_threads.c.id == thread_id)).first()
    if row is None:
        return None
    r = runs.c
    current: dict[int, Run] = {}
    columns = (r.ordinal, r.provider, r.provider_thread_id, r.native_turn, r.status, r.prompt,
               r.handoff_id, r.started_at, r.ended_at, r.version, r.note)  # fmt: skip
    query = select(*columns).where(r.thread_id == thread_id).order_by(r.ordinal, r.version)
    rows = connection.execute(query)  # the hot loop of a decision: rows unpacked as tuples
    statuses = {status.value: status for status in RunStatus}
    unknown = RunStatus.UNKNOWN
    for ordinal, provider, pt, turn, status, prompt, handoff, started, ended, version, note in rows:
        current[ordinal] = Run(
            thread_id, ordinal, Provider(provider), pt, turn, statuses.get(status, unknown), prompt,
            handoff, started, ended, version, note,
        )  # fmt: skip
    handoff_rows = connection.execute(
        select(context_handoffs)
        .where(context_handoffs.c.thread_id == thread_id)
        .order_by(context_handoffs.c.created_at, context_handoffs.c.id)
    ).all()
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


def load_rollbacks(connection: Connection, thread_id: str) -> tuple[Rollback, ...]:
    """The thread's rollbacks (and their undos), oldest first."""
    rows = connection.execute(
        select(rollbacks)
        .where(rollbacks.c.thread_id == thread_id)
        .order_by(rollbacks.c.created_at, rollbacks.c.id)
    )
    return tuple(
        Rollback(
            id=r.id,
            thread_id=r.thread_id,
            to_run=r.to_run,
            scope=r.scope,
            created_at=r.created_at,
            safety_checkpoint_id=r.safety_checkpoint_id,
            target_checkpoint_id=r.target_checkpoint_id,
            runs=tuple((int(n), s) for n, s in _pairs(r.runs) if isinstance(n, int)),
            provider_threads=tuple((str(p), s) for p, s in _pairs(r.provider_threads)),
            handoffs=tuple(str(h) for h in (r.handoffs if isinstance(r.handoffs, list) else ())),
            undoes=r.undoes,
            note=r.note,
        )
        for r in rows
    )


def forks_of(connection: Connection, thread_id: str) -> list[tuple[str, int | None, str | None]]:
    """The threads forked from ``thread_id``: (id, source run, title), oldest first."""
    t = app_threads.c
    rows = connection.execute(
        select(t.id, t.parent_run_ordinal, t.title)
        .where(t.parent_thread_id == thread_id)
        .order_by(t.created_at, t.id)
    )
    return [(row[0], row[1], row[2]) for row in rows]


def add_rollback(connection: Connection, rollback: Rollback) -> None:
    connection.execute(
        rollbacks.insert().values(
            id=rollback.id,
            thread_id=rollback.thread_id,
            to_run=rollback.to_run,
            scope=rollback.scope,
            safety_checkpoint_id=rollback.safety_checkpoint_id,
            target_checkpoint_id=rollback.target_checkpoint_id,
            runs=[list(p) for p in rollback.runs],
            provider_threads=[list(p) for p in rollback.provider_threads],
            handoffs=list(rollback.handoffs),
            undoes=rollback.undoes,
            note=rollback.note,
            created_at=rollback.created_at,
        )
    )


def _provider_threads(connection: Connection, thread_id: str) -> list[ProviderThread]:
    p, v = provider_threads.c, provider_thread_revisions.c
    rows = connection.execute(
        select(
            p.id,
            p.provider,
            p.origin,
            p.created_at,
            v.version,
            v.native_id,
            v.path,
            v.native_turns,
            v.status,
            v.reason,
            v.model,
            v.stamp,
            v.turns,
            v.former,
        )
        .join(provider_thread_revisions, v.provider_thread_id == p.id)
        .where(p.thread_id == thread_id)
        .order_by(p.created_at, p.id, v.version)
    ).mappings()
    latest: dict[str, Any] = {}
    for m in rows:
        latest[m["id"]] = m  # ordered by version: the last one is current
    return [
        ProviderThread(
            id=pt_id,
            thread_id=thread_id,
            provider=Provider(m["provider"]),
            origin=m["origin"],
            native_id=m["native_id"],
            path=m["path"],
            native_turns=m["native_turns"],
            status=ProviderThreadStatus(m["status"]),
            model=m["model"],
            version=m["version"],
            reason=m["reason"],
            stamp=Stamp.from_json(m["stamp"]),
            turns=_turns_of(m["turns"]),
            former=_former_of(m["former"]),
        )
        for pt_id, m in latest.items()
    ]


def record_changes(connection: Connection, thread_id: str, changes: Changes) -> None:
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
    for revised in changes.revisions.values():
        connection.execute(
            provider_thread_revisions.insert().values(
                **_revision_row(revised, revised.version, now)
            )
        )
    rows = [_run_row(run, now) for run in changes.runs]
    rows += [_run_row(run, now) for run in changes.run_versions.values()]
    if rows:
        connection.execute(runs.insert(), rows)
    for transfer in changes.transfers:
        _insert_transfer(connection, transfer)
    for handoff in changes.handoffs:
        _insert_handoff(connection, handoff)
    for d in changes.decisions:
        record_decision(
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


def _check_base(connection: Connection, thread_id: str, changes: Changes) -> None:
    latest = connection.execute(
        select(func.max(runs.c.ordinal)).where(runs.c.thread_id == thread_id)
    ).scalar_one()
    if int(latest or 0) != changes.base_ordinal:
        raise Conflict(f"thread {thread_id} got new runs meanwhile")
    if not changes.revisions:
        return
    v = provider_thread_revisions.c
    versions = dict(
        connection.execute(
            select(v.provider_thread_id, func.max(v.version))
            .where(v.provider_thread_id.in_(list(changes.revisions)))
            .group_by(v.provider_thread_id)
        ).all()
    )
    for pt_id in changes.revisions:
        if versions.get(pt_id) != changes.base_versions.get(pt_id):
            raise Conflict(f"provider thread {pt_id} was revised meanwhile")


def list_threads(connection: Connection, limit: int | None = None) -> list[ThreadSummary]:
    """App threads, newest first, with their run count and providers."""
    t = app_threads.c
    query = select(app_threads).order_by(t.created_at.desc(), t.id.desc())
    if limit is not None:
        query = query.limit(limit)
    heads = connection.execute(query).all()
    if not heads:
        return []
    ids = [row._mapping["id"] for row in heads]
    r = runs.c
    counts: dict[str, int] = {}
    for thread_id, n in connection.execute(
        select(r.thread_id, func.count(func.distinct(r.ordinal)))
        .where(r.thread_id.in_(ids))
        .group_by(r.thread_id)
    ):
        counts[thread_id] = int(n)
    providers: dict[str, list[str]] = {}
    last: dict[str, str] = {}
    for thread_id, provider in connection.execute(
        select(r.thread_id, r.provider).where(r.thread_id.in_(ids)).order_by(r.thread_id, r.ordinal)
    ):
        seen = providers.setdefault(thread_id, [])
        if provider not in seen:
            seen.append(provider)
        last[thread_id] = provider
    p = provider_threads.c
    for thread_id, provider in connection.execute(
        select(p.thread_id, p.provider).where(p.thread_id.in_(ids)).order_by(p.created_at)
    ):
        seen = providers.setdefault(thread_id, [])
        if provider not in seen:
            seen.append(provider)
    return [
        ThreadSummary(
            id=row._mapping["id"],
            created_at=row._mapping["created_at"],
            title=row._mapping["title"],
            cwd=row._mapping["cwd"],
            runs=counts.get(row._mapping["id"], 0),
            providers=tuple(providers.get(row._mapping["id"], ())),
            last_provider=optional_provider(last.get(row._mapping["id"])),
        )
        for row in heads
    ]


def thread_ids_like(connection: Connection, prefix: str, limit: int) -> list[str]:
    prefix = prefix.lower()
    if not _ID_PREFIX.fullmatch(prefix):
        return []
    t = app_threads.c
    rows = connection.execute(
        select(t.id).where(t.id.startswith(prefix)).order_by(t.id).limit(limit)
    )
    return [row[0] for row in rows]


def threads_of_native(
    connection: Connection, provider: str | None, native_id: str, *, prefix: bool = False
) -> list[str]:
    """App threads whose provider thread has (or had) this native session id (or one that
    starts with it), of one provider or any."""
    p, v = provider_threads.c, provider_thread_revisions.c
    if prefix and not _ID_PREFIX.fullmatch(native_id):
        return []
    match = v.native_id.startswith(native_id) if prefix else v.native_id == native_id
    query = (
        select(p.thread_id)
        .join(provider_thread_revisions, v.provider_thread_id == p.id)
        .where(match)
        .distinct()
    )
    if provider is not None:
        query = query.where(p.provider == provider)
    return [row[0] for row in connection.execute(query)]


def native_holders(connection: Connection, prefix: str) -> list[tuple[str, str]]:
    """(thread, native session id) for every native id that is ``prefix`` or starts with it."""
    if not _ID_PREFIX.fullmatch(prefix):
        return []
    p, v = provider_threads.c, provider_thread_revisions.c
    query = (
        select(p.thread_id, v.native_id)
        .join(provider_thread_revisions, v.provider_thread_id == p.id)
        .where(v.native_id.startswith(prefix))
        .distinct()
    )
    return [(row[0], row[1]) for row in connection.execute(query)]
