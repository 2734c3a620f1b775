"""The neutral model as plain JSON values: every item an object with ``kind`` first, its own
fields, and ``file`` / ``line`` for provenance. Enum values are their strings; datetimes are ISO
8601 in UTC with ``Z``; a data class is an object of its fields.

This is the model's one codec: ``segue show --json`` prints it, and the graph stores handoff
items in it. Field names are documented with the JSON schemas and only ever added to.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

import msgspec

from segue.model.conversation import Compaction, Conversation, Item, Opaque, Provider
from segue.model.times import iso_z

__all__ = ["SCHEMA_VERSION", "conversation_to_json", "item_to_json", "to_json_value"]

SCHEMA_VERSION = 1
# Python names that the JSON spells as it did before they were renamed (the JSON is stable).
_JSON_NAMES = {("reasoning", "text"): "summary", ("error", "error_kind"): "error"}


def to_json_value(value: Any) -> Any:
    """``value`` as plain JSON values: enums as their strings, datetimes as ISO 8601 with Z,
    data classes as objects of their fields."""
    if isinstance(value, Enum | Provider):
        return value.value
    if isinstance(value, datetime):
        return iso_z(value)
    if isinstance(value, tuple | list):
        return [to_json_value(v) for v in value]
    if isinstance(value, msgspec.Struct):
        return {name: to_json_value(getattr(value, name)) for name in value.__struct_fields__}
    return value


def item_to_json(item: Item, *, opaque_data: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": item.kind}
    for name in item.__struct_fields__:
        if name in ("kind", "prov"):
            continue
        value = getattr(item, name)
        if isinstance(item, Opaque) and name == "data" and not opaque_data:
            continue
        if isinstance(item, Compaction) and name == "replacement":
            out[name] = None if value is None else [item_to_json(i) for i in value]
            continue
        out[_JSON_NAMES.get((item.kind, name), name)] = to_json_value(value)
    out["file"], out["line"] = item.prov.file, item.prov.line
    return out


def conversation_to_json(
    conversation: Conversation, *, opaque_data: bool = False, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "meta": to_json_value(conversation.meta),
        "items": [item_to_json(i, opaque_data=opaque_data) for i in conversation.items],
        "skipped": [to_json_value(s) for s in conversation.skipped],
        "notes": list(conversation.notes),
        "sidechains": [
            conversation_to_json(s, opaque_data=opaque_data) for s in conversation.sidechains
        ],
    }
    if extra:
        out.update(extra)
    return out
