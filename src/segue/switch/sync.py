"""Step 3 of a switch, **sync**: the source's app thread, checked against the disk.

The store is opened (read-only for a dry run, which creates nothing, not even the store), the
thread holding the source session is found and locked, and every provider thread's file is
checked (:mod:`segue.threads.syncing`). A session no thread holds yet is adopted, in memory. When
the store cannot be used (locked, full, read-only, corrupt, newer, unreachable) the switch goes
on from an in-memory graph, with a warning that it will not be recorded; the switches segue
wrote but could not record before (its journal) are part of that graph, so nothing is written
twice. A source that went off its thread's line (parallel work, changed in place) goes on as a
new thread forked from the old one at the last run both share.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec
from msgspec.structs import replace

from segue.model.conversation import Provider
from segue.model.errors import SegueError, StoreError
from segue.providers.sessions import SessionReads, current_session
from segue.store import Store, open_store
from segue.store.location import store_wait
from segue.store.store import StoreAbsent
from segue.switch.journal import replay_entries, with_journaled
from segue.switch.locks import SwitchLocks
from segue.switch.source import Source
from segue.threads.checkpoints import Checkpoint
from segue.threads.model import ProviderThread, ProviderThreadStatus, ThreadGraph
from segue.threads.reconcile import Changes, held_runs, reconcile
from segue.threads.repository import ThreadStore
from segue.threads.syncing import adoption, observe_graph

__all__ = ["LoadedThread", "holding_thread", "load_thread", "source_cwd"]


class LoadedThread(msgspec.Struct):
    """The source's thread as the files say it is now, and what recording that takes."""

    graph: ThreadGraph
    changes: Changes  # the adoption and the sync, not yet recorded
    source_pt: ProviderThread
    store: Store | None  # where it is recorded (None: nowhere)
    unrecorded: str | None = None  # why a real switch cannot be recorded
    notes: list[str] = msgspec.field(default_factory=list)  # what the sync found
    earlier: tuple[ThreadGraph, Changes] | None = None  # the thread a divergent source left
    checkpoint: Checkpoint | None = None  # the workspace's latest checkpoint


class _Session(msgspec.Struct, frozen=True):
    provider: Provider
    path: Path
    native_id: str


def _holding_thread(store: Store, source: Source | _Session) -> str | None:
    """The thread the source session belongs to: of several (a session that went off one
    thread's line goes on in a thread forked from it), the one where it is not off the line."""
    threads = ThreadStore(store)
    held = threads.threads_of_native(source.provider.value, source.native_id)
    if len(held) <= 1:
        return held[0] if held else None
    best: list[str] = []
    for thread_id in held:
        graph = threads.graph(thread_id)
        pt = _source_pt(graph, source)
        if pt is not None and pt.status is not ProviderThreadStatus.DIVERGENT:
            best.append(thread_id)
    return max(best or held)  # ids sort by creation time: the newest


def holding_thread(store: Store, provider: Provider, path: Path) -> str | None:
    """The thread the session in ``path`` belongs to (None: none yet)."""
    current, native_id = current_session(provider, path, os.environ)
    return _holding_thread(store, _Session(provider, current, native_id))


def _source_pt(graph: ThreadGraph, source: Source | _Session) -> ProviderThread | None:
    """The provider thread the source session is now, or the one it is a former file of."""
    for pt in graph.provider_threads:
        if pt.provider is source.provider and pt.native_id == source.native_id:
            return pt
    path = str(source.path)
    for pt in graph.provider_threads:
        if pt.provider is source.provider and pt.path == path:
            return pt
    for pt in graph.provider_threads:
        if any(f.path == path for f in pt.former):
            return pt
    return None


