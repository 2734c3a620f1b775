"""The store: segue's database, opened, migrated, and read and written through a small API."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from types import TracebackType

from segue.model.conversation import Provider
from segue.model.errors import StoreError
from segue.store import batches, records
from segue.store.database import Database, Transaction
from segue.store.failures import guarded
from segue.store.location import database_url
from segue.store.migrate import check_current, current_revision, upgrade
from segue.store.sqlite import BUSY_TIMEOUT_S

__all__ = ["Store", "StoreAbsent", "open_store"]

_SHOWN_CANDIDATES = 5


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
        self.url = db.url
        self.where = db.where  # the database as messages name it (no password)

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._db.backend

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _read(self, doing: str) -> Iterator[Transaction]:
        with guarded(self.where, doing), self._db.transaction() as tx:
            yield tx

    @contextmanager
    def _write(self, doing: str) -> Iterator[Transaction]:
        with guarded(self.where, doing), self._db.transaction(write=True) as tx:
            yield tx

    def reading(self, doing: str) -> AbstractContextManager[Transaction]:
        """A read transaction for other record kinds' queries (``segue.threads``); ``doing``
        completes the one-line error (``cannot read thread …``)."""
        return self._read(doing)

    def writing(self, doing: str) -> AbstractContextManager[Transaction]:
        """A write transaction (SQLite: it holds the write lock from its start)."""
        return self._write(doing)

    def schema_revision(self) -> str | None:
        """The migration the database is at."""
        with self._read("cannot read the schema version") as connection:
            return current_revision(connection)

    def create_batch(
        self,
        from_provider: Provider | None,
        to_provider: Provider | None,
        *,
        selection: records.JsonObject | None = None,
        options: records.JsonObject | None = None,
        planned: int | None = None,
    ) -> records.BatchHeader:
        """Record a new batch (its agents follow with :meth:`add_agent`)."""
        with self._write("cannot record the batch") as connection:
            return batches.create_batch(
                connection,
                from_provider,
                to_provider,
                selection=selection,
                options=options,
                planned=planned,
            )

    def add_agent(self, batch_id: str, result: records.AgentResult) -> records.BatchAgent:
        """Record how one agent of a batch fared. Each (batch, ordinal) is recorded once."""
        with self._write(f"cannot record agent #{result.ordinal} of batch {batch_id}") as c:
            return batches.add_agent(c, batch_id, result)

    def list_batches(self, limit: int | None = None) -> list[records.BatchSummary]:
        """Batches, newest first, with their agents counted by outcome."""
        with self._read("cannot list batches") as connection:
            return batches.list_batches(connection, limit)

    def get_batch(self, batch_id: str) -> records.Batch:
        """The batch with exactly this id, with its agents."""
        with self._read(f"cannot read batch {batch_id}") as connection:
            batch = batches.get_batch(connection, batch_id)
        if batch is None:
            raise StoreError(f"{self.where}: no batch {batch_id}")
        return batch

    def find_batch(self, ref: str) -> records.Batch:
        """The batch whose id is ``ref`` or starts with it; an ambiguous prefix is an error."""
        ref = ref.strip().lower()
        with self._read(f"cannot read batch {ref}") as connection:
            ids = batches.batch_ids_like(connection, ref, _SHOWN_CANDIDATES + 1) if ref else []
            exact = ref in ids
            batch = batches.get_batch(connection, ref if exact else ids[0]) if ids else None
        if batch is None:
            raise StoreError(f"{self.where}: no batch {ref or '(empty id)'}")
        if len(ids) > 1 and not exact:
            shown = ", ".join(ids[:_SHOWN_CANDIDATES])
            more = ", …" if len(ids) > _SHOWN_CANDIDATES else ""
            raise StoreError(
                f"batch id prefix {ref} is ambiguous: {shown}{more} (give more characters)"
            )
        return batch

    def latest_batch(self) -> records.Batch | None:
        """The newest batch, or None when there is none."""
        with self._read("cannot read the latest batch") as connection:
            batch_id = batches.latest_batch_id(connection)
            return None if batch_id is None else batches.get_batch(connection, batch_id)
