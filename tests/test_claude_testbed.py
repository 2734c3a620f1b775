"""The Claude Code half of the test bed: the stand-in, the driver and the committed fixtures.

Tests marked ``realcli`` run the pinned Claude Code CLI (``testbed/node_modules``); they re-record
a scenario into ``tmp_path`` and check that the committed fixture still has the same structure.
"""

from __future__ import annotations

import http.client
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue_testbed import record_claude
from segue_testbed.claude_cli import ClaudeCliMissing, claude_bin, encode_project_dir
from segue_testbed.standin.anthropic import (
    RateLimited,
    Reply,
    Stall,
    Summary,
    Text,
    Thinking,
    ToolUse,
    side_request_kind,
)
from segue_testbed.standin.server import LoggedRequest, StandIn

FIXTURES = Path(__file__).parent / "fixtures" / "claude"
SCENARIOS = sorted(record_claude.SPECS)


@pytest.fixture
def cli() -> Path:
    try:
        return claude_bin()
    except ClaudeCliMissing as exc:
        pytest.skip(str(exc))


def load_scenario(directory: Path) -> dict[str, Any]:
    scenario: dict[str, Any] = orjson.loads((directory / "scenario.json").read_bytes())
    return scenario


def load_requests(directory: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in (directory / "requests.jsonl").read_bytes().splitlines()]


def model_requests(directory: Path) -> list[dict[str, Any]]:
    return [r for r in load_requests(directory) if r["method"] == "POST"]


def message_texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        str(block.get("text", "")) for block in content or [] if isinstance(block, dict)
    )


# --------------------------------------------------------------------------- committed fixtures


@pytest.mark.parametrize("name", SCENARIOS)
def test_committed_fixture_is_complete(name: str) -> None:
    directory = FIXTURES / name
    scenario = load_scenario(directory)
    assert scenario["scenario"] == name
    assert scenario["provider"] == "claude"
    assert scenario["cli_version"] == "2.1.328"
    transcript = directory / scenario["transcript"]
    assert transcript.stem == scenario["session_id"]
    assert transcript.parent.name == encode_project_dir(Path(scenario["cwd"]))
    # home/ holds only session files: transcripts and their session folders.
    for path in (directory / "home").rglob("*"):
        if path.is_file():
            rel = path.relative_to(directory / "home" / ".claude" / "projects")
            assert rel.parts[1].startswith(scenario["session_id"]), rel
    records = [orjson.loads(line) for line in transcript.read_bytes().splitlines()]
    prompts = [
        r["message"]["content"]
        for r in records
        if r["type"] == "user" and isinstance(r["message"]["content"], str)
    ]
    for prompt in scenario["prompts"]:
        assert any(prompt in p for p in prompts), prompt
    assistant_texts = [
        block["text"]
        for r in records
        if r["type"] == "assistant" and not r.get("isApiErrorMessage") and not r["isSidechain"]
        for block in r["message"]["content"]
        if block["type"] == "text"
    ]
    assert assistant_texts == scenario["replies"]
    assert scenario["state"] in {"idle", "working", "limit"}


def test_committed_multi_turn_requests_carry_history() -> None:
    directory = FIXTURES / "multi_turn"
    scenario = load_scenario(directory)
    requests = model_requests(directory)
    assert len(requests) == 3
    third = "\n".join(message_texts(m) for m in requests[2]["body"]["messages"])
    for text in [*scenario["prompts"], *scenario["replies"][:2]]:
        assert text in third


def test_committed_limits() -> None:
    scenario = load_scenario(FIXTURES / "rate_limited")
    records = [
        orjson.loads(line)
        for line in (FIXTURES / "rate_limited" / scenario["transcript"]).read_bytes().splitlines()
    ]
    errors = [r for r in records if r.get("isApiErrorMessage")]
    assert errors[-1]["quotaLimits"]["resetsAt"] == scenario["reset_at"]
    assert scenario["state"] == "limit"


def test_committed_large_is_large() -> None:
    scenario = load_scenario(FIXTURES / "large")
    assert (FIXTURES / "large" / scenario["transcript"]).stat().st_size > 1_000_000


def test_requests_are_shrunk() -> None:
    for name in SCENARIOS:
        for request in model_requests(FIXTURES / name):
            assert set(request["body"]["system"]) == {"sha256", "chars"}
            assert set(request["body"]["tools"]) == {"sha256", "chars"}


# --------------------------------------------------------------------------- stand-in, no CLI


