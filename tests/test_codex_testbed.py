"""The Codex half of the test bed: committed fixtures stay what the real CLI writes.

* ``realcli`` tests re-record each scenario with the pinned Codex into ``tmp_path`` and compare
  the *structure signature* (record kinds in order, compactions, rollbacks, prompt count) with
  the committed fixture; ids, timestamps and token numbers are left out.
* The other tests read the committed fixtures only: the stand-in's request log must show that
  Codex really sent the history, and ``scenario.json`` must agree with the rollout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from segue_testbed.codex_cli import CodexNotInstalled, codex_bin, read_rollout
from segue_testbed.record_codex import SCENARIOS, structure_signature
from segue_testbed.standin.server import StandIn

FIXTURES = Path(__file__).parent / "fixtures" / "codex"


def _require_codex() -> None:
    try:
        codex_bin()
    except CodexNotInstalled as exc:
        pytest.skip(str(exc))


def _scenario(name: str) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((FIXTURES / name / "scenario.json").read_bytes())
    return data


def _requests(fixture: Path) -> list[dict[str, Any]]:
    lines = (fixture / "requests.jsonl").read_bytes().splitlines()
    return [orjson.loads(line) for line in lines if line.strip()]


def _texts(items: list[dict[str, Any]], role: str) -> list[str]:
    out = []
    for item in items:
        if item.get("type") == "message" and item.get("role") == role:
            out.append("".join(part.get("text", "") for part in item.get("content", [])))
    return out


def _rollout_items(name: str) -> list[dict[str, Any]]:
    files = sorted((FIXTURES / name / "home").rglob("rollout-*.jsonl"))
    return [r["payload"] for f in files for r in read_rollout(f) if r["type"] == "response_item"]


@pytest.mark.realcli
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_rerecording_matches_fixture(name: str, tmp_path: Path, standin: StandIn) -> None:
    _require_codex()
    out = tmp_path / name
    SCENARIOS[name](out, standin)
    assert structure_signature(out) == structure_signature(FIXTURES / name)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_fixture_is_complete(name: str) -> None:
    fixture = FIXTURES / name
    scenario = _scenario(name)
    assert scenario["scenario"] == name and scenario["provider"] == "codex"
    assert (fixture / scenario["transcript"]).is_file()
    assert scenario["session_id"] in scenario["transcript"]  # after a revert: "<id>_<gen>"
    files = {
        p.relative_to(fixture).as_posix() for p in (fixture / "home").rglob("*") if p.is_file()
    }
    assert files == set(scenario["transcripts"])  # home/ holds only rollouts
    assert all(f.startswith("home/.codex/sessions/") for f in files)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_prompts_and_replies_are_in_the_rollout(name: str) -> None:
    scenario = _scenario(name)
    items = _rollout_items(name)
    users = _texts(items, "user")
    assistants = _texts(items, "assistant")
    for prompt in scenario["prompts"]:
        assert prompt in users
    # Rolled-back turns stay in the first rollout generation, so every reply is still there.
    for reply in scenario["replies"]:
        assert reply in assistants
    signature = structure_signature(FIXTURES / name)
    assert signature["compacted"] == len(scenario["compactions"])
    outputs = [str(i["output"]) for i in items if i.get("type") == "function_call_output"]
    assert len(outputs) == len(scenario["tool_calls"])
    for call, output in zip(scenario["tool_calls"], outputs, strict=True):
        assert call["output_contains"] in output


def test_multi_turn_requests_carry_the_history() -> None:
    scenario = _scenario("multi_turn")
    turns = [r for r in _requests(FIXTURES / "multi_turn") if r["method"] == "POST"]
    assert len(turns) == 3
    third = turns[2]["body"]["input"]
    assert _texts(third, "user")[-3:] == scenario["prompts"]
    assert _texts(third, "assistant") == scenario["replies"][:2]


def test_tool_outputs_went_back_to_the_model() -> None:
    scenario = _scenario("tool_cycle")
    last = [r for r in _requests(FIXTURES / "tool_cycle") if r["method"] == "POST"][-1]
    outputs = [i["output"] for i in last["body"]["input"] if i["type"] == "function_call_output"]
    assert len(outputs) == len(scenario["tool_calls"])
    for call, output in zip(scenario["tool_calls"], outputs, strict=True):
        assert call["output_contains"] in output
        assert ("Process exited with code 0" not in output) == call["is_error"]


def test_rollback_drops_the_reverted_turns_from_the_next_request() -> None:
    scenario = _scenario("rollback")
    last = [r for r in _requests(FIXTURES / "rollback") if r["method"] == "POST"][-1]
    sent = _texts(last["body"]["input"], "user")
    for prompt in scenario["rolled_back_prompts"]:
        assert prompt not in sent
    assert scenario["prompts"][0] in sent and scenario["prompts"][-1] in sent


def test_compaction_requests_were_served() -> None:
    local = [r for r in _requests(FIXTURES / "compact_local") if r["method"] == "POST"]
    assert any(
        "CONTEXT CHECKPOINT COMPACTION" in t
        for r in local
        for t in _texts(r["body"]["input"], "user")
    )
    remote = [r for r in _requests(FIXTURES / "compact_remote") if r["method"] == "POST"]
    assert any(r["body"]["input"][-1].get("type") == "compaction_trigger" for r in remote)
