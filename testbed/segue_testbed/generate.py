"""Scratch sessions for the benchmarks, built only from the recorded fixture transcripts.

Nothing here invents a record: a large session is copies of one fixture's lines (with the ids
of each copy made unique, so the result is still one valid conversation), and a listing home is
copies of every fixture under new session ids.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from segue.formats.codex.paths import parse_name
from segue.model.conversation import Provider
from segue_testbed.testbed import repo_root

FIXTURES = repo_root() / "tests" / "fixtures"
MB = 1_000_000

_NAMESPACE = uuid.UUID("6b1d3a52-8f0e-4c55-9a3e-5e6775650000")
_UUID_RE = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)

# Fields whose values are ids that must differ between copies of the same records.
CLAUDE_LINK_FIELDS = frozenset(
    {"uuid", "parentUuid", "logicalParentUuid", "leafUuid", "sourceToolAssistantUUID", "promptId"}
)
CLAUDE_ID_FIELDS = CLAUDE_LINK_FIELDS | {"id", "tool_use_id", "toolUseID", "parentToolUseID"}
CODEX_ID_FIELDS = frozenset({"id", "call_id", "turn_id", "root_turn_id", "parent_turn_id"})
CLAUDE_CHAIN_TYPES = frozenset({"user", "assistant", "system", "attachment", "progress"})


@dataclass(frozen=True, slots=True)
class Fixture:
    provider: Provider
    scenario: str
    folder: Path
    session_id: str
    transcripts: tuple[Path, ...]  # every file of the thread, oldest first

    @property
    def transcript(self) -> Path:
        return self.transcripts[-1]


def fixtures(provider: Provider) -> list[Fixture]:
    """Every recorded scenario of ``provider``, in name order."""
    found = []
    for scenario_file in sorted((FIXTURES / provider.value).glob("*/scenario.json")):
        folder = scenario_file.parent
        scenario = orjson.loads(scenario_file.read_bytes())
        names = scenario.get("transcripts") or [scenario["transcript"]]
        found.append(
            Fixture(
                provider=provider,
                scenario=scenario["scenario"],
                folder=folder,
                session_id=scenario["session_id"],
                transcripts=tuple(folder / name for name in names),
            )
        )
    return found


def fixture(provider: Provider, scenario: str) -> Fixture:
    for fx in fixtures(provider):
        if fx.scenario == scenario:
            return fx
    raise LookupError(f"no {provider.value} fixture named {scenario!r}")


def copy_id(value: str, copy: int) -> str:
    """A deterministic new id for ``value`` in copy ``copy`` (a uuid stays a uuid)."""
    if _UUID_RE.match(value):
        return str(uuid.uuid5(_NAMESPACE, f"{copy}:{value}"))
    return f"{value}_c{copy}"


def new_session_id(label: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, label))


def _rewrite(value: Any, fields: frozenset[str], known: set[str], copy: int) -> Any:
    """``value`` with every id in ``known`` found under one of ``fields`` replaced (in place)."""
    if type(value) is dict:
        for key, item in value.items():
            if type(item) is str:
                if key in fields and item in known:
                    value[key] = copy_id(item, copy)
            elif type(item) in (dict, list):
                _rewrite(item, fields, known, copy)
    elif type(value) is list:
        for item in value:
            if type(item) in (dict, list):
                _rewrite(item, fields, known, copy)
    return value


def _collect(value: Any, fields: frozenset[str], into: set[str]) -> None:
    if type(value) is dict:
        for key, item in value.items():
            if type(item) is str:
                if key in fields:
                    into.add(item)
            elif type(item) in (dict, list):
                _collect(item, fields, into)
    elif type(value) is list:
        for item in value:
            _collect(item, fields, into)


# -- one large session -------------------------------------------------------------------------


def _claude_known_ids(records: list[dict[str, Any]]) -> set[str]:
    known: set[str] = set()
    for rec in records:
        for key in CLAUDE_LINK_FIELDS:
            if isinstance(rec.get(key), str):
                known.add(rec[key])
        msg = rec.get("message")
        if isinstance(msg, dict):
            if isinstance(msg.get("id"), str):
                known.add(msg["id"])  # parallel tool calls are grouped by message id
            _collect(msg.get("content"), frozenset({"id", "tool_use_id"}), known)
    return known


def claude_copies(fx: Fixture) -> Iterator[bytes]:
    """Copy after copy of a Claude transcript, as one conversation: each copy's ids are made
    unique and its first root record is chained to the previous copy's last record."""
    raw = fx.transcript.read_bytes().splitlines(keepends=True)
    known = _claude_known_ids([orjson.loads(line) for line in raw])
    previous_last: str | None = None
    copy = 0
    while True:
        records = [orjson.loads(line) for line in raw]
        lines = raw
        if copy:
            rooted = False
            for rec in records:
                _rewrite(rec, CLAUDE_ID_FIELDS, known, copy)
                if (
                    not rooted
                    and rec.get("type") in CLAUDE_CHAIN_TYPES
                    and isinstance(rec.get("uuid"), str)
                    and rec.get("parentUuid") is None
                ):
                    rec["parentUuid"] = previous_last
                    rooted = True
            lines = [orjson.dumps(rec) + b"\n" for rec in records]
        for rec in records:
            if rec.get("type") in CLAUDE_CHAIN_TYPES and isinstance(rec.get("uuid"), str):
                previous_last = rec["uuid"]
        yield b"".join(lines)
        copy += 1


