"""The listing's one pass over a whole transcript: each line's place in the conversation tree,
without building what it says.

The listing must count the prompts ``segue show`` numbers: the typed prompts of the active
``parentUuid`` chain, not every prompt line in the file (a rewound branch stays in the file). That
needs the links of every record. ``msgspec`` decodes each line into a small struct of just the
fields the chain uses and skips the rest (message texts, tool output) without creating them,
faster than parsing the line (:mod:`segue.formats.skim`), and the index is the one the reader
builds. Only the lines that can be prompts are kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from segue.formats.claude.chain import Entry, TranscriptIndex, index_records
from segue.formats.skim import skim


class _Block(msgspec.Struct):
    type: Any = None


class _Message(msgspec.Struct):
    id: Any = None
    content: str | list[_Block] | None = None


class _Skeleton(msgspec.Struct):
    type: Any = None
    uuid: Any = None
    parentUuid: Any = None
    logicalParentUuid: Any = None
    isSidechain: Any = None
    subtype: Any = None
    timestamp: Any = None
    sessionId: Any = None
    leafUuid: Any = None
    customTitle: Any = None
    aiTitle: Any = None
    summary: Any = None
    message: _Message | None = None


_DECODER = msgspec.json.Decoder(_Skeleton)
_FIELDS = tuple(f for f in _Skeleton.__struct_fields__ if f != "message")


def _as_record(skeleton: _Skeleton) -> dict[str, Any]:
    record = {name: value for name in _FIELDS if (value := getattr(skeleton, name)) is not None}
    message = skeleton.message
    if message is not None:
        content = message.content
        record["message"] = {
            "id": message.id,
            "content": [{"type": b.type} for b in content] if type(content) is list else content,
        }
    return record


def _may_be_prompt(record: dict[str, Any]) -> bool:
    """A user record that can hold a prompt: not one made only of tool results."""
    if record.get("type") != "user":
        return False
    message = record.get("message")
    content = message.get("content") if type(message) is dict else None
    if type(content) is not list:
        return True
    return any(type(b) is not dict or b.get("type") != "tool_result" for b in content)


def _decode(line: bytes) -> dict[str, Any]:
    return _as_record(_DECODER.decode(line))


def skeleton_index(path: Path) -> tuple[TranscriptIndex, dict[int, bytes]]:
    """The transcript's index (as :func:`~segue.formats.claude.chain.index_records` builds it
    from whole records) and the lines that can be prompts, by line number."""
    candidates: dict[int, bytes] = {}

    def records() -> Iterator[Entry]:
        for lineno, line, record in skim(path, _decode):
            if _may_be_prompt(record):
                candidates[lineno] = line
            yield lineno, record

    return index_records(records()), candidates
