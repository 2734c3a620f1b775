"""Staleness signals segue finds itself, with the real CLIs: the target's model changed since
its provider thread ran, and a resume that failed. Either way the next move there starts a new
session instead of returning to the old one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from segue.conversation import Provider
from segue.run import run_turn
from segue.thread_switch import switch_in_thread
from segue_testbed.claude_cli import ClaudeHome, claude_bin
from segue_testbed.codex_cli import CodexHome, codex_bin
from segue_testbed.standin.anthropic import Text as ClaudeText
from segue_testbed.standin.server import StandIn
from tests.fixtures_index import all_fixtures

pytestmark = pytest.mark.realcli

BY_NAME = {f.name: f for f in all_fixtures()}


def _homes(standin: StandIn, tmp_path: Path) -> tuple[CodexHome, ClaudeHome, dict[str, str], Path]:
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
    }
    shutil.copytree(fixture.home, codex.home, dirs_exist_ok=True)
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    claude.trust(cwd)
    return codex, claude, env, cwd


def test_a_changed_model_makes_the_old_thread_stale(standin: StandIn, tmp_path: Path) -> None:
    codex, claude, env, cwd = _homes(standin, tmp_path)
    c1 = BY_NAME["codex-multi_turn"].spec["session_id"]
    there, _ = switch_in_thread(c1, Provider.CLAUDE, env=env)
    assert there.session_id is not None
    claude.lane.script("anthropic", ClaudeText("OK."))
    assert claude.run("One more question.", cwd=cwd, resume=there.session_id).returncode == 0

    # the user's Codex now runs another model than the one C1 ran (gpt-5.5)
    config = codex.codex_home / "config.toml"
    config.write_text(config.read_text().replace('model = "gpt-5.5"', 'model = "gpt-6.1-sol"'))
    back, move = switch_in_thread(there.session_id, Provider.CODEX, env=env)

    assert move is not None and move.strategy == "full_into_new"
    assert "model" in move.reason
    assert back.session_id != c1


def test_a_failed_resume_makes_the_thread_stale(standin: StandIn, tmp_path: Path) -> None:
    _, claude, env, cwd = _homes(standin, tmp_path)
    c1 = BY_NAME["codex-multi_turn"].spec["session_id"]
    claude.lane.script("anthropic", ClaudeText("First on Claude."))
    first = run_turn("Go on.", thread=c1, provider=Provider.CLAUDE, env=env, cwd=str(cwd))
    assert first.returncode == 0 and first.move is not None
    # the session's file is gone (another machine, a cleanup): Claude Code cannot resume it
    session_file = next(claude.projects_dir.glob(f"*/{first.session_id}.jsonl"))
    session_file.rename(session_file.with_suffix(".moved"))
    failed = run_turn("Again.", thread=first.thread_id, env=env, cwd=str(cwd))
    assert failed.returncode != 0 and failed.session_id == first.session_id

    # the next move to Claude does not return to the session whose resume failed
    _, move = switch_in_thread(c1, Provider.CLAUDE, env=env, dry_run=True)
    assert move is not None and move.strategy == "full_into_new"
    assert "failed" in move.reason
