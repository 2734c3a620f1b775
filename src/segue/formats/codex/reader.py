"""Codex rollout (``sessions/**/rollout-*.jsonl``) → neutral :class:`Conversation`.

Reads both history modes (legacy and paginated): the model history is in ``response_item`` and
``compacted`` records; ``event_msg`` records carry turn lifecycle, errors, rollbacks and rate-limit
snapshots, and UI echoes of messages (which are not turned into messages a second time).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import msgspec
import orjson

from segue.formats.codex.paths import session_id_from_name, sessions_root_of, thread_files
from segue.formats.codex.records import Record
from segue.formats.codex.tools import tool_kind
from segue.formats.files import open_regular
from segue.formats.jsonl import (
    LineReport,
    as_dict,
    as_str,
    iter_records,
    iter_records_in,
    str_or_none,
)
from segue.model import conversation as neutral
from segue.model.errors import SegueError
from segue.model.limits import parse_reset_time
from segue.model.times import from_epoch, parse_iso
from segue.support import collector

# User-role texts that Codex itself adds to the history (its "contextual" fragments).
INJECTED_MARKERS = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<apps_instructions>",
    "<skills_instructions>",
    "<skill>",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<realtime_conversation>",
    "<personality_spec",
    "<turn_aborted>",
    "<subagent_notification>",
    "<model_switch>",
)
COMMAND_MARKERS = ("<user_shell_command>",)
# Event messages that only echo model history for the UI: kept as bare opaque markers.
_UI_ECHOES = frozenset(
    {
        "user_message",
        "agent_message",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "item_completed",
        "item_started",
        "context_compacted",
    }
)
# What a session_meta says that segue keeps.
_META_KEPT = (
    "originator",
    "source",
    "history_mode",
    "history_base",
    "model_provider",
    "forked_from_id",
)
_EXIT_RE = re.compile(r"(?:Process exited with code|Exit code:)\s*(-?\d+)")
_IMAGE_WRAPPER_RE = re.compile(r"^\s*(?:<image\b[^>]*>|</image>)\s*$")


def read_session(path: Path, *, opaque_data: bool = True) -> neutral.Conversation:
    """Read a rollout. A later *generation* file of a thread (written after a rollback) is read
    together with the files before it: the earlier history, the turns that were rolled back,
    a :class:`Rollback` item, then the new generation. With ``opaque_data=False`` an
    :class:`~segue.model.conversation.Opaque` item carries no data (its kind, line and time
    only): the same items in less memory (what a switch reads)."""
    with collector.paused():
        conversation = _Reader(path, keep=opaque_data).read()
    base = conversation.meta.extra.get("history_base")
    if isinstance(base, dict):
        return _with_history_base(path, conversation, base, keep=opaque_data)
    return conversation


def _with_history_base(
    path: Path, conversation: neutral.Conversation, base: Record, depth: int = 0, *, keep: bool
) -> neutral.Conversation:
    root = sessions_root_of(path)
    thread_id = base.get("thread_id") if isinstance(base.get("thread_id"), str) else None
    offset = base.get("end_byte_offset")
    earlier = (
        [p for p in thread_files(root, thread_id) if p.name < path.name]
        if root and thread_id
        else []
    )
    if not earlier or not isinstance(offset, int) or depth > 64:
        conversation.notes.append(
            f"{path}: continues an earlier file of thread {thread_id} that was not found; "
            "only this file was read"
        )
        return conversation
    base_path = earlier[-1]
    try:
        previous = (
            read_session(base_path, opaque_data=keep)
            if depth == 0
            else _Reader(base_path, keep=keep).read()
        )
        with open_regular(base_path, what="session file") as f:
            kept_lines = f.read(max(0, offset)).count(b"\n")
    except SegueError as exc:
        conversation.notes.append(f"{exc}; only {path} was read")
        return conversation
    rolled_back = [
        item
        for item in previous.items
        if item.prov.file == str(base_path)
        and item.prov.line > kept_lines
        and isinstance(item, neutral.UserMessage)
        and item.origin is neutral.Origin.TYPED
    ]
    items: list[neutral.Item] = list(previous.items)
    first = conversation.items[0].prov if conversation.items else neutral.Provenance(str(path), 1)
    if rolled_back:
        items.append(neutral.Rollback(len(rolled_back), first, conversation.meta.created))
    items.extend(conversation.items)
    conversation.items = items
    conversation.skipped = previous.skipped + conversation.skipped
    conversation.notes = previous.notes + conversation.notes
    conversation.meta.created = previous.meta.created or conversation.meta.created
    return conversation


def read_lines(path: Path, lines: Iterable[bytes]) -> neutral.Conversation:
    """Read records from ``lines`` (e.g. just the head or tail of ``path``) as if they were the
    file. Used by the session listing, which reads only what it needs."""
    return _Reader(path, lines).read()


class _Reader:
    def __init__(
        self, path: Path, lines: Iterable[bytes] | None = None, *, keep: bool = True
    ) -> None:
        self.path = path
        self.keep = keep  # Opaque items carry their records
        self.name = str(path)
        self.lines = lines
        self.report = LineReport()
        self.model: str | None = None
        self.limits: list[neutral.LimitWindow] = []
        self.meta = neutral.SessionMeta(
            provider=neutral.Provider.CODEX,
            id=session_id_from_name(path) or path.stem,
            path=self.name,
        )

    def read(self) -> neutral.Conversation:
        items: list[neutral.Item] = []
        first_ts: str | None = None
        last_ts: str | None = None
        seen_meta = False
        records = (
            iter_records(self.path, self.report)
            if self.lines is None
            else iter_records_in(self.lines, self.name, self.report)
        )
        for lineno, rec in records:
            ts = rec.get("timestamp")
            if type(ts) is str:
                first_ts = first_ts or ts
                last_ts = ts
            else:
                ts = None
            kind = rec.get("type")
            payload = rec.get("payload")
            prov = neutral.Provenance(self.name, lineno)
            if type(payload) is not dict:
                items.append(self._opaque(str(kind), prov, rec, ts))
                continue
            if kind == "session_meta" and not seen_meta:
                seen_meta = True
                self._session_meta(payload)
                items.append(self._opaque("session_meta", prov, None, ts))
            elif kind == "response_item":
                items.append(self._decode_item(payload, prov, ts))
            elif kind == "compacted":
                items.append(self._compacted(payload, prov, ts, items))
            elif kind == "event_msg":
                self._event(payload, prov, ts, items)
            elif kind == "turn_context":
                model = payload.get("model")
                if isinstance(model, str):
                    self.model = model
                items.append(self._opaque("turn_context", prov, None, ts))
            elif kind in ("world_state", "token_usage_record"):
                items.append(self._opaque(str(kind), prov, None, ts))
            else:
                items.append(self._opaque(str(kind), prov, rec, ts))
        meta = self.meta
        meta.model = self.model or meta.model
        meta.created = meta.created or first_ts
        meta.updated = last_ts or meta.updated
        meta.limits = self.limits
        conversation = neutral.Conversation(meta=meta, items=items)
        conversation.skipped = self.report.skipped
        conversation.notes = self.report.notes
        if not seen_meta:
            conversation.notes.append(f"{self.name}: no session_meta record")
        return conversation

    def _opaque(
        self, kind: str, prov: neutral.Provenance, data: neutral.JSON, ts: str | None
    ) -> neutral.Opaque:
        return neutral.Opaque(kind, prov, data if self.keep else None, ts)

    # -- records ----------------------------------------------------------------------------

    def _session_meta(self, p: Record) -> None:
        meta = self.meta
        recorded = p.get("id")
        if type(recorded) is str and recorded != meta.id:
            # the file is known (listed, found, resumed) by the id in its name; a copied or
            # renamed rollout records another one, which ``find`` also accepts
            meta.extra["recorded_id"] = recorded
        meta.cwd = str_or_none(p.get("cwd"))
        meta.cli_version = str_or_none(p.get("cli_version"))
        meta.created = str_or_none(p.get("timestamp"))
        meta.git_branch = str_or_none(as_dict(p.get("git")).get("branch"))
        meta.extra.update((key, p[key]) for key in _META_KEPT if key in p)

    def _decode_item(self, p: Record, prov: neutral.Provenance, ts: str | None) -> neutral.Item:
        ptype = p.get("type")
        if ptype == "message":
            return self._message(p, prov, ts)
        if ptype == "reasoning":
            summary = p.get("summary")
            parts = summary if type(summary) is list else ()
            encrypted = p.get("encrypted_content")
            return neutral.Reasoning(
                "\n\n".join(as_str(as_dict(part).get("text")) for part in parts),
                prov,
                encrypted if type(encrypted) is str and encrypted else None,
                ts,
            )
        if ptype in (
            "function_call",
            "custom_tool_call",
            "local_shell_call",
            "tool_search_call",
            "web_search_call",
        ):
            return self._tool_call(p, prov, ts)
        if ptype in (
            "function_call_output",
            "custom_tool_call_output",
            "local_shell_call_output",
            "tool_search_output",
        ):
            return self._tool_result(p, prov, ts)
        if ptype in ("compaction", "compaction_summary"):
            return neutral.Compaction("", neutral.CompactionState.NATIVE_ONLY, prov, timestamp=ts)
        return self._opaque(f"response_item/{ptype}", prov, p, ts)

    def _message(self, p: Record, prov: neutral.Provenance, ts: str | None) -> neutral.Item:
        role = p.get("role")
        content = p.get("content")
        if not isinstance(content, list):
            # Codex drops a message whose content is not a list of parts; so do we.
            return self._opaque(f"response_item/message({role}, not a list)", prov, p, ts)
        texts: list[str] = []
        images: list[neutral.Image] = []
        for part in content:
            if not isinstance(part, dict):
                continue
            ptype = part.get("type")
            if ptype in ("input_text", "output_text", "text"):
                text = part.get("text")
                if isinstance(text, str) and not _IMAGE_WRAPPER_RE.match(text):
                    texts.append(text)
            elif ptype == "input_image":
                url = part.get("image_url")
                images.append(neutral.Image(url=url if isinstance(url, str) else None))
        text = "\n".join(texts)
        if role == "assistant":
            return neutral.AssistantMessage(text, prov, self.model, ts)
        if role == "user":
            return neutral.UserMessage(text, prov, _origin(text), tuple(images), ts)
        if role == "developer":
            return neutral.UserMessage(text, prov, neutral.Origin.INJECTED, tuple(images), ts)
        return self._opaque(f"response_item/message({role})", prov, p, ts)

    def _tool_call(self, p: Record, prov: neutral.Provenance, ts: str | None) -> neutral.ToolCall:
        ptype = p.get("type")
        call_id = str(p.get("call_id") or p.get("id") or "")
        name = str(p.get("name") or "")
        namespace = str_or_none(p.get("namespace"))
        tool_input: neutral.JSON
        if ptype == "function_call":
            tool_input = args = p.get("arguments")
            if isinstance(args, str):
                with contextlib.suppress(orjson.JSONDecodeError):
                    tool_input = orjson.loads(args)
        elif ptype == "custom_tool_call":
            tool_input = p.get("input")
        elif ptype == "local_shell_call":
            name = name or "local_shell"
            tool_input = p.get("action")
        else:  # web / tool search
            name = name or str(ptype).removesuffix("_call")
            tool_input = p.get("action") if "action" in p else p.get("arguments")
        return neutral.ToolCall(call_id, name, tool_input, tool_kind(name, namespace), prov, ts)

    def _tool_result(
        self, p: Record, prov: neutral.Provenance, ts: str | None
    ) -> neutral.ToolResult:
        call_id = str(p.get("call_id") or "")
        raw = p.get("output")
        success: bool | None = None
        if isinstance(raw, dict):  # {content, success} payloads
            success = raw.get("success") if isinstance(raw.get("success"), bool) else None
            raw = raw.get("content")
        images: tuple[neutral.Image, ...] = ()
        if isinstance(raw, list):
            output = "\n".join(
                str(part.get("text", ""))
                for part in raw
                if isinstance(part, dict)
                and part.get("type") in ("input_text", "output_text", "text")
            )
            images = tuple(
                neutral.Image(url=part["image_url"])
                for part in raw
                if isinstance(part, dict)
                and part.get("type") == "input_image"
                and type(part.get("image_url")) is str
            )
        elif isinstance(raw, str):
            output = raw
        else:
            output = "" if raw is None else orjson.dumps(raw).decode()
        m = _EXIT_RE.search(output[:2000])
        exit_code = int(m.group(1)) if m else None
        error = success if success is None else not success
        if exit_code is not None:
            error = exit_code != 0
        return neutral.ToolResult(call_id, output, prov, error, exit_code, images, ts)

    def _compacted(
        self, p: Record, prov: neutral.Provenance, ts: str | None, before: list[neutral.Item]
    ) -> neutral.Compaction:
        message = as_str(p.get("message"))
        history = p.get("replacement_history")
        replacement: tuple[neutral.Item, ...]
        encrypted = False
        if type(history) is list:
            decoded: list[neutral.Item] = []
            for entry in history:
                if type(entry) is not dict:
                    continue
                if entry.get("type") in ("compaction", "compaction_summary") or (
                    entry.get("type") != "reasoning" and entry.get("encrypted_content")
                ):
                    encrypted = True
                item = self._decode_item(entry, prov, ts)
                if (
                    isinstance(item, neutral.UserMessage)
                    and message.strip()
                    and (item.text.strip() == message.strip() or message.strip() in item.text)
                ):
                    # the summary Codex carries as a user message: context, not a prompt
                    item = msgspec.structs.replace(item, origin=neutral.Origin.INJECTED)
                decoded.append(item)
            replacement = tuple(decoded)
        else:
            # An old-style record holding only the summary: Codex keeps the user messages
            # before it (and the summary), nothing else.
            replacement = tuple(
                item
                for item in before
                if isinstance(item, neutral.UserMessage)
                and item.origin is not neutral.Origin.INJECTED
            )
        if encrypted:
            state = neutral.CompactionState.NATIVE_ONLY
        elif message.strip():
            state = neutral.CompactionState.PORTABLE
        else:
            state = neutral.CompactionState.INCOMPLETE
        return neutral.Compaction(message, state, prov, replacement, timestamp=ts)

    def _event(
        self, p: Record, prov: neutral.Provenance, ts: str | None, out: list[neutral.Item]
    ) -> None:
        etype = p.get("type")
        if type(etype) is not str:
            out.append(self._opaque(f"event_msg/{etype}", prov, p, ts))
            return
        turn_id = str_or_none(p.get("turn_id"))
        if etype == "task_started":
            window = p.get("model_context_window")
            if isinstance(window, int):
                self.meta.extra["model_context_window"] = window
            out.append(neutral.TurnMarker(neutral.TurnStatus.STARTED, prov, turn_id, ts))
        elif etype in ("task_complete", "turn_complete"):
            error = p.get("error")
            if isinstance(error, dict) and error:
                out.append(self._error(error, prov, ts))
                out.append(neutral.TurnMarker(neutral.TurnStatus.FAILED, prov, turn_id, ts))
            else:
                out.append(neutral.TurnMarker(neutral.TurnStatus.COMPLETED, prov, turn_id, ts))
        elif etype == "turn_aborted":
            out.append(neutral.TurnMarker(neutral.TurnStatus.ABORTED, prov, turn_id, ts))
        elif etype == "thread_rolled_back":
            turns = p.get("num_turns")
            out.append(neutral.Rollback(turns if isinstance(turns, int) else 1, prov, ts))
        elif etype in ("error", "stream_error"):
            out.append(self._error(p, prov, ts))
        elif etype == "token_count":
            snapshot = p.get("rate_limits")
            if type(snapshot) is dict:
                self._rate_limits(snapshot, prov, ts)
            out.append(self._opaque("event_msg/token_count", prov, p, ts))
        elif etype == "thread_name_updated":
            name = p.get("thread_name") or p.get("name")
            if isinstance(name, str):
                self.meta.title = name
            out.append(self._opaque("event_msg/thread_name_updated", prov, p, ts))
        elif etype in _UI_ECHOES:
            out.append(self._opaque(f"event_msg/{etype}", prov, None, ts))
        else:
            out.append(self._opaque(f"event_msg/{etype}", prov, p, ts))

    def _error(
        self, error: Record, prov: neutral.Provenance, ts: str | None
    ) -> neutral.ErrorNotice:
        message = str(error.get("message") or "")
        info = error.get("codex_error_info")
        info_text = (
            orjson.dumps(info).decode() if isinstance(info, dict | list) else str(info or "")
        )
        if "usage_limit" in info_text or "usage limit" in message.lower():
            kind = neutral.ErrorKind.USAGE_LIMIT
        elif "context_window" in info_text:
            kind = neutral.ErrorKind.CONTEXT_WINDOW
        elif "rate_limit" in info_text or "429" in info_text:
            kind = neutral.ErrorKind.RATE_LIMIT
        else:
            kind = neutral.ErrorKind.API_ERROR
        reset = None
        if kind in (neutral.ErrorKind.USAGE_LIMIT, neutral.ErrorKind.RATE_LIMIT):
            reset = self._exhausted_window_reset()
            if reset is None:
                when = parse_iso(ts)
                reset = parse_reset_time(message, when) if when else None
        return neutral.ErrorNotice(kind, message, prov, reset, ts)

    def _exhausted_window_reset(self) -> datetime | None:
        """The reset time of the window the latest rate-limit snapshot shows as used up."""
        resets = [w.resets_at for w in self.limits if w.exhausted and w.resets_at is not None]
        return max(resets) if resets else None

    def _rate_limits(self, snapshot: Record, prov: neutral.Provenance, ts: str | None) -> None:
        """The windows of a ``token_count`` rate-limit snapshot; a newer snapshot of the same
        limit replaces the older one. Windows are told apart by their length, not their slot."""
        limit_id = as_str(snapshot.get("limit_id")) or "codex"
        observed = parse_iso(ts)
        fresh: list[neutral.LimitWindow] = []
        for slot in ("primary", "secondary"):
            window = snapshot.get(slot)
            if type(window) is not dict:
                continue
            minutes = window.get("window_minutes")
            used: object = window.get("used_percent")
            fresh.append(
                neutral.LimitWindow(
                    neutral.Provider.CODEX,
                    minutes if type(minutes) is int else None,
                    float(used)
                    if isinstance(used, int | float) and type(used) is not bool
                    else None,
                    from_epoch(window.get("resets_at")),
                    limit_scope(limit_id),
                    f"{limit_id}.{slot}",
                    observed,
                    f"{prov.file}:{prov.line}",
                )
            )
        if fresh:
            prefix = f"{limit_id}."
            kept = [w for w in self.limits if not (w.name or "").startswith(prefix)]
            self.limits = kept + fresh


def limit_scope(limit_id: str) -> str:
    """``codex`` limits every model; another id (``codex_other``, ``codex_<model>``) names the
    models it covers."""
    if limit_id == "codex":
        return neutral.ALL_MODELS
    return limit_id.removeprefix("codex_") or neutral.ALL_MODELS


def _origin(text: str) -> neutral.Origin:
    head = text.lstrip()[:64].lower()
    if head.startswith(COMMAND_MARKERS):
        return neutral.Origin.COMMAND
    if head.startswith(INJECTED_MARKERS):
        return neutral.Origin.INJECTED
    return neutral.Origin.TYPED
