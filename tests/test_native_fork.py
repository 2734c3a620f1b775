"""A native fork with a delta, resumed by the real CLI: the parent's records reach the model
byte for byte (Codex's encrypted reasoning and compaction, Claude's thinking signatures), then
the delta's runs in order, then the new prompt; the parent file is never touched."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.formats.atomic import NativeSession
from segue.model.conversation import (
    AssistantMessage,
    Item,
    Provider,
    ToolCall,
    ToolResult,
    UserMessage,
)
from segue.providers import entry
from segue.providers.sessions import read_session
from segue.transforms.turns import group_turns
from segue_testbed.fixtures import Fixture, all_fixtures
from segue_testbed.standin.server import StandIn

PROMPT = "Reply with the word MARKER and nothing else."
BY_NAME = {f.name: f for f in all_fixtures()}


def _published(session: NativeSession) -> bytes:
    """What a published fork holds: its new head, the parent's copied range with the session
    ids replaced, then the lines segue wrote."""
    copied = b""
    if session.copied is not None:
        part = session.copied
        copied = part.path.read_bytes()[part.start : part.end]
        if part.old is not None and part.new is not None:
            copied = copied.replace(part.old, part.new)
    return b"".join(session.head) + copied + b"".join(session.lines)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _delta(name: str, turns: int = 1) -> list[Item]:
    """The first runs of another provider's recorded session: what the target missed."""
    conversation = read_session(BY_NAME[name].transcript)
    chosen = [t for t in group_turns(conversation.items) if t.prompt is not None][:turns]
    return [item for turn in chosen for item in turn.all_items]


def _home_copy(fixture: Fixture, home: Path) -> Path:
    shutil.copytree(fixture.home, home, dirs_exist_ok=True)
    return home / fixture.transcript.relative_to(fixture.home)


def _strip(item: Any) -> Any:
    if isinstance(item, dict):
        return {k: v for k, v in item.items() if k != "internal_chat_message_metadata_passthrough"}
    return item


@pytest.mark.realcli
@pytest.mark.parametrize("scenario", ["reasoning", "compact_remote", "rollback"])
@pytest.mark.parametrize("handoff", [None, "Runs 2-3 happened in Claude Code."])
def test_codex_resumes_a_fork_with_the_parent_verbatim_then_the_delta(
    scenario: str, handoff: str | None, standin: StandIn, tmp_path: Path
) -> None:
    from segue_testbed.codex_cli import CodexHome
    from segue_testbed.standin.openai import Text, request_kind

    fixture = BY_NAME[f"codex-{scenario}"]
    lane = standin.lane()
    lane.script("openai", Text("MARKER"))
    codex = CodexHome(tmp_path, lane, provider=fixture.spec.get("model_provider", "standin"))
    parent = _home_copy(fixture, codex.home)
    codex_entry = entry(Provider.CODEX)
    current = codex_entry.current_file(parent, codex.env())
    before = {p: _sha(p) for p in current.parent.glob("*.jsonl")}
    delta = _delta("claude-tool_cycle")
    env = codex.env()
    session = codex_entry.fork(
        parent, delta, handoff, cwd=fixture.spec["cwd"], env=env, now=datetime.now(UTC)
    )
    codex_entry.publish(session, env)
    assert {p: _sha(p) for p in before} == before  # no parent file changed

    ran = codex.exec(PROMPT, cwd=Path(fixture.spec["cwd"]), resume=session.session_id)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "MARKER" in ran.stdout
    assert {p: _sha(p) for p in before} == before
    (request,) = [r.body for r in lane.requests_for("openai") if request_kind(r) == "turn"]
    sent = [_strip(i) for i in request["input"]]

    # the parent's effective items, byte for byte and first (encrypted blobs included)
    baseline = _native_resume_baseline(fixture, standin, tmp_path / "baseline")
    on_disk = b"".join(p.read_bytes() for p in before)
    assert _ids_of_file(sent[: len(baseline)], on_disk) == _ids_of_file(baseline, on_disk)
    blobs = [
        i["encrypted_content"] for i in baseline if isinstance(i, dict) and "encrypted_content" in i
    ]
    assert blobs or scenario == "rollback", [(i.get("type"), sorted(i)) for i in baseline]
    # then the delta in order, then the prompt
    rest = sent[len(baseline) :]
    kinds = [(i.get("type"), i.get("role")) for i in rest]
    want = _codex_delta_shape(codex_entry.select(delta), handoff)
    assert kinds[: len(want)] == want  # the delta, right after the parent's items
    assert PROMPT in orjson.dumps(rest[-1]).decode()  # the new prompt last
    texts = orjson.dumps(rest).decode()
    prompt_text = next(i.text for i in delta if isinstance(i, UserMessage))
    assert texts.index(prompt_text) < texts.rindex(PROMPT)
    if handoff is not None:
        assert texts.index(handoff) < texts.index(prompt_text)
    # and Codex goes on in the fork's own file
    assert codex_entry.current_file(session.path, env) == session.path
    assert session.path.read_bytes().startswith(_published(session))


def _ids_of_file(items: list[Any], on_disk: bytes) -> list[Any]:
    """Items with the ids Codex makes up per request (its base instructions) blanked; every
    item of the parent file keeps its id."""
    out = []
    for item in items:
        known = isinstance(item.get("id"), str) and item["id"].encode() in on_disk
        out.append(item if known or "id" not in item else {**item, "id": "<per request>"})
    return out


