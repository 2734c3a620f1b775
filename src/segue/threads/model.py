"""The app-thread graph as pure data: what the repository hands out and the strategy decides on.

An *app thread* is one conversation as the user sees it, whichever CLI ran each part. Its *runs*
are its typed prompts, numbered 1, 2, … across providers. A *provider thread* is one native
session (Claude Code or Codex) that holds some of those runs natively (its native runs) and was
given the others, if any, by *handoffs*. A handoff covers a range of runs and carries them as
native items or as a summary. Nothing here is bound to a database session: every record is a
frozen dataclass.

Every status, strategy and form read back from the store that this segue does not know (a newer
segue wrote it, or a hand edit) is ``unknown``: never an error, and never a target to return to.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Any, Self

import msgspec
from msgspec.structs import force_setattr, replace

from segue.formats.stamp import Stamp
from segue.model.conversation import Provider

__all__ = [
    "AppThread",
    "FormerFile",
    "Handoff",
    "HandoffForm",
    "HandoffStatus",
    "HandoffStrategy",
    "ProviderThread",
    "ProviderThreadStatus",
    "Rollback",
    "Run",
    "RunStatus",
    "ThreadGraph",
    "ThreadSummary",
    "Tolerant",
    "Transfer",
    "TurnSlot",
    "assemble",
    "prompt_hash",
    "ranges",
    "span",
]


class Tolerant(StrEnum):
    """A value read back that this segue does not know is ``unknown``, never an error."""

    @classmethod
    def _missing_(cls, value: object) -> Self:
        return cls("unknown")


class ProviderThreadStatus(Tolerant):
    ACTIVE = "active"
    STALE = "stale"  # segue will not return to it: a new provider thread takes over
    DIVERGENT = "divergent"  # changed, or holding runs, in a way that conflicts with the thread
    ROLLED_BACK = "rolled_back"  # (older segue) its CLI undid turns others built on
    MISSING = "missing"  # its file is gone, empty, or not a regular file
    UNKNOWN = "unknown"  # a value this segue does not know


class RunStatus(Tolerant):
    COMPLETED = "completed"
    WORKING = "working"
    FAILED = "failed"  # ended by an error (a usage limit): its note says which
    ROLLED_BACK = "rolled_back"
    DIVERGENT = "divergent"  # parallel work, not on the thread's line: its note says why
    UNKNOWN = "unknown"


class HandoffStrategy(Tolerant):
    DELTA_SINCE_TARGET_LAST_SEEN = "delta_since_target_last_seen"
    FULL_THREAD_SUMMARY = "full_thread_summary"
    CHECKPOINT_SUMMARY = "checkpoint_summary"
    MANUAL_CONTEXT = "manual_context"
    UNKNOWN = "unknown"


class HandoffForm(Tolerant):
    NATIVE_ITEMS = "native_items"  # the runs themselves, as the target's native records
    SUMMARY = "summary"  # one message of text
    UNKNOWN = "unknown"


class HandoffStatus(Tolerant):
    PENDING = "pending"
    READY = "ready"
    FAILED = "failed"
    SUPERSEDED = "superseded"  # computed: a newer handoff names this one
    UNKNOWN = "unknown"


def prompt_hash(prompt: str) -> str:
    """How a turn's prompt is remembered in a provider thread's layout."""
    return hashlib.blake2b(prompt.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def ranges(ordinals: Iterable[int]) -> list[tuple[int, int]]:
    """Runs as ranges of consecutive ones: runs 1, 2, 3 and 5 as (1, 3) and (5, 5)."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(ordinals)):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def span(ordinals: Iterable[int], sep: str = ",") -> str:
    """``1-5,9`` for runs 1, 2, 3, 4, 5 and 9 (``-`` for none)."""
    return sep.join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges(ordinals)) or "-"


class FormerFile(msgspec.Struct, frozen=True):
    """A file a provider thread continued from (the parent of a native fork segue wrote): still
    watched, since a turn typed there is work off the thread's line."""

    path: str
    stamp: Stamp | None
    turns: tuple[TurnSlot, ...]


