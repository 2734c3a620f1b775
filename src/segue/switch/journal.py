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
from collections.abc import Mapping
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

__all__ = ["JournalEntry", "entry_for", "open_recording", "replay", "save", "with_journaled"]

VERSION = 1


class JournalEntry(msgspec.Struct, frozen=True):
    """One switch segue wrote and could not record."""

    id: str
    created_at: str
    why: str | None
    source: dict[str, str]  # provider, native_id, path
    target: dict[str, Any]  # provider, native_id, path, model, origin, prompts, stamp
    handoff: dict[str, Any] | None  # strategy, form, text, created_by, covers (prompt hashes)
    decision: dict[str, Any]  # strategy, reason
    thread: dict[str, Any] | None = None  # id, parent, parent_run: the thread it belongs to

    def concerns(self, session: Any) -> bool:
        """Whether this entry is about ``session`` (its source, or the session it wrote)."""
        ids = {self.source.get("native_id"), self.target.get("native_id")}
        return bool(getattr(session, "native_id", None) in ids)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "id": self.id,
            "created_at": self.created_at,
            "why": self.why,
            "source": self.source,
            "target": self.target,
            "handoff": self.handoff,
            "decision": self.decision,
            "thread": self.thread,
        }

    @staticmethod
    def from_json(value: object) -> JournalEntry | None:
        if not isinstance(value, dict) or value.get("version") != VERSION:
            return None
        try:
            source, target = value["source"], value["target"]
            if not all(isinstance(source.get(k), str) for k in ("provider", "native_id", "path")):
                return None
            if not all(isinstance(target.get(k), str) for k in ("provider", "native_id", "path")):
                return None
            if not isinstance(target.get("prompts"), list):
                return None
            handoff = value.get("handoff")
            decision = value.get("decision")
            thread = value.get("thread")
            if isinstance(thread, dict) and not isinstance(thread.get("id"), str):
                thread = None
            return JournalEntry(
                str(value["id"]),
                str(value.get("created_at")),
                value.get("why") if isinstance(value.get("why"), str) else None,
                source,
                target,
                handoff if isinstance(handoff, dict) else None,
                decision if isinstance(decision, dict) else {},
                thread if isinstance(thread, dict) else None,
            )
        except (KeyError, TypeError, AttributeError):
            return None


def _folder(env: Mapping[str, str]) -> Path:
    return state_dir(env) / "journal"


def entry_for(
    state: Any, source: Any, prepared: Any, written: Any, why: str | None
) -> JournalEntry:
    """The journal entry of a switch that wrote ``written``."""
    graph: ThreadGraph = state.graph
    covered = {r.ordinal for r in graph.runs if prepared.covers and _in(r.ordinal, prepared.covers)}
    covers_prompts = [prompt_hash(r.prompt) for r in graph.runs if r.ordinal in covered]
    target: dict[str, Any] = {
        "provider": prepared.plan.target.provider.value,
        "native_id": written.session_id,
        "path": str(written.path),
        "model": prepared.plan.target.model,
        "origin": "fork" if prepared.target_pt is not None else "switch",
        "prompts": [],
        "stamp": None if written.stamp is None else written.stamp.to_json(),
        "replaces": None if prepared.target_pt is None else prepared.target_pt.native_id,
    }
    if prepared.target_pt is not None:  # a fork: its parent's turns first
        target["prompts"] = [s.prompt for s in (prepared.target_pt.turns or ())]
    target["prompts"] += [prompt_hash(t.prompt) for t in written.turns]
    form = prepared.decision.form
    handoff = None
    if prepared.covers is not None:
        handoff = {
            "strategy": HandoffStrategy.DELTA_SINCE_TARGET_LAST_SEEN.value
            if prepared.target_pt is not None
            else HandoffStrategy.FULL_THREAD_SUMMARY.value,
            "form": (
                (form or HandoffForm.NATIVE_ITEMS)
                if prepared.target_pt is not None
                else HandoffForm.NATIVE_ITEMS
            ).value,
            "text": prepared.text,
            "created_by": prepared.created_by,
            "covers": covers_prompts,
        }
    return JournalEntry(
        new_id(),
        datetime.now(UTC).isoformat(),
        why,
        {
            "provider": source.provider.value,
            "native_id": source.native_id,
            "path": str(source.path),
        },
        target,
        handoff,
        {"strategy": prepared.decision.strategy.value, "reason": prepared.decision.reason},
        {
            "id": graph.thread.id,
            "parent": graph.thread.parent_thread_id,
            "parent_run": graph.thread.parent_run_ordinal,
            "title": graph.thread.title,
            "cwd": graph.thread.cwd,
        },
    )


def _in(n: int, covers: tuple[int, int]) -> bool:
    return covers[0] <= n <= covers[1]


