"""A native session's turns as runs: its typed prompts, after the rollbacks its CLI recorded,
each with how it ended (completed, still working, or failed on an error such as a usage limit).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

import msgspec

from segue.model.conversation import (
    AssistantMessage,
    Conversation,
    ErrorNotice,
    Item,
    Opaque,
    TurnMarker,
    TurnStatus,
    UserMessage,
)
from segue.model.times import parse_iso
from segue.threads.model import RunStatus
from segue.transforms.effective import apply_rollbacks
from segue.transforms.turns import group_turns

__all__ = ["NativeTurn", "split_native_turns", "turn_items", "without_turns"]


class NativeTurn(msgspec.Struct, frozen=True):
    prompt: str
    status: RunStatus
    started_at: datetime | None
    ended_at: datetime | None
    note: str | None = None  # for a failed turn: the error that ended it


def turn_items(conversation: Conversation) -> list[list[Item]]:
    """The items of each typed-prompt turn still in the session, prompt first."""
    turns = group_turns(apply_rollbacks(conversation.items))
    return [t.all_items for t in turns if t.prompt is not None]


def without_turns(items: Sequence[Item], places: set[int]) -> list[Item]:
    """``items`` without the typed-prompt turns at ``places`` (0-based, as :func:`turn_items`
    counts them); what comes before the first turn is kept."""
    out: list[Item] = []
    n = 0
    for turn in group_turns(apply_rollbacks(items)):
        if turn.prompt is not None:
            n += 1
            if n - 1 in places:
                continue
        out += turn.all_items
    return out


def split_native_turns(conversation: Conversation) -> list[NativeTurn]:
    """One entry per typed prompt that is still in the session (rolled-back turns are gone)."""
    turns = [t for t in group_turns(apply_rollbacks(conversation.items)) if t.prompt is not None]
    out = []
    for n, turn in enumerate(turns):
        assert turn.prompt is not None
        status, note = _outcome(turn.items, last=n == len(turns) - 1)
        every = turn.all_items
        out.append(
            NativeTurn(
                prompt=turn.prompt.text,
                status=status,
                started_at=_first_time(every),
                ended_at=_first_time(reversed(every)),
                note=note,
            )
        )
    return out


def _first_time(items: Iterable[Item]) -> datetime | None:
    """The first of ``items``' times that can be read (only as many are parsed as it takes)."""
    for item in items:
        when = parse_iso(item.timestamp)
        if when is not None:
            return when
    return None


def _outcome(items: Sequence[Item], *, last: bool) -> tuple[RunStatus, str | None]:
    """How a turn ended: an error its CLI recorded after the last answer fails it (a usage
    limit, an API error); the last turn is still working when its CLI marked it started and
    not ended, or it has no answer at all."""
    for item in reversed(items):
        if isinstance(item, Opaque | TurnMarker | UserMessage):  # bookkeeping, injected context
            continue
        if isinstance(item, ErrorNotice):
            return RunStatus.FAILED, _error_note(item)
        break
    if not last:
        return RunStatus.COMPLETED, None
    return (RunStatus.COMPLETED if _finished(items) else RunStatus.WORKING), None


def _error_note(error: ErrorNotice) -> str:
    text = " ".join(error.message.split())[:300]
    reset = f" (resets {error.reset_at.isoformat()})" if error.reset_at is not None else ""
    return f"{error.error_kind.value}: {text}{reset}"


def _finished(items: Sequence[Item]) -> bool:
    """Whether the last turn ended: its CLI marked it done, or it has an answer and no start
    marker without an end after it."""
    for item in reversed(items):
        if isinstance(item, TurnMarker):
            return item.status is not TurnStatus.STARTED
    return any(isinstance(item, AssistantMessage) for item in items)