class TurnSlot(msgspec.Struct, frozen=True, array_like=True):
    """One typed-prompt turn of a provider thread's file, as segue last saw it: its prompt's
    hash and the run it is (natively, or carried by a handoff); ``prompt`` None: unknown (an
    older record), matching any prompt. Stored as ``[prompt, run]``."""

    prompt: str | None
    run: int | None


class AppThread(msgspec.Struct, frozen=True):
    id: str
    created_at: datetime
    title: str | None
    cwd: str | None
    parent_thread_id: str | None = None  # lineage: the app thread this one was forked from
    parent_run_ordinal: int | None = None
    parent_checkpoint_id: str | None = None  # the checkpoint a fork's workspace was made from


class Run(msgspec.Struct, frozen=True):
    thread_id: str
    ordinal: int
    provider: Provider
    provider_thread_id: str
    native_turn: int  # its place among its provider thread's native turns, from 1
    status: RunStatus
    prompt: str
    handoff_id: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    version: int = 1
    note: str | None = None  # why it failed, or why it is not on the thread's line

    @property
    def live(self) -> bool:
        """On the thread's line (not rolled back, not parallel work off it)."""
        return self.status not in (RunStatus.ROLLED_BACK, RunStatus.DIVERGENT)


class Handoff(msgspec.Struct, frozen=True):
    id: str
    thread_id: str
    to_provider_thread_id: str
    from_provider_threads: tuple[str, ...]
    covers: tuple[int, int]  # the runs it carries, inclusive
    strategy: HandoffStrategy
    form: HandoffForm
    status: HandoffStatus
    created_at: datetime
    text: str | None = None
    items: list[dict[str, Any]] | None = None  # the items in the model's codec (model.codec)
    created_by_provider: Provider | None = None  # None: segue's own deterministic summarizer
    transfer_id: str | None = None
    target_run_ordinal: int | None = None
    supersedes: str | None = None
    checkpoint_id: str | None = None  # the latest checkpoint of the workspace when it was made

    def __post_init__(self) -> None:
        by = self.created_by_provider
        if by is not None and type(by) is not Provider:
            force_setattr(self, "created_by_provider", Provider(by))


class ProviderThread(msgspec.Struct, frozen=True):
    """A provider thread as it is now: its newest revision, its native runs, its handoffs."""

    id: str
    thread_id: str
    provider: Provider
    origin: str  # adopted / switch / fork
    native_id: str
    path: str
    native_turns: int  # native turns of its file segue has accounted for
    status: ProviderThreadStatus
    model: str | None
    version: int
    native_runs: tuple[int, ...] = ()
    handoffs: tuple[Handoff, ...] = ()
    reason: str | None = None
    stamp: Stamp | None = None  # its file as segue last saw it
    turns: tuple[TurnSlot, ...] | None = None  # the file's turns then (None: not recorded)
    former: tuple[FormerFile, ...] = ()  # files it continued from, still watched

    def __post_init__(self) -> None:
        # a provider named in a journal or a program's data is the registry's type all the same
        # (the graph compares providers with ``is``)
        if type(self.provider) is not Provider:
            force_setattr(self, "provider", Provider(self.provider))

    def coverage(self) -> set[int]:
        """The runs it holds, natively or by a handoff."""
        covered = set(self.native_runs)
        for handoff in self.handoffs:
            covered.update(range(handoff.covers[0], handoff.covers[1] + 1))
        return covered


class Transfer(msgspec.Struct, frozen=True):
    id: str
    thread_id: str
    type: str  # switch / fork / return
    source_provider_thread_id: str | None
    target_provider_thread_id: str | None
    source_run_ordinal: int | None
    resolution: str  # the strategy it was resolved with
    status: str
    created_at: datetime
    supersedes: str | None = None


class Rollback(msgspec.Struct, frozen=True):
    """``segue rollback``: the thread taken back to run ``to_run`` (or, with ``undoes``, an
    earlier rollback undone). What it changed is kept with what it was, so that it can be
    undone: runs (ordinal, status before), provider threads (id, status before), handoffs it
    superseded."""

    id: str
    thread_id: str
    to_run: int
    scope: str  # files+context / files / context
    created_at: datetime
    safety_checkpoint_id: str | None = None
    target_checkpoint_id: str | None = None
    runs: tuple[tuple[int, str], ...] = ()
    provider_threads: tuple[tuple[str, str], ...] = ()
    handoffs: tuple[str, ...] = ()
    undoes: str | None = None
    note: str | None = None


