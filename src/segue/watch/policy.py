"""What ``segue watch`` decides, from what one pass saw: :func:`decide`, and :func:`news` for
what is worth recording. Pure: no file, process, store or network, and no clock of its own (the
pass's time is in :class:`Seen`); the pass (:func:`segue.watch.watch_pass`) observes, asks this
module, carries the decisions out and records them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from operator import attrgetter
from pathlib import PurePath
from typing import Any

import msgspec

from segue.fleet.moves import DEFAULT_QUIET, BatchMoves
from segue.model.conversation import Provider
from segue.model.times import iso_z

__all__ = [
    "DEFAULT_INTERVAL_S",
    "AgentSeen",
    "Decisions",
    "Mode",
    "ModelSwitch",
    "Move",
    "Reading",
    "Return",
    "Seen",
    "WatchEvent",
    "WatchPolicy",
    "decide",
    "news",
    "outstanding",
]

DEFAULT_INTERVAL_S = 30.0  # seconds between passes
STATES = ("exhausted", "waiting", "family_limit")  # recorded when they change, not every pass
SAID_ONCE = ("move_failed", "return_declined")  # the same reason is not recorded twice
ALL_BACK = "back already, or moved on by a later batch"
JUST_BACK = "just brought back"


class Mode(StrEnum):
    AUTO = "auto"
    ASK = "ask"
    NEVER = "never"


class WatchPolicy(msgspec.Struct, frozen=True):
    move: Mode = Mode.ASK  # auto / ask
    returns: Mode = Mode.ASK  # auto / ask / never
    quiet: timedelta = DEFAULT_QUIET  # no session moves twice within it
    under: str | None = None  # only agents working in this directory or below it
    remote: bool = True  # ask the providers' usage services (cached), not only the files
    relaunch: bool = True  # restart each moved agent's tmux pane on its new session
    redact_secrets: bool = False  # secrets in what the moves and returns carry become markers


class WatchEvent(msgspec.Struct, frozen=True):
    kind: str  # exhausted / waiting / family_limit / moved / move_declined / move_failed /
    #            return_offered / returned / return_declined / model_switched / model_declined
    at: datetime
    provider: Provider | None = None
    detail: str = ""
    batch_id: str | None = None
    reset_at: datetime | None = None
    sessions: tuple[str, ...] = ()
    returns_batch: str | None = None  # a return: the batch it brought back

    def line(self) -> str:
        """``15:56:02 moved codex: Switched 3 agents to Claude Code: … (batch 01a2…)``."""
        at = self.at.astimezone().strftime("%H:%M:%S")
        who = f" {self.provider.value}" if self.provider else ""
        batch = f" (batch {self.batch_id})" if self.batch_id else ""
        return f"{at} {self.kind}{who}: {self.detail}{batch}"

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "at": iso_z(self.at),
            "provider": None if self.provider is None else self.provider.value,
            "detail": self.detail,
            "batch": self.batch_id,
            "returns_batch": self.returns_batch,
            "reset_at": None if self.reset_at is None else iso_z(self.reset_at),
            "sessions": list(self.sessions),
        }


# ------------------------------------------------------------------------ what a pass saw


class Reading(msgspec.Struct, frozen=True):
    """One provider's usage as the pass read it."""

    provider: Provider
    exhausted: bool = False
    reset_at: datetime | None = None  # when the window that blocks it (or is fullest) resets
    window: str | None = None  # that window, for a person ("5-hour"); None: no window known
    family: str | None = None  # the model family that window limits (its scope)
    suggestion: str | None = None  # a family limit (not exhausted): the switch suggested
    switch_model: str | None = None  # … and the model it names
    usable: bool = True  # its CLI is installed here, or its home folder is there


class Seen(msgspec.Struct, frozen=True):
    """What one pass observed."""

    now: datetime
    readings: Sequence[Reading]
    history: Sequence[WatchEvent] = ()  # what the earlier passes recorded, oldest first
    moves: BatchMoves = msgspec.field(default_factory=BatchMoves)  # where batches moved sessions
    root: PurePath | None = None  # --under, its ~ expanded


class AgentSeen(msgspec.Struct, frozen=True):
    """A running agent as a family limit looks at it."""

    pid: int
    provider: Provider
    session_id: str | None
    working: bool  # in the middle of a turn
    pane: str | None  # its tmux pane (None: in none segue can see)
    cwd: str | None
    model: str | None  # the model its session runs (None: not known)


