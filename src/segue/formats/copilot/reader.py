"""Copilot CLI event log (``session-state/<uuid>/events.jsonl``) → neutral :class:`Conversation`.

Each line is one event ``{"type", "data", "id", "timestamp", "parentId"}``. The conversation is in
``user.message``, ``assistant.message`` (text, reasoning, and its ``toolRequests``) and
``tool.execution_complete``; ``assistant.turn_start``/``turn_end`` and ``abort`` mark a turn's
life, ``session.error`` the model's refusals (a 429 is ``errorType: "rate_limit"``), and
``session.compaction_complete`` a compaction's summary. Every other event of the CLI's schema
(which grows with each release) is kept as an opaque item under its own type, so a newer CLI's
events are read, never refused.

Reasoning that only the session's model can use (``reasoningOpaque``, ``encryptedContent``) is kept
as a :class:`Reasoning` item's private payload, which no writer carries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from segue.formats.copilot.paths import session_id_of
from segue.formats.copilot.tools import tool_kind
from segue.formats.jsonl import LineReport, as_dict, as_str, iter_records, iter_records_in
from segue.model import conversation as neutral
from segue.model.times import parse_iso
from segue.support import collector

# ``user.message`` sources that are not a person's prompt (a skill's hidden text, another
# agent's message, a hook's): anything else, or none, is typed.
_INJECTED_SOURCES = ("skill", "agent", "hook", "system", "plugin", "mcp", "extension", "autopilot")
# The events that carry the conversation or its state; every other one is opaque.
MAPPED = frozenset(
    {
        "session.start",
        "session.resume",
        "session.model_change",
        "user.message",
        "assistant.message",
        "tool.execution_complete",
        "assistant.turn_start",
        "assistant.turn_end",
        "abort",
        "session.error",
        "session.compaction_complete",
    }
)
# Opaque events whose data a reader never needs (big, or repeated in other events).
_BULKY = frozenset(
    {"system.message", "session.shutdown", "session.usage_record", "model.messages_snapshot"}
)

_AFTER_RE = re.compile(
    r"(?:retry|try again)\s+(?:after|in)\s+(?:about\s+)?(?P<n>\d+(?:\.\d+)?)\s*"
    r"(?P<unit>s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\b",
    re.IGNORECASE,
)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def reset_after(text: str, at: datetime | None) -> datetime | None:
    """The reset a limit text names relative to when it was said ("Please retry after 2733
    seconds", "try again in 2 hours"); None when it names none or ``at`` is unknown."""
    m = _AFTER_RE.search(text)
    if m is None or at is None:
        return None
    seconds = float(m.group("n")) * _UNIT_SECONDS[m.group("unit")[0].lower()]
    return at + timedelta(seconds=seconds)


def error_kind(data: dict[str, Any]) -> neutral.ErrorKind:
    """What a ``session.error`` was: a plan's window or allowance used up (a session or weekly
    limit, a 402 quota), a short rate limit, a history too long, or any other error."""
    kind = as_str(data.get("errorType")).lower()
    message = as_str(data.get("message")).lower()
    status = data.get("statusCode")
    if (
        status == 402
        or "quota" in kind
        or "quota_exceeded" in message
        or "session limit" in message
    ):
        return neutral.ErrorKind.USAGE_LIMIT
    if "weekly" in message and "limit" in message:
        return neutral.ErrorKind.USAGE_LIMIT
    if kind == "rate_limit" or status == 429:
        return neutral.ErrorKind.RATE_LIMIT
    if "context" in kind or "too long" in message or "token limit" in message:
        return neutral.ErrorKind.CONTEXT_WINDOW
    return neutral.ErrorKind.API_ERROR


def read_session(path: Path, *, opaque_data: bool = True) -> neutral.Conversation:
    """Read a session's event log. With ``opaque_data=False`` an opaque item carries no data."""
    with collector.paused():
        return _Reader(path, keep=opaque_data).read()


def read_lines(path: Path, lines: Iterable[bytes]) -> neutral.Conversation:
    """Events given as lines (a piece of ``path``) read as if they were the file."""
    return _Reader(path, lines).read()


class _Reader:
    def __init__(
        self, path: Path, lines: Iterable[bytes] | None = None, *, keep: bool = True
    ) -> None:
        self.path = path
        self.name = str(path)
        self.lines = lines
        self.keep = keep
        self.report = LineReport()
        self.items: list[neutral.Item] = []
        self.meta = neutral.SessionMeta(
            provider=neutral.Provider("copilot"), id=session_id_of(path), path=self.name
        )

    def read(self) -> neutral.Conversation:
        records = (
            iter_records(self.path, self.report)
            if self.lines is None
            else iter_records_in(self.lines, self.name, self.report)
        )
        first_ts: str | None = None
        last_ts: str | None = None
        started = False
        for lineno, event in records:
            ts = event.get("timestamp")
            ts = ts if type(ts) is str else None
            if ts is not None:
                first_ts = first_ts or ts
                last_ts = ts
            kind = as_str(event.get("type"), "?")
            data = as_dict(event.get("data"))
            prov = neutral.Provenance(self.name, lineno)
            if kind == "session.start":
                started = True
            self._event(kind, data, prov, ts, event)
        _results_in_call_order(self.items)
        meta = self.meta
        meta.created = meta.created or first_ts
        meta.updated = last_ts or meta.updated
        conversation = neutral.Conversation(meta=meta, items=self.items)
        conversation.skipped = self.report.skipped
        conversation.notes = self.report.notes
        if not started and self.lines is None:
            conversation.notes.append(f"{self.name}: no session.start event")
        return conversation

    def _opaque(self, kind: str, prov: neutral.Provenance, data: Any, ts: str | None) -> None:
        keep = self.keep and kind not in _BULKY
        self.items.append(neutral.Opaque(kind, prov, data if keep else None, ts))

    def _event(
        self,
        kind: str,
        data: dict[str, Any],
        prov: neutral.Provenance,
        ts: str | None,
        event: dict[str, Any],
    ) -> None:
        items = self.items
        if kind == "user.message":
            self._user(data, prov, ts)
        elif kind == "assistant.message":
            self._assistant(data, prov, ts)
        elif kind == "tool.execution_complete":
            self._result(data, prov, ts)
        elif kind == "assistant.turn_start":
            items.append(neutral.TurnMarker(neutral.TurnStatus.STARTED, prov, _turn(data), ts))
        elif kind == "assistant.turn_end":
            items.append(neutral.TurnMarker(neutral.TurnStatus.COMPLETED, prov, _turn(data), ts))
        elif kind == "abort":
            items.append(neutral.TurnMarker(neutral.TurnStatus.ABORTED, prov, None, ts))
        elif kind == "session.error":
            message = as_str(data.get("message"))
            items.append(
                neutral.ErrorNotice(
                    error_kind(data), message, prov, reset_after(message, parse_iso(ts)), ts
                )
            )
        elif kind == "session.compaction_complete":
            self._compaction(data, prov, ts)
        else:
            if kind in ("session.start", "session.resume"):
                self._session(kind, data)
            elif kind == "session.model_change" and isinstance(data.get("newModel"), str):
                self.meta.model = data["newModel"]
            self._opaque(kind, prov, event, ts)

    # -- events ------------------------------------------------------------------------------

    def _session(self, kind: str, data: dict[str, Any]) -> None:
        meta = self.meta
        if kind == "session.start":
            recorded = data.get("sessionId")
            if type(recorded) is str and recorded != meta.id:
                meta.extra["recorded_id"] = recorded
            meta.cli_version = as_str(data.get("copilotVersion")) or None
            meta.created = as_str(data.get("startTime")) or None
            for key in ("producer", "detachedFromSpawningParentSessionId"):
                if key in data:
                    meta.extra[key] = data[key]
        model = data.get("selectedModel")
        if type(model) is str and model:
            meta.model = model
        context = as_dict(data.get("context"))
        if type(context.get("cwd")) is str:
            meta.cwd = context["cwd"]
        if type(context.get("branch")) is str:
            meta.git_branch = context["branch"]

    def _user(self, data: dict[str, Any], prov: neutral.Provenance, ts: str | None) -> None:
        source = as_str(data.get("source")).lower()
        injected = source.startswith(_INJECTED_SOURCES) or data.get("isAutopilotContinuation")
        origin = neutral.Origin.INJECTED if injected else neutral.Origin.TYPED
        images = tuple(_images(data.get("attachments")))
        self.items.append(
            neutral.UserMessage(as_str(data.get("content")), prov, origin, images, ts)
        )

    def _assistant(self, data: dict[str, Any], prov: neutral.Provenance, ts: str | None) -> None:
        model = as_str(data.get("model")) or None
        if model:
            self.meta.model = model
        before = len(self.items)
        thought = as_str(data.get("reasoningText"))
        private = data.get("reasoningOpaque") or data.get("encryptedContent")
        if thought or private:
            secret = private if type(private) is str else None
            self.items.append(neutral.Reasoning(thought, prov, secret, ts))
        text = as_str(data.get("content"))
        if text:
            self.items.append(neutral.AssistantMessage(text, prov, model, ts))
        requests = data.get("toolRequests")
        for request in requests if type(requests) is list else ():
            request = as_dict(request)
            call_id = as_str(request.get("toolCallId"))
            name = as_str(request.get("name"))
            if not call_id or not name:
                continue
            arguments = request.get("arguments")
            mcp = bool(request.get("mcpServerName"))
            kind = neutral.ToolKind.MCP if mcp else tool_kind(name)
            self.items.append(neutral.ToolCall(call_id, name, arguments, kind, prov, ts))
        if len(self.items) == before:  # nothing said, nothing called: kept as it was
            self._opaque("assistant.message", prov, data, ts)

    def _result(self, data: dict[str, Any], prov: neutral.Provenance, ts: str | None) -> None:
        call_id = as_str(data.get("toolCallId"))
        if not call_id:
            self._opaque("tool.execution_complete", prov, data, ts)
            return
        result = as_dict(data.get("result"))
        error = as_dict(data.get("error"))
        output = as_str(result.get("content")) or as_str(error.get("message"))
        exit_code = as_dict(data.get("shellExecution")).get("exitCode")
        code = exit_code if type(exit_code) is int else None
        failed = data.get("success") is False or code not in (None, 0)
        self.items.append(neutral.ToolResult(call_id, output, prov, failed, code, timestamp=ts))

    def _compaction(self, data: dict[str, Any], prov: neutral.Provenance, ts: str | None) -> None:
        summary = as_str(data.get("summaryContent"))
        if data.get("success") is not True:
            state = neutral.CompactionState.INCOMPLETE
        elif summary.strip():
            state = neutral.CompactionState.PORTABLE
        else:
            state = neutral.CompactionState.NATIVE_ONLY
        trigger = as_str(data.get("trigger")) or None
        self.items.append(neutral.Compaction(summary, state, prov, None, trigger, ts))


def _results_in_call_order(items: list[neutral.Item]) -> None:
    """The results of calls made at once, in the order of the calls (in place): the CLI records
    them as they finish, and sends them back to the model in the order it made the calls."""
    order: dict[str, int] = {}
    slots: list[int] = []  # where this batch's results are

    def settle() -> None:
        results = sorted((items[i] for i in slots), key=lambda r: order[r.call_id])  # type: ignore[union-attr]
        for i, result in zip(slots, results, strict=True):
            items[i] = result
        slots.clear()

    for n, item in enumerate(items):
        if isinstance(item, neutral.ToolCall):
            if slots:
                settle()
                order.clear()
            order[item.call_id] = len(order)
        elif isinstance(item, neutral.ToolResult) and item.call_id in order:
            slots.append(n)
        elif not isinstance(item, neutral.Opaque | neutral.TurnMarker):
            settle()
            order.clear()
    settle()


def _turn(data: dict[str, Any]) -> str | None:
    turn = data.get("turnId")
    return turn if type(turn) is str else None


def _images(attachments: Any) -> Iterable[neutral.Image]:
    for attachment in attachments if type(attachments) is list else ():
        attachment = as_dict(attachment)
        mime = as_str(attachment.get("mimeType"))
        if not mime.startswith("image/"):
            continue
        if attachment.get("type") == "blob" and type(attachment.get("data")) is str:
            yield neutral.Image(url=f"data:{mime};base64,{attachment['data']}", media_type=mime)
        elif attachment.get("type") == "file" and type(attachment.get("path")) is str:
            yield neutral.Image(path=attachment["path"], media_type=mime)
