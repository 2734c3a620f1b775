"""segue's journal: the switches it wrote but could not record in its store.

A switch never waits on its store: when the store cannot record (locked, full, read-only,
corrupt, newer than this segue), the session is still written, and what it was is kept here, one
small JSON file per switch in segue's state folder (``journal/``). Until the store can record
again, a switch of the same session reads the journal into its in-memory graph, so the same
session is never written twice; the next command that can record adopts each entry into the
thread graph (matching the written session's turns to the thread's runs by their prompts) and
removes it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

import segue.threads.syncing as syncing  # (a module: tests make its recording fail)
from segue.formats.atomic import process_alive
from segue.formats.files import is_regular
from segue.formats.stamp import Stamp
from segue.model.errors import SegueError, StoreError, SwitchLocked
from segue.providers import known
from segue.providers.sessions import SessionReads
from segue.store import Store, open_store
from segue.store.ids import new_id
from segue.support.state_dir import read_private_json, state_dir, write_private_json
from segue.switch.locks import session_lock
from segue.threads.model import (
    FormerFile,
    Handoff,
    HandoffForm,
    HandoffStatus,
    HandoffStrategy,
    ProviderThread,
    ProviderThreadStatus,
    ThreadGraph,
    Transfer,
    TurnSlot,
    assemble,
    prompt_hash,
)
from segue.threads.queries import Conflict
from segue.threads.reconcile import (
    Changes,
    DecisionRecord,
    layout_of,
    match_prompts,
    reconcile,
)
from segue.threads.repository import ThreadStore
from segue.threads.syncing import adopt, adoption, observe_graph, sync

__all__ = [
    "JournalEntry",
    "entry_for",
    "moved_into",
    "open_recording",
    "replay_entries",
    "save",
    "with_journaled",
]

VERSION = 1


class JournalSession(msgspec.Struct, frozen=True):
    provider: str
    native_id: str
    path: str


class JournalTarget(JournalSession, frozen=True):
    prompts: list[str | None]  # a fork's parent's turns' prompts, then the written turns' hashes
    model: str | None = None
    origin: str = "switch"
    stamp: Any = None
    replaces: str | None = None  # the native id of the session a fork forked


class JournalHandoff(msgspec.Struct, frozen=True):
    strategy: str
    form: str
    text: str | None = None
    created_by: str | None = None
    covers: list[str] = []  # the prompt hashes of the runs it covers


class JournalDecision(msgspec.Struct, frozen=True):
    strategy: str = "full_into_new"
    reason: str = ""


class JournalThread(msgspec.Struct, frozen=True):
    """The thread a journaled switch belongs to."""

    id: str
    parent: str | None = None
    parent_run: int | None = None
    title: str | None = None
    cwd: str | None = None


class JournalEntry(msgspec.Struct, frozen=True):
    """One switch segue wrote and could not record (its JSON file, as :func:`save` keeps it)."""

    id: str
    created_at: str
    why: str | None
    source: JournalSession
    target: JournalTarget
    handoff: JournalHandoff | None
    decision: JournalDecision
    thread: JournalThread | None = None
    version: int = VERSION

    def concerns(self, session: Any) -> bool:
        """Whether this entry is about ``session`` (its source, or the session it wrote)."""
        ids = {self.source.native_id, self.target.native_id}
        return bool(getattr(session, "native_id", None) in ids)

    @staticmethod
    def from_json(value: object) -> JournalEntry | None:
        if not isinstance(value, dict) or value.get("version") != VERSION:
            return None
        try:
            return msgspec.convert(value, JournalEntry)
        except msgspec.ValidationError:
            return None


def _folder(env: Mapping[str, str]) -> Path:
    return state_dir(env) / "journal"


def entry_for(
    state: Any, source: Any, prepared: Any, written: Any, why: str | None
) -> JournalEntry:
    """The journal entry of a switch that wrote ``written``."""
    graph: ThreadGraph = state.graph
    forked: ProviderThread | None = prepared.target_pt
    prompts: list[str | None] = [s.prompt for s in (forked.turns or ())] if forked else []
    target = JournalTarget(
        prepared.plan.target.provider.value,
        written.session_id,
        str(written.path),
        [*prompts, *(prompt_hash(t.prompt) for t in written.turns)],
        prepared.plan.target.model,
        "fork" if forked is not None else "switch",
        None if written.stamp is None else written.stamp.to_json(),
        None if forked is None else forked.native_id,
    )
    handoff = None
    if prepared.covers is not None:
        first, last = prepared.covers
        form = (prepared.decision.form if forked else None) or HandoffForm.NATIVE_ITEMS
        strategy = (
            HandoffStrategy.DELTA_SINCE_TARGET_LAST_SEEN
            if forked
            else HandoffStrategy.FULL_THREAD_SUMMARY
        )
        handoff = JournalHandoff(
            strategy.value,
            form.value,
            prepared.text,
            None if prepared.created_by is None else prepared.created_by.value,
            [prompt_hash(r.prompt) for r in graph.runs if first <= r.ordinal <= last],
        )
    thread = graph.thread
    return JournalEntry(
        new_id(),
        datetime.now(UTC).isoformat(),
        why,
        JournalSession(source.provider.value, source.native_id, str(source.path)),
        target,
        handoff,
        JournalDecision(prepared.decision.strategy.value, prepared.decision.reason),
        JournalThread(
            thread.id, thread.parent_thread_id, thread.parent_run_ordinal, thread.title, thread.cwd
        ),
    )


def save(entry_: JournalEntry, env: Mapping[str, str]) -> str | None:
    """Keep an entry; the reason it could not be kept, or None."""
    path = _folder(env) / f"{entry_.id}.json"
    if write_private_json(path, msgspec.to_builtins(entry_)):
        return None
    return f"cannot write {path}"


CLAIMED = ".claimed-"  # an entry a command is recording now: <id>.json.claimed-<pid>


def entries(env: Mapping[str, str]) -> list[tuple[Path, JournalEntry]]:
    """The entries kept, oldest first; a file that is not one is left alone, and an entry a
    command that is gone had claimed is released."""
    folder = _folder(env)
    try:
        listed = list(folder.iterdir())
    except OSError:
        return []
    out: list[tuple[Path, JournalEntry]] = []
    for path in listed:
        head, sep, pid = path.name.partition(CLAIMED)
        if sep and pid.isdigit() and not process_alive(int(pid)):
            with contextlib.suppress(OSError):
                path = path.rename(path.with_name(head))
        found = JournalEntry.from_json(read_private_json(path)) if path.suffix == ".json" else None
        if found is not None:
            out.append((path, found))
    return sorted(out, key=lambda kept: kept[0])


def moved_into(
    graph: ThreadGraph,
    forked: ProviderThread | None,
    changes: Changes,
    *,
    provider: str,
    native_id: str,
    path: str,
    model: str | None,
    stamp: Stamp | None,
    turns: Sequence[TurnSlot],
    reason: str,
    origin: str = "switch",
) -> ProviderThread:
    """The provider thread a switch wrote, added to ``changes``: the next revision of the one
    it ``forked`` (its former file kept), else a new one."""
    if forked is not None:
        former = FormerFile(forked.path, forked.stamp, tuple(layout_of(forked, graph.runs)))
        pt = replace(
            forked,
            native_id=native_id,
            path=path,
            native_turns=len(turns),
            status=ProviderThreadStatus.ACTIVE,
            version=forked.version + 1,
            reason=reason,
            stamp=stamp,
            turns=tuple(turns),
            former=(*forked.former, former),
        )
        changes.revisions[forked.id] = pt
        return pt
    pt = ProviderThread(
        id=new_id(),
        thread_id=graph.thread.id,
        provider=provider,  # type: ignore[arg-type]  # a Provider, as the thread model makes it
        origin=origin,
        native_id=native_id,
        path=path,
        native_turns=len(turns),
        status=ProviderThreadStatus.ACTIVE,
        model=model,
        version=1,
        reason=reason,
        stamp=stamp,
        turns=tuple(turns),
    )
    changes.provider_threads.append(pt)
    return pt


def _attach(
    graph: ThreadGraph, journaled: JournalEntry, now: datetime
) -> tuple[ThreadGraph, Changes]:
    """``graph`` with the session a journaled switch wrote as one of its provider threads: its
    turns matched to the thread's runs by their prompts, its handoff covering the runs it was
    given. Nothing when the graph holds that session already."""
    target = journaled.target
    changes = Changes(
        base_ordinal=max((r.ordinal for r in graph.runs), default=0),
        base_versions={pt.id: pt.version for pt in graph.provider_threads},
    )
    if any(pt.native_id == target.native_id for pt in graph.provider_threads):
        return graph, changes
    line = list(graph.live_runs)
    slots = match_prompts(target.prompts, line)
    thread_id = graph.thread.id
    source = next(
        (pt for pt in graph.provider_threads if pt.native_id == journaled.source.native_id), None
    )
    why = f"recorded from segue's journal ({journaled.why or 'the store could not record'})"
    pts = graph.provider_threads
    replaced = next(
        (p for p in pts if (p.native_id, p.provider) == (target.replaces, target.provider)), None
    )
    pt = moved_into(
        graph, replaced, changes, provider=target.provider, native_id=target.native_id,
        path=target.path, model=target.model, stamp=Stamp.from_json(target.stamp), turns=slots,
        reason=why if replaced is None else
        f"fork {target.native_id} of {replaced.native_id}, {why}", origin=target.origin,
    )  # fmt: skip
    kept = [p for p in graph.provider_threads if replaced is None or p.id != replaced.id]
    strategy = journaled.decision.strategy
    transfer = Transfer(
        new_id(), thread_id, "return" if replaced or target.origin != "switch" else "switch",
        None if source is None else source.id, pt.id,
        line[-1].ordinal if line else None, strategy, "done", now,
    )  # fmt: skip
    changes.transfers.append(transfer)
    h = journaled.handoff
    wanted = set(() if h is None else h.covers)
    covered = [r.ordinal for r in line if prompt_hash(r.prompt) in wanted]
    if h is not None and covered:
        changes.handoffs.append(
            Handoff(
                id=new_id(),
                thread_id=thread_id,
                to_provider_thread_id=pt.id,
                from_provider_threads=() if source is None else (source.id,),
                covers=(min(covered), max(covered)),
                strategy=HandoffStrategy(h.strategy),
                form=HandoffForm(h.form),
                status=HandoffStatus.READY,
                created_at=now,
                text=h.text,
                created_by_provider=h.created_by or None,  # type: ignore[arg-type]
                transfer_id=transfer.id,
                target_run_ordinal=max(covered) + 1,
            )
        )
    changes.decisions.append(
        DecisionRecord(
            target_provider=pt.provider,
            strategy=strategy,
            form=None if h is None else h.form,
            reason=f"{journaled.decision.reason} (recorded from segue's journal)",
            provider_thread_id=pt.id,
            covers=None,
            inputs={"journal": journaled.id},
        )
    )
    handoffs = [*graph.handoffs, *changes.handoffs]
    return assemble(graph.thread, graph.runs, [*kept, pt], handoffs, graph.rollbacks), changes


def with_journaled(
    graph: ThreadGraph, source: Any, reads: SessionReads, env: Mapping[str, str]
) -> tuple[ThreadGraph, Changes, list[str]]:
    """An in-memory graph (the store cannot be used) with the sessions journaled switches of the
    same source wrote, checked against the disk like any provider thread."""
    mine = [
        e
        for _, e in entries(env)
        if e.source.native_id == source.native_id and e.source.provider == source.provider.value
    ]
    changes = Changes()
    notes: list[str] = []
    now = datetime.now(UTC)
    for journaled in mine:
        if not is_regular(Path(journaled.target.path)):
            continue
        graph, more = _attach(graph, journaled, now)
        changes.absorb(more)
        notes.append(
            f"{journaled.target.provider} session {journaled.target.native_id}, written "
            "earlier from this session and not yet recorded, is part of the thread"
        )
    if mine:
        outcome = reconcile(graph, observe_graph(graph, reads, env))
        graph = outcome.graph
        changes.absorb(outcome.changes)
        notes += outcome.notes
    return graph, changes, notes


def replay_entries(
    store: Store, reads: SessionReads, env: Mapping[str, str]
) -> list[tuple[JournalEntry, str]]:
    """Record every journaled switch into ``store`` (adopting its source's thread) and remove
    its entry; returns notes for the user, each with the entry it is about. A store that still
    cannot record raises :class:`StoreError` and leaves the journal as it was."""
    notes: list[tuple[JournalEntry, str]] = []
    threads = ThreadStore(store)
    now = datetime.now(UTC)
    for path, journaled in entries(env):
        claimed = path.with_name(f"{path.name}{CLAIMED}{os.getpid()}")
        try:  # an atomic rename: two commands never record one entry twice
            path.rename(claimed)
        except OSError:  # another command is recording it
            continue
        note: str | None = None
        try:
            note = _replay_one(store, threads, journaled, reads, env, now)
        finally:
            with contextlib.suppress(OSError):
                if note is None:  # failed, or not now (its source is being switched): for later
                    claimed.rename(path)
                else:
                    claimed.unlink()
        if note:
            notes.append((journaled, note))
    return notes


def _replay_one(
    store: Store,
    threads: ThreadStore,
    journaled: JournalEntry,
    reads: SessionReads,
    env: Mapping[str, str],
    now: datetime,
) -> str | None:
    """Record one entry; its note ("" for nothing to say), or None to leave it for later."""
    target = journaled.target
    if threads.threads_of_native(target.provider, target.native_id):
        return ""
    if not is_regular(Path(target.path)):
        return f"a switch segue could not record wrote {target.path}, which is gone: not recorded"
    try:
        provider = known(journaled.source.provider)
    except ValueError:
        return ""
    try:  # its source is not being switched meanwhile (a switch of it would write again)
        with session_lock(provider, journaled.source.native_id, env, wait=0):
            for attempt in range(3):
                graph, first = _thread_of(store, journaled, reads, env)
                if graph is None:
                    return ""
                if threads.threads_of_native(target.provider, target.native_id):
                    return ""
                _, changes = _attach(graph, journaled, now)
                if first is not None:  # the thread itself was never recorded: with it
                    first.absorb(changes)
                    changes = first
                try:
                    syncing.record_outcome(
                        store, graph, changes, "cannot record a journaled switch"
                    )
                    break
                except Conflict:  # another command recorded into the thread meanwhile
                    if attempt == 2:
                        return None
    except SwitchLocked:
        return None
    return (
        f"recorded the switch to {target.provider} session {target.native_id} "
        "that segue could not record before"
    )


def _thread_of(
    store: Store, journaled: JournalEntry, reads: SessionReads, env: Mapping[str, str]
) -> tuple[ThreadGraph | None, Changes | None]:
    """The synced thread a journaled switch belongs to: the one it names, when the store has
    it; a thread forked from another, recorded now (with the changes that record it); else the
    thread of its source (or, with the source gone, of the session it wrote)."""
    named = journaled.thread
    if named is not None and named.id and ThreadStore(store).thread_ids(named.id):
        return sync(store, named.id, env, reads=reads).graph, None
    source = Path(journaled.source.path)
    if named is not None and named.parent and is_regular(source):
        provider = known(journaled.source.provider)
        graph, changes = adoption(provider, source, reads, env, thread_id=named.id)
        thread = replace(
            graph.thread, parent_thread_id=named.parent, parent_run_ordinal=named.parent_run
        )
        changes.thread = thread
        return replace(graph, thread=thread), changes
    for ref in (journaled.source.path, journaled.target.path):
        if not is_regular(Path(ref)):
            continue
        try:
            adopted: ThreadGraph = adopt(store, ref, env, reads=reads)
        except StoreError:
            raise
        except SegueError:
            continue
        if ref == journaled.target.path:
            return None, None  # adopting the written session itself recorded it
        return adopted, None
    return None, None


def open_recording(env: Mapping[str, str] | None = None) -> tuple[Store, list[str]]:
    """segue's store for a command that records, with the switches its journal kept adopted
    first (and notes saying so). A journal that still cannot be recorded stays as it is."""
    env = os.environ if env is None else env
    store = open_store(env=env)
    try:
        notes = [note for _, note in replay_entries(store, SessionReads(), env)]
    except StoreError:
        notes = []
    return store, notes
