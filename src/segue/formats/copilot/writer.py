"""Write neutral items as a Copilot CLI session that ``copilot --resume=<id>`` loads.

A new session is a folder ``session-state/<new uuid>/`` holding an event log and its
``workspace.yaml``; no existing session and none of the CLI's databases are touched (its
cross-session index is derived: the CLI rebuilds it from the event logs). The log is the
smallest one the CLI resumes in full (measured with 1.0.102): a ``session.start`` naming the
folder, then ``user.message``, ``assistant.message`` (its text and ``toolRequests``) and
``tool.execution_complete`` events, one ``parentId`` chain. A portable compaction summary is a
``session.compaction_complete`` event: the CLI itself then sends the summary, with the typed
prompts before it, in place of the history it replaced. ``producer`` is ``segue``.

What crosses: typed prompts, assistant text, tool calls with their results and portable summaries.
A shell call becomes Copilot's ``bash`` tool; a call of one of Copilot's own tools is kept as is;
every other call is narrated as assistant text. Reasoning (readable or not), error notices,
injected context and bookkeeping never cross.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from segue.formats.atomic import NativeSession
from segue.formats.copilot.paths import events_file
from segue.model import conversation as neutral
from segue.model.times import iso_ms, parse_iso
from segue.transforms.carry import (
    NO_OUTPUT,
    failed,
    narrate_call,
    narrate_result,
    paired,
    shell_input,
)

DEFAULT_VERSION = "1.0.102"
PRODUCER = "segue"
# Copilot CLI's own tools, whose calls are replayed as they were (with an object input).
COPILOT_TOOLS = frozenset(
    {"bash", "view", "create", "edit", "grep", "glob", "web_fetch", "update_todo", "apply_patch"}
)


select = paired  # the items that cross, in order (a call and its result only together)


def tool_request(call: neutral.ToolCall) -> dict[str, Any] | None:
    """The ``toolRequests`` entry for a call, or None when the call must be narrated."""
    bash = shell_input(call, "bash")
    if bash is not None:
        name, arguments = "bash", bash
    elif call.name in COPILOT_TOOLS and isinstance(call.input, dict):
        name, arguments = call.name, call.input
    else:
        return None
    return {"toolCallId": call.call_id, "name": name, "arguments": arguments, "type": "function"}


class EventLog:
    """The events being written: one ``parentId`` chain with times that never go back."""

    def __init__(self, parent: str | None, now: datetime) -> None:
        self.events: list[dict[str, Any]] = []
        self.parent = parent
        self.clock = now

    def add(self, kind: str, data: dict[str, Any], stamp: str | None = None) -> None:
        moment = parse_iso(stamp) if stamp else None
        if moment is None or moment <= self.clock:
            moment = self.clock + timedelta(milliseconds=1)
        self.clock = moment
        event_id = str(uuid.uuid4())
        self.events.append(
            {
                "type": kind,
                "data": data,
                "id": event_id,
                "timestamp": iso_ms(moment),
                "parentId": self.parent,
            }
        )
        self.parent = event_id


def _message_id() -> str:
    return str(uuid.uuid4())


def write_items(log: EventLog, items: Sequence[neutral.Item]) -> None:
    """Append ``items`` (already :func:`select`-ed) to ``log`` as Copilot events."""
    calls: dict[str, neutral.ToolCall] = {}
    narrated: set[str] = set()
    pending: dict[str, Any] | None = None  # the assistant message being gathered

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            log.add("assistant.message", pending["data"], pending["stamp"])
            pending = None

    def assistant(stamp: str | None) -> dict[str, Any]:
        nonlocal pending
        if pending is None:
            pending = {
                "data": {"messageId": _message_id(), "content": "", "toolRequests": []},
                "stamp": stamp,
            }
        return pending["data"]  # type: ignore[no-any-return]

    for item in items:
        match item:
            case neutral.UserMessage():
                flush()
                log.add(
                    "user.message",
                    {"content": item.text, "messageId": _message_id()},
                    item.timestamp,
                )
            case neutral.AssistantMessage():
                data = assistant(item.timestamp)
                if data["toolRequests"]:  # text after a call is a new message
                    flush()
                    data = assistant(item.timestamp)
                data["content"] = (
                    f"{data['content']}\n\n{item.text}" if data["content"] else item.text
                )
            case neutral.ToolCall():
                calls[item.call_id] = item
                request = tool_request(item)
                if request is None:
                    narrated.add(item.call_id)
                    flush()
                    log.add(
                        "assistant.message",
                        {
                            "messageId": _message_id(),
                            "content": narrate_call(item),
                            "toolRequests": [],
                        },
                        item.timestamp,
                    )
                else:
                    assistant(item.timestamp)["toolRequests"].append(request)
            case neutral.ToolResult():
                flush()
                call = calls.get(item.call_id)
                if item.call_id in narrated and call is not None:
                    log.add(
                        "assistant.message",
                        {
                            "messageId": _message_id(),
                            "content": narrate_result(call, item),
                            "toolRequests": [],
                        },
                        item.timestamp,
                    )
                    continue
                # a command that ran and exited non-zero succeeded as a call (as the CLI
                # records it); any other failure is an error, whose message the CLI replays
                output = item.output or NO_OUTPUT
                done: dict[str, Any] = {"toolCallId": item.call_id, "success": True}
                if item.exit_code is not None:
                    done["shellExecution"] = {"exitCode": item.exit_code}
                if failed(item) and item.exit_code in (None, 0):
                    done |= {"success": False, "error": {"message": output, "code": "failure"}}
                else:
                    done["result"] = {"content": output}
                log.add("tool.execution_complete", done, item.timestamp)
            case neutral.Compaction():
                flush()
                log.add(
                    "session.compaction_complete",
                    {"success": True, "summaryContent": item.summary, "trigger": "manual"},
                    item.timestamp,
                )
            case _:
                continue
    flush()


def session_start(session_id: str, cwd: str, moment: datetime, version: str) -> dict[str, Any]:
    return {
        "sessionId": session_id,
        "version": 1,
        "producer": PRODUCER,
        "copilotVersion": version,
        "startTime": iso_ms(moment),
        "context": {"cwd": cwd},
    }


def _lines(events: Sequence[dict[str, Any]]) -> list[bytes]:
    return [orjson.dumps(event) + b"\n" for event in events]


def prepare_session(
    items: Sequence[neutral.Item],
    *,
    state: Path,
    cwd: str,
    now: datetime,
    version: str = DEFAULT_VERSION,
) -> NativeSession:
    """A new session of ``items`` under ``state`` (the CLI's ``session-state`` folder)."""
    session_id = str(uuid.uuid4())
    chosen = select(items)
    start = _first_time(chosen, now)
    log = EventLog(None, start - timedelta(milliseconds=1))
    log.add("session.start", session_start(session_id, cwd, start, version), iso_ms(start))
    write_items(log, chosen)
    return NativeSession(
        provider=neutral.Provider("copilot"),
        session_id=session_id,
        path=events_file(state, session_id),
        lines=_lines(log.events),
    )


def _first_time(items: Sequence[neutral.Item], now: datetime) -> datetime:
    for item in items:
        moment = parse_iso(item.timestamp) if item.timestamp else None
        if moment is not None:
            return moment - timedelta(milliseconds=1)
    return now - timedelta(milliseconds=len(items) + 2)


def workspace_yaml(session_id: str, cwd: str, now: datetime, name: str | None = None) -> bytes:
    """The session's ``workspace.yaml`` (its values as JSON strings, which YAML reads as they
    are)."""
    stamp = iso_ms(now)
    fields: Iterator[tuple[str, object]] = iter(
        (
            ("id", session_id),
            ("cwd", cwd),
            ("client_name", PRODUCER),
            ("name", name or ""),
            ("user_named", False),
            ("summary_count", 0),
            ("fork_count", 0),
            ("created_at", stamp),
            ("updated_at", stamp),
        )
    )
    return b"".join(f"{key}: ".encode() + orjson.dumps(value) + b"\n" for key, value in fields)
