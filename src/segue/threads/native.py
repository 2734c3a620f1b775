"""A native session's turns as runs: its typed prompts, after the rollbacks its CLI recorded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from segue.conversation import AssistantMessage, Conversation, Item, TurnMarker, TurnStatus
from segue.threads.model import RunStatus
from segue.times import parse_iso
from segue.transforms.effective import apply_rollbacks
from segue.transforms.turns import group_turns

__all__ = ["NativeTurn", "native_turns"]


@dataclass(frozen=True, slots=True)
class NativeTurn:
    prompt: str
    status: RunStatus
    started_at: datetime | None
    ended_at: datetime | None


def native_turns(conversation: Conversation) -> list[NativeTurn]:
    """One entry per typed prompt that is still in the session (rolled-back turns are gone)."""
    turns = [t for t in group_turns(apply_rollbacks(conversation.items)) if t.prompt is not None]
    out = []
    for n, turn in enumerate(turns):
        assert turn.prompt is not None
        stamps = [parse_iso(item.timestamp) for item in turn.all_items]
        known = [s for s in stamps if s is not None]
        out.append(
            NativeTurn(
                prompt=turn.prompt.text,
                status=RunStatus.COMPLETED
                if n < len(turns) - 1 or _finished(turn.items)
                else RunStatus.WORKING,
                started_at=known[0] if known else None,
                ended_at=known[-1] if known else None,
            )
        )
    return out


def _finished(items: Sequence[Item]) -> bool:
    """Whether the last turn ended: its CLI marked it done, or it has an answer and no start
    marker without an end after it."""
    for item in reversed(items):
        if isinstance(item, TurnMarker):
            return item.status is not TurnStatus.STARTED
    return any(isinstance(item, AssistantMessage) for item in items)
