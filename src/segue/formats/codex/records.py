"""The Codex rollout records that segue's reader and writer share.

A rollout (``sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``) is one JSON object per
line: ``{"timestamp", "type", "payload"}``. ``session_meta`` opens it; ``response_item``
payloads are the model history (messages, reasoning, tool calls and outputs); ``event_msg``
payloads are what the UI saw (turn lifecycle, token counts and rate limits, errors);
``compacted`` replaces the history before it.

The types below describe what the writer produces (legacy history mode). The reader takes lines
as untrusted JSON (``Record``): any field may hold any value, so it checks each one it uses.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

Record = dict[str, Any]  # one line (or payload) as parsed, not yet checked


class InputText(TypedDict):
    type: Literal["input_text"]
    text: str


class OutputText(TypedDict):
    type: Literal["output_text"]
    text: str


class InputImage(TypedDict):
    type: Literal["input_image"]
    image_url: str


class UserMessagePayload(TypedDict):
    type: Literal["message"]
    role: Literal["user", "developer"]
    content: list[InputText | InputImage]


class AssistantMessagePayload(TypedDict):
    type: Literal["message"]
    role: Literal["assistant"]
    content: list[OutputText]


class FunctionCallPayload(TypedDict):
    type: Literal["function_call"]
    name: str
    arguments: str  # a JSON object, serialized (Codex drops a call whose arguments are not)
    call_id: str


class FunctionCallOutputPayload(TypedDict):
    type: Literal["function_call_output"]
    call_id: str
    output: str


ResponseItemPayload = (
    UserMessagePayload | AssistantMessagePayload | FunctionCallPayload | FunctionCallOutputPayload
)


class TaskStarted(TypedDict):
    type: Literal["task_started"]
    turn_id: str


class TaskComplete(TypedDict):
    type: Literal["task_complete"]
    turn_id: str
    last_agent_message: str | None


class UserMessageEvent(TypedDict):
    type: Literal["user_message"]
    message: str
    images: None


class AgentMessageEvent(TypedDict):
    type: Literal["agent_message"]
    message: str


class TokenUsage(TypedDict):
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    reasoning_output_tokens: int
    total_tokens: int


class TokenInfo(TypedDict):
    total_token_usage: TokenUsage
    last_token_usage: TokenUsage
    model_context_window: int | None


class TokenCount(TypedDict):
    type: Literal["token_count"]
    info: TokenInfo
    rate_limits: None


EventPayload = TaskStarted | TaskComplete | UserMessageEvent | AgentMessageEvent | TokenCount


class SessionMetaPayload(TypedDict):
    id: str
    timestamp: str
    cwd: str
    originator: str
    cli_version: str
    source: Literal["cli"]


class SessionMetaLine(TypedDict):
    timestamp: str
    type: Literal["session_meta"]
    payload: SessionMetaPayload


class ResponseItemLine(TypedDict):
    timestamp: str
    type: Literal["response_item"]
    payload: ResponseItemPayload


class EventLine(TypedDict):
    timestamp: str
    type: Literal["event_msg"]
    payload: EventPayload


RolloutLine = SessionMetaLine | ResponseItemLine | EventLine
