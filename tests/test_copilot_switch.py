"""Switching to and from Copilot CLI, each direction resumed by the real target CLI, whose first
request must hold every planted fact: the prompts, the replies and the tool outputs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.model.conversation import (
    AssistantMessage,
    Item,
    Provider,
    ToolCall,
    ToolResult,
    UserMessage,
)
from segue.providers.sessions import read_session
from segue.switch import switch_session
from segue_testbed.copilot_cli import CopilotHome
from segue_testbed.fixtures import Fixture, all_fixtures
from segue_testbed.oracle import atoms_from_claude_request, atoms_from_history
from segue_testbed.standin.anthropic import Text
from segue_testbed.standin.server import StandIn
from tests.test_switch import MARKER, Target, sha256

COPILOT = Provider("copilot")
FIXTURES = all_fixtures()
# what reaches Copilot: a chat, tool calls of each kind, a compaction, a limit and big outputs
INTO_COPILOT = [
    f
    for f in FIXTURES
    if f.name
    in {
        "claude-chat",
        "claude-tool_cycle",
        "claude-compact",
        "claude-rate_limited",
        "codex-tool_cycle",
        "codex-compact_local",
        "codex-reasoning",
        "codex-big_outputs",
    }
]
FROM_COPILOT = [f for f in FIXTURES if f.provider == "copilot"]


def copilot_resume(home: CopilotHome, session_id: str, cwd: Path) -> tuple[Any, dict[str, Any]]:
    home.lane.script("anthropic", Text("MARKER"))
    run = home.run(MARKER, cwd=cwd, resume=session_id)
    return run, home.model_requests()[0].body  # type: ignore[attr-defined]


def sent_texts(body: dict[str, Any]) -> str:
    return orjson.dumps(body["messages"]).decode()


def assert_carried(items: list[Item], history: str) -> None:
    """Every fact the plan carries (a prompt, a reply, a tool's output) is in the request."""
    for item in items:
        if isinstance(item, ToolResult | AssistantMessage | UserMessage):
            text = item.output if isinstance(item, ToolResult) else item.text
            line = text.strip().splitlines()[0] if text.strip() else ""
            assert orjson.dumps(line).decode()[1:-1] in history, line


@pytest.mark.realcli
@pytest.mark.parametrize("fixture", INTO_COPILOT, ids=lambda f: f.name)
def test_switch_into_copilot_then_the_real_cli_resumes_it(
    fixture: Fixture, standin: StandIn, tmp_path: Path
) -> None:
    lane = standin.lane()
    home = CopilotHome(tmp_path, lane)
    shutil.copytree(fixture.home, home.home, dirs_exist_ok=True)
    source = home.home / str(fixture.spec["transcript"]).removeprefix("home/")
    before = sha256(source)
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home.home), "SEGUE_STATE_DIR": str(tmp_path / "state")}

    result = switch_session(fixture.spec["session_id"], COPILOT, env=env)

    assert sha256(source) == before
    assert result.path is not None and result.path.name == "events.jsonl"
    assert result.path.with_name("workspace.yaml").is_file()
    run, body = copilot_resume(home, str(result.session_id), cwd)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "MARKER" in run.stdout
    sent = atoms_from_claude_request(body, MARKER)
    ours = atoms_from_history(result.plan.items)
    assert sent.replies == ours.replies
    assert [p for p in sent.prompts if p not in ours.summaries] == ours.prompts
    history = sent_texts(body)
    assert_carried(result.plan.items, history)
    assert '"signature"' not in history and "encrypted_content" not in history


@pytest.mark.realcli
@pytest.mark.parametrize("to", [Provider.CLAUDE, Provider.CODEX], ids=str)
@pytest.mark.parametrize("fixture", FROM_COPILOT, ids=lambda f: f.name)
def test_switch_out_of_copilot_then_the_real_target_resumes_it(
    fixture: Fixture, to: Provider, standin: StandIn, tmp_path: Path
) -> None:
    target = Target(to, tmp_path, standin.lane())
    shutil.copytree(fixture.home, target.home, dirs_exist_ok=True)
    source = target.home / str(fixture.spec["transcript"]).removeprefix("home/")
    before = sha256(source)
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)

    result = switch_session(fixture.spec["session_id"], to, env=target.env)

    assert sha256(source) == before
    run, body = target.resume(str(result.session_id), cwd)
    assert run.returncode == 0, run.stderr[-2000:]
    sent = target.atoms(body)
    ours = atoms_from_history(result.plan.items)
    narrated = tuple(f"[{c.name}" for c in result.plan.items if isinstance(c, ToolCall))
    assert [r for r in sent.replies if not r.startswith(narrated)] == ours.replies
    assert [p for p in sent.prompts if p not in ours.summaries] == ours.prompts
    history = orjson.dumps(body).decode()
    assert_carried(result.plan.items, history)
    kept = fixture.spec["tool_calls"] if not fixture.spec["compactions"] else []
    for call in kept:
        assert orjson.dumps(call["output_contains"]).decode()[1:-1] in history
    assert "c2VndWUtc3RhbmRpbi1zaWduYXR1cmU=" not in history  # the session-bound reasoning
    assert read_session(source).meta.provider is COPILOT