class ThreadGraph(msgspec.Struct, frozen=True):
    """One app thread with its current runs, provider threads and handoffs."""

    thread: AppThread
    runs: tuple[Run, ...] = ()
    provider_threads: tuple[ProviderThread, ...] = ()
    handoffs: tuple[Handoff, ...] = ()
    rollbacks: tuple[Rollback, ...] = ()

    @property
    def active_rollbacks(self) -> tuple[Rollback, ...]:
        """The rollbacks in force: not undone (or undone, and that undo undone), and not
        undos themselves."""
        force = self.in_force
        return tuple(r for r in self.rollbacks if r.undoes is None and r.id in force)

    @property
    def in_force(self) -> frozenset[str]:
        """The rollbacks, undos and redos in force: those no record in force undoes."""
        undoer = {r.undoes: r.id for r in self.rollbacks if r.undoes is not None}
        force: set[str] = set()
        for r in reversed(self.rollbacks):  # (an undo comes after what it undoes)
            if undoer.get(r.id) not in force:
                force.add(r.id)
        return frozenset(force)

    def undoing(self, rollback: Rollback) -> bool:
        """Whether ``rollback`` is an undo (of a rollback, or of a redo); False for a rollback
        and for a redo (an undo undone)."""
        by_id = {r.id: r for r in self.rollbacks}
        depth = 0
        while rollback.undoes is not None and rollback.undoes in by_id:
            rollback = by_id[rollback.undoes]
            depth += 1
        return depth % 2 == 1

    @property
    def live_runs(self) -> tuple[Run, ...]:
        """The runs on the thread's line, in order."""
        return tuple(r for r in self.runs if r.live)

    def provider_thread(self, provider_thread_id: str) -> ProviderThread:
        for pt in self.provider_threads:
            if pt.id == provider_thread_id:
                return pt
        raise KeyError(provider_thread_id)


class ThreadSummary(msgspec.Struct, frozen=True):
    """A row of ``segue thread list`` (its JSON: its fields, in order)."""

    id: str
    title: str | None
    cwd: str | None
    created_at: datetime
    runs: int
    providers: tuple[str, ...]
    last_provider: Provider | None


def assemble(
    thread: AppThread,
    runs: Iterable[Run],
    provider_threads: Iterable[ProviderThread],
    handoffs: Iterable[Handoff],
    rollbacks: Iterable[Rollback] = (),
) -> ThreadGraph:
    """A graph from its records: each provider thread's native runs (its runs on the line) and
    the handoffs it was given (those no newer handoff supersedes, nor a rollback in force),
    worked out here."""
    ordered = tuple(sorted(runs, key=lambda r: r.ordinal))
    all_rollbacks = tuple(rollbacks)
    handoffs = tuple(handoffs)
    replaced = {h.supersedes for h in handoffs if h.supersedes is not None}
    replaced |= {
        h for r in ThreadGraph(thread, rollbacks=all_rollbacks).active_rollbacks for h in r.handoffs
    }
    all_handoffs = tuple(
        replace(h, status=HandoffStatus.SUPERSEDED)
        if h.id in replaced and h.status is not HandoffStatus.SUPERSEDED
        else h
        for h in handoffs
    )
    held: dict[str, list[int]] = {}
    for run in ordered:
        if run.live:
            held.setdefault(run.provider_thread_id, []).append(run.ordinal)
    pts = tuple(
        replace(
            pt,
            native_runs=tuple(held.get(pt.id, ())),
            handoffs=tuple(
                h
                for h in all_handoffs
                if h.to_provider_thread_id == pt.id and h.status is not HandoffStatus.SUPERSEDED
            ),
        )
        for pt in provider_threads
    )
    return ThreadGraph(thread, ordered, pts, all_handoffs, all_rollbacks)
