"""What a session is doing now, judged from its items alone."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from segue.model.conversation import (
    AssistantMessage,
    ErrorKind,
    ErrorNotice,
    Item,
    Opaque,
    Reasoning,
    ToolCall,
    ToolResult,
    TurnMarker,
    TurnStatus,
)
from segue.model.session_info import SessionState
from segue.transforms.turns import is_prompt

LIMIT_KINDS = (ErrorKind.USAGE_LIMIT, ErrorKind.RATE_LIMIT)


def session_state(items: Sequence[Item]) -> tuple[SessionState, datetime | None]:
    """The state and, for ``limit``, the reset time the error gave (if any).

    Walks back from the end over bookkeeping records. A limit error is the state when nothing the
    model produced came after it. Otherwise a turn is unfinished when the CLI recorded its start
    but not its end (Codex), or when the history ends with a prompt, a tool call or a tool result
    that no assistant reply followed (Claude writes no turn markers in ``-p`` runs).
    """
    saw_turn_end = False
    for item in reversed(items):
        if isinstance(item, Opaque):
            continue
        if isinstance(item, ErrorNotice):
            if item.error_kind in LIMIT_KINDS:
                return SessionState.LIMIT, item.reset_at
            continue
        if isinstance(item, TurnMarker):
            if item.status is TurnStatus.STARTED and not saw_turn_end:
                return SessionState.WORKING, None
            saw_turn_end = True
            continue
        if saw_turn_end or isinstance(item, AssistantMessage):
            return SessionState.IDLE, None
        if is_prompt(item) or isinstance(item, ToolCall | ToolResult | Reasoning):
            return SessionState.WORKING, None
        # (past injected context, command output and the rest)
    return SessionState.IDLE, None
