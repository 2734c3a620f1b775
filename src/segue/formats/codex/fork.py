"""A native fork of a Codex thread with a delta appended: what segue writes to return to a Codex
thread that missed some runs (the ``delta_into_existing`` strategy), without ever writing into
its file.

The recipe was measured against Codex 0.169 (``codex exec resume <fork>`` sends the parent's
items byte for byte, encrypted reasoning and compactions included, then the delta):

* the parent's *current* file (a rolled-back thread continues in its newest generation file) is
  flattened: a ``session_meta.history_base`` names the kept prefix of an earlier segment (its
  bytes up to ``end_byte_offset``, its lines below ``end_ordinal_exclusive``), recursively;
* line 0 is the root segment's ``session_meta`` with a new ``id`` / ``session_id``,
  ``forked_from_id`` naming the parent, no ``history_base`` and a fresh context window id
  (keeping the parent's id would make Codex run the fork *as the parent* and repoint the
  parent's row in its database to the fork);
* every other parent line is copied byte for byte (streamed from the file as the fork is
  published, for a thread in one file);
* the delta follows as ordinary turns, written by :func:`segue.formats.codex.writer.project_turns`
  (the same mapping of items to records as a switch). In a paginated thread every appended line
  continues the ordinals, and the turn's messages are ``item_completed`` events naming the new
  thread (Codex lists a paginated turn's items from those).

The result is self-contained: it resumes with the parent file moved away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec
import orjson

from segue.formats.atomic import FileCopy, NativeSession
from segue.formats.codex.paths import codex_home, parse_name, sessions_root_of, thread_files
from segue.formats.codex.writer import project_turns, rollout_path, uuid7
from segue.formats.parent import read_parent
from segue.model.conversation import Item, Provider
from segue.model.errors import SwitchError

__all__ = ["current_file", "prepare_fork"]

_MAX_SEGMENTS = 64  # a history_base chain longer than this is a loop


def current_file(path: Path) -> Path:
    """The file a Codex thread continues in now: its newest ``rollout-…-<id>[_<gen>].jsonl``."""
    parsed = parse_name(path)
    root = sessions_root_of(path)
    if parsed is None or root is None:
        return path
    files = thread_files(root, parsed[0])
    return files[-1] if files else path


class _Flat(msgspec.Struct):
    meta: dict[str, Any]  # the root segment's session_meta line
    lines: list[bytes]  # every other line, as in the files, each ending in b"\n"
    max_ordinal: int | None
    paginated: bool


def _complete_lines(data: bytes) -> list[bytes]:
    """The complete lines of a file's bytes (a last line without its newline is a CLI still
    appending: left out)."""
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines.pop()
    return [line for line in lines if line.strip()]


def _segment_file(root: Path, segment: str, near: Path) -> Path:
    for candidate in sorted(root.rglob(f"rollout-*{segment}.jsonl")):
        parsed = parse_name(candidate)
        if parsed is not None and segment in (parsed[1], parsed[0] if parsed[1] is None else None):
            return candidate
    raise SwitchError(f"{near}: its history_base names segment {segment}, which is missing")


def _meta_of(line: bytes, path: Path) -> dict[str, Any]:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        record = None
    if not isinstance(record, dict) or record.get("type") != "session_meta":
        raise SwitchError(f"{path}: does not start with a session_meta record")
    if not isinstance(record.get("payload"), dict):
        raise SwitchError(f"{path}: its session_meta has no payload")
    return record


def _ordinal(line: bytes) -> int | None:
    try:
        value = orjson.loads(line).get("ordinal")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return value if type(value) is int else None


def _flatten(path: Path, cut: tuple[int, int] | None, depth: int) -> _Flat:
    if depth > _MAX_SEGMENTS:
        raise SwitchError(f"{path}: its history_base chain does not end")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SwitchError(f"{path}: cannot read: {exc.strerror}") from None
    if cut is not None:
        data = data[: cut[1]]
    lines = _complete_lines(data)
    if not lines:
        raise SwitchError(f"{path}: empty rollout")
    meta = _meta_of(lines[0], path)
    body = lines[1:]
    if cut is not None:
        body = [line for line in body if (_ordinal(line) or 0) < cut[0]]
    base = meta["payload"].get("history_base")
    if isinstance(base, dict) and isinstance(base.get("thread_id"), str):
        end, offset = base.get("end_ordinal_exclusive"), base.get("end_byte_offset")
        if type(end) is not int or type(offset) is not int:
            raise SwitchError(f"{path}: its history_base has no end")
        root = sessions_root_of(path) or path.parent
        earlier = _flatten(_segment_file(root, base["thread_id"], path), (end, offset), depth + 1)
        later = [_ordinal(line) for line in body]
        known = [n for n in (earlier.max_ordinal, *later) if n is not None]
        return _Flat(
            earlier.meta, earlier.lines + body, max(known, default=None), earlier.paginated
        )
    ordinals = [n for n in (_ordinal(line) for line in lines) if n is not None]
    paginated = meta["payload"].get("history_mode") == "paginated"
    return _Flat(meta, body, max(ordinals, default=None), paginated)


def _new_meta(meta: dict[str, Any], new_id: str, parent_id: str) -> dict[str, Any]:
    payload = dict(meta["payload"])
    payload.pop("history_base", None)
    payload["id"] = new_id
    if "session_id" in payload:
        payload["session_id"] = new_id
    payload["forked_from_id"] = parent_id
    window = payload.get("context_window")
    if isinstance(window, dict) and "window_id" in window:
        payload["context_window"] = {**window, "window_id": uuid7()}
    return {**meta, "payload": payload}


def _paginated_event(
    line: dict[str, Any], thread_id: str, turn: str | None, n: int
) -> dict[str, Any]:
    """A legacy ``user_message`` / ``agent_message`` event as the ``item_completed`` event a
    paginated thread lists its turn's messages from; other lines unchanged."""
    payload = line["payload"]
    kind = payload.get("type") if line["type"] == "event_msg" else None
    if kind == "user_message":
        item = {
            "type": "UserMessage",
            "id": f"segue-item-{n}",
            "content": [{"type": "text", "text": payload["message"], "text_elements": []}],
        }
    elif kind == "agent_message":
        item = {
            "type": "AgentMessage",
            "id": f"segue-item-{n}",
            "content": [{"type": "Text", "text": payload["message"]}],
        }
    else:
        return line
    event = {"type": "item_completed", "thread_id": thread_id, "turn_id": turn, "item": item}
    return {**line, "payload": event}


