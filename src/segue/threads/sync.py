"""Adopt a native session as an app thread, and keep app threads in step with their sessions.

A run is a typed prompt turn of a native session. ``sync`` reads each provider thread's current
file (the registry's ``current_file``: a Codex thread that was rolled back continues in a newer
generation file) and records the turns segue has not counted yet as the next runs, in the order
they started. It holds the thread's lock while it compares and records, so two processes syncing
the same thread at once count every turn once. Turns that disappeared (a rollback in the CLI)
mark their runs ``rolled_back`` and the provider thread ``rolled_back``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.engine import Connection

from segue.conversation import Conversation, Provider
from segue.errors import SessionError
from segue.providers import ProviderEntry, entry
from segue.sessions import find_session
from segue.store import Store
from segue.threads import queries
from segue.threads.model import ProviderThreadStatus, Run, RunStatus, ThreadGraph
from segue.threads.native import NativeTurn, native_turns
from segue.threads.repository import ThreadStore, native_lock

__all__ = ["SyncResult", "adopt", "sync"]

TITLE_CHARS = 80


@dataclass(slots=True)
class SyncResult:
    graph: ThreadGraph
    new_runs: list[Run] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # provider threads that could not be read


@dataclass(frozen=True, slots=True)
class _Observed:
    provider_thread_id: str
    path: str
    turns: list[NativeTurn]
    model: str | None


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _title(conversation: Conversation, turns: list[NativeTurn]) -> str | None:
    title = conversation.meta.title or (turns[0].prompt if turns else None)
    if title is None:
        return None
    line = " ".join(title.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def adopt(store: Store, session_ref: str, env: Mapping[str, str] | None = None) -> ThreadGraph:
    """The app thread of a native session (an id, a unique id prefix, or a path): a new one with
    one provider thread whose runs are the session's typed prompt turns, or the thread that
    already holds it (then synced)."""
    env = _env(env)
    provider, path = find_session(session_ref, env)
    e = entry(provider)
    current = e.current_file(Path(os.path.abspath(path)), env)
    native_id = e.session_id(current)
    threads = ThreadStore(store)
    known = threads.threads_of_native(provider.value, native_id)
    if known:
        return sync(store, known[0], env).graph
    conversation = e.read(current)
    turns = native_turns(conversation)
    with store.writing(f"cannot adopt session {native_id}") as connection:
        native_lock(connection, provider.value, native_id)
        again = queries.threads_of_native(connection, provider.value, native_id)
        if again:  # another process adopted it while this one read the file
            thread_id = again[0]
        else:
            thread = queries.create_thread(
                connection, title=_title(conversation, turns), cwd=conversation.meta.cwd
            )
            thread_id = thread.id
            pt_id = queries.add_provider_thread(
                connection,
                thread_id,
                provider=provider.value,
                origin="adopted",
                native_id=native_id,
                path=str(current),
                native_turns=len(turns),
                model=conversation.meta.model,
                reason=f"adopted {current}",
            )
            queries.add_runs(
                connection, thread_id, [_new_run(pt_id, n, t) for n, t in enumerate(turns, 1)]
            )
    return sync(store, thread_id, env).graph


def _new_run(provider_thread_id: str, native_turn: int, turn: NativeTurn) -> queries.NewRun:
    return queries.NewRun(
        provider_thread_id=provider_thread_id,
        native_turn=native_turn,
        prompt=turn.prompt,
        status=turn.status,
        started_at=turn.started_at,
        ended_at=turn.ended_at,
    )


def _observe(pt_provider: str, pt_path: str, env: Mapping[str, str]) -> tuple[Path, Conversation]:
    e: ProviderEntry = entry(Provider(pt_provider))
    current = e.current_file(Path(pt_path), env)
    if not current.is_file():
        raise SessionError(f"{current}: the session file is gone")
    return current, e.read(current)


def sync(store: Store, thread_id: str, env: Mapping[str, str] | None = None) -> SyncResult:
    """Record the native turns of the thread's provider threads that segue has not counted."""
    env = _env(env)
    threads = ThreadStore(store)
    graph = threads.graph(thread_id)
    notes: list[str] = []
    observed: list[_Observed] = []
    for pt in graph.provider_threads:
        try:
            current, conversation = _observe(pt.provider, pt.path, env)
        except SessionError as error:
            notes.append(f"{pt.provider} provider thread {pt.id}: {error}")
            continue
        turns = native_turns(conversation)
        observed.append(_Observed(pt.id, str(current), turns, conversation.meta.model))
    new_runs: list[Run] = []
    with store.writing(f"cannot sync thread {thread_id}") as connection:
        queries.lock_thread(connection, thread_id)
        fresh = queries.load_graph(connection, thread_id)
        assert fresh is not None  # the lock found it
        pending: list[queries.NewRun] = []
        for seen in observed:
            pending += _reconcile(connection, fresh, seen)
        pending.sort(key=lambda r: r.started_at or datetime.max.replace(tzinfo=UTC))
        new_runs = queries.add_runs(connection, thread_id, pending)
        final = queries.load_graph(connection, thread_id)
    assert final is not None
    return SyncResult(final, new_runs, notes)


def _reconcile(connection: Connection, graph: ThreadGraph, seen: _Observed) -> list[queries.NewRun]:
    """Record what changed in one provider thread; return its new runs (not yet numbered).

    The native turns are compared with the runs recorded from them, prompt by prompt: a run
    whose turn is gone or holds another prompt now was rolled back in the CLI (with every later
    run of this provider thread); the turns after the last one that still matches are new."""
    pt = graph.provider_thread(seen.provider_thread_id)
    count = len(seen.turns)
    mine = sorted(
        (r for r in graph.live_runs if r.provider_thread_id == pt.id), key=lambda r: r.native_turn
    )
    changed = [
        r.native_turn
        for r in mine
        if r.native_turn > count or seen.turns[r.native_turn - 1].prompt != r.prompt
    ]
    undone = [r for r in mine if changed and r.native_turn >= changed[0]]
    kept = changed[0] - 1 if changed else min(pt.native_turns, count)
    queries.revise_runs(connection, [replace(r, status=RunStatus.ROLLED_BACK) for r in undone])
    queries.revise_runs(
        connection,
        [
            replace(r, status=RunStatus.COMPLETED, ended_at=seen.turns[r.native_turn - 1].ended_at)
            for r in mine
            if r not in undone
            and r.status is RunStatus.WORKING
            and seen.turns[r.native_turn - 1].status is RunStatus.COMPLETED
        ],
    )
    if count == pt.native_turns and seen.path == pt.path and not undone:
        return []
    status, reason = pt.status, f"synced: {count - kept} new native turns"
    if undone:
        reason = f"its CLI rolled back runs {', '.join(str(r.ordinal) for r in undone)}"
        later = [r for r in graph.live_runs if r.ordinal > undone[0].ordinal and r not in undone]
        if any(r.provider_thread_id != pt.id for r in later):  # others built on them
            status = ProviderThreadStatus.ROLLED_BACK
            reason += " after other provider threads continued from them"
    elif count == pt.native_turns:
        reason = "synced: the session continues in another file"
    queries.revise_provider_thread(
        connection,
        pt,
        reason=reason,
        path=seen.path,
        native_turns=count,
        status=status,
        model=seen.model,
    )
    return [_new_run(pt.id, n, turn) for n, turn in enumerate(seen.turns[kept:], start=kept + 1)]