def post(
    standin: StandIn, lane_base: str, body: dict[str, Any]
) -> tuple[int, dict[str, str], bytes]:
    host, port = standin.base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request(
        "POST",
        lane_base.removeprefix(standin.base_url) + "/v1/messages",
        body=orjson.dumps(body),
        headers={"content-type": "application/json", "authorization": "Bearer sk-ant-oat01-x"},
    )
    response = conn.getresponse()
    data = response.read()
    headers = {k.lower(): v for k, v in response.getheaders()}
    conn.close()
    return response.status, headers, data


def sse_events(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in data.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines() if ": " in line)
        if "event" in lines:
            events.append((lines["event"], orjson.loads(lines["data"])))
    return events


def test_standin_streams_like_the_api(standin: StandIn) -> None:
    lane = standin.lane()
    lane.script(
        "anthropic",
        Reply((Thinking("hm"), Text("hi"), ToolUse("Bash", {"command": "ls"}))),
        Summary("all of it"),
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": [{}]}
    status, headers, data = post(standin, lane.anthropic_base_url, body | {"stream": True})
    assert status == 200
    assert headers["anthropic-ratelimit-unified-status"] == "allowed"
    events = sse_events(data)
    names = [e for e, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    deltas = [d["delta"]["type"] for e, d in events if e == "content_block_delta"]
    assert "signature_delta" in deltas and "input_json_delta" in deltas
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    status, _, data = post(standin, lane.anthropic_base_url, body | {"stream": False})
    message = orjson.loads(data)
    assert "<summary>\nall of it\n</summary>" in message["content"][0]["text"]
    assert lane.pending("anthropic") == 0


def test_standin_rate_limits(standin: StandIn) -> None:
    lane = standin.lane()
    lane.script("anthropic", RateLimited(reset_at=2_000_000_000), RateLimited(subscriber=False))
    body = {"model": "m", "messages": [], "tools": [{}], "stream": True}
    status, headers, _ = post(standin, lane.anthropic_base_url, body)
    assert status == 429
    assert headers["anthropic-ratelimit-unified-status"] == "rejected"
    assert headers["anthropic-ratelimit-unified-reset"] == "2000000000"
    status, headers, data = post(standin, lane.anthropic_base_url, body)
    assert status == 429 and "anthropic-ratelimit-unified-status" not in headers
    assert orjson.loads(data)["error"]["type"] == "rate_limit_error"


def test_side_requests_leave_the_script_alone() -> None:
    def req(method: str, path: str, body: Any = None) -> LoggedRequest:
        return LoggedRequest("anthropic", method, path, {}, body)

    assert side_request_kind(req("HEAD", "/api/hello")) == "probe"
    assert side_request_kind(req("POST", "/v1/messages/count_tokens", {})) == "count_tokens"
    assert side_request_kind(req("POST", "/v1/messages", {"max_tokens": 1})) == "quota_probe"
    small = {"model": "claude-haiku-4-5", "max_tokens": 512, "messages": []}
    assert side_request_kind(req("POST", "/v1/messages", small)) == "small_model"
    main = {"model": "claude-opus-5-5", "max_tokens": 128000, "tools": [{}], "messages": []}
    assert side_request_kind(req("POST", "/v1/messages?beta=true", main)) is None
    assert Stall().seconds > 0


# --------------------------------------------------------------------------- real CLI


@pytest.mark.realcli
@pytest.mark.parametrize("name", SCENARIOS)
def test_rerecording_matches_fixture(
    name: str, cli: Path, standin: StandIn, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    record_claude.record(name, out, standin, work_root=tmp_path / "work")
    committed = FIXTURES / name
    assert record_claude.structure_signature(out) == record_claude.structure_signature(committed)
    fresh, old = load_scenario(out), load_scenario(committed)
    volatile = {"session_id", "cwd", "transcript", "reset_at", "errors"}
    differ = sorted(
        k for k in set(fresh) | set(old) if k not in volatile and fresh.get(k) != old.get(k)
    )
    assert not differ, {k: (fresh.get(k), old.get(k)) for k in differ}  # which, when it flakes
    assert [e["kind"] for e in fresh["errors"]] == [e["kind"] for e in old["errors"]]
    sent, recorded = model_requests(out), model_requests(committed)
    assert len(sent) == len(recorded), [r.get("path") for r in sent]


@pytest.mark.realcli
def test_multi_turn_resume_sends_history(cli: Path, standin: StandIn, tmp_path: Path) -> None:
    rec = record_claude.record("multi_turn", tmp_path / "out", standin, work_root=tmp_path / "w")
    requests = rec.claude.model_requests()
    assert len(requests) == 3
    assert {r.headers["x-claude-code-session-id"] for r in requests} == {rec.session_id}
    third = "\n".join(message_texts(m) for m in requests[2].body["messages"])
    for text in [*rec.prompts, *rec.replies[:2]]:
        assert text in third
