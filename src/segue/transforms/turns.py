"""Group a conversation's items into turns: a typed user prompt and everything until the next."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeGuard

import msgspec

from segue.model.conversation import Item, Origin, UserMessage


class Turn(msgspec.Struct):
    """``prompt`` is None for what comes before the first typed prompt (a preamble)."""

    prompt: UserMessage | None
    items: list[Item] = msgspec.field(default_factory=list)

    @property
    def all_items(self) -> list[Item]:
        return ([self.prompt] if self.prompt is not None else []) + self.items


def is_prompt(item: Item) -> TypeGuard[UserMessage]:
    return isinstance(item, UserMessage) and item.origin is Origin.TYPED


def group_turns(items: Sequence[Item]) -> list[Turn]:
    turns: list[Turn] = []
    current: Turn | None = None
    for item in items:
        if is_prompt(item):
            current = Turn(item)
            turns.append(current)
        else:
            if current is None:
                current = Turn(None)
                turns.append(current)
            current.items.append(item)
    return turns


def prompts(items: Sequence[Item]) -> list[UserMessage]:
    return [item for item in items if is_prompt(item)]
