"""The thread graph in segue's store: a typed API over :mod:`segue.threads.queries`.

Every method is one transaction. Records come back as frozen data (:mod:`segue.threads.model`);
nothing is bound to a database session. Errors are :class:`segue.model.errors.StoreError` with one
line naming the database.
"""

from __future__ import annotations

from datetime import UTC, datetime

from msgspec.structs import replace

from segue.model.errors import StoreError
from segue.store.database import placeholders
from segue.store.ids import new_id
from segue.store.rows import optional_provider, row_of
from segue.store.store import ID_PREFIX, Store
from segue.store.tables import app_threads
from segue.threads import queries
from segue.threads.model import AppThread, ProviderThreadStatus, ThreadGraph, ThreadSummary
from segue.threads.reconcile import Changes

__all__ = ["ThreadStore"]


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
            return connection.tuples(
                "SELECT id, parent_run_ordinal, title FROM app_threads "
                "WHERE parent_thread_id = :id ORDER BY created_at, id",
                {"id": thread_id},
            )

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
            run_rows = connection.tuples(
                f"SELECT thread_id, provider, ordinal FROM runs WHERE thread_id IN ({listed}) "
                "ORDER BY thread_id, ordinal",
                params,
            )
            pt_providers = connection.tuples(
                f"SELECT thread_id, provider FROM provider_threads WHERE thread_id IN ({listed}) "
                "ORDER BY created_at",
                params,
            )
        runs: dict[str, set[int]] = {}  # (each run once, whatever its versions)
        providers: dict[str, dict[str, None]] = {}  # (in order, once each)
        for thread_id, provider, *ordinal in [*run_rows, *pt_providers]:
            runs.setdefault(thread_id, set()).update(ordinal)
            providers.setdefault(thread_id, {})[provider] = None
        last = {thread_id: provider for thread_id, provider, _ in run_rows}  # (the newest run's)
        return [
            ThreadSummary(
                id=row["id"],
                created_at=row["created_at"],
                title=row["title"],
                cwd=row["cwd"],
                runs=len(runs.get(row["id"], ())),
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
        if not ID_PREFIX.fullmatch(ref):
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
        return self.store.ids_like("app_threads", "thread", ref.lower())

    def resolve(self, ref: str) -> str:
        """The thread whose id is ``ref`` or starts with it; an ambiguous prefix is an error."""
        return self.store.resolve_id("app_threads", "thread", ref)

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
            assert graph is not None  # (lock_thread refuses a thread that is not there)
            pt = graph.provider_thread(provider_thread_id)
            changes = Changes.based_on(graph)
            changes.revisions[pt.id] = replace(
                pt, status=status, reason=reason, version=pt.version + 1
            )
            queries.record_changes(connection, thread_id, changes)
