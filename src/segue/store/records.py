"""What goes into the store and what comes out of it: plain frozen data classes.

A fleet switch creates a :class:`Batch` and records one :class:`AgentResult` per agent as it
finishes; nothing is changed once recorded. What comes back is :class:`BatchSummary` (a row of
``segue batches``) and :class:`Batch` with its :class:`BatchAgent` rows.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import msgspec

from segue.model.conversation import Provider

JsonObject = dict[str, Any]

# How tallies are ordered: plan labels first (the order of segue's Label), then the rest.
_ORDER = ("native", "raw", "shrunk")
SKIPPED = "skipped"
FAILED = "failed"


class AgentResult(msgspec.Struct, frozen=True):
    """One agent of a batch, as the fleet switch recorded it: switched, skipped or failed.

    ``first_provider`` / ``first_session`` are the session the agent started as (where
    ``segue switch --return`` takes it back to). Left None, the store finds them: the first of
    an earlier recorded switch whose target was this session, else this session itself.
    """

    ordinal: int  # the agent's place in the batch's selection, unique within the batch
    provider: Provider  # the source session's provider
    session: str  # the source session's id
    path: str | None = None  # the source session's file
    cwd: str | None = None
    pane: str | None = None  # the tmux pane the agent runs in
    pid: int | None = None  # the agent's CLI process
    state: str | None = None  # idle / working / limit when it was selected
    skipped: str | None = None  # why it was not switched
    error: str | None = None  # why its switch failed
    target_provider: Provider | None = None
    target_session: str | None = None
    target_path: str | None = None
    label: str | None = None  # the plan's label: native / raw / shrunk
    strategy: str | None = None  # how the switch moved the app thread (None: no thread)
    summary: str | None = None  # the plan's one-line summary
    resume_command: str | None = None
    warnings: tuple[str, ...] = ()
    switch: JsonObject | None = None  # earlier versions' `segue switch --json`, read, never written
    first_provider: Provider | None = None
    first_session: str | None = None


class BatchAgent(msgspec.Struct, frozen=True):
    """A recorded agent: the result as given, its origin, and when it was recorded."""

    batch_id: str
    result: AgentResult  # with first_provider and first_session filled in
    recorded_at: datetime

    @property
    def outcome(self) -> str:
        r = self.result
        return outcome(r.skipped is not None, r.error is not None, r.label)


class BatchHeader(msgspec.Struct, frozen=True):
    """A batch as created: who ran it, when, and with what selection and options."""

    id: str
    created_at: datetime
    from_provider: Provider | None  # None: agents of several providers
    to_provider: Provider | None  # None: each agent to its own target (a --return)
    selection: JsonObject | None
    options: JsonObject | None
    planned: int | None  # how many agents were selected
    host: str
    pid: int
    segue_version: str


class BatchSummary(msgspec.Struct, frozen=True):
    """A row of ``segue batches``: a batch and how its agents fared."""

    id: str
    created_at: datetime
    from_provider: Provider | None
    to_provider: Provider | None
    planned: int | None
    agents: int  # recorded so far
    tally: dict[str, int] = msgspec.field(default_factory=dict)  # outcome → agents

    @property
    def tally_line(self) -> str:
        return tally_line(self.tally)


class Batch(msgspec.Struct, frozen=True):
    """One batch with its recorded agents, in selection order."""

    header: BatchHeader
    agents: list[BatchAgent]

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def tally(self) -> dict[str, int]:
        return ordered_tally(Counter(agent.outcome for agent in self.agents))


def outcome(skipped: bool, failed: bool, label: str | None) -> str:
    """How one agent fared: ``skipped``, ``failed``, or the switch's label."""
    if skipped:
        return SKIPPED
    if failed:
        return FAILED
    return label or "recorded"


def ordered_tally(counts: Counter[str] | dict[str, int]) -> dict[str, int]:
    """Labels in segue's order, then other outcomes by name, then skipped and failed."""

    def rank(name: str) -> tuple[int, str]:
        if name in _ORDER:
            return (0, f"{_ORDER.index(name):02d}")
        return (2, "0" if name == SKIPPED else "1") if name in (SKIPPED, FAILED) else (1, name)

    return {name: counts[name] for name in sorted(counts, key=rank) if counts[name]}


def tally_line(tally: dict[str, int]) -> str:
    """``5 native, 3 raw, 1 shrunk, 1 skipped`` (or ``no agents``)."""
    return ", ".join(f"{n} {name}" for name, n in ordered_tally(tally).items()) or "no agents"