def _codex_delta_shape(delta: Sequence[Item], handoff: str | None) -> list[tuple[str, str | None]]:
    shape: list[tuple[str, str | None]] = [("message", "developer")] if handoff else []
    for item in delta:
        if isinstance(item, UserMessage):
            shape.append(("message", "user"))
        elif isinstance(item, AssistantMessage):
            shape.append(("message", "assistant"))
        elif isinstance(item, ToolCall):
            shape.append(("function_call", None))
        elif isinstance(item, ToolResult):
            shape.append(("function_call_output", None))
    return shape


def _native_resume_baseline(fixture: Fixture, standin: StandIn, root: Path) -> list[Any]:
    """What the parent's own ``codex exec resume`` sends as its history: the items up to its
    last model output (a fork must send exactly these first)."""
    from segue_testbed.codex_cli import CodexHome
    from segue_testbed.standin.openai import Text, request_kind

    lane = standin.lane()
    lane.script("openai", Text("MARKER"))
    codex = CodexHome(root, lane, provider=fixture.spec.get("model_provider", "standin"))
    _home_copy(fixture, codex.home)
    ran = codex.exec(PROMPT, cwd=Path(fixture.spec["cwd"]), resume=fixture.spec["session_id"])
    assert ran.returncode == 0, ran.stderr[-2000:]
    (request,) = [r.body for r in lane.requests_for("openai") if request_kind(r) == "turn"]
    sent = [_strip(i) for i in request["input"]]
    outputs = [
        n
        for n, item in enumerate(sent)
        if item.get("role") == "assistant"
        or item.get("type") in ("reasoning", "compaction", "function_call_output")
    ]
    return sent[: outputs[-1] + 1]


def _no_cache(value: Any) -> Any:
    """A request value without Claude's cache markers (they move to the newest messages)."""
    if isinstance(value, dict):
        return {k: _no_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_no_cache(v) for v in value]
    return value


def _claude_history(fixture: Fixture, standin: StandIn, root: Path, resume: str | None) -> Any:
    from segue_testbed.claude_cli import ClaudeHome
    from segue_testbed.standin.anthropic import Text

    lane = standin.lane()
    lane.script("anthropic", Text("MARKER"))
    claude = ClaudeHome(root, lane)
    _home_copy(fixture, claude.home)
    ran = claude.run(
        PROMPT, cwd=Path(fixture.spec["cwd"]), resume=resume or fixture.spec["session_id"]
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    return claude, [_no_cache(m) for m in claude.model_requests()[0].body["messages"]]


@pytest.mark.realcli
@pytest.mark.parametrize("handoff", [None, "Runs 3-4 happened in Codex."])
def test_claude_resumes_a_fork_with_the_parent_verbatim_then_the_delta(
    handoff: str | None, standin: StandIn, tmp_path: Path
) -> None:
    from segue_testbed.claude_cli import ClaudeHome
    from segue_testbed.standin.anthropic import Text

    fixture = BY_NAME["claude-thinking"]
    _, native = _claude_history(fixture, standin, tmp_path / "baseline", None)
    last_answer = max(n for n, m in enumerate(native) if m["role"] == "assistant")
    parent_part = native[: last_answer + 1]

    lane = standin.lane()
    lane.script("anthropic", Text("MARKER"))
    claude = ClaudeHome(tmp_path / "fork", lane)
    parent = _home_copy(fixture, claude.home)
    before = _sha(parent)
    claude_entry = entry(Provider.CLAUDE)
    delta = _delta("codex-tool_cycle")
    env = claude.env()
    session = claude_entry.fork(
        parent, delta, handoff, cwd=fixture.spec["cwd"], env=env, now=datetime.now(UTC)
    )
    claude_entry.publish(session, env)
    assert session.path.parent == parent.parent and _sha(parent) == before

    ran = claude.run(PROMPT, cwd=Path(fixture.spec["cwd"]), resume=session.session_id)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "MARKER" in ran.stdout
    assert _sha(parent) == before
    sent = [_no_cache(m) for m in claude.model_requests()[0].body["messages"]]
    # the parent's messages as its own resume sends them, thinking signatures included
    assert sent[: len(parent_part)] == parent_part
    signatures = [
        b["signature"]
        for m in parent_part
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "thinking"
    ]
    assert len(signatures) == len(fixture.spec["thinking"])
    assert all(s.encode() in parent.read_bytes() for s in signatures)
    # then the delta in order (handoff, prompt, tool use, result, answer), then the new prompt
    rest = orjson.dumps(sent[len(parent_part) :]).decode()
    carried = claude_entry.select(delta)
    marks = [handoff] if handoff else []
    for item in carried:
        if isinstance(item, UserMessage | AssistantMessage):
            marks.append(item.text)
        elif isinstance(item, ToolCall | ToolResult):
            marks.append(item.call_id)
    positions = [rest.index(orjson.dumps(m).decode()[1:-1]) for m in marks]
    assert positions == sorted(positions)
    assert positions[-1] < rest.rindex(PROMPT)
    # and Claude goes on in the fork's own file
    assert session.path.read_bytes().startswith(_published(session))
    assert len(session.path.read_bytes()) > session.size
