"""Batch records: the queries, each on a connection inside a transaction the caller holds.

Rows are only ever inserted. An agent's result is one row keyed by (batch, ordinal); recording
the same agent twice is refused, never merged.
"""

from __future__ import annotations

import os
import re
import socket
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Row, Select, func, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from segue.model.conversation import Provider
from segue.model.errors import StoreError
from segue.store.ids import new_id
from segue.store.records import (
    AgentResult,
    Batch,
    BatchAgent,
    BatchHeader,
    BatchSummary,
    JsonObject,
    ordered_tally,
    outcome,
)
from segue.store.rows import from_row, optional_provider, row_of
from segue.store.schema import batch_agents, batches

__all__ = [
    "add_agent",
    "batch_ids_like",
    "create_batch",
    "get_batch",
    "latest_batch_id",
    "list_batches",
]

_ID_PREFIX = re.compile(r"[0-9a-f-]+")


def create_batch(
    connection: Connection,
    from_provider: Provider | None,
    to_provider: Provider | None,
    *,
    selection: JsonObject | None,
    options: JsonObject | None,
    planned: int | None,
) -> BatchHeader:
    from segue.support.version import __version__

    header = BatchHeader(
        id=new_id(),
        created_at=datetime.now(UTC),
        from_provider=from_provider,
        to_provider=to_provider,
        selection=selection,
        options=options,
        planned=planned,
        host=socket.gethostname(),
        pid=os.getpid(),
        segue_version=__version__,
    )
    connection.execute(batches.insert().values(**_header_row(header)))
    return header


def _header_row(header: BatchHeader) -> dict[str, Any]:
    return {
        "id": header.id,
        "created_at": header.created_at,
        "from_provider": header.from_provider,
        "to_provider": header.to_provider,
        "selection": header.selection,
        "options": header.options,
        "planned": header.planned,
        "host": header.host,
        "pid": header.pid,
        "segue_version": header.segue_version,
    }


def add_agent(connection: Connection, batch_id: str, result: AgentResult) -> BatchAgent:
    if connection.execute(select(batches.c.id).where(batches.c.id == batch_id)).first() is None:
        raise StoreError(f"no batch {batch_id}")
    if result.first_provider is None or result.first_session is None:
        first = _origin(connection, result.provider, result.session)
        result = replace(
            result,
            first_provider=result.first_provider or Provider(first[0]),
            first_session=result.first_session or first[1],
        )
    agent = BatchAgent(batch_id=batch_id, result=result, recorded_at=datetime.now(UTC))
    try:
        connection.execute(batch_agents.insert().values(**_agent_row(agent)))
    except IntegrityError:  # the (batch, ordinal) key: the caller's transaction is lost anyway
        raise StoreError(f"batch {batch_id} already has agent #{result.ordinal}") from None
    return agent


def _origin(connection: Connection, provider: str, session: str) -> tuple[str, str]:
    """The session an agent started as: follow an earlier recorded switch that produced it."""
    a = batch_agents.c
    row = connection.execute(
        select(a.first_provider, a.first_session)
        .where(a.target_provider == provider, a.target_session == session)
        .order_by(a.recorded_at.desc())
        .limit(1)
    ).first()
    return (row[0], row[1]) if row is not None else (provider, session)


def _agent_row(agent: BatchAgent) -> dict[str, Any]:
    r = agent.result
    return row_of(
        r,
        batch_agents,
        batch_id=agent.batch_id,
        source_provider=r.provider,
        source_session=r.session,
        source_path=r.path,
        warnings=list(r.warnings) or None,
        switch=None,  # no longer written: the typed fields say what the switch did
        recorded_at=agent.recorded_at,
    )


def _agent(row: Row[Any]) -> BatchAgent:
    m = row._mapping
    old: dict[str, Any] = m["switch"] if isinstance(m["switch"], dict) else {}  # before 0004
    moved = old.get("thread")
    thread: dict[str, Any] = moved if isinstance(moved, dict) else {}
    result = from_row(
        AgentResult,
        m,
        strategy=m["strategy"] or _text(thread.get("strategy")),
        summary=m["summary"] or _text(old.get("summary")),
        resume_command=m["resume_command"] or _text(old.get("resume_command")),
        provider=Provider(m["source_provider"]),
        target_provider=optional_provider(m["target_provider"]),
        first_provider=optional_provider(m["first_provider"]),
        session=m["source_session"],
        path=m["source_path"],
        warnings=tuple(str(w) for w in m["warnings"] or old.get("warnings") or ()),
    )
    return BatchAgent(batch_id=m["batch_id"], result=result, recorded_at=m["recorded_at"])


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _header(row: Row[Any]) -> BatchHeader:
    m = row._mapping
    return from_row(
        BatchHeader,
        m,
        from_provider=optional_provider(m["from_provider"]),
        to_provider=optional_provider(m["to_provider"]),
    )


def get_batch(connection: Connection, batch_id: str) -> Batch | None:
    row = connection.execute(select(batches).where(batches.c.id == batch_id)).first()
    if row is None:
        return None
    agents = connection.execute(
        select(batch_agents)
        .where(batch_agents.c.batch_id == batch_id)
        .order_by(batch_agents.c.ordinal)
    )
    return Batch(header=_header(row), agents=[_agent(a) for a in agents])


def batch_ids_like(connection: Connection, prefix: str, limit: int) -> list[str]:
    """Ids that start with ``prefix`` (hex digits and dashes only), oldest first."""
    prefix = prefix.lower()
    if not _ID_PREFIX.fullmatch(prefix):
        return []
    rows = connection.execute(
        select(batches.c.id)
        .where(batches.c.id.startswith(prefix))
        .order_by(batches.c.id)
        .limit(limit)
    )
    return [row[0] for row in rows]


def latest_batch_id(connection: Connection) -> str | None:
    row = connection.execute(
        select(batches.c.id).order_by(batches.c.created_at.desc(), batches.c.id.desc()).limit(1)
    ).first()
    return None if row is None else str(row[0])


def list_batches(connection: Connection, limit: int | None) -> list[BatchSummary]:
    """Batches newest first, each with its agents counted by outcome."""
    b = batches.c
    query = select(b.id, b.created_at, b.from_provider, b.to_provider, b.planned).order_by(
        b.created_at.desc(), b.id.desc()
    )
    if limit is not None:
        query = query.limit(limit)
    heads = connection.execute(query).all()
    counts = _outcome_counts(connection, None if limit is None else query.with_only_columns(b.id))
    return [
        BatchSummary(
            id=row.id,
            created_at=row.created_at,
            from_provider=optional_provider(row.from_provider),
            to_provider=optional_provider(row.to_provider),
            planned=row.planned,
            agents=sum(counts[row.id].values()),
            tally=ordered_tally(counts[row.id]),
        )
        for row in heads
    ]


def _outcome_counts(
    connection: Connection, ids: Select[tuple[str]] | None
) -> dict[str, Counter[str]]:
    """Agents by batch and outcome; of the batches ``ids`` selects, or of all."""
    a = batch_agents.c
    skipped, failed = a.skipped.is_not(None), a.error.is_not(None)
    query = select(a.batch_id, a.label, skipped, failed, func.count()).group_by(
        a.batch_id, a.label, skipped, failed
    )
    if ids is not None:
        query = query.where(a.batch_id.in_(ids.scalar_subquery()))
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for batch_id, label, was_skipped, was_failed, n in connection.execute(query):
        counts[batch_id][outcome(bool(was_skipped), bool(was_failed), label)] += n
    return counts
