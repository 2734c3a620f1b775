"""What any target can take from another provider's history at all (pure).

Each target's writer narrows this further (pairing of tool calls and results, empty texts); no
target takes reasoning payloads, error notices, injected context, command output, bookkeeping
records or compactions only their own provider can read.
"""

from __future__ import annotations

from typing import assert_never

from segue.model.conversation import (
    AssistantMessage,
    Compaction,
    CompactionState,
    ErrorNotice,
    Item,
    Opaque,
    Origin,
    Reasoning,
    Rollback,
    ToolCall,
    ToolResult,
    TurnMarker,
    UserMessage,
)

__all__ = ["carriable"]


def carriable(item: Item) -> bool:
    """A typed prompt, an assistant's text, a portable compaction summary, a tool call or a
    tool result."""
    match item:
        case UserMessage():
            return item.origin is Origin.TYPED
        case AssistantMessage():
            return bool(item.text)
        case Compaction():
            return item.state is CompactionState.PORTABLE and bool(item.summary)
        case ToolCall() | ToolResult():
            return True
        case Reasoning() | ErrorNotice() | TurnMarker() | Rollback() | Opaque():
            return False
        case _:
            assert_never(item)
