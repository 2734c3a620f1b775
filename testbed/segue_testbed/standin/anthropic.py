"""The Anthropic Messages API as the stand-in serves it to Claude Code.

A lane's ``"anthropic"`` script is a queue of replies (the dataclasses below). Every main-loop
model request (``POST /v1/messages``) takes the next one, subagent requests included, in the order
the CLI sends them. What is *not* scripted gets a harmless default and leaves the script alone:

* side requests: ``HEAD /api/hello`` (a reachability probe, only sent without
  ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``), ``count_tokens``, one-token quota probes, and
  tool-less small-model calls (titles, topics). With the test bed's environment Claude Code
  2.1.328 in ``-p`` mode was seen sending none of the last three; they are handled anyway;
* a compaction request (Claude asks for an ``<analysis>``/``<summary>`` answer) whose next
  scripted reply is not a :class:`Summary`, e.g. an unplanned auto-compaction.

Streaming follows the real API event by event: ``message_start``; per content block
``content_block_start``, its deltas (``text_delta``; ``thinking_delta`` then ``signature_delta``;
``input_json_delta``) and ``content_block_stop``; ``message_delta`` with ``stop_reason`` and the
output usage; ``message_stop``. A request with ``stream: false`` gets the whole message as JSON.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from segue_testbed.standin.server import Lane, LoggedRequest, Response, register_api, sse_event

# --------------------------------------------------------------------------- scripted replies


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage the stand-in reports for a reply."""

    input_tokens: int = 120
    output_tokens: int = 24
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "output_tokens": self.output_tokens,
            "service_tier": "standard",
        }


@dataclass(frozen=True, slots=True)
class Text:
    """A text block (on its own: a whole reply that ends the turn)."""

    text: str


@dataclass(frozen=True, slots=True)
class Thinking:
    """A thinking block; streamed with a ``signature_delta`` as the real API does."""

    text: str
    signature: str = "c2VndWUtc3RhbmRpbi1zaWduYXR1cmU="


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A tool call. Claude Code runs the tool and sends its ``tool_result`` in the next request."""

    name: str
    input: dict[str, Any]
    id: str | None = None  # default: ``toolu_standin_<lane counter>``


Block = Text | Thinking | ToolUse


@dataclass(frozen=True, slots=True)
class Reply:
    """A reply of several blocks; ``stop_reason`` defaults to ``tool_use`` when a tool is called."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    usage: Usage | None = None
    model: str | None = None  # default: the model the request named


@dataclass(frozen=True, slots=True)
class Summary:
    """The answer to a compaction request: ``<analysis>`` then the text in ``<summary>`` tags."""

    text: str
    analysis: str = "The conversation so far is short; everything in it belongs in the summary."
    usage: Usage | None = None

    def reply(self) -> Reply:
        body = f"<analysis>\n{self.analysis}\n</analysis>\n\n<summary>\n{self.text}\n</summary>"
        return Reply((Text(body),), usage=self.usage)