# ------------------------------------------------------------------------ what it decides


class Return(msgspec.Struct, frozen=True):
    """A batch watch moved, to bring back to the provider it moved off."""

    batch: str
    to: Provider
    why: str  # the question's reason
    skip: dict[str, str]  # its sessions back already or moved on since: left out, with why
    ask: bool  # only with the user's yes (``--return ask``)


class Move(msgspec.Struct, frozen=True):
    """The fleet to move off the one exhausted provider (the fleet plan takes the parked)."""

    source: Provider
    reset_at: datetime | None  # when the limit ends
    why: str  # "blocked by the 5-hour limit until …"
    avoid: dict[str, str]  # sessions the batches keep where they are (away, quiet), with why
    refused: dict[str, str]  # sessions declined, or whose switch failed, for this limit
    ask: bool  # only with the user's yes (``--ask``)

    def exclude(self, back: Mapping[str, str] | None = None) -> dict[str, str]:
        """The sessions not to move, each with its first reason: those the batches keep, those
        this pass just brought back (``back``: neither side moves again in a pass), then those
        refused for this limit."""
        out = dict(self.avoid)
        for session, why in (*(back or {}).items(), *self.refused.items()):
            out.setdefault(session, why)
        return out


class ModelSwitch(msgspec.Struct, frozen=True):
    """A limit on one model family: its agents relaunched on the model suggested."""

    provider: Provider
    family: str
    model: str
    reset_at: datetime | None
    done: frozenset[str]  # sessions switched, or declined, for this limit already
    root: PurePath | None  # --under
    ask: bool  # only with the user's yes (``--ask``)

    def pick(self, agents: Sequence[AgentSeen]) -> list[AgentSeen]:
        """The agents to relaunch: of this provider, not in the middle of a turn, in a pane,
        not switched or declined for this limit, under ``--under``, running this family."""
        return [
            a
            for a in agents
            if a.provider is self.provider
            and not a.working
            and a.pane is not None
            and a.session_id is not None
            and a.session_id not in self.done
            and (
                self.root is None
                or (a.cwd is not None and PurePath(a.cwd).is_relative_to(self.root))
            )
            and a.model
            and self.family in a.model.replace("-", "").lower()
        ]


class Decisions(msgspec.Struct, frozen=True):
    """What a pass does, in order: the returns, then each state (a family limit followed by
    its model switch), then the move."""

    returns: list[Return]
    states: list[WatchEvent]  # waiting / family_limit / exhausted (:func:`news` says if new)
    switches: dict[Provider, ModelSwitch]  # per family limit that names a model to switch to
    moves: list[Move]  # one per exhausted provider, when another provider is free
    staying: dict[str, str]  # the batches watch moved that stay away this pass, with why


