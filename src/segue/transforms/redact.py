"""Secrets in what a switch carries: found in the items' texts, and replaced by markers (pure
apart from the detector it calls)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, assert_never

import msgspec

from segue.model import conversation as neutral
from segue.transforms.secrets import SecretScan, redact_value, scan, strings_in

__all__ = ["item_texts", "redact_items", "redact_own_summaries", "scan_items"]


def _compaction(item: neutral.Compaction) -> list[str]:
    texts = [item.summary]
    for kept in item.replacement or ():
        texts += item_texts(kept)
    return texts


# By exact type, every item type of the model (a test holds this to the model's Item union): a
# scan looks up each carried item, and a match of class patterns cost twice the rest of it.
TEXTS_OF: dict[type, Callable[[Any], list[str]]] = {
    neutral.UserMessage: lambda item: [item.text],
    neutral.AssistantMessage: lambda item: [item.text],
    neutral.Reasoning: lambda item: [item.text],
    neutral.ToolCall: lambda item: [item.name, *strings_in(item.input)],
    neutral.ToolResult: lambda item: [item.output],
    neutral.Compaction: _compaction,
    neutral.ErrorNotice: lambda item: [item.message],
    neutral.TurnMarker: lambda _: [],
    neutral.Rollback: lambda _: [],
    neutral.Opaque: lambda _: [],
}


def item_texts(item: neutral.Item) -> list[str]:
    """Every text of an item that a target would receive or a person would read."""
    return TEXTS_OF[type(item)](item)


def scan_items(items: Sequence[neutral.Item]) -> SecretScan:
    texts: list[str] = []
    texts_of = TEXTS_OF
    for item in items:
        texts += texts_of[type(item)](item)
    return scan(texts)


def redact_item(item: neutral.Item, found: SecretScan) -> neutral.Item:
    """``item`` with every secret of ``found`` in its texts replaced by a marker."""
    match item:
        case neutral.UserMessage() | neutral.AssistantMessage() | neutral.Reasoning():
            return msgspec.structs.replace(item, text=found.redact(item.text))
        case neutral.ToolCall():
            return msgspec.structs.replace(
                item, name=found.redact(item.name), input=redact_value(item.input, found)
            )
        case neutral.ToolResult():
            return msgspec.structs.replace(item, output=found.redact(item.output))
        case neutral.Compaction():
            replacement = item.replacement
            if replacement is not None:
                replacement = tuple(redact_item(kept, found) for kept in replacement)
            return msgspec.structs.replace(
                item, summary=found.redact(item.summary), replacement=replacement
            )
        case neutral.ErrorNotice():
            return msgspec.structs.replace(item, message=found.redact(item.message))
        case neutral.TurnMarker() | neutral.Rollback() | neutral.Opaque():
            return item
        case _:
            assert_never(item)


def redact_items(items: Sequence[neutral.Item], found: SecretScan) -> list[neutral.Item]:
    """``items`` with every secret of ``found`` replaced by a marker."""
    if not found:
        return list(items)
    return [redact_item(item, found) for item in items]


def redact_own_summaries(
    items: Sequence[neutral.Item], found: SecretScan, trigger: str
) -> list[neutral.Item]:
    """``items`` with secrets replaced only in the compactions segue wrote (``trigger``)."""
    if not found:
        return list(items)
    return [
        redact_item(item, found)
        if isinstance(item, neutral.Compaction) and item.trigger == trigger
        else item
        for item in items
    ]
