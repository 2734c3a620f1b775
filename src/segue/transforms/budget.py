"""Target model profiles and size estimates (pure; each provider's entry builds its profile).

A :class:`TargetProfile` says how much history the target CLI can take: its model, its context
window, the point where it would auto-compact, how it counts tokens, what it keeps of each tool
output it replays, and so the budget a projection must stay under. The same profile decides the
plan and is stamped into the result, so planning and writing agree.

Sizes are characters of model-visible text. A target's tokens are estimated the way the target
CLI itself estimates them (``chars_per_token``: Codex 0.169 counts UTF-8 bytes / 4, Claude Code
2.1.328 characters / 3 for its 5.x models and / 4 for older ones), and the budget keeps two
stated margins below the target's auto-compaction point: :data:`RESERVE_FRACTION` for what the
CLI adds to every request (system prompt, tool schemas, environment context) and
:data:`TOKENIZER_MARGIN` for a real tokenizer denser than the CLI's estimate (code, logs and
numbers run nearer 3 than 4 characters a token).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from segue.model.conversation import (
    AssistantMessage,
    Compaction,
    Item,
    Provider,
    Reasoning,
    ToolCall,
    ToolResult,
    UserMessage,
)

IMAGE_CHARS = 4_000  # an image costs about 1,600 tokens whatever its base64 length
RESERVE_FRACTION = 0.10  # system prompt, tool schemas, environment context the CLI adds
TOKENIZER_MARGIN = 0.20  # a real tokenizer may count a fifth more tokens than the CLI estimates


@dataclass(frozen=True, slots=True)
class TargetProfile:
    provider: Provider
    model: str | None  # the model the target CLI will run, as configured (None: its default)
    context_window: int  # tokens
    auto_compact_tokens: int  # the target compacts on its own once history reaches this
    source: str  # where the figures came from, for the report
    chars_per_token: float = 4.0  # how the target CLI itself estimates a token
    # What the target keeps of one tool output when it replays history (UTF-8 bytes, head and
    # tail with a marker between); None: it sends every output whole.
    output_cap_bytes: int | None = None

    @property
    def budget_tokens(self) -> int:
        """What a projection may use: below the auto-compact point, less a reserve."""
        return int(self.auto_compact_tokens * (1 - RESERVE_FRACTION))

    @property
    def budget_chars(self) -> int:
        return int(self.budget_tokens * self.safe_chars_per_token)

    @property
    def safe_chars_per_token(self) -> float:
        """Characters a token, with the tokenizer margin: what the budget is computed with."""
        return self.chars_per_token * (1 - TOKENIZER_MARGIN)

    def tokens(self, chars: int) -> int:
        """A safe (high) estimate of the tokens ``chars`` characters cost this target."""
        return int(chars / self.safe_chars_per_token) + 1


def _tool_call_chars(item: ToolCall) -> int:
    value = item.input
    body = value if isinstance(value, str) else orjson.dumps(value)
    return len(item.name) + len(body)


def _user_chars(item: UserMessage) -> int:
    return len(item.text) + IMAGE_CHARS * len(item.images)


def _assistant_chars(item: AssistantMessage) -> int:
    return len(item.text)


def _result_chars(item: ToolResult) -> int:
    return len(item.output) + IMAGE_CHARS * len(item.images)


def _compaction_chars(item: Compaction) -> int:
    return len(item.summary)


def _reasoning_chars(item: Reasoning) -> int:
    return len(item.text)


# A lookup by exact type (the hot path of planning); each sizer is typed for its own item.
_SIZERS: dict[type, Callable[[Any], int]] = {
    UserMessage: _user_chars,
    AssistantMessage: _assistant_chars,
    ToolCall: _tool_call_chars,
    ToolResult: _result_chars,
    Compaction: _compaction_chars,
    Reasoning: _reasoning_chars,
}


def item_chars(item: Item) -> int:
    """Estimated model-visible characters of one item (what it costs the target)."""
    sizer = _SIZERS.get(type(item))
    return sizer(item) if sizer is not None else 0


def history_chars(items: Iterable[Item]) -> int:
    return sum(item_chars(item) for item in items)
