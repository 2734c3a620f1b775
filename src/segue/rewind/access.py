"""How a rollback, its undo and a fork reach their thread: read alone (a preview: the store as
it is, the graph checked against the session files on disk, nothing written), or synced under
the thread's lock (to change it)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping

from segue.model.errors import SegueError
from segue.providers.sessions import SessionReads
from segue.store import Store, open_store
from segue.store.store import StoreAbsent
from segue.switch import thread_lock
from segue.threads import ThreadStore, sync
from segue.threads.checkpoints import Checkpoint, list_checkpoints
from segue.threads.model import ThreadGraph
from segue.threads.reconcile import reconcile
from segue.threads.syncing import SyncResult, observe_graph, thread_for

__all__ = ["read_thread", "synced_thread"]


def read_thread(
    ref: str | None, cwd: str | None, env: Mapping[str, str], nothing: str
) -> tuple[ThreadGraph, list[Checkpoint]]:
    """The thread ``ref`` names (default: ``cwd``'s), as the files on disk show it now, and its
    checkpoints; nothing is written (``nothing``: what to say when segue has no store yet)."""
    try:
        store = open_store(env=env, read_only=True)
    except StoreAbsent:
        raise SegueError(f"segue has recorded no thread yet: {nothing}") from None
    with store:
        thread_id = thread_for(store, ref, cwd or os.getcwd(), env, adopting=False)
        graph = ThreadStore(store).graph(thread_id)
        found = list_checkpoints(store, thread_id)
    return reconcile(graph, observe_graph(graph, SessionReads(), env)).graph, found


@contextlib.contextmanager
def synced_thread(
    ref: str | None, cwd: str | None, env: Mapping[str, str]
) -> Iterator[tuple[Store, SyncResult]]:
    """The thread ``ref`` names (default: ``cwd``'s), held under its lock with the store open,
    synced with its session files first."""
    with open_store(env=env) as store:
        thread_id = thread_for(store, ref, cwd or os.getcwd(), env, adopting=False)
    with thread_lock(thread_id, env), open_store(env=env) as store:
        yield store, sync(store, thread_id, env)
