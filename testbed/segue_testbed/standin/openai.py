"""The OpenAI Responses API as the stand-in serves it to Codex.

A lane's ``"openai"`` script is a queue of replies (the dataclasses below). Every *model turn*
request (``POST .../responses``) takes the next one. Compaction requests are recognised by their
input: local compaction ends with Codex's "CONTEXT CHECKPOINT COMPACTION" user message, remote
compaction v2 ends with a ``{"type": "compaction_trigger"}`` item. They take the next script entry
when it is a :class:`LocalSummary` / :class:`RemoteCompaction`, and otherwise get a default answer
that leaves the script alone. Everything that is not a model request (``/models``, the websocket
attempt of the built-in ``openai`` provider, anything unknown) gets a harmless answer and never
consumes the script. Nor does the TUI's task-title request ("Generate a concise, single-line task
title ..."), which gets :data:`TITLE_REPLY`: a test scripts the turns a person sees.

Streaming follows the real API: ``response.created``, then per output item
``response.output_item.added`` / deltas / ``response.output_item.done``, then
``response.completed`` carrying the usage. Rate-limit headers (``x-codex-*``) ride on the HTTP
response, as the real service sends them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from segue_testbed.standin.server import Lane, LoggedRequest, Response, register_api, sse_event

LOCAL_COMPACTION_MARKER = "CONTEXT CHECKPOINT COMPACTION"
# The Codex TUI asks for a title after the first prompt of a thread (``codex exec`` does not).
TITLE_MARKER = "Generate a concise, single-line task title"
TITLE_REPLY = "Stand-in task title"
REMOTE_COMPACTION_TRIGGER = "compaction_trigger"

# --------------------------------------------------------------------------- scripted replies


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage reported in ``response.completed``. ``None`` fields are estimated."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int | None = None

    def to_json(self, estimated_input: int, estimated_output: int) -> dict[str, Any]:
        inp = self.input_tokens if self.input_tokens is not None else estimated_input
        out = self.output_tokens if self.output_tokens is not None else estimated_output
        total = self.total_tokens if self.total_tokens is not None else inp + out
        return {
            "input_tokens": inp,
            "input_tokens_details": {"cached_tokens": self.cached_input_tokens},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_output_tokens},
            "total_tokens": total,
        }


@dataclass(frozen=True, slots=True)
class RateLimits:
    """The ``x-codex-*`` rate-limit headers of one reply (see codex-format.md §1.9)."""

    primary_used_percent: float | None = None
    primary_window_minutes: int | None = None
    primary_reset_at: int | None = None
    secondary_used_percent: float | None = None
    secondary_window_minutes: int | None = None
    secondary_reset_at: int | None = None
    credits_has_credits: bool | None = None
    credits_unlimited: bool | None = None
    credits_balance: str | None = None
    limit_name: str | None = None
    prefix: str = "x-codex"

    def headers(self) -> dict[str, str]:
        values: dict[str, object | None] = {
            "primary-used-percent": self.primary_used_percent,
            "primary-window-minutes": self.primary_window_minutes,
            "primary-reset-at": self.primary_reset_at,
            "secondary-used-percent": self.secondary_used_percent,
            "secondary-window-minutes": self.secondary_window_minutes,
            "secondary-reset-at": self.secondary_reset_at,
            "credits-has-credits": self.credits_has_credits,
            "credits-unlimited": self.credits_unlimited,
            "credits-balance": self.credits_balance,
            "limit-name": self.limit_name,
        }
        out: dict[str, str] = {}
        for key, value in values.items():
            if value is None:
                continue
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            out[f"{self.prefix}-{key}"] = text
        return out


@dataclass(frozen=True, slots=True)
class Text:
    """An assistant message (on its own: a whole reply that ends the turn)."""

    text: str


@dataclass(frozen=True, slots=True)
class Reasoning:
    """A reasoning item with a summary and an opaque ``encrypted_content``."""

    summary: str
    encrypted_content: str = "c2VndWUtc3RhbmRpbi1yZWFzb25pbmc="


@dataclass(frozen=True, slots=True)
class FunctionCall:
    """A function tool call (e.g. ``exec_command``); Codex runs it and answers next request."""

    name: str
    arguments: dict[str, Any]
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class CustomToolCall:
    """A freeform (custom) tool call such as ``apply_patch``."""

    name: str
    input: str
    call_id: str | None = None


OutputItem = Text | Reasoning | FunctionCall | CustomToolCall


@dataclass(frozen=True, slots=True)
class Turn:
    """One streamed reply: output items plus optional usage and rate-limit headers."""

    items: tuple[OutputItem, ...]
    usage: Usage | None = None
    rate_limits: RateLimits | None = None


def turn(
    *items: OutputItem, usage: Usage | None = None, rate_limits: RateLimits | None = None
) -> Turn:
    return Turn(tuple(items), usage, rate_limits)


@dataclass(frozen=True, slots=True)
class UsageLimit:
    """HTTP 429 ``usage_limit_reached`` (Codex does not retry it)."""

    resets_at: int
    plan_type: str = "plus"
    rate_limits: RateLimits | None = None


@dataclass(frozen=True, slots=True)
class ApiError:
    """A plain HTTP error reply."""

    status: int = 500
    message: str = "stand-in error"
    type: str = "server_error"


@dataclass(frozen=True, slots=True)
class Stall:
    """Start the stream and never finish it (the CLI is expected to be killed meanwhile)."""

    seconds: float = 120.0


@dataclass(frozen=True, slots=True)
class LocalSummary:
    """Answer to a local compaction request: the summary text."""

    text: str
    usage: Usage | None = None


@dataclass(frozen=True, slots=True)
class RemoteCompaction:
    """Answer to a remote compaction v2 request: exactly one ``compaction`` output item."""

    encrypted_content: str = "c2VndWUtc3RhbmRpbi1jb21wYWN0aW9u"
    usage: Usage | None = None


Reply = (
    Text
    | Reasoning
    | FunctionCall
    | CustomToolCall
    | Turn
    | UsageLimit
    | ApiError
    | Stall
    | LocalSummary
    | RemoteCompaction
)
CompactionReply = LocalSummary | RemoteCompaction

DEFAULT_SUMMARY = "(stand-in default compaction summary)"
DEFAULT_TEXT = "(stand-in: nothing scripted)"

# --------------------------------------------------------------------------- classification


def request_kind(request: LoggedRequest) -> str:
    """One of ``turn``, ``title``, ``local_compaction``, ``remote_compaction``, ``models``,
    ``websocket``, ``other``."""
    path = request.path.split("?", 1)[0].rstrip("/")
    if request.headers.get("upgrade", "").lower() == "websocket":
        return "websocket"
    if path.endswith("/models"):
        return "models"
    if request.method != "POST" or not path.endswith("/responses"):
        return "other"
    body = request.body if isinstance(request.body, dict) else {}
    items = body.get("input")
    if not isinstance(items, list) or not items:
        return "turn"
    last = items[-1]
    if isinstance(last, dict) and last.get("type") == REMOTE_COMPACTION_TRIGGER:
        return "remote_compaction"
    is_user = isinstance(last, dict) and last.get("role") == "user"
    if is_user and LOCAL_COMPACTION_MARKER in _message_text(last):
        return "local_compaction"
    if _asks_for_title(body, items):
        return "title"
    return "turn"


def _asks_for_title(body: dict[str, Any], items: list[Any]) -> bool:
    instructions = body.get("instructions")
    if isinstance(instructions, str) and TITLE_MARKER in instructions:
        return True
    return any(isinstance(i, dict) and TITLE_MARKER in _message_text(i) for i in items[-2:])


def _message_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))


# --------------------------------------------------------------------------- the handler


def handle(lane: Lane, request: LoggedRequest) -> Response:
    kind = request_kind(request)
    if kind == "websocket":
        # Refuse the upgrade; the built-in provider then falls back to HTTPS + SSE.
        return Response.json({"error": {"message": "websocket not offered"}}, status=426)
    if kind == "models":
        return Response.json({"models": []})
    if kind == "other":
        return Response.json({"error": {"message": f"not served: {request.path}"}}, status=404)
    body = request.body if isinstance(request.body, dict) else {}
    if kind == "title":
        return Response.sse(_stream_turn(lane, body, Turn((Text(TITLE_REPLY),))))
    reply = _take_reply(lane, kind)
    if isinstance(reply, UsageLimit):
        return _usage_limit(reply)
    if isinstance(reply, ApiError):
        return Response.json(
            {"error": {"type": reply.type, "message": reply.message}}, status=reply.status
        )
    if isinstance(reply, Stall):
        return Response.sse(_stall(lane, reply))
    if isinstance(reply, LocalSummary):
        reply = Turn((Text(reply.text),), reply.usage)
    if isinstance(reply, RemoteCompaction):
        return Response.sse(_stream_compaction(lane, body, reply))
    if not isinstance(reply, Turn):
        reply = Turn((reply,))
    headers = reply.rate_limits.headers() if reply.rate_limits else {}
    return Response.sse(_stream_turn(lane, body, reply), headers=headers)


def _take_reply(lane: Lane, kind: str) -> Reply:
    """The next scripted reply for a model request of ``kind`` (or a default)."""
    compaction = kind in ("local_compaction", "remote_compaction")
    with lane.lock:
        queue = lane._scripts.get("openai")
        head = queue[0] if queue else None
        wanted: type[Any] = LocalSummary if kind == "local_compaction" else RemoteCompaction
        if compaction and isinstance(head, wanted):
            assert queue is not None
            reply: Reply = queue.popleft()
            return reply
        if compaction:
            lane.state.setdefault("openai_defaults", []).append(kind)
            if kind == "local_compaction":
                return LocalSummary(DEFAULT_SUMMARY)
            return RemoteCompaction()
        if head is None:
            lane.state.setdefault("openai_defaults", []).append(kind)
            return Text(DEFAULT_TEXT)
        if isinstance(head, LocalSummary | RemoteCompaction):
            lane.state.setdefault("openai_mismatches", []).append(head)
            return ApiError(500, f"stand-in script expected a compaction request, got {kind}")
        assert queue is not None
        nxt: Reply = queue.popleft()
        return nxt


def _counter(lane: Lane, name: str) -> int:
    with lane.lock:
        value = int(lane.state.get(f"openai_{name}", 0)) + 1
        lane.state[f"openai_{name}"] = value
        return value


def _estimate_input(body: dict[str, Any]) -> int:
    size = len(orjson.dumps(body.get("input", [])))
    return min(size // 4 + 1, 20_000)


def _usage(reply_usage: Usage | None, body: dict[str, Any], output_chars: int) -> dict[str, Any]:
    return (reply_usage or Usage()).to_json(_estimate_input(body), output_chars // 4 + 1)


def _created(response_id: str, body: dict[str, Any]) -> bytes:
    response: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "model": body.get("model"),
        "output": [],
    }
    return sse_event("response.created", {"type": "response.created", "response": response})


def _completed(response_id: str, body: dict[str, Any], usage: dict[str, Any]) -> bytes:
    response = {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": body.get("model"),
        "usage": usage,
    }
    return sse_event("response.completed", {"type": "response.completed", "response": response})


def _item_events(lane: Lane, index: int, item: OutputItem) -> Iterator[bytes]:
    n = _counter(lane, "item")
    if isinstance(item, Text):
        item_id = f"msg_standin_{n}"
        added = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        yield _event("response.output_item.added", output_index=index, item=added)
        part = {"type": "output_text", "text": "", "annotations": []}
        yield _event(
            "response.content_part.added",
            item_id=item_id,
            output_index=index,
            content_index=0,
            part=part,
        )
        yield _event(
            "response.output_text.delta",
            item_id=item_id,
            output_index=index,
            content_index=0,
            delta=item.text,
        )
        yield _event(
            "response.output_text.done",
            item_id=item_id,
            output_index=index,
            content_index=0,
            text=item.text,
        )
        done = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": item.text, "annotations": []}],
        }
        yield _event("response.output_item.done", output_index=index, item=done)
    elif isinstance(item, Reasoning):
        item_id = f"rs_standin_{n}"
        added = {"type": "reasoning", "id": item_id, "summary": []}
        yield _event("response.output_item.added", output_index=index, item=added)
        part = {"type": "summary_text", "text": ""}
        yield _event(
            "response.reasoning_summary_part.added",
            item_id=item_id,
            output_index=index,
            summary_index=0,
            part=part,
        )
        yield _event(
            "response.reasoning_summary_text.delta",
            item_id=item_id,
            output_index=index,
            summary_index=0,
            delta=item.summary,
        )
        yield _event(
            "response.reasoning_summary_text.done",
            item_id=item_id,
            output_index=index,
            summary_index=0,
            text=item.summary,
        )
        done = {
            "type": "reasoning",
            "id": item_id,
            "summary": [{"type": "summary_text", "text": item.summary}],
            "encrypted_content": item.encrypted_content,
        }
        yield _event("response.output_item.done", output_index=index, item=done)
    elif isinstance(item, FunctionCall):
        item_id = f"fc_standin_{n}"
        call_id = item.call_id or f"call_standin_{n}"
        arguments = orjson.dumps(item.arguments).decode()
        added = {
            "type": "function_call",
            "id": item_id,
            "call_id": call_id,
            "name": item.name,
            "arguments": "",
            "status": "in_progress",
        }
        yield _event("response.output_item.added", output_index=index, item=added)
        yield _event(
            "response.function_call_arguments.delta",
            item_id=item_id,
            output_index=index,
            delta=arguments,
        )
        yield _event(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=index,
            arguments=arguments,
        )
        done = dict(added, arguments=arguments, status="completed")
        yield _event("response.output_item.done", output_index=index, item=done)
    else:
        item_id = f"ctc_standin_{n}"
        call_id = item.call_id or f"call_standin_{n}"
        added = {
            "type": "custom_tool_call",
            "id": item_id,
            "call_id": call_id,
            "name": item.name,
            "input": "",
            "status": "in_progress",
        }
        yield _event("response.output_item.added", output_index=index, item=added)
        done = dict(added, input=item.input, status="completed")
        yield _event("response.output_item.done", output_index=index, item=done)


def _event(kind: str, **fields: Any) -> bytes:
    return sse_event(kind, {"type": kind, **fields})


def _stream_turn(lane: Lane, body: dict[str, Any], reply: Turn) -> Iterator[bytes]:
    response_id = f"resp_standin_{_counter(lane, 'response')}"
    yield _created(response_id, body)
    chars = 0
    for index, item in enumerate(reply.items):
        chars += _output_chars(item)
        yield from _item_events(lane, index, item)
    yield _completed(response_id, body, _usage(reply.usage, body, chars))


def _output_chars(item: OutputItem) -> int:
    if isinstance(item, Text):
        return len(item.text)
    if isinstance(item, Reasoning):
        return len(item.summary)
    if isinstance(item, FunctionCall):
        return len(orjson.dumps(item.arguments))
    return len(item.input)


def _stream_compaction(
    lane: Lane, body: dict[str, Any], reply: RemoteCompaction
) -> Iterator[bytes]:
    response_id = f"resp_standin_{_counter(lane, 'response')}"
    yield _created(response_id, body)
    item = {
        "type": "compaction",
        "id": f"cmp_standin_{_counter(lane, 'item')}",
        "encrypted_content": reply.encrypted_content,
    }
    yield _event("response.output_item.added", output_index=0, item=item)
    yield _event("response.output_item.done", output_index=0, item=item)
    yield _completed(response_id, body, _usage(reply.usage, body, len(reply.encrypted_content)))


def _stall(lane: Lane, reply: Stall) -> Iterator[bytes]:
    """Send ``response.created`` and then only SSE comments until the client goes away."""
    yield _created(f"resp_standin_{_counter(lane, 'response')}", {})
    stop = threading.Event()
    lane.state.setdefault("openai_stalls", []).append(stop)
    deadline = time.monotonic() + reply.seconds
    while time.monotonic() < deadline and not stop.wait(0.5):
        yield b": stand-in stalling\n\n"  # a write to a closed socket ends the stream


def release_stalls(lane: Lane) -> None:
    """End every stalled stream of the lane (frees the server threads)."""
    for stop in lane.state.get("openai_stalls", []):
        stop.set()


def _usage_limit(reply: UsageLimit) -> Response:
    body = {
        "error": {
            "type": "usage_limit_reached",
            "message": "The usage limit has been reached",
            "plan_type": reply.plan_type,
            "resets_at": reply.resets_at,
        }
    }
    headers = reply.rate_limits.headers() if reply.rate_limits else {}
    return Response.json(body, status=429, headers=headers)


def defaults_served(lane: Lane) -> list[str]:
    """Kinds of model requests that found nothing scripted and got a default answer."""
    return list(lane.state.get("openai_defaults", []))


register_api("openai", handle)

__all__ = [
    "ApiError",
    "CustomToolCall",
    "FunctionCall",
    "LocalSummary",
    "RateLimits",
    "Reasoning",
    "RemoteCompaction",
    "Reply",
    "Stall",
    "Text",
    "Turn",
    "Usage",
    "UsageLimit",
    "defaults_served",
    "release_stalls",
    "request_kind",
    "turn",
]