COPILOT_ID_FIELDS = frozenset({"id", "parentId", "toolCallId", "messageId", "turnId"})


def _copies(provider: Provider, fx: Fixture) -> Iterator[bytes]:
    if provider is Provider.CODEX:
        return codex_copies(fx)
    if provider is Provider.CLAUDE:
        return claude_copies(fx)
    return copilot_copies(fx)


def copilot_copies(fx: Fixture) -> Iterator[bytes]:
    """The event log's ``session.start`` once, then copy after copy of its other events, as one
    conversation: each copy's event, message and call ids made unique and its first event
    chained to the previous copy's last."""
    raw = fx.transcript.read_bytes().splitlines(keepends=True)
    head = orjson.loads(raw[0])
    if head.get("type") != "session.start":
        raise ValueError(f"{fx.transcript}: the first line is not session.start")
    body = [orjson.loads(line) for line in raw[1:]]
    known: set[str] = set()
    for event in body:
        _collect(event, COPILOT_ID_FIELDS, known)
    yield raw[0]
    last = head["id"]
    copy = 0
    while True:
        events = [_rewrite(orjson.loads(line), COPILOT_ID_FIELDS, known, copy) for line in raw[1:]]
        events[0]["parentId"] = last
        last = events[-1]["id"]
        yield b"".join(orjson.dumps(e) + b"\n" for e in events)
        copy += 1


def codex_copies(fx: Fixture) -> Iterator[bytes]:
    """The rollout's ``session_meta`` line once, then copy after copy of its other lines (each
    copy's call and turn ids made unique, ``ordinal`` kept counting up)."""
    if len(fx.transcripts) != 1:
        raise ValueError(f"{fx.scenario}: a thread of several files cannot be repeated")
    raw = fx.transcript.read_bytes().splitlines(keepends=True)
    head = orjson.loads(raw[0])
    if head.get("type") != "session_meta":
        raise ValueError(f"{fx.transcript}: the first line is not session_meta")
    body = [orjson.loads(line) for line in raw[1:]]
    known: set[str] = set()
    for rec in body:
        payload = rec.get("payload")
        if isinstance(payload, dict):
            _collect(payload, CODEX_ID_FIELDS - {"id"}, known)
            if isinstance(payload.get("id"), str):
                known.add(payload["id"])
    ordinal = 0
    yield raw[0]
    copy = 0
    while True:
        out = []
        for line in raw[1:]:
            rec = orjson.loads(line)
            ordinal += 1
            if "ordinal" in rec:
                rec["ordinal"] = ordinal
            if copy:
                _rewrite(rec.get("payload"), CODEX_ID_FIELDS, known, copy)
            out.append(orjson.dumps(rec) + b"\n")
        yield b"".join(out)
        copy += 1


def write_large_session(
    provider: Provider,
    folder: Path,
    size_mb: float,
    scenario: str = "large",
    relabel: bytes | None = None,
) -> tuple[Path, int]:
    """Write a session of about ``size_mb`` MB made from copies of one fixture (each copy one
    more stretch of the same conversation); returns the path and the number of copies.

    ``relabel``: a byte string of the fixture's outputs (and the commands that printed them)
    that is made distinct in every copy (``b"of output "`` becomes ``b"of output c3-"`` in the
    fourth copy), so each copy's output lines can be told from every other copy's."""
    fx = fixture(provider, scenario)
    target = int(size_mb * MB)
    path = folder / fx.transcript.name
    chunks = _copies(provider, fx)
    written = copies = 0
    with path.open("wb") as f:
        if provider is not Provider.CLAUDE:
            written += f.write(next(chunks))  # session_meta, session.start
        for chunk in chunks:
            if relabel is not None:
                chunk = chunk.replace(relabel, relabel + b"c%d-" % copies)
            written += f.write(chunk)
            copies += 1
            if written >= target:
                break
    return path, copies


# -- many sessions -----------------------------------------------------------------------------


def _replace_ids(data: bytes, ids: dict[str, str]) -> bytes:
    for old, new in ids.items():
        data = data.replace(old.encode(), new.encode())
    return data


def write_claude_session(fx: Fixture, home: Path, index: int) -> Path:
    """Copy a Claude fixture under a new session id (same project folder)."""
    new_id = new_session_id(f"claude-{index}")
    project = home / ".claude" / "projects" / fx.transcript.parent.name
    project.mkdir(parents=True, exist_ok=True)
    path = project / f"{new_id}.jsonl"
    path.write_bytes(_replace_ids(fx.transcript.read_bytes(), {fx.session_id: new_id}))
    return path