def load_thread(
    source: Source,
    reads: SessionReads,
    env: Mapping[str, str],
    locks: SwitchLocks,
    *,
    dry_run: bool,
) -> LoadedThread:
    """The source's thread, synced with the disk (nothing recorded yet)."""
    store: Store | None = None
    why: str | None = None
    try:  # read-only for a dry run (none when it does not exist); a writer waited for a bit
        store = open_store(env=env, read_only=dry_run, busy_timeout=store_wait(env))
    except StoreAbsent:
        pass
    except SegueError as exc:
        why = str(exc)
    notes: list[str] = []
    if store is None and why is not None and dry_run:
        notes.append(f"the store could not be read ({why}); the plan assumes it holds nothing")
    graph: ThreadGraph | None = None
    if store is not None:
        try:
            if not dry_run:  # what concerns this session (a fleet's other agents get their own)
                replayed = replay_entries(store, reads, env)
                notes += [note for entry, note in replayed if entry.concerns(source)]
            thread_id = _holding_thread(store, source)
            if thread_id is not None:
                locks.thread(thread_id)
                graph = ThreadStore(store).graph(thread_id)
        except StoreError as exc:
            store.close()
            store, why = None, str(exc)
    if graph is not None:
        outcome = reconcile(graph, observe_graph(graph, reads, env))
        graph, changes = outcome.graph, outcome.changes
        notes += outcome.notes
    else:
        graph, changes = adoption(source.provider, source.path, reads, env)
    if store is None or dry_run:  # the switches the journal holds, not recorded in this graph
        graph, more, journaled = with_journaled(graph, source, reads, env)
        changes.absorb(more)
        notes += journaled
    return _off_the_line(graph, changes, store, None if dry_run else why, notes, source, reads, env)


def _off_the_line(
    old: ThreadGraph,
    old_changes: Changes,
    store: Store | None,
    unrecorded: str | None,
    notes: list[str],
    source: Source,
    reads: SessionReads,
    env: Mapping[str, str],
) -> LoadedThread:
    """The source's thread state; a source that is off its thread's line (parallel work, changed
    in place, or typed into after segue forked it) goes on as a new thread forked from it."""
    pt = _source_pt(old, source)
    if pt is not None:
        in_former = pt.native_id != source.native_id or pt.path != str(source.path)
        divergent = pt.status is ProviderThreadStatus.DIVERGENT
        if not divergent and not (in_former and _typed_in_former(old, pt, source)):
            return LoadedThread(old, old_changes, pt, store, unrecorded, notes)
        former = next((f for f in pt.former if f.path == str(source.path)), None)
        if former is not None:  # a file the thread went on from: what it held then
            held = {slot.run for slot in former.turns if slot.run}
            why = "work was typed into it after the thread went on in a fork of it"
        else:
            held = held_runs(pt, pt.turns or (), None, [r.ordinal for r in old.runs])
            why = pt.reason or "it went off the thread's line"
    else:
        held, why = set(), "the thread does not hold it under this id"
    shared = max((r.ordinal for r in old.live_runs if r.ordinal in held), default=None)
    graph, changes = adoption(source.provider, source.path, reads, env)
    thread = replace(graph.thread, parent_thread_id=old.thread.id, parent_run_ordinal=shared)
    changes.thread = thread
    graph = replace(graph, thread=thread)
    at = f" at run {shared}" if shared else ""
    notes.append(
        f"{source.provider.value} session {source.native_id} is off thread {old.thread.id}'s "
        f"line ({why}): its own history goes on as thread {thread.id}, forked from it{at}"
    )
    new_pt = _source_pt(graph, source)
    assert new_pt is not None
    earlier = None if old_changes.empty else (old, old_changes)
    return LoadedThread(graph, changes, new_pt, store, unrecorded, notes, earlier=earlier)


def _typed_in_former(graph: ThreadGraph, pt: ProviderThread, source: Source) -> bool:
    """Whether work off the line was typed into the former file the source is."""
    return any(
        r.provider_thread_id == pt.id and r.note is not None and str(source.path) in r.note
        for r in graph.runs
        if not r.live
    )


def source_cwd(state: LoadedThread, source: Source) -> str:
    """The working directory of the move: the thread's, else the session's."""
    return state.graph.thread.cwd or source.conversation.meta.cwd or os.getcwd()
