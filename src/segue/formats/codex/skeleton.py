"""The listing's one pass over a whole rollout: the lines that can be prompts, rollbacks or the
thread's name, found by skimming each line's ``type`` and payload ``type`` / ``role`` (exact
whatever the spelling of the JSON, unlike a byte search)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from segue.formats.skim import skim


class _Payload(msgspec.Struct):
    type: Any = None
    role: Any = None


class _Line(msgspec.Struct):
    type: Any = None
    payload: _Payload | None = None


_DECODER = msgspec.json.Decoder(_Line)
_EVENTS = frozenset({"thread_rolled_back", "thread_name_updated"})


def _decode(line: bytes) -> dict[str, Any]:
    skeleton = _DECODER.decode(line)
    payload = skeleton.payload
    return {
        "type": skeleton.type,
        "payload": None if payload is None else {"type": payload.type, "role": payload.role},
    }


def _wanted(record: dict[str, Any]) -> bool:
    payload = record.get("payload")
    if type(payload) is not dict:
        return False
    kind, ptype = record.get("type"), payload.get("type")
    if kind == "response_item":
        return ptype == "message" and payload.get("role") == "user"
    return kind == "event_msg" and type(ptype) is str and ptype in _EVENTS


def prompt_lines(path: Path) -> list[bytes]:
    """The lines, in file order, that can hold a prompt, a rollback or the thread's name."""
    return [line for _, line, record in skim(path, _decode) if _wanted(record)]