def write_codex_session(fx: Fixture, home: Path, index: int) -> list[Path]:
    """Copy every file of a Codex thread under a new thread id (and new generation ids). The
    ids keep their length, so a generation's ``history_base.end_byte_offset`` stays right."""
    new_id = new_session_id(f"codex-{index}")
    ids = {fx.session_id: new_id}
    names: list[tuple[str, str | None]] = []
    for path in fx.transcripts:
        parsed = parse_name(path)
        generation = parsed[1] if parsed else None
        if generation:
            ids[generation] = new_session_id(f"codex-{index}-{generation}")
        names.append((path.name, generation))
    day = home / ".codex" / "sessions" / "2026" / "11" / "29"
    day.mkdir(parents=True, exist_ok=True)
    written = []
    for second, (path, (_name, generation)) in enumerate(zip(fx.transcripts, names, strict=True)):
        suffix = f"_{ids[generation]}" if generation else ""
        target = day / f"rollout-2026-11-29T00-00-{second:02d}-{new_id}{suffix}.jsonl"
        target.write_bytes(_replace_ids(path.read_bytes(), ids))
        written.append(target)
    return written


def write_home(home: Path, per_provider: int) -> dict[str, int]:
    """``per_provider`` Claude and as many Codex sessions under ``home``, cycling through every
    recorded fixture. Returns the number of sessions and files written."""
    claude = fixtures(Provider.CLAUDE)
    codex = fixtures(Provider.CODEX)
    files = 0
    for i in range(per_provider):
        write_claude_session(claude[i % len(claude)], home, i)
        files += 1
    for i in range(per_provider):
        files += len(write_codex_session(codex[i % len(codex)], home, i))
    return {"sessions": 2 * per_provider, "files": files}


# -- one more turn -----------------------------------------------------------------------------


def _claude_leaf(path: Path) -> str | None:
    """The uuid of the last conversation record of a Claude transcript (its leaf, for a linear
    one such as segue writes)."""
    for line in reversed(path.read_bytes().splitlines()):
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if rec.get("type") in CLAUDE_CHAIN_TYPES and isinstance(rec.get("uuid"), str):
            return str(rec["uuid"])
    return None


def claude_rewind_point(path: Path, keep_turns: int) -> str:
    """Where Claude Code's rewind to after turn ``keep_turns`` continues a transcript from: the
    ``parentUuid`` of the next typed prompt on the active chain (measured against 2.1.328: its
    ``--resume-session-at`` and the TUI's rewind append a new branch there, in the same file)."""
    from segue_testbed.claude_cli import read_transcript, rewind_point

    return rewind_point(read_transcript(path), keep_turns)


def append_turn(
    provider: Provider,
    path: Path,
    scenario: str = "chat",
    copy: int = 1,
    *,
    after: str | None = None,
) -> int:
    """Append one more stretch of conversation to the session in ``path``: a copy of a recorded
    fixture's turns (its ids made unique), as if the user had typed it in the CLI. For Claude,
    ``after`` chains it below that record instead of the leaf: a rewind, as Claude Code writes
    one (see :func:`claude_rewind_point`). Returns the number of bytes appended."""
    fx = fixture(provider, scenario)
    chunks = _copies(provider, fx)
    if provider is not Provider.CLAUDE:
        next(chunks)  # its session_meta or session.start: the session already has one
    for _ in range(copy):
        next(chunks)
    data = next(chunks)
    if provider is Provider.CLAUDE:
        leaf = after or _claude_leaf(path)
        sid = path.stem
        lines = []
        rooted = False
        for line in data.splitlines(keepends=True):
            rec = orjson.loads(line)
            if "sessionId" in rec:
                rec["sessionId"] = sid
            if (
                not rooted
                and rec.get("type") in CLAUDE_CHAIN_TYPES
                and isinstance(rec.get("uuid"), str)
            ):
                rec["parentUuid"] = leaf
                rooted = True
            lines.append(orjson.dumps(rec) + b"\n")
        data = b"".join(lines)
    with path.open("ab") as f:
        return f.write(data)


def add_to_first_prompt(transcript: Path, text: str) -> None:
    """``text`` appended to the first prompt typed in a recorded Claude transcript (its first
    user record whose content is a string), as if the user had pasted it there."""
    lines = transcript.read_bytes().splitlines()
    for n, line in enumerate(lines):
        record = orjson.loads(line)
        if record.get("type") == "user" and isinstance(record["message"]["content"], str):
            record["message"]["content"] += text
            lines[n] = orjson.dumps(record)
            break
    else:
        raise ValueError(f"{transcript}: no typed prompt")
    transcript.write_bytes(b"\n".join(lines) + b"\n")