@dataclass(frozen=True, slots=True)
class RateLimited:
    """HTTP 429.

    ``subscriber=True``: a Claude subscriber whose usage window is used up: the
    ``anthropic-ratelimit-unified-*`` headers with ``status: rejected`` and the window's reset.
    ``subscriber=False``: an API key over its rate limit: a ``rate_limit_error`` body with
    ``retry-after`` and ``x-should-retry: false`` (so the CLI gives up at once, no backing off).
    """

    subscriber: bool = True
    reset_at: int | None = None  # epoch seconds; default: two hours from now, on the minute
    claim: str = "five_hour"  # the representative claim: five_hour | seven_day
    message: str = "Number of request tokens has exceeded your per-minute rate limit"
    retry_after: int = 60

    def resolved_reset(self) -> int:
        if self.reset_at is not None:
            return self.reset_at
        return (int(time.time()) // 60 + 120) * 60


@dataclass(frozen=True, slots=True)
class ApiError:
    """Any other HTTP error with the API's error body (e.g. 529 ``overloaded_error``)."""

    status: int = 500
    type: str = "api_error"
    message: str = "Internal server error"


@dataclass(frozen=True, slots=True)
class Stall:
    """Never answer (until ``seconds`` pass or the client goes away): leaves the turn unfinished.

    The response head and SSE keep-alive comments are sent, but no event.
    """

    seconds: float = 600.0


@dataclass(frozen=True, slots=True)
class FailedSummary:
    """The answer to a compaction request: this error instead of a summary.

    A bare :class:`RateLimited` or :class:`ApiError` would be left for the next main-loop request
    (a compaction request takes only a :class:`Summary` or this from the script).
    """

    error: RateLimited | ApiError


Scripted = (
    Text | Thinking | ToolUse | Reply | Summary | FailedSummary | RateLimited | ApiError | Stall
)

DEFAULT_REPLY = Text("(stand-in: no scripted reply left)")
DEFAULT_SUMMARY = Summary("(stand-in: an unscripted compaction)")
COMPACTION_MARKER = "Your task is to create a detailed summary of the conversation"

# --------------------------------------------------------------------------- headers


def unified_headers(
    status: str = "allowed",
    *,
    reset_at: int | None = None,
    claim: str = "five_hour",
    five_hour_utilization: float = 0.12,
    seven_day_utilization: float = 0.31,
) -> dict[str, str]:
    """The ``anthropic-ratelimit-unified-*`` headers of a subscriber's response."""
    now = int(time.time())
    rejected = status == "rejected"
    five_reset = reset_at if reset_at is not None and claim == "five_hour" else now + 3 * 3600
    seven_reset = reset_at if reset_at is not None and claim == "seven_day" else now + 4 * 86400

    def window(name: str, utilization: float) -> tuple[str, str]:
        hit = rejected and claim == name
        return ("rejected" if hit else "allowed", "1.0" if hit else str(utilization))

    five_status, five_util = window("five_hour", five_hour_utilization)
    seven_status, seven_util = window("seven_day", seven_day_utilization)
    return {
        "anthropic-ratelimit-unified-status": status,
        "anthropic-ratelimit-unified-reset": str(reset_at if reset_at is not None else five_reset),
        "anthropic-ratelimit-unified-representative-claim": claim,
        "anthropic-ratelimit-unified-fallback": "unavailable" if rejected else "available",
        "anthropic-ratelimit-unified-fallback-percentage": "0.5",
        "anthropic-ratelimit-unified-5h-status": five_status,
        "anthropic-ratelimit-unified-5h-reset": str(five_reset),
        "anthropic-ratelimit-unified-5h-utilization": five_util,
        "anthropic-ratelimit-unified-7d-status": seven_status,
        "anthropic-ratelimit-unified-7d-reset": str(seven_reset),
        "anthropic-ratelimit-unified-7d-utilization": seven_util,
        "anthropic-ratelimit-unified-overage-status": "rejected",
        "anthropic-ratelimit-unified-overage-disabled-reason": "org_level_disabled",
    }


def _next_id(lane: Lane, prefix: str) -> str:
    """Ids count per lane, so a re-recording hands out the same ones."""
    with lane.lock:
        n = int(lane.state.get("anthropic_ids", 0)) + 1
        lane.state["anthropic_ids"] = n
    return f"{prefix}{n:04d}"


def _is_oauth(request: LoggedRequest) -> bool:
    return request.headers.get("authorization", "").startswith("Bearer ")


def _headers(lane: Lane, request: LoggedRequest) -> dict[str, str]:
    headers = {"request-id": _next_id(lane, "req_standin_")}
    if _is_oauth(request):
        headers.update(unified_headers())
    return headers


# --------------------------------------------------------------------------- request kinds


def _body(request: LoggedRequest) -> dict[str, Any]:
    return request.body if isinstance(request.body, dict) else {}


def side_request_kind(request: LoggedRequest) -> str | None:
    """Name a Claude Code side request, or ``None`` for a main-loop model request."""
    path = request.path.split("?", 1)[0]
    if request.method != "POST" or not path.endswith("/messages"):
        return "count_tokens" if path.endswith("/count_tokens") else "probe"
    body = _body(request)
    if body.get("max_tokens") == 1:
        return "quota_probe"
    if not body.get("tools") and "haiku" in str(body.get("model", "")):
        return "small_model"
    return None


def _last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    if not messages or not isinstance(messages[-1], dict):
        return ""
    content = messages[-1].get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def is_compaction_request(request: LoggedRequest) -> bool:
    """Claude's summarisation request (``/compact`` or auto-compaction)."""
    return COMPACTION_MARKER in _last_user_text(_body(request))


def _side_response(lane: Lane, kind: str, request: LoggedRequest) -> Response:
    if kind == "probe":
        return Response.json({}, headers=_headers(lane, request))
    if kind == "count_tokens":
        return Response.json({"input_tokens": 100}, headers=_headers(lane, request))
    text = "Stand-in session"
    system = str(_body(request).get("system", ""))
    if "isNewTopic" in system:
        text = '{"isNewTopic": false, "title": null}'
    elif "title" in system.lower() and "json" in system.lower():
        text = '{"title": "Stand-in session"}'
    usage = Usage(input_tokens=20, output_tokens=1 if kind == "quota_probe" else 5)
    return _reply_response(lane, Reply((Text(text),), usage=usage), request)


# --------------------------------------------------------------------------- encoding


def _stop_reason(reply: Reply) -> str:
    if reply.stop_reason:
        return reply.stop_reason
    return "tool_use" if any(isinstance(b, ToolUse) for b in reply.blocks) else "end_turn"


def _resolve_ids(lane: Lane, reply: Reply) -> list[Block]:
    return [
        ToolUse(b.name, b.input, b.id or _next_id(lane, "toolu_standin_"))
        if isinstance(b, ToolUse)
        else b
        for b in reply.blocks
    ]


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _block_events(index: int, block: Block) -> Iterator[bytes]:
    start: dict[str, Any]
    deltas: list[dict[str, Any]]
    if isinstance(block, Text):
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": c} for c in _chunks(block.text, 400)]
    elif isinstance(block, Thinking):
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": c} for c in _chunks(block.text, 400)]
        deltas.append({"type": "signature_delta", "signature": block.signature})
    else:
        start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
        raw = orjson.dumps(block.input).decode()
        deltas = [{"type": "input_json_delta", "partial_json": c} for c in _chunks(raw, 64)]
    yield sse_event(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": start},
    )
    for d in deltas:
        yield sse_event(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}
        )
    yield sse_event("content_block_stop", {"type": "content_block_stop", "index": index})