def save(entry_: JournalEntry, env: Mapping[str, str]) -> str | None:
    """Keep an entry; the reason it could not be kept, or None."""
    path = _folder(env) / f"{entry_.id}.json"
    if write_private_json(path, entry_.to_json()):
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
    for claimed in listed:
        head, sep, pid = claimed.name.partition(CLAIMED)
        if sep and pid.isdigit() and not process_alive(int(pid)):
            with contextlib.suppress(OSError):
                os.rename(claimed, claimed.with_name(head))
    try:
        names = sorted(p for p in folder.iterdir() if p.suffix == ".json")
    except OSError:
        return []
    out: list[tuple[Path, JournalEntry]] = []
    for path in names:
        found = JournalEntry.from_json(read_private_json(path))
        if found is not None:
            out.append((path, found))
    return out


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
    if any(pt.native_id == target["native_id"] for pt in graph.provider_threads):
        return graph, changes
    line = list(graph.live_runs)
    slots = match_prompts([h if isinstance(h, str) else None for h in target["prompts"]], line)
    thread_id = graph.thread.id
    source = next(
        (pt for pt in graph.provider_threads if pt.native_id == journaled.source["native_id"]),
        None,
    )
    why = f"recorded from segue's journal ({journaled.why or 'the store could not record'})"
    replaced = next(
        (
            p
            for p in graph.provider_threads
            if target.get("replaces") is not None
            and p.native_id == target.get("replaces")
            and p.provider == target["provider"]
        ),
        None,
    )
    if replaced is not None:  # a native fork: the next revision of the thread it forked
        pt = replace(
            replaced,
            native_id=target["native_id"],
            path=target["path"],
            native_turns=len(slots),
            status=ProviderThreadStatus.ACTIVE,
            version=replaced.version + 1,
            reason=f"fork {target['native_id']} of {replaced.native_id}, {why}",
            stamp=Stamp.from_json(target.get("stamp")),
            turns=tuple(slots),
            former=(
                *replaced.former,
                FormerFile(replaced.path, replaced.stamp, tuple(layout_of(replaced, graph.runs))),
            ),
        )
        changes.revisions[replaced.id] = pt
        kept = [p for p in graph.provider_threads if p.id != replaced.id]
    else:
        pt = ProviderThread(
            id=new_id(),
            thread_id=thread_id,
            provider=target["provider"],  # a Provider, as the thread model makes it
            origin=target.get("origin") or "switch",
            native_id=target["native_id"],
            path=target["path"],
            native_turns=len(slots),
            status=ProviderThreadStatus.ACTIVE,
            model=target.get("model") if isinstance(target.get("model"), str) else None,
            version=1,
            reason=why,
            stamp=Stamp.from_json(target.get("stamp")),
            turns=tuple(slots),
        )
        changes.provider_threads.append(pt)
        kept = list(graph.provider_threads)
    strategy = str(journaled.decision.get("strategy") or "full_into_new")
    transfer = Transfer(
        new_id(), thread_id, "switch" if replaced is None and pt.origin == "switch" else "return",
        None if source is None else source.id, pt.id,
        line[-1].ordinal if line else None, strategy, "done", now,
    )  # fmt: skip
    changes.transfers.append(transfer)
    handoffs: list[Handoff] = []
    h = journaled.handoff
    if h is not None:
        wanted = set(h.get("covers") or [])
        covered = [r.ordinal for r in line if prompt_hash(r.prompt) in wanted]
        if covered:
            handoff = Handoff(
                id=new_id(),
                thread_id=thread_id,
                to_provider_thread_id=pt.id,
                from_provider_threads=() if source is None else (source.id,),
                covers=(min(covered), max(covered)),
                strategy=HandoffStrategy(str(h.get("strategy"))),
                form=HandoffForm(str(h.get("form"))),
                status=HandoffStatus.READY,
                created_at=now,
                text=h.get("text") if isinstance(h.get("text"), str) else None,
                created_by_provider=h.get("created_by")
                if isinstance(h.get("created_by"), str) and h["created_by"]
                else None,
                transfer_id=transfer.id,
                target_run_ordinal=max(covered) + 1,
            )
            handoffs.append(handoff)
            changes.handoffs.append(handoff)
    changes.decisions.append(
        DecisionRecord(
            target_provider=pt.provider,
            strategy=strategy,
            form=None if h is None else str(h.get("form")),
            reason=f"{journaled.decision.get('reason', '')} (recorded from segue's journal)",
            provider_thread_id=pt.id,
            covers=None,
            inputs={"journal": journaled.id},
        )
    )
    new_graph = assemble(
        graph.thread, graph.runs, [*kept, pt], [*graph.handoffs, *handoffs], graph.rollbacks
    )
    return new_graph, changes


