"""Target model profiles and size estimates (pure; each provider's entry builds its profile).

A :class:`TargetProfile` says how much history the target CLI can take: its model, its context
window, the point where it would auto-compact, and the budget a projection must stay under. The
same profile decides the plan and is stamped into the result, so planning and writing agree.

Sizes are estimated in characters of model-visible text; tokens are characters divided by
:data:`CHARS_PER_TOKEN`, a deliberately low ratio (real English and code average 3.5–4), so an
estimate errs on the side of "does not fit".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from segue.conversation import (
    AssistantMessage,
    Compaction,
    Item,
    Provider,
    Reasoning,
    ToolCall,
    ToolResult,
    UserMessage,
)

CHARS_PER_TOKEN = 2.5
IMAGE_CHARS = 4_000  # an image costs about 1,600 tokens whatever its base64 length
RESERVE_FRACTION = 0.10  # system prompt, tool schemas, environment context the CLI adds


@dataclass(frozen=True, slots=True)
class TargetProfile:
    provider: Provider
    model: str | None  # the model the target CLI will run, as configured (None: its default)
    context_window: int  # tokens
    auto_compact_tokens: int  # the target compacts on its own once history reaches this
    source: str  # where the figures came from, for the report

    @property
    def budget_tokens(self) -> int:
        """What a projection may use: below the auto-compact point, less a reserve."""
        return int(self.auto_compact_tokens * (1 - RESERVE_FRACTION))

    @property
    def budget_chars(self) -> int:
        return int(self.budget_tokens * CHARS_PER_TOKEN)


def _tool_call_chars(item: ToolCall) -> int:
    value = item.input
    body = value if isinstance(value, str) else orjson.dumps(value)
    return len(item.name) + len(body)


_SIZERS: dict[type, Callable[[Any], int]] = {
    UserMessage: lambda i: len(i.text) + IMAGE_CHARS * len(i.images),
    AssistantMessage: lambda i: len(i.text),
    ToolCall: _tool_call_chars,
    ToolResult: lambda i: len(i.output) + IMAGE_CHARS * len(i.images),
    Compaction: lambda i: len(i.summary),
    Reasoning: lambda i: len(i.summary),
}


def item_chars(item: Item) -> int:
    """Estimated model-visible characters of one item (what it costs the target)."""
    sizer = _SIZERS.get(type(item))
    return sizer(item) if sizer is not None else 0


def history_chars(items: Iterable[Item]) -> int:
    return sum(item_chars(item) for item in items)


def chars_to_tokens(chars: int) -> int:
    return int(chars / CHARS_PER_TOKEN) + 1
