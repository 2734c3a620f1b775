"""Adopt a native session as an app thread, and keep app threads in step with their files.

A run is a typed prompt turn of a native session. A sync looks at every provider thread's file
(:mod:`segue.threads.observe`: only the changed ones are read, each once per command), works out
what changed (:mod:`segue.threads.reconcile`: new turns, rewinds, moves, files gone, changed in
place, parallel work), and records it in one transaction that first checks the store still
holds what it was worked out from; when another process recorded meanwhile, it is worked out
again. The same two steps run without a store (:func:`observe_graph`) for a dry run.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from msgspec.structs import asdict

from segue.model.conversation import Conversation, Provider
from segue.model.errors import SegueError, SessionError, StoreError
from segue.providers.sessions import SessionReads, current_session, find_session, list_sessions
from segue.store import Store
from segue.store.ids import new_id
from segue.support.text import short
from segue.threads import queries
from segue.threads.model import (
    AppThread,
    ProviderThread,
    ProviderThreadStatus,
    Run,
    ThreadGraph,
    assemble,
)
from segue.threads.native import NativeTurn, split_native_turns
from segue.threads.observe import Observation, observe, observe_former
from segue.threads.reconcile import Changes, SyncResult, reconcile, turns_to_layout
from segue.threads.repository import ThreadStore
from segue.transforms.secrets import mask

__all__ = [
    "SyncResult",
    "adopt",
    "adoption",
    "observe_graph",
    "record_outcome",
    "sync",
    "thread_for",
    "title_of",
]

TITLE_CHARS = 80
_ATTEMPTS = 5  # how often a sync is worked out again when another process recorded meanwhile


def title_of(conversation: Conversation, turns: list[NativeTurn]) -> str | None:
    """The thread's label: the session's title, else its first prompt, on one line, with its
    secrets masked before it is cut (a cut secret is no longer found)."""
    title = conversation.meta.title or (turns[0].prompt if turns else None)
    if title is None:
        return None
    return short(mask(title), TITLE_CHARS)


def observe_graph(
    graph: ThreadGraph, reads: SessionReads, env: Mapping[str, str]
) -> list[Observation]:
    """What every provider thread's file (and every file one continued from) says now."""
    seen: list[Observation | None] = []
    for pt in graph.provider_threads:
        seen.append(observe(pt, reads, env))
        seen += (observe_former(pt, index, reads, env) for index in range(len(pt.former)))
    return [observation for observation in seen if observation is not None]


def adoption(
    provider: Provider,
    path: Path,
    reads: SessionReads,
    env: Mapping[str, str],
    *,
    thread_id: str | None = None,
) -> tuple[ThreadGraph, Changes]:
    """A new app thread for ``provider``'s native session in ``path`` (read through
    ``reads``; its typed prompt turns are runs 1, 2, …), not yet recorded: its graph and the
    changes that record it (``thread_id``: the id it takes, else a new one)."""
    current, native_id = current_session(provider, path, env)
    conversation = reads.read(current, provider)
    turns = split_native_turns(conversation)
    title, meta = title_of(conversation, turns), conversation.meta
    thread = AppThread(thread_id or new_id(), datetime.now(UTC), title, meta.cwd)
    pt_id = new_id()
    # (a native turn's fields are its run's: prompt, status, times, note)
    runs = [Run(thread.id, n, provider, pt_id, n, **asdict(t)) for n, t in enumerate(turns, 1)]
    pt = ProviderThread(
        id=pt_id,
        thread_id=thread.id,
        provider=provider,
        origin="adopted",
        native_id=native_id,
        path=str(current),
        native_turns=len(turns),
        status=ProviderThreadStatus.ACTIVE,
        model=meta.model,
        version=1,
        reason=f"adopted {current}",
        stamp=reads.stamp(current),
        turns=tuple(turns_to_layout(turns, [r.ordinal for r in runs])),
    )
    changes = Changes(thread=thread, provider_threads=[pt], runs=list(runs))
    return assemble(thread, runs, [pt], []), changes


