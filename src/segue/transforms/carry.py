"""What any target can take from another provider's history, and how a call is told (pure).

No target takes reasoning payloads, error notices, injected context, command output,
bookkeeping records or compactions only their own provider can read (:func:`carriable`). A
target whose API pairs each tool call with its result (Claude's and Copilot's) takes
:func:`paired`: empty texts left out, adjacent summaries made one, and a call only with its
result. A shell call's command is :func:`shell_command` whoever ran it; a call of a tool the
target lacks is told as text (:func:`narrate_call`, :func:`narrate_result`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import assert_never

import orjson
from msgspec.structs import replace

from segue.model import conversation as neutral

__all__ = [
    "HANDOFF_ACK",
    "NO_OUTPUT",
    "carriable",
    "describe_command",
    "failed",
    "handoff_items",
    "narrate_call",
    "narrate_result",
    "paired",
    "shell_command",
    "shell_input",
]

NO_OUTPUT = "(no output)"
DESCRIPTION_CHARS = 60
HANDOFF_ACK = "Understood: I have the context of the runs above."
_SEGUE = neutral.Provenance("segue", 0)
_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash"})


def carriable(item: neutral.Item) -> bool:
    """A typed prompt, an assistant's text, a portable compaction summary, a tool call or a
    tool result."""
    match item:  # the commonest kinds first: every item of a history passes here
        case neutral.ToolCall() | neutral.ToolResult():
            return True
        case neutral.Opaque():
            return False
        case neutral.UserMessage():
            return item.origin is neutral.Origin.TYPED
        case neutral.AssistantMessage():
            return bool(item.text)
        case neutral.Compaction():
            return item.state is neutral.CompactionState.PORTABLE and bool(item.summary)
        case (
            neutral.Reasoning() | neutral.ErrorNotice() | neutral.TurnMarker() | neutral.Rollback()
        ):
            return False
        case _:
            assert_never(item)


def _crosses(item: neutral.Item) -> bool:
    """What any target can take, less empty prompts and summaries (an API rejects an empty
    text block)."""
    if isinstance(item, neutral.UserMessage):
        return carriable(item) and bool(item.text.strip())
    if isinstance(item, neutral.Compaction):
        return carriable(item) and bool(item.summary.strip())
    return carriable(item)


def _crossing(items: Sequence[neutral.Item]) -> list[neutral.Item]:
    """The crossing items in order. A compaction contributes only its summary: the items its
    provider kept verbatim are expected inline after it (as ``portable_history`` returns them).

    Adjacent compactions (a source summary followed by the index of turns a switch dropped)
    become one: a CLI resumes from its *last* summary, so a second would hide the first."""
    out: list[neutral.Item] = []
    for item in items:
        if not _crosses(item):
            continue
        if isinstance(item, neutral.Compaction) and out and isinstance(out[-1], neutral.Compaction):
            out[-1] = replace(out[-1], summary=out[-1].summary + "\n\n" + item.summary)
            continue
        out.append(item)
    return out


def _pairs(items: Sequence[neutral.Item]) -> dict[int, int]:
    """Index of each call -> index of its result, for calls answered before the next prompt."""
    open_calls: dict[str, int] = {}
    pairs: dict[int, int] = {}
    for i, item in enumerate(items):
        if isinstance(item, neutral.UserMessage | neutral.Compaction):
            open_calls.clear()  # a prompt splits a pair: both halves are dropped
        elif isinstance(item, neutral.ToolCall):
            open_calls[item.call_id] = i
        elif isinstance(item, neutral.ToolResult) and item.call_id in open_calls:
            pairs[open_calls.pop(item.call_id)] = i
    return pairs


def paired(items: Sequence[neutral.Item]) -> list[neutral.Item]:
    """The items that cross to a target that pairs calls with results, in order: unpaired
    calls and results removed."""
    flat = _crossing(items)
    pairs = _pairs(flat)
    kept = set(pairs) | set(pairs.values())
    return [
        item
        for i, item in enumerate(flat)
        if not isinstance(item, neutral.ToolCall | neutral.ToolResult) or i in kept
    ]


def _argv_command(argv: Sequence[str]) -> str:
    """One command string for an argv; ``bash -lc <script>`` becomes the script."""
    if len(argv) == 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-lc"):
        return argv[2]
    return shlex.join(argv)


def shell_command(call: neutral.ToolCall) -> str | None:
    """The shell command a shell call ran, as one string (workdir folded in), or ``None``."""
    if call.tool is not neutral.ToolKind.SHELL or not isinstance(call.input, dict):
        return None
    raw = call.input.get("cmd", call.input.get("command"))
    if isinstance(raw, list) and raw and all(isinstance(part, str) for part in raw):
        command = _argv_command(raw)
    elif isinstance(raw, str) and raw.strip():
        command = raw
    else:
        return None
    workdir = call.input.get("workdir") or call.input.get("working_directory")
    if isinstance(workdir, str) and workdir:
        command = f"cd {shlex.quote(workdir)} && {command}"
    return command


def shell_input(call: neutral.ToolCall, native: str) -> dict[str, neutral.JSON] | None:
    """The input of a target's own shell tool (named ``native``) for a shell call: the call's
    own input when it is that tool's, else its command with the description it had, or its
    first line; None when the call ran no shell command."""
    own = call.input if call.name == native and isinstance(call.input, dict) else None
    if own is not None and isinstance(own.get("command"), str):
        return dict(own)
    command = shell_command(call)
    if command is None:
        return None
    said = call.input.get("description") if isinstance(call.input, dict) else None
    described = said if isinstance(said, str) and said.strip() else describe_command(command)
    return {"command": command, "description": described}


def describe_command(command: str) -> str:
    """A shell command's first line, cut to a short description."""
    first = command.strip().splitlines()[0] if command.strip() else command
    return first if len(first) <= DESCRIPTION_CHARS else first[: DESCRIPTION_CHARS - 1] + "…"


def narrate_call(call: neutral.ToolCall) -> str:
    shown = call.input if isinstance(call.input, str) else orjson.dumps(call.input).decode()
    return f"[{call.name}] {shown}"


def narrate_result(call: neutral.ToolCall, result: neutral.ToolResult) -> str:
    label = "failed" if failed(result) else "result"
    return f"[{call.name} {label}] {result.output or NO_OUTPUT}"


def failed(result: neutral.ToolResult) -> bool:
    return bool(result.error) or result.exit_code not in (None, 0)


def handoff_items(text: str) -> list[neutral.Item]:
    """A handoff as a user message marked ``<segue_handoff>`` and the assistant's short
    acknowledgement (so roles alternate), to open a fork's delta."""
    wrapped = f"<segue_handoff>\n{text}\n</segue_handoff>"
    return [neutral.UserMessage(wrapped, _SEGUE), neutral.AssistantMessage(HANDOFF_ACK, _SEGUE)]
