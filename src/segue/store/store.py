"""The store: segue's database, opened, migrated, and read and written through a small API.

Batch records are only ever inserted. An agent's result is one row keyed by (batch, ordinal);
recording the same agent twice is refused, never merged.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from msgspec.structs import replace

from segue.model.conversation import Provider
from segue.model.errors import StoreError
from segue.store.database import Database, Row, Transaction, integrity_error
from segue.store.failures import guarded
from segue.store.ids import new_id
from segue.store.location import database_url
from segue.store.migrate import check_current, current_revision, upgrade
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
from segue.store.sqlite import BUSY_TIMEOUT_S
from segue.store.tables import batch_agents, batches

__all__ = ["ID_PREFIX", "Store", "StoreAbsent", "open_store"]

_SHOWN = 5  # ids an ambiguous prefix names
ID_PREFIX = re.compile(r"[0-9a-f-]+")


def open_store(
    url: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    read_only: bool = False,
    busy_timeout: float | None = None,
) -> Store:
    """Open segue's database and bring its schema to the newest migration.

    ``url`` (SQLAlchemy's spelling: ``sqlite:///path`` or ``postgresql://user@host/db``), else
    ``$SEGUE_DATABASE_URL``, else ``segue.db`` in segue's data folder (``$SEGUE_DATA_DIR``, else
    the platform's user data folder). Raises :class:`StoreError` (or :class:`ConfigError` when
    the PostgreSQL driver is not installed), with one line that names the database.

    ``read_only`` writes nothing, ever: no file or folder is created (a store that does not
    exist yet is :class:`StoreAbsent`), and a store that is not at this segue's schema is
    refused instead of migrated. ``busy_timeout`` is how long to wait for another writer of a
    SQLite file (default: a minute).
    """
    parsed = database_url(url, env)
    # a SQLite connection waits for another writer: a URL's ?timeout=N, else a minute; a caller
    # that must not wait long (a switch) caps it
    wait = float(parsed.option("timeout") or BUSY_TIMEOUT_S)
    if busy_timeout is not None:
        wait = min(wait, busy_timeout)
    if read_only and parsed.path is not None and not parsed.path.is_file():
        raise StoreAbsent(f"{parsed.path}: no store yet")
    db = Database(parsed, read_only=read_only, wait=wait)
    try:
        with guarded(db.where, "cannot open segue's database"):
            if read_only:
                check_current(db, db.where)
            else:
                upgrade(db, db.where)
    except BaseException:
        db.close()
        raise
    return Store(db)


class StoreAbsent(StoreError):
    """There is no store to read yet (a dry run opens none)."""


class Store:
    """segue's database. Use :func:`open_store`; close it (or use it as a context manager)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.where = db.where  # the database as messages name it (no password)
        self.backend = db.backend  # sqlite / postgresql

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def reading(self, doing: str) -> Iterator[Transaction]:
        """A read transaction; ``doing`` completes the one-line error (``cannot read thread
        …``)."""
        with guarded(self.where, doing), self._db.transaction() as tx:
            yield tx

    @contextmanager
    def writing(self, doing: str) -> Iterator[Transaction]:
        """A write transaction (SQLite: it holds the write lock from its start)."""
        with guarded(self.where, doing), self._db.transaction(write=True) as tx:
            yield tx

    def schema_revision(self) -> str | None:
        """The migration the database is at."""
        with self.reading("cannot read the schema version") as connection:
            return current_revision(connection)

    def create_batch(
        self,
        from_provider: Provider | None,
        to_provider: Provider | None,
        *,
        selection: JsonObject | None = None,
        options: JsonObject | None = None,
        planned: int | None = None,
    ) -> BatchHeader:
        """Record a new batch (its agents follow with :meth:`add_agent`)."""
        import socket  # (a fleet's first record: no command else pays for importing it)

        from segue.support.version import __version__

        with self.writing("cannot record the batch") as connection:
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
            connection.insert(batches, row_of(header, batches))
        return header

    def add_agent(self, batch_id: str, result: AgentResult) -> BatchAgent:
        """Record how one agent of a batch fared. Each (batch, ordinal) is recorded once."""
        with self.writing(f"cannot record agent #{result.ordinal} of batch {batch_id}") as c:
            if c.scalar("SELECT id FROM batches WHERE id = :id", {"id": batch_id}) is None:
                raise StoreError(f"no batch {batch_id}")
            if result.first_provider is None or result.first_session is None:
                first = _origin(c, result.provider, result.session)
                result = replace(
                    result,
                    first_provider=result.first_provider or Provider(first[0]),
                    first_session=result.first_session or first[1],
                )
            agent = BatchAgent(batch_id=batch_id, result=result, recorded_at=datetime.now(UTC))
            try:
                c.insert(batch_agents, _agent_row(agent))
            except Exception as error:  # the (batch, ordinal) key: the transaction is lost
                if not integrity_error(error):
                    raise
                raise StoreError(f"batch {batch_id} already has agent #{result.ordinal}") from None
        return agent

    def list_batches(self, limit: int | None = None) -> list[BatchSummary]:
        """Batches, newest first, with their agents counted by outcome."""
        newest = "ORDER BY created_at DESC, id DESC" + ("" if limit is None else " LIMIT :limit")
        params = {} if limit is None else {"limit": limit}
        with self.reading("cannot list batches") as connection:
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

    def get_batch(self, batch_id: str) -> Batch:
        """The batch with exactly this id, with its agents."""
        key = {"id": batch_id}
        with self.reading(f"cannot read batch {batch_id}") as connection:
            heads = connection.rows("SELECT * FROM batches WHERE id = :id", key, batches.kinds)
            agents = connection.rows(
                "SELECT * FROM batch_agents WHERE batch_id = :id ORDER BY ordinal",
                key,
                batch_agents.kinds,
            )
        if not heads:
            raise StoreError(f"{self.where}: no batch {batch_id}")
        m = heads[0]
        header = from_row(
            BatchHeader,
            m,
            from_provider=optional_provider(m["from_provider"]),
            to_provider=optional_provider(m["to_provider"]),
        )
        return Batch(header=header, agents=[_agent(a) for a in agents])

    def find_batch(self, ref: str) -> Batch:
        """The batch whose id is ``ref`` or starts with it; an ambiguous prefix is an error."""
        return self.get_batch(self.resolve_id("batches", "batch", ref))

    def ids_like(self, table: str, what: str, ref: str) -> list[str]:
        """The ids in ``table`` that are ``ref`` or start with it (hex digits and dashes only),
        a few at most."""
        if not ID_PREFIX.fullmatch(ref):
            return []
        with self.reading(f"cannot read {what} {ref}") as connection:
            rows = connection.tuples(
                f"SELECT id FROM {table} WHERE id LIKE :prefix ORDER BY id LIMIT :limit",
                {"prefix": f"{ref}%", "limit": _SHOWN + 1},
            )
        return [row[0] for row in rows]

    def resolve_id(self, table: str, what: str, ref: str) -> str:
        """The id in ``table`` that is ``ref`` or starts with it; none, or a prefix of several,
        is an error naming ``what``."""
        ref = ref.strip().lower()
        ids = self.ids_like(table, what, ref)
        if ref in ids:
            return ref
        if not ids:
            raise StoreError(f"{self.where}: no {what} {ref or '(empty id)'}")
        if len(ids) > 1:
            more = ", …" if len(ids) > _SHOWN else ""
            raise StoreError(
                f"{what} id prefix {ref} is ambiguous: {', '.join(ids[:_SHOWN])}{more} "
                "(give more characters)"
            )
        return ids[0]


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