def _delta_lines(
    items: Sequence[Item], handoff_text: str | None, flat: _Flat, new_id: str, now: datetime
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    ordinal = (flat.max_ordinal or 0) + 1
    turn: str | None = None
    for n, line in enumerate(project_turns(items, now=now, handoff_text=handoff_text)):
        record: dict[str, Any] = dict(line)
        payload = record["payload"]
        if record["type"] == "event_msg" and payload.get("type") == "task_started":
            turn = payload.get("turn_id")
        if flat.paginated:
            record = _paginated_event(record, new_id, turn, n)
            record = {"timestamp": record["timestamp"], "ordinal": ordinal, **record}
            ordinal += 1
        out.append(record)
    return out


def _tail_ordinal(lines: list[bytes]) -> int | None:
    """The highest ``ordinal`` among the last lines (a paginated thread numbers every line in
    order, so the last one that has one is the highest)."""
    for line in reversed(lines):
        if b'"ordinal"' in line:
            found = _ordinal(line)
            if found is not None:
                return found
    return None


def prepare_fork(
    parent: Path,
    delta: Sequence[Item],
    handoff_text: str | None,
    *,
    cwd: str,
    env: Mapping[str, str],
    now: datetime,
) -> NativeSession:
    """A new Codex thread holding ``parent``'s thread verbatim (its cwd too), then the delta:
    ``delta``'s turns as native items, opened by ``handoff_text`` as a developer message when
    given, in the Codex home of ``env``. Not yet written; ``parent`` is only read (a thread in
    one file: its first and last lines now, the rest streamed as it is copied)."""
    current = current_file(parent)
    parsed = parse_name(current)
    facts = read_parent(current)
    root = _meta_of(facts.first, current)
    new_id = uuid7(now)
    if isinstance(root["payload"].get("history_base"), dict):  # several files: flattened
        flat = _flatten(current, None, 0)
        copy = None
        body = flat.lines
    else:
        paginated = root["payload"].get("history_mode") == "paginated"
        ordinal = _tail_ordinal(facts.tail) if paginated else None
        flat = _Flat(root, [], ordinal, paginated)
        copy = FileCopy(current, len(facts.first), facts.end, head=facts.head)
        body = []
    parent_id = parsed[0] if parsed is not None else str(flat.meta["payload"].get("id", ""))
    meta = _new_meta(flat.meta, new_id, parent_id)
    appended = _delta_lines(delta, handoff_text, flat, new_id, now)
    if not appended:
        raise SwitchError(f"{parent}: nothing to carry into a fork (no delta and no handoff)")
    lines = [orjson.dumps(r) + b"\n" for r in appended]
    session = NativeSession(
        Provider.CODEX,
        new_id,
        rollout_path(codex_home(env), new_id, now),
        lines,
        head=[orjson.dumps(meta) + b"\n", *body],
        copied=copy,
    )
    session.notes.append(f"fork of {parent_id} ({current.name})")
    return session
