"""The neutral model as plain JSON values: the stable ``--json`` output that scripts build on.

Every item becomes an object with ``kind`` first, its own fields, and ``file`` / ``line`` for
provenance. Enum values are their strings; datetimes are ISO 8601 in UTC with ``Z``. Field names
are documented in the README and only ever added to.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from enum import Enum
from typing import Any

from segue.conversation import Compaction, Conversation, Item, Opaque, Provenance

SCHEMA_VERSION = 1


def _value(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, tuple | list):
        return [_value(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def item_to_json(item: Item, *, opaque_data: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": item.kind}
    for f in dataclasses.fields(item):
        name = f.name
        if name in ("kind", "prov"):
            continue
        value = getattr(item, name)
        if isinstance(item, Opaque) and name == "data" and not opaque_data:
            continue
        if isinstance(item, Compaction) and name == "replacement":
            out[name] = None if value is None else [item_to_json(i) for i in value]
            continue
        out[name] = _value(value)
    prov: Provenance = item.prov
    out["file"] = prov.file
    out["line"] = prov.line
    return out


def conversation_to_json(
    conversation: Conversation, *, opaque_data: bool = False, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    meta = conversation.meta
    out: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "meta": {
            "provider": meta.provider.value,
            "id": meta.id,
            "path": meta.path,
            "cwd": meta.cwd,
            "model": meta.model,
            "cli_version": meta.cli_version,
            "git_branch": meta.git_branch,
            "title": meta.title,
            "created": meta.created,
            "updated": meta.updated,
            "extra": meta.extra,
        },
        "items": [item_to_json(i, opaque_data=opaque_data) for i in conversation.items],
        "skipped": [_value(s) for s in conversation.skipped],
        "notes": list(conversation.notes),
        "sidechains": [
            conversation_to_json(s, opaque_data=opaque_data) for s in conversation.sidechains
        ],
    }
    if extra:
        out.update(extra)
    return out
