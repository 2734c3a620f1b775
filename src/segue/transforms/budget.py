"""Target model profiles and what a history costs them (pure; each provider's entry builds its
profile).

A :class:`TargetProfile` says how much history the target CLI can take: its model, its context
window, the point where it would auto-compact, how it counts tokens, what it keeps of each tool
output it replays. The same profile decides the plan and is stamped into the result, so planning
and writing agree.

A history must stay under two limits of its target (:class:`Measure` holds both figures):

- **the target CLI's own estimate** against its auto-compaction point: Codex 0.169 estimates a
  token as 4 characters (segue seeds that figure), Claude Code 2.1.328 as 3 characters for its
  5.x models and 4 for older ones. Under :attr:`TargetProfile.budget_tokens` the CLI does not
  compact on arrival;
- **the real window**, counted by the target's tokenizer (estimated from the content by
  :mod:`segue.transforms.tokens`), times a named safety factor for a tokenizer that counts more
  than the one segue was fitted on (:data:`NEWER_CLAUDE_TOKENIZER`). Under
  :attr:`TargetProfile.window_budget_tokens` the first request is not refused.

Both keep :data:`RESERVE_FRACTION` for what the CLI adds to every request (system prompt, tool
schemas, environment context, the user's instructions). A history under both is carried whole;
only over one of them does the shrink ladder cut, to the tighter.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
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
from segue.transforms.tokens import O200K, TokenModel, history_make_up

IMAGE_CHARS = 4_000  # an image costs about 1,600 tokens whatever its base64 length
# What the CLI adds to every request (system prompt, tool schemas, environment context, the
# user's CLAUDE.md or AGENTS.md): measured in the test bed at 9k tokens for Claude Code 2.1.328
# and 2k plus its developer messages for Codex 0.169; a share of the limit leaves room for more.
RESERVE_FRACTION = 0.05
# Anthropic's models from Opus 4.7 on use a tokenizer that counts "roughly 1.0-1.35x" as many
# tokens as before, by content (the Opus 4.7 release notes, April 2026; the published tokenizer
# segue is fitted on is older still): the real window of those models is counted with this.
NEWER_CLAUDE_TOKENIZER = 1.35


class Measure(msgspec.Struct, frozen=True):
    """What a history costs a target, by each of its two limits."""

    chars: int  # model-visible characters
    cli_tokens: int  # the target CLI's own estimate (characters / chars_per_token)
    tokens: int  # the target's tokenizer, estimated from the content, times the safety factor


class TargetProfile(msgspec.Struct, frozen=True):
    provider: Provider
    model: str | None  # the model the target CLI will run, as configured (None: its default)
    context_window: int  # tokens
    auto_compact_tokens: int  # the target compacts on its own once history reaches this
    source: str  # where the figures came from, for the report
    chars_per_token: float = 4.0  # how the target CLI itself estimates a token
    # What the target keeps of one tool output when it replays history (UTF-8 bytes, head and
    # tail with a marker between); None: it sends every output whole.
    output_cap_bytes: int | None = None
    tokenizer: TokenModel = O200K  # the tokenizer the target's model counts with (estimated)
    tokenizer_factor: float = 1.0  # a safety factor over it (NEWER_CLAUDE_TOKENIZER)
    # The most a request may hold before the CLI or the API refuses it; None: the window.
    request_limit_tokens: int | None = None

    @property
    def budget_tokens(self) -> int:
        """What a history may cost by the CLI's own estimate: below its auto-compact point."""
        return int(self.auto_compact_tokens * (1 - RESERVE_FRACTION))

    @property
    def budget_chars(self) -> int:
        """:attr:`budget_tokens` in characters, as the CLI estimates them."""
        return int(self.budget_tokens * self.chars_per_token)

    @property
    def window_budget_tokens(self) -> int:
        """What a history may cost by the real tokenizer (with the safety factor)."""
        limit = self.request_limit_tokens or self.context_window
        return int(limit * (1 - RESERVE_FRACTION))

    @property
    def counted_by(self) -> str:
        """The real measure, for a person: "o200k", "claude ×1.35"."""
        factor = self.tokenizer_factor
        return self.tokenizer.name + ("" if factor == 1 else f" ×{factor:g}")

    def measure(self, items: Iterable[Item]) -> Measure:
        """What ``items`` cost this target, by both limits."""
        listed = list(items)
        chars = history_chars(listed)
        real = self.tokenizer.history(history_make_up(listed))
        return Measure(
            chars,
            math.ceil(chars / self.chars_per_token),
            math.ceil(real * self.tokenizer_factor),
        )

    def use(self, measure: Measure) -> float:
        """The share of the tighter limit ``measure`` takes (over 1: it does not fit)."""
        return max(
            measure.cli_tokens / max(self.budget_tokens, 1),
            measure.tokens / max(self.window_budget_tokens, 1),
        )

    def deciding_limit(self, measure: Measure) -> str:
        """Which limit is the tighter for ``measure``: "window" or "cli"."""
        cli = measure.cli_tokens / max(self.budget_tokens, 1)
        return "window" if measure.tokens / max(self.window_budget_tokens, 1) >= cli else "cli"

    def fits(self, measure: Measure) -> bool:
        return self.use(measure) <= 1


def _tool_call_chars(item: ToolCall) -> int:
    value = item.input
    body = value if isinstance(value, str) else orjson.dumps(value)
    return len(item.name) + len(body)


# A lookup by exact type (the hot path of planning).
_SIZERS: dict[type, Callable[[Any], int]] = {
    UserMessage: lambda item: len(item.text) + IMAGE_CHARS * len(item.images),
    AssistantMessage: lambda item: len(item.text),
    ToolCall: _tool_call_chars,
    ToolResult: lambda item: len(item.output) + IMAGE_CHARS * len(item.images),
    Compaction: lambda item: len(item.summary),
    Reasoning: lambda item: len(item.text),
}


def item_chars(item: Item) -> int:
    """Estimated model-visible characters of one item (what it costs the target)."""
    sizer = _SIZERS.get(type(item))
    return sizer(item) if sizer is not None else 0


def history_chars(items: Iterable[Item]) -> int:
    return sum(item_chars(item) for item in items)
