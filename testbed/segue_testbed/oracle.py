"""Compare a history segue computed with the history a real CLI sent to the stand-in.

Both sides are reduced to the same *atoms*: the typed prompts, the assistant replies, the tool
call ids, the tool result ids and the compaction summaries, in order. Context a CLI injects on
its own (system reminders, environment context, instructions) is left out on both sides, and so
is the marker prompt the test sent to make the CLI talk. Prompts are compared without surrounding
whitespace: Claude Code adds a newline when it merges a prompt that got no answer with the next.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from segue.model.conversation import (
    AssistantMessage,
    Compaction,
    CompactionState,
    Item,
    Origin,
    ToolCall,
    ToolResult,
    UserMessage,
)

CLAUDE_SUMMARY_PREFIX = "This session is being continued from a previous conversation"
CLAUDE_FILLERS = ("No response requested.",)
CODEX_SUMMARY_PREFIXES = ("Another language model started to solve this problem",)
# Copilot CLI opens the message that stands for a compacted history with this (1.0.102)
COPILOT_SUMMARY_PREFIX = "Some of the conversation history has been summarized"
# … and sends a prompt it recorded itself with the time it was typed before it
COPILOT_DATETIME = re.compile(r"^<current_datetime>[^<]*</current_datetime>\s*")


@dataclass(slots=True)
class Atoms:
    prompts: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)


def _injected(text: str) -> bool:
    head = text.lstrip()
    return head.startswith(("<", "# AGENTS.md", "Caveat:", "[Request interrupted"))


def atoms_from_history(items: Sequence[Item]) -> Atoms:
    atoms = Atoms()
    for item in items:
        if isinstance(item, Compaction):
            if item.summary:
                atoms.summaries.append(item.summary)
            elif item.state is CompactionState.NATIVE_ONLY and item.replacement is None:
                atoms.summaries.append("<encrypted>")  # an encrypted item kept in the history
            continue
        if isinstance(item, UserMessage):
            if item.origin is Origin.TYPED and item.text and not _injected(item.text):
                atoms.prompts.append(item.text.strip())
        elif isinstance(item, AssistantMessage):
            if item.text:
                atoms.replies.append(item.text)
        elif isinstance(item, ToolCall):
            atoms.calls.append(item.call_id)
        elif isinstance(item, ToolResult):
            atoms.results.append(item.call_id)
    return atoms


def atoms_from_claude_request(body: dict[str, Any], marker: str) -> Atoms:
    atoms = Atoms()
    for message in body.get("messages", []):
        role = message.get("role")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks or []:
            btype = block.get("type")
            if role == "user":
                if btype == "tool_result":
                    atoms.results.append(str(block.get("tool_use_id")))
                elif btype == "text":
                    text = COPILOT_DATETIME.sub("", block.get("text", ""))
                    if text.startswith((CLAUDE_SUMMARY_PREFIX, COPILOT_SUMMARY_PREFIX)):
                        atoms.summaries.append(text)
                    elif text.strip() and text != marker and not _injected(text):
                        atoms.prompts.append(text.strip())
            elif role == "assistant":
                if btype == "text" and block.get("text") not in CLAUDE_FILLERS:
                    atoms.replies.append(block.get("text", ""))
                elif btype == "tool_use":
                    atoms.calls.append(str(block.get("id")))
    return atoms


def atoms_from_codex_request(body: dict[str, Any], marker: str) -> Atoms:
    atoms = Atoms()
    for item in body.get("input", []):
        itype = item.get("type")
        if itype == "message":
            parts = item.get("content") or []
            text = "\n".join(
                p.get("text", "") for p in parts if isinstance(p, dict) and "text" in p
            )
            role = item.get("role")
            if role == "user":
                if text.startswith(CODEX_SUMMARY_PREFIXES):
                    atoms.summaries.append(text)
                elif text.strip() and text != marker and not _injected(text):
                    atoms.prompts.append(text.strip())
            elif role == "assistant" and text:
                atoms.replies.append(text)
        elif itype in ("function_call", "custom_tool_call", "local_shell_call"):
            atoms.calls.append(str(item.get("call_id")))
        elif itype in ("function_call_output", "custom_tool_call_output"):
            atoms.results.append(str(item.get("call_id")))
        elif itype == "compaction":
            atoms.summaries.append("<encrypted>")
    return atoms
