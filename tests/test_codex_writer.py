"""The Codex writer: neutral items become a rollout the real ``codex exec resume`` loads.

Every recorded fixture (Claude and Codex) is read, cut to its portable history, written into a
scratch ``CODEX_HOME`` and resumed by the pinned Codex with a marker prompt. The request Codex
sent to the stand-in must carry the history: prompts and replies in order, tool calls as native
calls with their outputs, a portable summary as developer text, and nothing that must not cross.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.formats.codex.writer import prepare_session, project, select, uuid7
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
from segue.transforms.effective import portable_history
from segue_testbed.codex_cli import CodexHome, CodexNotInstalled, codex_bin, read_rollout
from segue_testbed.fixtures import Fixture, all_fixtures
from segue_testbed.oracle import atoms_from_codex_request, atoms_from_history
from segue_testbed.standin.openai import Text, request_kind
from segue_testbed.standin.server import StandIn


def write_session(
    items: list[Item],
    *,
    cwd: str,
    codex_home: Path,
    session_id: str | None = None,
    now: datetime | None = None,
) -> Path:
    """Prepare and publish, as a switch does (publishing also asks Codex to rescan)."""
    session = prepare_session(items, cwd=cwd, codex_home=codex_home, session_id=session_id, now=now)
    entry(Provider.CODEX).publish(session, {"CODEX_HOME": str(codex_home)})
    return session.path


MARKER = "Reply with the word MARKER and nothing else."
REPLY = "MARKER-FROM-STANDIN"
FIXTURES = all_fixtures()
NOW = datetime(2026, 11, 30, 8, 15, 42, 123000, tzinfo=UTC)
P = Provenance("source.jsonl", 1)


def _require_codex() -> None:
    try:
        codex_bin()
    except CodexNotInstalled as exc:
        pytest.skip(str(exc))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _text(item: dict[str, Any]) -> str:
    parts = item.get("content") or []
    return "\n".join(p.get("text", "") for p in parts if isinstance(p, dict))


def _resume_request(codex: CodexHome, cwd: Path, resume: str) -> tuple[dict[str, Any], str]:
    """Resume with the marker prompt; the first turn request Codex sent, and its stdout."""
    ran = codex.exec(MARKER, cwd=cwd, resume=resume, timeout=30)
    assert ran.returncode == 0, ran.stderr[-2000:]
    turns = [r.body for r in codex.lane.requests_for("openai") if request_kind(r) == "turn"]
    assert turns, "Codex sent no turn request"
    return turns[-1], ran.stdout


# --------------------------------------------------------------------------- pure projection


def _sample() -> list[Item]:
    return [
        UserMessage("<environment_context>x</environment_context>", P, origin=Origin.INJECTED),
        UserMessage("/compact", P, origin=Origin.COMMAND),
        Compaction("An earlier summary.", CompactionState.PORTABLE, P),
        Compaction("", CompactionState.NATIVE_ONLY, P),
        UserMessage("List the files.", P, timestamp="2026-11-29T20:51:39.495Z"),
        Reasoning("thinking", P, private="sig"),
        ToolCall("t1", "Bash", {"command": "ls", "description": "List"}, ToolKind.SHELL, P),
        ToolResult("t1", "a.txt", P, exit_code=2, error=True),
        ToolCall("t2", "Read", "raw", ToolKind.READ, P),
        ToolResult("orphan", "lost", P),
        ErrorNotice(ErrorKind.RATE_LIMIT, "API Error: 429", P),
        AssistantMessage("Done.", P),
    ]


def test_project_follows_the_recipe() -> None:
    records: list[dict[str, Any]] = [
        dict(r)
        for r in project(_sample(), session_id="sid", cwd="/p", now=NOW, cli_version="0.169.0")
    ]
    meta = records[0]
    assert meta["type"] == "session_meta"
    assert meta["payload"] == {
        "id": "sid",
        "timestamp": "2026-11-30T08:15:42.123Z",
        "cwd": "/p",
        "originator": "segue",
        "cli_version": "0.169.0",
        "source": "cli",
    }
    assert all(isinstance(r["timestamp"], str) and r["timestamp"].endswith("Z") for r in records)
    kinds = [(r["type"], r["payload"].get("type"), r["payload"].get("role")) for r in records]
    assert kinds[1:] == [
        ("response_item", "message", "developer"),
        ("event_msg", "task_started", None),
        ("response_item", "message", "user"),
        ("event_msg", "user_message", None),
        ("response_item", "function_call", None),
        ("response_item", "function_call_output", None),
        ("response_item", "message", "assistant"),
        ("event_msg", "agent_message", None),
        ("event_msg", "token_count", None),
        ("event_msg", "task_complete", None),
    ]
    call, output = records[5]["payload"], records[6]["payload"]
    assert call["name"] == "exec_command"
    assert orjson.loads(call["arguments"]) == {"cmd": "ls"}
    assert output == {
        "type": "function_call_output",
        "call_id": "t1",
        "output": "Exit code: 2\na.txt",
    }
    assert records[-1]["payload"]["last_agent_message"] == "Done."
    info = records[-2]["payload"]["info"]
    assert info["last_token_usage"]["total_tokens"] > 0
    assert info["total_token_usage"]["total_tokens"] == info["last_token_usage"]["total_tokens"]
    blob = orjson.dumps(records)
    assert b"API Error" not in blob and b"sig" not in blob and b"environment_context" not in blob


def test_select_drops_both_halves_of_unpaired_tools() -> None:
    kept = select(_sample())
    assert [i.call_id for i in kept if isinstance(i, ToolCall | ToolResult)] == ["t1", "t1"]


def test_non_object_input_is_wrapped() -> None:
    items: list[Item] = [
        UserMessage("go", P),
        ToolCall("c", "apply_patch", "*** Begin Patch", ToolKind.PATCH, P),
        ToolResult("c", "ok", P),
    ]
    records: list[dict[str, Any]] = [
        dict(r) for r in project(items, session_id="s", cwd="/p", now=NOW, cli_version="v")
    ]
    calls = [r["payload"] for r in records if r["payload"].get("type") == "function_call"]
    assert calls[0]["name"] == "apply_patch"
    assert orjson.loads(calls[0]["arguments"]) == {"input": "*** Begin Patch"}


def test_uuid7_shape() -> None:
    value = uuid.UUID(uuid7(NOW))
    assert value.version == 7
    assert value.variant == uuid.RFC_4122
    assert value.int >> 80 == int(NOW.timestamp() * 1000)


def test_write_session_file(tmp_path: Path) -> None:
    path = write_session(
        _sample(),
        cwd="/p",
        codex_home=tmp_path,
        session_id="0" * 8 + "-0000-7000-8000-" + "0" * 12,
        now=NOW,
    )
    assert path.parent == tmp_path / "sessions" / "2026" / "11" / "30"
    assert path.name == "rollout-2026-11-30T08-15-42-00000000-0000-7000-8000-000000000000.jsonl"
    assert path.stat().st_mode & 0o777 == 0o600
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and b"\n\n" not in raw and b": " not in raw.split(b"\n")[0]
    assert read_rollout(path)[0]["payload"]["id"] == "00000000-0000-7000-8000-000000000000"


def test_writing_the_same_id_twice_is_refused(tmp_path: Path) -> None:
    sid = uuid7(NOW)
    write_session(_sample(), cwd="/p", codex_home=tmp_path, session_id=sid, now=NOW)
    with pytest.raises(TargetExists):
        write_session(_sample(), cwd="/p", codex_home=tmp_path, session_id=sid, now=NOW)


# --------------------------------------------------------------------------- real Codex


def _assert_tools(items: list[Item], body: dict[str, Any]) -> None:
    inputs = body["input"]
    calls = {i["call_id"]: i for i in inputs if i.get("type") == "function_call"}
    outputs = {i["call_id"]: i for i in inputs if i.get("type") == "function_call_output"}
    for item in select(items):
        if isinstance(item, ToolCall):
            assert item.call_id in calls, item.call_id
            if item.name == "Bash":
                sent = calls[item.call_id]
                assert sent["name"] == "exec_command"
                assert orjson.loads(sent["arguments"])["cmd"] == item.input["command"]
        elif isinstance(item, ToolResult):
            out = outputs[item.call_id]["output"]
            assert isinstance(out, str) and item.output[:100] in out


def _assert_nothing_forbidden(conv_items: list[Item], body: dict[str, Any]) -> None:
    inputs = body["input"]
    assert b"encrypted_content" not in orjson.dumps(inputs)
    assert not [i for i in inputs if i.get("type") in ("reasoning", "compaction")]
    replies = [_text(i) for i in inputs if i.get("role") == "assistant"]
    for item in conv_items:
        if isinstance(item, ErrorNotice):
            assert not any(item.message in reply for reply in replies)


@pytest.mark.realcli
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_codex_resumes_what_segue_wrote(fixture: Fixture, standin: StandIn, tmp_path: Path) -> None:
    _require_codex()
    before = _sha(fixture.transcript)
    conv = read_session(fixture.transcript)
    items = portable_history(conv)[0]
    lane = standin.lane()
    lane.script("openai", Text(REPLY))
    codex = CodexHome(tmp_path, lane)
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    path = write_session(items, cwd=str(cwd), codex_home=codex.codex_home)
    assert path.stat().st_mode & 0o777 == 0o600
    sid = read_rollout(path)[0]["payload"]["id"]

    body, stdout = _resume_request(codex, cwd, sid)

    sent = atoms_from_codex_request(body, MARKER)
    ours = atoms_from_history(items)
    paired = atoms_from_history(select(items))
    assert sent.prompts == ours.prompts
    assert sent.replies == ours.replies
    assert sent.calls == paired.calls
    assert sent.results == paired.results
    _assert_tools(items, body)
    developer = [_text(i) for i in body["input"] if i.get("role") == "developer"]
    for item in items:
        if isinstance(item, Compaction):
            assert any(item.summary in text for text in developer)
    _assert_nothing_forbidden(list(conv.items), body)
    assert REPLY in stdout
    assert _sha(fixture.transcript) == before


@pytest.mark.realcli
def test_resume_last_finds_a_session_written_into_a_used_home(
    standin: StandIn, tmp_path: Path
) -> None:
    _require_codex()
    lane = standin.lane()
    lane.script("openai", Text("first run"), Text(REPLY))
    codex = CodexHome(tmp_path, lane)
    project_dir = tmp_path / "project"
    # a session Codex indexed in the same cwd: without a rescan, --last would pick it (a cwd
    # with no indexed session makes Codex fall back to scanning the files, which proves nothing)
    ran = codex.exec("Warm up this home.", cwd=project_dir, timeout=30)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert (codex.codex_home / "state_5.sqlite").is_file()
    items: list[Item] = [
        UserMessage("The secret word is pomegranate.", P),
        AssistantMessage("Noted: pomegranate.", P),
    ]
    write_session(items, cwd=str(project_dir), codex_home=codex.codex_home)

    body, stdout = _resume_request(codex, project_dir, "--last")

    sent = atoms_from_codex_request(body, MARKER)
    assert sent.prompts == ["The secret word is pomegranate."]
    assert sent.replies == ["Noted: pomegranate."]
    assert REPLY in stdout