def _block_json(block: Block) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": block.text, "signature": block.signature}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}


def _reply_response(lane: Lane, reply: Reply, request: LoggedRequest) -> Response:
    body = _body(request)
    blocks = _resolve_ids(lane, reply)
    usage = (reply.usage or Usage()).to_json()
    message = {
        "id": _next_id(lane, "msg_standin_"),
        "type": "message",
        "role": "assistant",
        "model": reply.model or str(body.get("model") or "claude-opus-5-5"),
        "content": [_block_json(b) for b in blocks],
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": usage,
    }
    headers = _headers(lane, request)
    if not body.get("stream"):
        return Response.json(message, headers=headers)

    def events() -> Iterator[bytes]:
        start = message | {
            "content": [],
            "stop_reason": None,
            "usage": usage | {"output_tokens": 1},
        }
        yield sse_event("message_start", {"type": "message_start", "message": start})
        for index, block in enumerate(blocks):
            yield from _block_events(index, block)
        yield sse_event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        yield sse_event("message_stop", {"type": "message_stop"})

    return Response.sse(events(), headers=headers)


def _error_response(status: int, type_: str, message: str, headers: dict[str, str]) -> Response:
    body = {"type": "error", "error": {"type": type_, "message": message}}
    return Response.json(body, status=status, headers=headers)


def _rate_limited(lane: Lane, item: RateLimited) -> Response:
    headers = {"request-id": _next_id(lane, "req_standin_")}
    if item.subscriber:
        headers.update(
            unified_headers("rejected", reset_at=item.resolved_reset(), claim=item.claim)
        )
        return _error_response(429, "rate_limit_error", "Error", headers)
    headers["retry-after"] = str(item.retry_after)
    headers["x-should-retry"] = "false"
    return _error_response(429, "rate_limit_error", item.message, headers)


def _stall(item: Stall) -> Response:
    def events() -> Iterator[bytes]:
        deadline = time.monotonic() + item.seconds
        while time.monotonic() < deadline:
            time.sleep(0.25)
            yield b": keep-alive\n\n"  # a gone client surfaces as BrokenPipe in the server

    return Response.sse(events())


def handle(lane: Lane, request: LoggedRequest) -> Response:
    """The Anthropic API handler registered with the stand-in."""
    kind = side_request_kind(request)
    if kind is not None:
        return _side_response(lane, kind, request)
    compaction = is_compaction_request(request)
    if compaction and not isinstance(lane.peek("anthropic"), Summary | FailedSummary):
        return _reply_response(lane, DEFAULT_SUMMARY.reply(), request)
    scripted: Scripted | None = lane.next_reply("anthropic")
    item = scripted if scripted is not None else DEFAULT_REPLY
    if isinstance(item, FailedSummary):
        item = item.error
    if isinstance(item, Text | Thinking | ToolUse):
        return _reply_response(lane, Reply((item,)), request)
    if isinstance(item, Summary):
        return _reply_response(lane, item.reply(), request)
    if isinstance(item, Reply):
        return _reply_response(lane, item, request)
    if isinstance(item, RateLimited):
        return _rate_limited(lane, item)
    if isinstance(item, ApiError):
        return _error_response(item.status, item.type, item.message, _headers(lane, request))
    return _stall(item)


register_api("anthropic", handle)
