"""Write neutral items as a native Codex rollout that ``codex exec resume <id>`` loads.

The file follows the minimal resumable recipe of the research notes (legacy history mode): a
``session_meta`` line without ``model_provider`` / ``base_instructions`` / ``history_mode``, then
per typed prompt a turn (``task_started``, the user ``response_item`` and ``user_message`` event,
assistant messages, ``function_call`` / ``function_call_output`` pairs, ``task_complete``), and a
final ``token_count`` that seeds Codex's auto-compaction check with an estimate of the history.

Only what another provider can honestly take crosses: private reasoning, error notices, injected
context, slash-command messages, bookkeeping items, non-portable compactions and tool calls or
results whose other half is missing are dropped. A portable compaction summary becomes a
developer message (never a fabricated ``compacted`` record).
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import assert_never

import msgspec
import orjson

from segue.formats.atomic import NativeSession
from segue.formats.codex.records import (
    AssistantMessagePayload,
    EventLine,
    EventPayload,
    FunctionCallOutputPayload,
    FunctionCallPayload,
    InputImage,
    InputText,
    ResponseItemLine,
    ResponseItemPayload,
    RolloutLine,
    SessionMetaLine,
    TokenInfo,
    TokenUsage,
    UserMessagePayload,
)
from segue.formats.jsonl import dump_lines
from segue.model import conversation as neutral
from segue.model.times import iso_ms, parse_iso
from segue.transforms.budget import item_chars
from segue.transforms.carry import carriable

ORIGINATOR = "segue"
DEFAULT_CLI_VERSION = "0.169.0"
STATE_DB = "state_5.sqlite"  # Codex 0.169's thread index
BYTES_PER_TOKEN = 4  # Codex 0.169 estimates a token of history as 4 UTF-8 bytes


def uuid7(now: datetime | None = None) -> str:
    """A UUIDv7: 48-bit Unix milliseconds, version 7, 74 random bits, RFC 4122 variant."""
    ms = int((now.timestamp() if now is not None else time.time()) * 1000) & ((1 << 48) - 1)
    rand = int.from_bytes(os.urandom(10), "big")
    rand_a = rand >> 68  # 12 bits
    rand_b = rand & ((1 << 62) - 1)  # 62 bits
    value = (ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    return str(uuid.UUID(int=value))


def _item_time(stamp: str | None, fallback: str) -> str:
    if not stamp:
        return fallback
    if len(stamp) == 24 and stamp[-1] == "Z" and stamp[10] == "T" and stamp[19] == ".":
        return stamp  # already "YYYY-MM-DDThh:mm:ss.mmmZ", as both CLIs write it
    parsed = parse_iso(stamp)
    return fallback if parsed is None else iso_ms(parsed)


# --------------------------------------------------------------------------- selection


_TOOL = (neutral.ToolCall, neutral.ToolResult)  # (a tuple: isinstance is quicker with one)


def _paired_ids(items: Sequence[neutral.Item]) -> set[str]:
    """Call ids with a call followed by its result."""
    called: set[str] = set()
    paired: set[str] = set()
    for item in items:
        if type(item) is neutral.ToolCall:
            called.add(item.call_id)
        elif type(item) is neutral.ToolResult and item.call_id in called:
            paired.add(item.call_id)
    return paired


def select(items: Sequence[neutral.Item]) -> list[neutral.Item]:
    """The items that cross into a Codex rollout, in order."""
    paired = _paired_ids(items)
    out: list[neutral.Item] = []
    for item in items:
        if not carriable(item):
            continue
        if isinstance(item, _TOOL) and item.call_id not in paired:
            continue
        out.append(item)
    return out


# --------------------------------------------------------------------------- payloads


def _image_part(image: neutral.Image) -> InputImage | None:
    if image.url and image.url.startswith("data:"):
        return {"type": "input_image", "image_url": image.url}
    return None


def _user_payload(msg: neutral.UserMessage) -> UserMessagePayload:
    content: list[InputText | InputImage] = [{"type": "input_text", "text": msg.text}]
    for image in msg.images:
        part = _image_part(image)
        if part is not None:
            content.append(part)
    return {"type": "message", "role": "user", "content": content}


def _assistant_payload(msg: neutral.AssistantMessage) -> AssistantMessagePayload:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": msg.text}],
    }


def _developer_payload(text: str) -> UserMessagePayload:
    return {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": text}],
    }


def _tool_name_and_args(call: neutral.ToolCall) -> tuple[str, neutral.JSON]:
    """Codex's tool name and argument object for a call: Claude's ``Bash`` is ``exec_command``."""
    data = call.input
    if call.name == "Bash" and isinstance(data, dict) and isinstance(data.get("command"), str):
        return "exec_command", {"cmd": data["command"]}
    if isinstance(data, dict):
        return call.name, data
    return call.name, {"input": data}


def _call_payload(call: neutral.ToolCall) -> FunctionCallPayload:
    name, args = _tool_name_and_args(call)
    return {
        "type": "function_call",
        "name": name,
        "arguments": orjson.dumps(args).decode(),
        "call_id": call.call_id,
    }


def _output_text(result: neutral.ToolResult) -> str:
    """Codex has no error flag on an output: the exit code or error goes into the text."""
    if "exited with code" in result.output:  # Codex's own exec output already says it
        return result.output
    if result.exit_code is not None:
        return f"Exit code: {result.exit_code}\n{result.output}"
    if result.error:
        return f"Error:\n{result.output}"
    return result.output


def _result_payload(result: neutral.ToolResult) -> FunctionCallOutputPayload:
    return {
        "type": "function_call_output",
        "call_id": result.call_id,
        "output": _output_text(result),
    }


# --------------------------------------------------------------------------- projection


class _Projector(msgspec.Struct):
    now: str
    lines: list[ResponseItemLine | EventLine] = msgspec.field(default_factory=list)
    turns: int = 0
    open_turn: str | None = None
    last_reply: str | None = None
    history_chars: int = 0

    def history(self, payload: ResponseItemPayload, stamp: str | None) -> None:
        when = _item_time(stamp, self.now)
        self.lines.append({"timestamp": when, "type": "response_item", "payload": payload})

    def event(self, payload: EventPayload, stamp: str | None = None) -> None:
        when = _item_time(stamp, self.now)
        self.lines.append({"timestamp": when, "type": "event_msg", "payload": payload})

    def close_turn(self, stamp: str | None = None) -> None:
        if self.open_turn is None:
            return
        self.event(
            {
                "type": "task_complete",
                "turn_id": self.open_turn,
                "last_agent_message": self.last_reply,
            },
            stamp,
        )
        self.open_turn = None

    def prompt(self, msg: neutral.UserMessage) -> None:
        self.close_turn(msg.timestamp)
        self.turns += 1
        self.open_turn = f"segue-turn-{self.turns}"
        self.last_reply = None
        self.event({"type": "task_started", "turn_id": self.open_turn}, msg.timestamp)
        self.history(_user_payload(msg), msg.timestamp)
        self.event({"type": "user_message", "message": msg.text, "images": None}, msg.timestamp)

    def reply(self, msg: neutral.AssistantMessage) -> None:
        self.history(_assistant_payload(msg), msg.timestamp)
        self.event({"type": "agent_message", "message": msg.text}, msg.timestamp)
        self.last_reply = msg.text

    def add(self, item: neutral.Item) -> None:
        self.history_chars += item_chars(item)
        match item:
            case neutral.UserMessage():
                self.prompt(item)
            case neutral.AssistantMessage():
                self.reply(item)
            case neutral.Compaction():
                self.history(_developer_payload(item.summary), item.timestamp)
            case neutral.ToolCall():
                self.history(_call_payload(item), item.timestamp)
            case neutral.ToolResult():
                self.history(_result_payload(item), item.timestamp)
            case (
                neutral.Reasoning()
                | neutral.ErrorNotice()
                | neutral.TurnMarker()
                | neutral.Rollback()
                | neutral.Opaque()
            ):
                pass  # select() never passes these
            case _:
                assert_never(item)

    def token_count(self) -> None:
        # the history's size as Codex itself estimates it, so Codex compacts on arrival only if
        # the history really is that big (segue's plan keeps it under the limit with margins)
        tokens = -(-self.history_chars // BYTES_PER_TOKEN)
        usage: TokenUsage = {
            "input_tokens": tokens,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
            "total_tokens": tokens,
        }
        info: TokenInfo = {
            "total_token_usage": usage,
            "last_token_usage": usage,
            "model_context_window": None,
        }
        self.event({"type": "token_count", "info": info, "rate_limits": None})


def _session_meta(session_id: str, cwd: str, now: str, cli_version: str) -> SessionMetaLine:
    return {
        "timestamp": now,
        "type": "session_meta",
        "payload": {
            "id": session_id,
            "timestamp": now,
            "cwd": cwd,
            "originator": ORIGINATOR,
            "cli_version": cli_version,
            "source": "cli",
        },
    }


def project_turns(
    items: Sequence[neutral.Item], *, now: datetime, handoff_text: str | None = None
) -> list[ResponseItemLine | EventLine]:
    """The turns for ``items`` without a ``session_meta`` or a token count: what a fork appends
    after its parent's records. ``handoff_text`` opens them as a developer message in a turn of
    its own (pure)."""
    projector = _Projector(now=iso_ms(now))
    if handoff_text is not None:
        projector.open_turn = "segue-handoff"
        projector.event({"type": "task_started", "turn_id": projector.open_turn})
        projector.history(_developer_payload(handoff_text), None)
    for item in select(items):
        projector.add(item)
    projector.close_turn()
    return projector.lines


def project(
    items: Sequence[neutral.Item], *, session_id: str, cwd: str, now: datetime, cli_version: str
) -> list[RolloutLine]:
    """The rollout lines for ``items`` (pure)."""
    stamp = iso_ms(now)
    projector = _Projector(now=stamp)
    for item in select(items):
        projector.add(item)
    projector.token_count()
    projector.close_turn()
    return [_session_meta(session_id, cwd, stamp, cli_version), *projector.lines]


# --------------------------------------------------------------------------- files


def rollout_path(codex_home: Path, session_id: str, now: datetime) -> Path:
    """``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`` (UTC)."""
    utc = now.astimezone(UTC)
    name = f"rollout-{utc:%Y-%m-%dT%H-%M-%S}-{session_id}.jsonl"
    return codex_home / "sessions" / f"{utc:%Y}" / f"{utc:%m}" / f"{utc:%d}" / name


def request_rescan(codex_home: Path) -> str | None:
    """Ask Codex to re-index ``sessions/`` on its next start so ``resume --last`` and the picker
    list a file written into a home it already indexed. Returns a warning when that could not
    be done; the session resumes by id either way.

    Codex backfills its ``threads`` table once; resetting the backfill state makes it rescan.
    Nothing is touched when the database or the expected table and columns are missing.
    """
    db = codex_home / STATE_DB
    if not db.is_file():
        return None
    try:
        conn = sqlite3.connect(db, timeout=2)
        try:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(backfill_state)")}
            if not {"status", "last_watermark"} <= columns:
                return None
            with conn:
                conn.execute("UPDATE backfill_state SET status='pending', last_watermark=NULL")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return (
            f"{db}: could not ask Codex to index the new session ({exc}); "
            "`codex resume <id>` finds it, `codex resume --last` and the picker may not"
        )
    return None


def prepare_session(
    items: Sequence[neutral.Item],
    *,
    cwd: str,
    codex_home: Path,
    session_id: str | None = None,
    now: datetime | None = None,
    cli_version: str = DEFAULT_CLI_VERSION,
) -> NativeSession:
    """The rollout for ``items`` under ``codex_home``, ready to publish."""
    moment = now if now is not None else datetime.now(UTC)
    sid = session_id if session_id is not None else uuid7(moment)
    lines = dump_lines(project(items, session_id=sid, cwd=cwd, now=moment, cli_version=cli_version))
    return NativeSession(neutral.Provider.CODEX, sid, rollout_path(codex_home, sid, moment), lines)