class AdoptedMeanwhile(StoreError):
    """Another process adopted the session while this one worked out its adoption."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"adopted meanwhile as thread {thread_id}")
        self.thread_id = thread_id


def record_outcome(store: Store, graph: ThreadGraph, changes: Changes, doing: str) -> None:
    """Record ``changes`` (worked out on ``graph``) in one transaction; raises
    :class:`queries.Conflict` or :class:`AdoptedMeanwhile` when the store moved on."""
    if changes.empty:
        return
    with store.writing(doing) as connection:
        if changes.thread is not None and changes.thread.parent_thread_id is None:
            for pt in changes.provider_threads[:1]:
                # one adoption of a session at a time (SQLite: the write lock is held already)
                if connection.backend == "postgresql":
                    key = zlib.crc32(f"segue-adopt:{pt.provider}:{pt.native_id}".encode())
                    connection.execute("SELECT pg_advisory_xact_lock(:key)", {"key": key})
                known = queries.threads_of_native(connection, pt.provider, pt.native_id)
                if known:
                    raise AdoptedMeanwhile(known[0])
        queries.record_changes(connection, graph.thread.id, changes)


def adopt(
    store: Store,
    session_ref: str,
    env: Mapping[str, str] | None = None,
    *,
    reads: SessionReads | None = None,
) -> ThreadGraph:
    """The app thread of a native session (an id, a unique id prefix, or a path): a new one with
    one provider thread whose runs are the session's typed prompt turns, or the thread that
    already holds it (then synced)."""
    env = os.environ if env is None else env
    provider, path = find_session(session_ref, env)
    current, native_id = current_session(provider, path, env)
    reads = SessionReads() if reads is None else reads
    known = ThreadStore(store).threads_of_native(provider.value, native_id)
    if not known:
        graph, changes = adoption(provider, current, reads, env)
        try:
            record_outcome(store, graph, changes, f"cannot adopt session {current}")
            known = [graph.thread.id]
        except AdoptedMeanwhile as other:
            known = [other.thread_id]
    return sync(store, known[0], env, reads=reads).graph


def sync(
    store: Store,
    thread_id: str,
    env: Mapping[str, str] | None = None,
    *,
    reads: SessionReads | None = None,
) -> SyncResult:
    """Record what changed in the files of the thread's provider threads since segue last
    looked (new turns as runs, rewinds, moves, files gone or changed)."""
    env = os.environ if env is None else env
    reads = SessionReads() if reads is None else reads
    threads = ThreadStore(store)
    for _ in range(_ATTEMPTS):
        graph = threads.graph(thread_id)
        outcome = reconcile(graph, observe_graph(graph, reads, env))
        try:
            record_outcome(store, graph, outcome.changes, f"cannot sync thread {thread_id}")
        except queries.Conflict:
            continue
        return outcome
    raise StoreError(f"{store.where}: cannot sync thread {thread_id}: the store kept changing")


def thread_for(
    store: Store,
    ref: str | None,
    cwd: str,
    env: Mapping[str, str] | None = None,
    *,
    adopting: bool = True,
) -> str:
    """The thread ``ref`` names (a thread id or unique prefix, or a session it holds, adopted
    if need be), or without ``ref`` the thread of the newest session in ``cwd``. ``adopting``
    False adopts nothing (a rollback or a fork needs a thread with a past): the newest session
    of ``cwd`` that a thread holds."""
    env = os.environ if env is None else env
    threads = ThreadStore(store)
    if ref:
        try:
            return threads.resolve(ref)
        except StoreError as exc:
            if "ambiguous" in str(exc):  # a prefix of several threads: never a guess
                raise
            held = threads.thread_holding(ref)
            if held is None and not adopting:
                raise
        if held is not None:
            return held
        try:
            return adopt(store, ref, env).thread.id
        except SessionError as error:
            raise SessionError(f"no thread {ref}, and {error}") from None
    rows = list_sessions(None, cwd, env).sessions
    if not adopting:
        for row in rows:
            held = threads.thread_holding(row.id)
            if held is not None:
                return held
        raise SegueError(f"no thread of a session in {cwd} (name one)")
    if not rows:
        raise SegueError(
            f"no session in {cwd} to continue (name the thread, or a session it holds)"
        )
    return adopt(store, str(Path(rows[0].path)), env).thread.id
