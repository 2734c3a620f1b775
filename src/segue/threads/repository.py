"""The thread graph in segue's store: a typed API over :mod:`segue.threads.queries`.

Every method is one transaction. Records come back as frozen data (:mod:`segue.threads.model`);
nothing is bound to a database session. Errors are :class:`segue.model.errors.StoreError` with one
line naming the database.
"""

from __future__ import annotations

import re
import zlib
from datetime import UTC, datetime

from msgspec.structs import replace

from segue.model.errors import StoreError
from segue.store import Store
from segue.store.database import Transaction, placeholders
from segue.store.ids import new_id
from segue.store.rows import optional_provider, row_of
from segue.store.tables import app_threads
from segue.threads import queries
from segue.threads.model import AppThread, ProviderThreadStatus, ThreadGraph, ThreadSummary
from segue.threads.reconcile import Changes

__all__ = ["ThreadStore", "native_lock"]

_SHOWN = 5
_ID_PREFIX = re.compile(r"[0-9a-f-]+")


def native_lock(connection: Transaction, provider: str, native_id: str) -> None:
    """Serialize adopting one native session (PostgreSQL: a transaction-scoped advisory lock;
    a SQLite write transaction already holds the database's write lock)."""
    if connection.backend == "postgresql":
        key = zlib.crc32(f"segue-adopt:{provider}:{native_id}".encode())
        connection.execute("SELECT pg_advisory_xact_lock(:key)", {"key": key})


