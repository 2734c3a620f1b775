"""The Claude writer: neutral items -> a transcript the real ``claude -p --resume`` loads.

Every recorded fixture (Claude's and Codex's) is read, cut to its portable history, written as a
new Claude session in a scratch home, and resumed by the pinned CLI against the stand-in. The
first request Claude sends must carry the history: prompts and replies in order, shell calls as
native Bash pairs, the compaction summary first, and nothing that must not cross.
"""

from __future__ import annotations

import hashlib
import itertools
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.formats.claude.writer import prepare_session, project, select, tool_use
from segue.model.conversation import (
    AssistantMessage,
    Compaction,
    CompactionState,
    ErrorKind,
    ErrorNotice,
    Item,
    Origin,
    Provenance,
    Provider,
    Reasoning,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)
from segue.model.errors import TargetExists
from segue.providers import entry
from segue.providers.sessions import read_session
from segue.transforms.carry import shell_command
from segue.transforms.effective import portable_history
from segue_testbed.claude_cli import ClaudeHome
from segue_testbed.fixtures import Fixture, all_fixtures
from segue_testbed.oracle import atoms_from_claude_request, atoms_from_history
from segue_testbed.standin.anthropic import Text
from segue_testbed.standin.server import StandIn


def write_session(
    items: list[Item],
    *,
    cwd: str,
    env: dict[str, str],
    session_id: str | None = None,
    now: datetime | None = None,
) -> Path:
    """Prepare and publish, as a switch does."""
    session = prepare_session(items, cwd=cwd, env=env, session_id=session_id, now=now)
    entry(Provider.CLAUDE).publish(session, env)
    return session.path


MARKER = "Reply with the word MARKER and nothing else."
FIXTURES = all_fixtures()
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
P = Provenance("src.jsonl", 1)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def _first_user_text(body: dict[str, Any]) -> str:
    first = next(m for m in body["messages"] if m.get("role") == "user")
    return "\n".join(b.get("text", "") for b in _blocks(first) if b.get("type") == "text")


def _resume(fixture: Fixture, standin: StandIn, tmp_path: Path) -> tuple[Any, dict[str, Any]]:
    """Write the fixture's portable history as a Claude session and resume it once."""
    lane = standin.lane()
    lane.script("anthropic", Text("MARKER"))
    claude = ClaudeHome(tmp_path, lane)
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    history = portable_history(read_session(fixture.transcript))[0]
    path = write_session(history, cwd=str(cwd), env={"CLAUDE_CONFIG_DIR": str(claude.config_dir)})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    run = claude.run(MARKER, cwd=cwd, resume=path.stem)
    requests = claude.model_requests()
    assert run.returncode == 0, run.stderr[-2000:]
    assert "MARKER" in run.stdout
    assert requests, "Claude sent no model request"
    return history, requests[0].body


def _check_shell_pairs(history: list[Item], body: dict[str, Any]) -> None:
    crossing = select(history)
    calls = {c.call_id: c for c in crossing if isinstance(c, ToolCall)}
    shell = [c for c in calls.values() if shell_command(c) is not None or c.name == "Bash"]
    uses = {
        b["id"]: b
        for m in body["messages"]
        if m.get("role") == "assistant"
        for b in _blocks(m)
        if b.get("type") == "tool_use"
    }
    results = {
        b["tool_use_id"]: b
        for m in body["messages"]
        if m.get("role") == "user"
        for b in _blocks(m)
        if b.get("type") == "tool_result"
    }
    for call in shell:
        assert call.call_id in uses, f"{call.call_id} not sent as tool_use"
        assert uses[call.call_id]["name"] == "Bash"
        assert isinstance(uses[call.call_id]["input"]["command"], str)
        assert call.call_id in results, f"{call.call_id} has no tool_result"
    for result in (r for r in crossing if isinstance(r, ToolResult) and r.call_id in uses):
        sent = results[result.call_id]
        content = sent["content"]
        text = content if isinstance(content, str) else orjson.dumps(content).decode()
        assert result.output[:80] in text or not result.output


def _check_nothing_leaked(fixture: Fixture, body: dict[str, Any]) -> None:
    conversation = read_session(fixture.transcript)
    messages = orjson.dumps(body["messages"]).decode()
    assert "encrypted_content" not in messages
    assert '"signature"' not in messages
    for message in body["messages"]:
        for block in _blocks(message):
            assert block.get("type") not in ("thinking", "redacted_thinking")
    for reasoning in conversation.of(Reasoning):
        if reasoning.private:
            assert reasoning.private not in messages
    errors = [e.message for e in conversation.of(ErrorNotice)]
    for message in body["messages"]:
        if message.get("role") != "assistant":
            continue
        for block in _blocks(message):
            text = block.get("text", "")
            assert not any(err and err in text for err in errors), text
            assert not text.startswith("API Error")


