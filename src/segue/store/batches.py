"""Batch records: the queries, each on a connection inside a transaction the caller holds.

Rows are only ever inserted. An agent's result is one row keyed by (batch, ordinal); recording
the same agent twice is refused, never merged.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from datetime import UTC, datetime
from typing import Any

from msgspec.structs import replace

from segue.model.conversation import Provider
from segue.model.errors import StoreError
from segue.store.database import Row, Transaction, integrity_error
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
from segue.store.tables import batch_agents, batches

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
    connection: Transaction,
    from_provider: Provider | None,
    to_provider: Provider | None,
    *,
    selection: JsonObject | None,
    options: JsonObject | None,
    planned: int | None,
) -> BatchHeader:
    import socket  # (a fleet's first record: no command else pays for importing it)

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
    connection.insert(batches, _header_row(header))
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


def add_agent(connection: Transaction, batch_id: str, result: AgentResult) -> BatchAgent:
    if connection.scalar("SELECT id FROM batches WHERE id = :id", {"id": batch_id}) is None:
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
        connection.insert(batch_agents, _agent_row(agent))
    except Exception as error:  # the (batch, ordinal) key: the caller's transaction is lost
        if not integrity_error(error):
            raise
        raise StoreError(f"batch {batch_id} already has agent #{result.ordinal}") from None
    return agent


def _origin(connection: Transaction, provider: str, session: str) -> tuple[str, str]:
    """The session an agent started as: follow an earlier recorded switch that produced it."""
    rows = connection.tuples(
        "SELECT first_provider, first_session FROM batch_agents "
        "WHERE target_provider = :provider AND target_session = :session "
        "ORDER BY recorded_at DESC LIMIT 1",
        {"provider": provider, "session": session},
    )
    return (rows[0][0], rows[0][1]) if rows else (provider, session)


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


def _agent(m: Row) -> BatchAgent:
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


def _header(m: Row) -> BatchHeader:
    return from_row(
        BatchHeader,
        m,
        from_provider=optional_provider(m["from_provider"]),
        to_provider=optional_provider(m["to_provider"]),
    )


def get_batch(connection: Transaction, batch_id: str) -> Batch | None:
    row = connection.first("SELECT * FROM batches WHERE id = :id", {"id": batch_id}, batches.kinds)
    if row is None:
        return None
    agents = connection.rows(
        "SELECT * FROM batch_agents WHERE batch_id = :id ORDER BY ordinal",
        {"id": batch_id},
        batch_agents.kinds,
    )
    return Batch(header=_header(row), agents=[_agent(a) for a in agents])


def batch_ids_like(connection: Transaction, prefix: str, limit: int) -> list[str]:
    """Ids that start with ``prefix`` (hex digits and dashes only), oldest first."""
    prefix = prefix.lower()
    if not _ID_PREFIX.fullmatch(prefix):
        return []
    rows = connection.tuples(
        "SELECT id FROM batches WHERE id LIKE :prefix ORDER BY id LIMIT :limit",
        {"prefix": f"{prefix}%", "limit": limit},
    )
    return [row[0] for row in rows]


def latest_batch_id(connection: Transaction) -> str | None:
    found = connection.scalar("SELECT id FROM batches ORDER BY created_at DESC, id DESC LIMIT 1")
    return None if found is None else str(found)


def list_batches(connection: Transaction, limit: int | None) -> list[BatchSummary]:
    """Batches newest first, each with its agents counted by outcome."""
    newest = "ORDER BY created_at DESC, id DESC" + ("" if limit is None else " LIMIT :limit")
    params = {} if limit is None else {"limit": limit}
    heads = connection.rows(
        f"SELECT id, created_at, from_provider, to_provider, planned FROM batches {newest}",
        params,
    )
    counts = _outcome_counts(connection, None if limit is None else newest, params)
    return [
        BatchSummary(
            id=row["id"],
            created_at=row["created_at"],
            from_provider=optional_provider(row["from_provider"]),
            to_provider=optional_provider(row["to_provider"]),
            planned=row["planned"],
            agents=sum(counts[row["id"]].values()),
            tally=ordered_tally(counts[row["id"]]),
        )
        for row in heads
    ]


def _outcome_counts(
    connection: Transaction, newest: str | None, params: dict[str, Any]
) -> dict[str, Counter[str]]:
    """Agents by batch and outcome; of the batches ``newest`` orders and limits, or of all."""
    where = ""
    if newest is not None:
        where = f"WHERE batch_id IN (SELECT id FROM batches {newest}) "
    rows = connection.tuples(
        "SELECT batch_id, label, skipped IS NOT NULL, error IS NOT NULL, count(*) "
        f"FROM batch_agents {where}"
        "GROUP BY batch_id, label, skipped IS NOT NULL, error IS NOT NULL",
        params,
    )
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for batch_id, label, was_skipped, was_failed, n in rows:
        counts[batch_id][outcome(bool(was_skipped), bool(was_failed), label)] += n
    return counts
