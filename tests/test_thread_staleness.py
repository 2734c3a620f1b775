"""Staleness signals segue finds itself, with the real CLIs: the target's model changed since
its provider thread ran, and a resume that failed. Either way the next move there starts a new
session instead of returning to the old one."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from segue.model.conversation import Provider
from segue.run import run_turn
from segue.switch import switch_session
from segue_testbed.claude_cli import ClaudeHome, claude_bin
from segue_testbed.codex_cli import CodexHome, codex_bin
from segue_testbed.fixtures import all_fixtures
from segue_testbed.standin.anthropic import Text as ClaudeText
from segue_testbed.standin.server import StandIn

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
    there = switch_session(c1, Provider.CLAUDE, env=env)
    assert there.session_id is not None
    claude.lane.script("anthropic", ClaudeText("OK."))
    assert claude.run("One more question.", cwd=cwd, resume=there.session_id).returncode == 0

    # the user's Codex now runs another model than the one C1 ran (gpt-5.5)
    config = codex.codex_home / "config.toml"
    config.write_text(config.read_text().replace('model = "gpt-5.5"', 'model = "gpt-6.1-sol"'))
    back = switch_session(there.session_id, Provider.CODEX, env=env)
    move = back.thread

    assert move is not None and move.strategy == "full_into_new"
    assert "model" in move.reason
    assert back.session_id != c1


def test_a_failed_resume_makes_the_thread_stale(standin: StandIn, tmp_path: Path) -> None:
    _, claude, env, cwd = _homes(standin, tmp_path)
    c1 = BY_NAME["codex-multi_turn"].spec["session_id"]
    claude.lane.script("anthropic", ClaudeText("First on Claude."))
    first = run_turn("Go on.", thread=c1, provider=Provider.CLAUDE, env=env, cwd=str(cwd))
    assert first.returncode == 0 and first.move is not None
    # the session is on disk, but the user's Claude Code cannot resume it: it exits 1 and
    # writes nothing (a broken install, an account that lost the session)
    broken = {**env, "SEGUE_CLAUDE_BIN": "/bin/false"}
    failed = run_turn("Again.", thread=first.thread_id, env=broken, cwd=str(cwd))
    assert failed.returncode != 0 and failed.session_id == first.session_id
    assert failed.run_ordinal is None  # nothing ran: no run is recorded

    # the next move to Claude does not return to the session whose resume failed
    move = switch_session(c1, Provider.CLAUDE, env=env, dry_run=True).thread
    assert move is not None and move.strategy == "full_into_new"
    assert "failed" in move.reason
    # nor does the next run: it goes on in a new Claude session
    claude.lane.script("anthropic", ClaudeText("A fresh start."))
    again = run_turn("Go on again.", thread=first.thread_id, env=env, cwd=str(cwd))
    assert again.returncode == 0 and again.session_id != first.session_id
    assert again.move is not None and again.move.strategy == "full_into_new"


def test_a_run_whose_session_is_gone_continues_in_a_new_one(
    standin: StandIn, tmp_path: Path
) -> None:
    _, claude, env, cwd = _homes(standin, tmp_path)
    c1 = BY_NAME["codex-multi_turn"].spec["session_id"]
    claude.lane.script("anthropic", ClaudeText("First on Claude."))
    first = run_turn("Go on.", thread=c1, provider=Provider.CLAUDE, env=env, cwd=str(cwd))
    assert first.returncode == 0 and first.run_ordinal is not None
    # the session's file is gone (a cleanup, another machine): segue sees it before resuming
    session_file = next(claude.projects_dir.glob(f"*/{first.session_id}.jsonl"))
    session_file.rename(session_file.with_suffix(".moved"))
    claude.lane.script("anthropic", ClaudeText("Second on Claude."))
    again = run_turn("Again.", thread=first.thread_id, env=env, cwd=str(cwd))

    assert again.returncode == 0 and again.session_id != first.session_id
    assert again.move is not None and again.move.strategy == "full_into_new"
    assert "missing" in again.move.reason and "no longer exists" in again.move.reason
    assert again.run_ordinal == first.run_ordinal + 1 and again.status == "completed"
    assert any(f"run {first.run_ordinal} could not be carried" in w for w in again.warnings)
    # the new session holds the thread (Codex's runs) and the prompt, nothing was dropped
    (request,) = [r.body for r in claude.lane.requests_for("anthropic")][-1:]
    sent = orjson.dumps(request["messages"]).decode()
    assert "Again." in sent
    for prompt in BY_NAME["codex-multi_turn"].spec["prompts"]:
        assert prompt in sent