class ThreadStore:
    """App threads, runs, provider threads, transfers, handoffs and decisions in ``store``: read
    here; written by a sync or a switch (:func:`segue.threads.queries.record_changes`), or by the
    few writers below."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- reading ------------------------------------------------------------------------------

    def graph(self, thread_id: str) -> ThreadGraph:
        with self.store.reading(f"cannot read thread {thread_id}") as connection:
            graph = queries.load_graph(connection, thread_id)
        if graph is None:
            raise StoreError(f"{self.store.where}: no thread {thread_id}")
        return graph

    def forks_of(self, thread_id: str) -> list[tuple[str, int | None, str | None]]:
        """The threads forked from ``thread_id``: (id, source run, title), oldest first."""
        with self.store.reading(f"cannot read the forks of thread {thread_id}") as connection:
            rows = connection.tuples(
                "SELECT id, parent_run_ordinal, title FROM app_threads "
                "WHERE parent_thread_id = :id ORDER BY created_at, id",
                {"id": thread_id},
            )
        return [(row[0], row[1], row[2]) for row in rows]

    def list_threads(self, limit: int | None = None) -> list[ThreadSummary]:
        """App threads, newest first, with their run count and providers."""
        newest = "ORDER BY created_at DESC, id DESC" + ("" if limit is None else " LIMIT :limit")
        with self.store.reading("cannot list threads") as connection:
            heads = connection.rows(
                f"SELECT * FROM app_threads {newest}",
                {} if limit is None else {"limit": limit},
                app_threads.kinds,
            )
            if not heads:
                return []
            listed, params = placeholders("t", [row["id"] for row in heads])
            counts = connection.tuples(
                f"SELECT thread_id, count(DISTINCT ordinal) FROM runs "
                f"WHERE thread_id IN ({listed}) GROUP BY thread_id",
                params,
            )
            run_providers = connection.tuples(
                f"SELECT thread_id, provider FROM runs WHERE thread_id IN ({listed}) "
                "ORDER BY thread_id, ordinal",
                params,
            )
            pt_providers = connection.tuples(
                f"SELECT thread_id, provider FROM provider_threads WHERE thread_id IN ({listed}) "
                "ORDER BY created_at",
                params,
            )
        runs = {thread_id: int(n) for thread_id, n in counts}
        last: dict[str, str] = dict(run_providers)  # (each thread's newest run's, the last one)
        providers: dict[str, dict[str, None]] = {}  # (in order, once each)
        for thread_id, provider in [*run_providers, *pt_providers]:
            providers.setdefault(thread_id, {})[provider] = None
        return [
            ThreadSummary(
                id=row["id"],
                created_at=row["created_at"],
                title=row["title"],
                cwd=row["cwd"],
                runs=runs.get(row["id"], 0),
                providers=tuple(providers.get(row["id"], ())),
                last_provider=optional_provider(last.get(row["id"])),
            )
            for row in heads
        ]

    def threads_of_native(self, provider: str, native_id: str) -> list[str]:
        """Threads holding the native session ``native_id``."""
        with self.store.reading(f"cannot look up session {native_id}") as connection:
            return queries.threads_of_native(connection, provider, native_id)

    def thread_holding(self, ref: str) -> str | None:
        """The one thread holding a native session whose id is ``ref`` or starts with it; None
        when no thread holds one, an error when ``ref`` names sessions of several threads. One
        session held by several threads (one went on as a thread forked from the other) names
        the newest."""
        ref = ref.strip().lower()
        if not _ID_PREFIX.fullmatch(ref):
            return None
        with self.store.reading(f"cannot look up session {ref}") as connection:
            pairs = connection.tuples(
                "SELECT DISTINCT p.thread_id, v.native_id FROM provider_threads AS p JOIN "
                "provider_thread_revisions AS v ON v.provider_thread_id = p.id "
                "WHERE v.native_id LIKE :native",
                {"native": f"{ref}%"},
            )
        threads = sorted({thread for thread, _ in pairs})
        sessions = {native for _, native in pairs}
        if len(threads) > 1 and len(sessions) > 1:
            raise StoreError(f"{ref} names sessions of several threads: {', '.join(threads[:5])}")
        return threads[-1] if threads else None

    def thread_ids(self, ref: str) -> list[str]:
        """The ids of threads that are ``ref`` or start with it (a few at most)."""
        prefix = ref.lower()
        if not _ID_PREFIX.fullmatch(prefix):
            return []
        with self.store.reading(f"cannot read thread {ref}") as connection:
            rows = connection.tuples(
                "SELECT id FROM app_threads WHERE id LIKE :prefix ORDER BY id LIMIT :limit",
                {"prefix": f"{prefix}%", "limit": _SHOWN + 1},
            )
        return [row[0] for row in rows]

    def resolve(self, ref: str) -> str:
        """The thread whose id is ``ref`` or starts with it; an ambiguous prefix is an error."""
        ref = ref.strip().lower()
        ids = self.thread_ids(ref)
        if ref in ids:
            return ref
        if not ids:
            raise StoreError(f"{self.store.where}: no thread {ref or '(empty id)'}")
        if len(ids) > 1:
            more = ", …" if len(ids) > _SHOWN else ""
            raise StoreError(
                f"thread id prefix {ref} is ambiguous: {', '.join(ids[:_SHOWN])}{more} "
                "(give more characters)"
            )
        return ids[0]

    # -- writing ------------------------------------------------------------------------------

    def create_thread(
        self,
        *,
        title: str | None,
        cwd: str | None,
        parent_thread_id: str | None = None,
        parent_run_ordinal: int | None = None,
        parent_checkpoint_id: str | None = None,
    ) -> AppThread:
        thread = AppThread(
            new_id(),
            datetime.now(UTC),
            title,
            cwd,
            parent_thread_id,
            parent_run_ordinal,
            parent_checkpoint_id,
        )
        with self.store.writing("cannot record the thread") as connection:
            connection.insert(app_threads, row_of(thread, app_threads))
        return thread

    def mark_provider_thread(
        self, thread_id: str, provider_thread_id: str, status: ProviderThreadStatus, reason: str
    ) -> None:
        """A new revision of a provider thread with ``status`` (e.g. stale: its resume failed);
        the earlier revisions stay as they were."""
        with self.store.writing(f"cannot mark provider thread {provider_thread_id}") as connection:
            queries.lock_thread(connection, thread_id)
            graph = queries.load_graph(connection, thread_id)
            if graph is None:
                raise StoreError(f"{self.store.where}: no thread {thread_id}")
            pt = graph.provider_thread(provider_thread_id)
            changes = Changes.based_on(graph)
            changes.revisions[pt.id] = replace(
                pt, status=status, reason=reason, version=pt.version + 1
            )
            queries.record_changes(connection, thread_id, changes)
