"""The app-thread graph as pure data: what the repository hands out and the strategy decides on.

An *app thread* is one conversation as the user sees it, whichever CLI ran each part. Its *runs*
are its typed prompts, numbered 1, 2, … across providers. A *provider thread* is one native
session (Claude Code or Codex) that holds some of those runs natively (its native runs) and was
given the others, if any, by *handoffs*. A handoff covers a range of runs and carries them as
native items or as a summary. Nothing here is bound to a database session: every record is a
frozen dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

__all__ = [
    "AppThread",
    "Handoff",
    "HandoffForm",
    "HandoffStatus",
    "HandoffStrategy",
    "ProviderThread",
    "ProviderThreadStatus",
    "Run",
    "RunStatus",
    "ThreadGraph",
    "ThreadSummary",
    "Transfer",
]


class ProviderThreadStatus(StrEnum):
    ACTIVE = "active"
    STALE = "stale"  # segue will not return to it: a new provider thread takes over
    DIVERGENT = "divergent"  # forked or changed in a way that conflicts with the app thread
    ROLLED_BACK = "rolled_back"  # its CLI undid turns segue had counted


class RunStatus(StrEnum):
    COMPLETED = "completed"
    WORKING = "working"
    ROLLED_BACK = "rolled_back"


class HandoffStrategy(StrEnum):
    DELTA_SINCE_TARGET_LAST_SEEN = "delta_since_target_last_seen"
    FULL_THREAD_SUMMARY = "full_thread_summary"
    CHECKPOINT_SUMMARY = "checkpoint_summary"
    MANUAL_CONTEXT = "manual_context"


class HandoffForm(StrEnum):
    NATIVE_ITEMS = "native_items"  # the runs themselves, as the target's native records
    SUMMARY = "summary"  # one message of text


class HandoffStatus(StrEnum):
    PENDING = "pending"
    READY = "ready"
    FAILED = "failed"
    SUPERSEDED = "superseded"  # computed: a newer handoff names this one


@dataclass(frozen=True, slots=True)
class AppThread:
    id: str
    created_at: datetime
    title: str | None
    cwd: str | None
    parent_thread_id: str | None = None  # lineage: the app thread this one was forked from
    parent_run_ordinal: int | None = None


@dataclass(frozen=True, slots=True)
class Run:
    thread_id: str
    ordinal: int
    provider: str
    provider_thread_id: str
    native_turn: int  # its place among its provider thread's native turns, from 1
    status: RunStatus
    prompt: str
    handoff_id: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    version: int = 1


@dataclass(frozen=True, slots=True)
class Handoff:
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
    items: list[dict[str, Any]] | None = None  # the items as ``segue show --json`` spells them
    created_by_provider: str | None = None  # None: segue's own deterministic summarizer
    transfer_id: str | None = None
    target_run_ordinal: int | None = None
    supersedes: str | None = None


@dataclass(frozen=True, slots=True)
class ProviderThread:
    """A provider thread as it is now: its newest revision, its native runs, its handoffs."""

    id: str
    thread_id: str
    provider: str
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

    @property
    def first_run(self) -> int | None:
        return self.native_runs[0] if self.native_runs else None

    @property
    def last_run(self) -> int | None:
        return self.native_runs[-1] if self.native_runs else None

    def coverage(self) -> set[int]:
        """The runs it holds, natively or by a handoff."""
        covered = set(self.native_runs)
        for handoff in self.handoffs:
            covered.update(range(handoff.covers[0], handoff.covers[1] + 1))
        return covered


@dataclass(frozen=True, slots=True)
class Transfer:
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


@dataclass(frozen=True, slots=True)
class ThreadGraph:
    """One app thread with its current runs, provider threads and handoffs."""

    thread: AppThread
    runs: tuple[Run, ...] = ()
    provider_threads: tuple[ProviderThread, ...] = ()
    handoffs: tuple[Handoff, ...] = field(default=())

    @property
    def live_runs(self) -> tuple[Run, ...]:
        return tuple(r for r in self.runs if r.status is not RunStatus.ROLLED_BACK)

    def provider_thread(self, provider_thread_id: str) -> ProviderThread:
        for pt in self.provider_threads:
            if pt.id == provider_thread_id:
                return pt
        raise KeyError(provider_thread_id)


@dataclass(frozen=True, slots=True)
class ThreadSummary:
    """A row of ``segue thread list``."""

    id: str
    created_at: datetime
    title: str | None
    cwd: str | None
    runs: int
    providers: tuple[str, ...]
    last_provider: str | None