def _expected(history: list[Item]) -> tuple[list[str], list[str], str | None]:
    """Prompts, replies and summary the request should carry, from the history itself."""
    atoms = atoms_from_history([i for i in history if not isinstance(i, Compaction)])
    summaries = [
        c.summary
        for c in history
        if isinstance(c, Compaction) and c.state is CompactionState.PORTABLE and c.summary
    ]
    return atoms.prompts, atoms.replies, summaries[-1] if summaries else None


@pytest.mark.realcli
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_written_session_resumes_in_claude(
    fixture: Fixture, standin: StandIn, tmp_path: Path
) -> None:
    before = _sha(fixture.transcript)
    history, body = _resume(fixture, standin, tmp_path)
    assert _sha(fixture.transcript) == before

    prompts, replies, summary = _expected(history)
    sent = atoms_from_claude_request(body, MARKER)
    sent_prompts = [p for p in sent.prompts if summary is None or p != summary.strip()]
    assert sent_prompts == prompts
    narrated = tuple(
        f"[{c.name}" for c in history if isinstance(c, ToolCall) and tool_use(c, "x") is None
    )
    assert [r for r in sent.replies if not r.startswith(narrated)] == replies
    assert sum(r.startswith(narrated) for r in sent.replies) >= len(narrated)  # each one told
    if summary is not None:
        assert summary.strip() in _first_user_text(body)
    _check_shell_pairs(history, body)
    _check_nothing_leaked(fixture, body)


# --------------------------------------------------------------------------- offline checks


def test_writing_the_same_id_twice_is_refused(tmp_path: Path) -> None:
    items: list[Item] = [UserMessage("hi", P), AssistantMessage("hello", P)]
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    cwd = tmp_path / "proj"
    cwd.mkdir()
    sid = "0b6c4c1e-1d43-4c38-9f5e-3f1b2a4d5e6f"
    path = write_session(items, cwd=str(cwd), env=env, session_id=sid, now=NOW)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first = path.read_bytes()
    with pytest.raises(TargetExists):
        write_session(items, cwd=str(cwd), env=env, session_id=sid, now=NOW)
    assert path.read_bytes() == first
    records = [orjson.loads(line) for line in first.splitlines()]
    assert records[-1] == {
        "type": "last-prompt",
        "lastPrompt": "hi",
        "leafUuid": records[-2]["uuid"],
        "sessionId": sid,
    }


def _project(items: list[Item]) -> list[dict[str, Any]]:
    return [dict(r) for r in project(items, session_id="s", cwd="/w", now=NOW, version="2.1.328")]


def test_chain_timestamps_and_fields() -> None:
    items: list[Item] = [
        UserMessage("one", P, timestamp="2026-01-01T00:00:00.000Z"),
        AssistantMessage("two", P, model="gpt-5.5", timestamp="2025-01-01T00:00:00Z"),
        UserMessage("three", P, timestamp="not a time"),
        AssistantMessage("four", P),
    ]
    records = _project(items)
    assert [r["type"] for r in records] == ["user", "assistant", "user", "assistant"]
    assert records[0]["parentUuid"] is None
    for prev, rec in itertools.pairwise(records):
        assert rec["parentUuid"] == prev["uuid"]
        assert rec["timestamp"] > prev["timestamp"]
        assert rec["timestamp"].endswith("Z") and len(rec["timestamp"]) == 24
    assert records[0]["timestamp"] == "2026-01-01T00:00:00.000Z"
    assert records[0]["message"] == {"role": "user", "content": "one"}
    message = records[1]["message"]
    assert message["model"] == "<synthetic>" and "usage" not in message
    assert message["stop_reason"] == "end_turn"
    assert len({r["uuid"] for r in records}) == 4
    assert all(r["isSidechain"] is False and r["entrypoint"] == "cli" for r in records)


