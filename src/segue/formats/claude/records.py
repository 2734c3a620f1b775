"""The Claude Code transcript records that segue's reader and writer share, and their one chain
rule.

A transcript (``projects/<encoded cwd>/<session id>.jsonl``) is one JSON object per line. The
conversation records (``user``, ``assistant``, ``system``, ``attachment``, ``progress``) form a
tree through ``parentUuid``; a ``compact_boundary`` starts a new root and names the record it
continues in ``logicalParentUuid``. Metadata records (``last-prompt``, titles, ...) hang off no
chain.

The types below describe what the writer produces. The reader takes records as untrusted JSON
(``Record``): a file may hold any value in any field, so it checks each one it uses.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Record = dict[str, Any]  # one line of a transcript as parsed, not yet checked

CHAIN_TYPES = frozenset({"user", "assistant", "system", "attachment", "progress"})
COMPACT_BOUNDARY = "compact_boundary"
SYNTHETIC_MODEL = "<synthetic>"  # the model Claude Code stamps on messages no model wrote


def chain_parent(record: Record) -> object:
    """The record a conversation record continues: its ``parentUuid``, or for a compact
    boundary (a new root) the ``logicalParentUuid`` it continues logically. Not checked: the
    caller tests that the value is a string."""
    parent = record.get("parentUuid")
    if parent is None and record.get("subtype") == COMPACT_BOUNDARY:
        return record.get("logicalParentUuid")
    return parent


# --- content blocks -------------------------------------------------------------------------


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str


class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


class ToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: str
    is_error: bool


AssistantBlock = TextBlock | ToolUseBlock


class UserBody(TypedDict):
    role: Literal["user"]
    content: str | list[ToolResultBlock]


class AssistantBody(TypedDict):
    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    model: str
    content: list[AssistantBlock]
    stop_reason: Literal["tool_use", "end_turn"]
    stop_sequence: None


# --- records --------------------------------------------------------------------------------


class CompactMetadata(TypedDict):
    trigger: Literal["manual", "auto"]
    preTokens: int


class ChainFields(TypedDict):
    """What every conversation record carries."""

    parentUuid: str | None
    isSidechain: bool
    userType: Literal["external"]
    cwd: str
    sessionId: str
    version: str
    entrypoint: Literal["cli"]
    uuid: str
    timestamp: str
    logicalParentUuid: NotRequired[str | None]


class UserRecord(ChainFields):
    type: Literal["user"]
    message: UserBody


class SummaryRecord(UserRecord):
    """The user record that carries a compaction's summary, right after its boundary."""

    isCompactSummary: Literal[True]
    isVisibleInTranscriptOnly: Literal[True]


class AssistantRecord(ChainFields):
    type: Literal["assistant"]
    message: AssistantBody


class BoundaryRecord(ChainFields):
    type: Literal["system"]
    subtype: Literal["compact_boundary"]
    content: str
    isMeta: bool
    level: Literal["info"]
    compactMetadata: CompactMetadata


ChainRecord = UserRecord | SummaryRecord | AssistantRecord | BoundaryRecord


class LastPromptRecord(TypedDict):
    type: Literal["last-prompt"]
    lastPrompt: str
    leafUuid: str
    sessionId: str
