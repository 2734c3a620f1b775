"""The thread graph in segue's store: a typed API over :mod:`segue.threads.queries`.

Every method is one transaction. Records come back as frozen data (:mod:`segue.threads.model`);
nothing is bound to a database session. Errors are :class:`segue.model.errors.StoreError` with one
line naming the database.
"""

from __future__ import annotations

import zlib

from segue.model.errors import StoreError
from segue.store import Store
from segue.store.database import Transaction
from segue.threads import queries
from segue.threads.model import AppThread, ProviderThreadStatus, ThreadGraph, ThreadSummary

__all__ = ["ThreadStore", "native_lock"]

_SHOWN = 5


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
        """The threads forked from ``thread_id``: (id, source run, title)."""
        with self.store.reading(f"cannot read the forks of thread {thread_id}") as connection:
            return queries.forks_of(connection, thread_id)

    def list_threads(self, limit: int | None = None) -> list[ThreadSummary]:
        with self.store.reading("cannot list threads") as connection:
            return queries.list_threads(connection, limit)

    def threads_of_native(
        self, provider: str | None, native_id: str, *, prefix: bool = False
    ) -> list[str]:
        """Threads holding the native session ``native_id`` (or one it is a prefix of)."""
        with self.store.reading(f"cannot look up session {native_id}") as connection:
            return queries.threads_of_native(connection, provider, native_id, prefix=prefix)

    def thread_holding(self, ref: str) -> str | None:
        """The one thread holding a native session whose id is ``ref`` or starts with it; None
        when no thread holds one, an error when ``ref`` names sessions of several threads. One
        session held by several threads (one went on as a thread forked from the other) names
        the newest."""
        ref = ref.strip().lower()
        with self.store.reading(f"cannot look up session {ref}") as connection:
            pairs = queries.native_holders(connection, ref)
        threads = sorted({thread for thread, _ in pairs})
        sessions = {native for _, native in pairs}
        if len(threads) > 1 and len(sessions) > 1:
            raise StoreError(f"{ref} names sessions of several threads: {', '.join(threads[:5])}")
        return threads[-1] if threads else None

    def thread_ids(self, ref: str) -> list[str]:
        """The ids of threads that are ``ref`` or start with it (a few at most)."""
        with self.store.reading(f"cannot read thread {ref}") as connection:
            return queries.thread_ids_like(connection, ref, _SHOWN + 1)

    def resolve(self, ref: str) -> str:
        """The thread whose id is ``ref`` or starts with it; an ambiguous prefix is an error."""
        ref = ref.strip().lower()
        with self.store.reading(f"cannot read thread {ref}") as connection:
            ids = queries.thread_ids_like(connection, ref, _SHOWN + 1) if ref else []
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
        with self.store.writing("cannot record the thread") as connection:
            return queries.create_thread(
                connection,
                title=title,
                cwd=cwd,
                parent_thread_id=parent_thread_id,
                parent_run_ordinal=parent_run_ordinal,
                parent_checkpoint_id=parent_checkpoint_id,
            )

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
            current = graph.provider_thread(provider_thread_id)
            queries.revise_provider_thread(connection, current, reason=reason, status=status)
