"""``segue run``: headless turns that drive an app thread across providers, with the real CLIs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue_testbed.claude_cli import ClaudeHome, claude_bin
from segue_testbed.codex_cli import CodexHome, codex_bin
from segue_testbed.fixtures import all_fixtures
from segue_testbed.standin.anthropic import Text as ClaudeText
from segue_testbed.standin.openai import Text as CodexText
from segue_testbed.standin.openai import request_kind
from segue_testbed.standin.server import StandIn
from tests.segue_cli import segue_json

pytestmark = pytest.mark.realcli

BY_NAME = {f.name: f for f in all_fixtures()}


def _run(args: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    return segue_json(["run", *args, "--json"], env, cwd=cwd)


def test_runs_move_between_providers_through_the_strategy(standin: StandIn, tmp_path: Path) -> None:
    fixture = BY_NAME["codex-multi_turn"]
    lane = standin.lane()
    codex, claude = CodexHome(tmp_path, lane), ClaudeHome(tmp_path, lane)
    env = {
        **codex.env(),
        **claude.env(),
        "SEGUE_CLAUDE_BIN": str(claude_bin()),
        "SEGUE_CODEX_BIN": str(codex_bin()),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
        "IS_SANDBOX": "1",
    }
    shutil.copytree(fixture.home, codex.home, dirs_exist_ok=True)
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    claude.trust(cwd)
    runs = len(fixture.spec["prompts"])

    lane.script("anthropic", ClaudeText("CLAUDE-ONE"))
    first = _run(
        ["--thread", fixture.spec["session_id"], "--provider", "claude", "Go on."], env, cwd
    )
    assert first["provider"] == "claude" and first["returncode"] == 0
    assert "CLAUDE-ONE" in first["output"]
    assert first["move"]["strategy"] == "full_into_new"
    assert first["run"] == runs + 1

    lane.script("anthropic", ClaudeText("CLAUDE-TWO"))
    second = _run(["--thread", first["thread"], "And then?"], env, cwd)
    assert (second["provider"], second["move"]) == ("claude", None)  # stays where it ran
    assert second["session_id"] == first["session_id"] and second["run"] == runs + 2

    lane.script("openai", CodexText("CODEX-THREE"))
    third = _run(["--thread", first["thread"], "--provider", "codex", "Back to Codex."], env, cwd)
    assert third["move"]["strategy"] == "delta_into_existing"
    assert third["move"]["handoff"]["covers"] == [runs + 1, runs + 2]
    assert "CODEX-THREE" in third["output"] and third["run"] == runs + 3
    (request,) = [r.body for r in lane.requests_for("openai") if request_kind(r) == "turn"]
    sent = orjson.dumps(request["input"]).decode()
    assert sent.index("Go on.") < sent.index("CLAUDE-TWO") < sent.index("Back to Codex.")
