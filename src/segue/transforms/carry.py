"""What any target can take from another provider's history at all (pure).

Each target's writer narrows this further (pairing of tool calls and results, empty texts); no
target takes reasoning payloads, error notices, injected context, command output, bookkeeping
records or compactions only their own provider can read.
"""

from __future__ import annotations

from typing import assert_never

from segue.model import conversation as neutral

__all__ = ["carriable"]


def carriable(item: neutral.Item) -> bool:
    """A typed prompt, an assistant's text, a portable compaction summary, a tool call or a
    tool result."""
    match item:  # the commonest kinds first: every item of a history passes here
        case neutral.ToolCall() | neutral.ToolResult():
            return True
        case neutral.Opaque():
            return False
        case neutral.UserMessage():
            return item.origin is neutral.Origin.TYPED
        case neutral.AssistantMessage():
            return bool(item.text)
        case neutral.Compaction():
            return item.state is neutral.CompactionState.PORTABLE and bool(item.summary)
        case (
            neutral.Reasoning() | neutral.ErrorNotice() | neutral.TurnMarker() | neutral.Rollback()
        ):
            return False
        case _:
            assert_never(item)