def decide(seen: Seen, policy: WatchPolicy) -> Decisions:
    """What the pass does with what it saw.

    1. A batch watch moved comes back when its provider is no longer exhausted, the window it
       hit (its reset as seen when it moved) has reset, it is older than the quiet period, and
       some of its sessions are neither back nor moved on by a later batch.
    2. Both providers exhausted: wait, showing the earliest reset. A family limit: said, and
       its agents switched to the model suggested. One provider exhausted: its fleet moves,
       but for the sessions the batches keep and those refused for this limit.
    """
    now = seen.now
    exhausted = {r.provider: r for r in seen.readings if r.exhausted}
    returns: list[Return] = []
    staying: dict[str, str] = {}
    for moved in outstanding(seen.history):
        if moved.provider is None or moved.batch_id is None:
            continue
        batch, to = moved.batch_id, moved.provider
        if policy.returns is Mode.NEVER:
            staying[batch] = "--return never"
        elif to in exhausted:
            staying[batch] = f"{to.value} is still exhausted"
        elif moved.reset_at is not None and now < moved.reset_at:
            # its usage source agrees, but the window it hit has not reset yet
            staying[batch] = f"the window it hit resets at {iso_z(moved.reset_at)}"
        elif now - moved.at < policy.quiet:
            staying[batch] = "moved within the quiet period"
        else:
            targets = seen.moves.targets.get(batch, set())
            settled = targets & (
                seen.moves.back.get(batch, set()) | seen.moves.moved_on.get(batch, set())
            )
            if targets and targets == settled:
                staying[batch] = ALL_BACK  # by watch or by hand, or moved on since
                continue
            why = f"{to.value}'s window has reset: back from batch {batch}"
            skip = dict.fromkeys(sorted(settled), ALL_BACK)
            returns.append(Return(batch, to, why, skip, ask=policy.returns is Mode.ASK))

    states: list[WatchEvent] = []
    ask = policy.move is not Mode.AUTO
    free = [r for r in seen.readings if r.usable and not r.exhausted]
    if exhausted and not free:
        earliest = min((r.reset_at for r in exhausted.values() if r.reset_at), default=None)
        when = f"the earliest reset is {iso_z(earliest)}" if earliest else "no reset time known"
        names = [p.value for p in exhausted]
        every = (
            f"{names[0]} is exhausted"
            if len(names) == 1
            else f"{names[0]} and {names[1]} are both exhausted"
            if len(names) == 2
            else f"{', '.join(names[:-1])} and {names[-1]} are all exhausted"
        )
        detail = f"{every}: nothing moves; {when}"
        states.append(WatchEvent("waiting", now, None, detail, reset_at=earliest))
    switches: dict[Provider, ModelSwitch] = {}
    for r in seen.readings:
        if r.exhausted or not r.suggestion:
            continue
        states.append(
            WatchEvent("family_limit", now, r.provider, r.suggestion, reset_at=r.reset_at)
        )
        if r.family is not None and r.switch_model is not None:
            done = frozenset(
                s
                for e in _for_limit(seen.history, ("model_switched", "model_declined"), r)
                for s in e.sessions
            )
            switches[r.provider] = ModelSwitch(
                r.provider, r.family, r.switch_model, r.reset_at, done, seen.root, ask
            )
    moves = []
    for r in exhausted.values() if free else ():
        until = "" if r.reset_at is None else f" until {iso_z(r.reset_at)}"
        why = "exhausted" if r.window is None else f"blocked by the {r.window} limit{until}"
        states.append(WatchEvent("exhausted", now, r.provider, why, reset_at=r.reset_at))
        refused: dict[str, str] = {}
        for e in _for_limit(seen.history, ("move_declined", "move_failed"), r):
            for session in e.sessions:
                refused.setdefault(session, f"{e.kind.removeprefix('move_')} for this limit")
        moves.append(Move(r.provider, r.reset_at, why, dict(seen.moves.avoid), refused, ask))
    return Decisions(returns, states, switches, moves, staying)


def outstanding(history: Sequence[WatchEvent]) -> list[WatchEvent]:
    """The batches watch moved whose return the user has not declined (whether every agent is
    back is the store's to say: :class:`BatchMoves`)."""
    declined = {
        e.returns_batch
        for e in history
        if e.kind == "return_declined" and e.detail == "not confirmed" and e.returns_batch
    }
    return [e for e in history if e.kind == "moved" and e.batch_id not in declined]


def news(events: Sequence[WatchEvent], history: Sequence[WatchEvent]) -> list[WatchEvent]:
    """The events worth recording: a state (exhausted, waiting, a family limit) only when it
    changed since it was last recorded, a failure or a refused return only when its reason
    did; every move, return and answer."""

    def repeated(event: WatchEvent, same: tuple[str, ...], said: tuple[str, ...]) -> bool:
        """The last event recorded with ``event``'s ``same`` fields has its ``said`` too."""
        key, told = attrgetter(*same), attrgetter(*said)
        last = next((e for e in reversed(history) if key(e) == key(event)), None)
        return last is not None and told(last) == told(event)

    return [
        e
        for e in events
        if not (e.kind in STATES and repeated(e, ("kind", "provider"), ("detail", "reset_at")))
        and not (
            e.kind in SAID_ONCE
            and e.batch_id is None
            and repeated(e, ("kind", "provider", "returns_batch"), ("detail",))
        )
    ]


def _for_limit(
    history: Sequence[WatchEvent], kinds: tuple[str, ...], limit: Reading
) -> list[WatchEvent]:
    """The events of ``kinds`` recorded for ``limit`` (its provider and its reset)."""
    return [
        e
        for e in history
        if e.kind in kinds and (e.provider, e.reset_at) == (limit.provider, limit.reset_at)
    ]