def with_journaled(
    graph: ThreadGraph, source: Any, reads: SessionReads, env: Mapping[str, str]
) -> tuple[ThreadGraph, Changes, list[str]]:
    """An in-memory graph (the store cannot be used) with the sessions journaled switches of the
    same source wrote, checked against the disk like any provider thread."""
    mine = [
        e
        for _, e in entries(env)
        if e.source.get("native_id") == source.native_id
        and e.source.get("provider") == source.provider.value
    ]
    changes = Changes()
    notes: list[str] = []
    now = datetime.now(UTC)
    for journaled in mine:
        if not is_regular(Path(journaled.target["path"])):
            continue
        graph, more = _attach(graph, journaled, now)
        changes.absorb(more)
        notes.append(
            f"{journaled.target['provider']} session {journaled.target['native_id']}, written "
            "earlier from this session and not yet recorded, is part of the thread"
        )
    if mine:
        outcome = reconcile(graph, observe_graph(graph, reads, env))
        graph = outcome.graph
        changes.absorb(outcome.changes)
        notes += outcome.notes
    return graph, changes, notes


def replay(store: Store, reads: SessionReads, env: Mapping[str, str]) -> list[str]:
    """Record every journaled switch into ``store`` (adopting its source's thread) and remove
    its entry; returns notes for the user. A store that still cannot record raises
    :class:`StoreError` and leaves the journal as it was."""
    return [note for _, note in replay_entries(store, reads, env)]


def replay_entries(
    store: Store, reads: SessionReads, env: Mapping[str, str]
) -> list[tuple[JournalEntry, str]]:
    """:func:`replay`, each note with the entry it is about."""
    notes: list[tuple[JournalEntry, str]] = []
    found = entries(env)
    if not found:
        return notes
    threads = ThreadStore(store)
    now = datetime.now(UTC)
    for path, journaled in found:
        claimed = _claim(path)
        if claimed is None:  # another command is recording it
            continue
        try:
            note = _replay_one(store, threads, journaled, reads, env, now)
        except BaseException:
            _release(claimed, path)
            raise
        if note is None:  # not now (its source is being switched): left for later
            _release(claimed, path)
            continue
        _remove(claimed)
        if note:
            notes.append((journaled, note))
    return notes


def _claim(path: Path) -> Path | None:
    """Take an entry for this command (an atomic rename: two commands never record it twice)."""
    claimed = path.with_name(f"{path.name}{CLAIMED}{os.getpid()}")
    try:
        os.rename(path, claimed)
    except OSError:
        return None
    return claimed


def _release(claimed: Path, path: Path) -> None:
    with contextlib.suppress(OSError):
        os.rename(claimed, path)


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
    if threads.threads_of_native(target["provider"], target["native_id"]):
        return ""
    if not is_regular(Path(target["path"])):
        return (
            f"a switch segue could not record wrote {target['path']}, which is gone: not recorded"
        )
    try:
        provider = known(journaled.source["provider"])
    except ValueError:
        return ""
    try:  # its source is not being switched meanwhile (a switch of it would write again)
        with session_lock(provider, journaled.source["native_id"], env, wait=0):
            for attempt in range(3):
                graph, first = _thread_of(store, journaled, reads, env)
                if graph is None:
                    return ""
                if threads.threads_of_native(target["provider"], target["native_id"]):
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
        f"recorded the switch to {target['provider']} session {target['native_id']} "
        "that segue could not record before"
    )


def _thread_of(
    store: Store, journaled: JournalEntry, reads: SessionReads, env: Mapping[str, str]
) -> tuple[ThreadGraph | None, Changes | None]:
    """The synced thread a journaled switch belongs to: the one it names, when the store has
    it; a thread forked from another, recorded now (with the changes that record it); else the
    thread of its source (or, with the source gone, of the session it wrote)."""
    named = journaled.thread or {}
    if named.get("id") and ThreadStore(store).thread_ids(str(named["id"])):
        return sync(store, str(named["id"]), env, reads=reads).graph, None
    source = Path(journaled.source["path"])
    if named.get("parent") and is_regular(source):
        provider = known(journaled.source["provider"])
        graph, changes = adoption(provider, source, reads, env, thread_id=str(named["id"]))
        thread = replace(
            graph.thread,
            parent_thread_id=str(named["parent"]),
            parent_run_ordinal=named.get("parent_run")
            if isinstance(named.get("parent_run"), int)
            else None,
        )
        changes.thread = thread
        return replace(graph, thread=thread), changes
    for ref in (journaled.source["path"], journaled.target["path"]):
        if not is_regular(Path(ref)):
            continue
        try:
            adopted: ThreadGraph = adopt(store, ref, env, reads=reads)
        except StoreError:
            raise
        except SegueError:
            continue
        if ref == journaled.target["path"]:
            return None, None  # adopting the written session itself recorded it
        return adopted, None
    return None, None


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def open_recording(env: Mapping[str, str] | None = None) -> tuple[Store, list[str]]:
    """segue's store for a command that records, with the switches its journal kept adopted
    first (and notes saying so). A journal that still cannot be recorded stays as it is."""
    env = os.environ if env is None else env
    store = open_store(env=env)
    try:
        notes = replay(store, SessionReads(), env)
    except StoreError:
        notes = []
    return store, notes
