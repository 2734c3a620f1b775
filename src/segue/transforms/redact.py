"""Secrets in what a switch carries: found in the items' texts, and replaced by markers (pure
apart from the detector it calls)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import assert_never

import msgspec

from segue.model import conversation as neutral
from segue.transforms.secrets import SecretScan, redact_value, scan, strings_in

__all__ = ["item_texts", "redact_items", "redact_own_summaries", "scan_items"]


def item_texts(item: neutral.Item) -> Iterator[str]:
    """Every text of an item that a target would receive or a person would read."""
    match item:
        case neutral.UserMessage() | neutral.AssistantMessage() | neutral.Reasoning():
            yield item.text
        case neutral.ToolCall():
            yield item.name
            yield from strings_in(item.input)
        case neutral.ToolResult():
            yield item.output
        case neutral.Compaction():
            yield item.summary
            for kept in item.replacement or ():
                yield from item_texts(kept)
        case neutral.ErrorNotice():
            yield item.message
        case neutral.TurnMarker() | neutral.Rollback() | neutral.Opaque():
            pass
        case _:
            assert_never(item)


def scan_items(items: Sequence[neutral.Item]) -> SecretScan:
    return scan(text for item in items for text in item_texts(item))


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