def test_what_must_not_cross_is_dropped() -> None:
    items: list[Item] = [
        UserMessage("<environment_context>x</environment_context>", P, Origin.INJECTED),
        UserMessage("/compact", P, Origin.COMMAND),
        UserMessage("ask", P),
        Reasoning("thought", P, private="c2ln"),
        AssistantMessage("answer", P),
        ToolCall("call_lonely", "exec_command", {"cmd": "ls"}, ToolKind.SHELL, P),  # no result
        ToolResult("call_orphan", "orphan", P),
        ToolCall("call_split", "exec_command", {"cmd": "pwd"}, ToolKind.SHELL, P),
        UserMessage("next", P),  # splits c2 from its result
        ToolResult("call_split", "/w", P),
        ErrorNotice(ErrorKind.RATE_LIMIT, "API Error: over the limit", P),
        Compaction("", CompactionState.NATIVE_ONLY, P),
    ]
    dumped = orjson.dumps(_project(items)).decode()
    for absent in ("environment_context", "/compact", "thought", "c2ln", "call_", "API Error"):
        assert absent not in dumped
    assert "thinking" not in dumped and "tool_use" not in dumped


def test_shell_calls_become_bash_and_others_are_narrated() -> None:
    items: list[Item] = [
        UserMessage("go", P),
        ToolCall(
            "call_1", "shell", {"command": ["ls", "-a b"], "workdir": "/t"}, ToolKind.SHELL, P
        ),
        ToolCall("call 2", "exec_command", {"cmd": "false"}, ToolKind.SHELL, P),
        ToolCall("call_3", "apply_patch", "*** Begin Patch", ToolKind.PATCH, P),
        ToolResult("call_1", "x", P, exit_code=0),
        ToolResult("call_3", "Done", P),
        ToolResult("call 2", "", P, exit_code=1),
        AssistantMessage("done", P),
    ]
    records = _project(items)
    assert [r["type"] for r in records] == ["user", "assistant", "user", "assistant"]
    uses = records[1]["message"]["content"]
    assert uses[0]["name"] == "Bash"
    assert uses[0]["input"]["command"] == "cd /t && ls '-a b'"
    assert uses[0]["input"]["description"]
    assert uses[1]["id"].startswith("toolu_segue_") and uses[1]["input"]["command"] == "false"
    assert uses[2] == {"type": "text", "text": "[apply_patch] *** Begin Patch"}
    assert records[1]["message"]["stop_reason"] == "tool_use"
    results = records[2]["message"]["content"]
    assert [r["tool_use_id"] for r in results] == ["call_1", uses[1]["id"]]
    assert [r["is_error"] for r in results] == [False, True]
    assert all(isinstance(r["content"], str) for r in results)
    tail = records[3]["message"]["content"]
    assert tail == [
        {"type": "text", "text": "[apply_patch result] Done"},
        {"type": "text", "text": "done"},
    ]


def test_portable_compaction_becomes_boundary_and_summary() -> None:
    items: list[Item] = [
        UserMessage("old", P),
        AssistantMessage("old answer", P),
        Compaction("the summary", CompactionState.PORTABLE, P),
        UserMessage("the summary", P, Origin.INJECTED),  # Codex's own copy of it
        UserMessage("kept", P),
        UserMessage("new", P),
    ]
    records = _project(items)
    boundary, carrier = records[2], records[3]
    assert boundary["type"] == "system" and boundary["subtype"] == "compact_boundary"
    assert boundary["parentUuid"] is None
    assert boundary["logicalParentUuid"] == records[1]["uuid"]
    assert carrier["isCompactSummary"] is True and carrier["isVisibleInTranscriptOnly"] is True
    assert carrier["parentUuid"] == boundary["uuid"]
    assert carrier["message"] == {"role": "user", "content": "the summary"}
    assert [r["message"]["content"] for r in records[4:]] == ["kept", "new"]
    assert records[4]["parentUuid"] == carrier["uuid"]


def test_a_summary_and_the_index_of_dropped_turns_share_one_boundary() -> None:
    """Claude resumes from its last compact boundary: two in a row would hide the first."""
    items: list[Item] = [
        Compaction("the source's summary", CompactionState.PORTABLE, P),
        Compaction("[12 earlier turns dropped]", CompactionState.PORTABLE, P, trigger="segue"),
        UserMessage("kept", P),
        AssistantMessage("ok", P),
    ]
    records = _project(items)
    boundaries = [r for r in records if r.get("subtype") == "compact_boundary"]
    assert len(boundaries) == 1
    carrier = next(r for r in records if r.get("isCompactSummary"))
    assert carrier["message"]["content"] == "the source's summary\n\n[12 earlier turns dropped]"
    assert [r["message"]["content"] for r in records[2:3]] == ["kept"]
