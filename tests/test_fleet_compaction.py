"""Compaction around a fleet switch, by the real CLIs through the stand-in: the target's own
compaction on arrival (on the target's quota), and the source's only when the user opts in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from segue.fleet.batch import ArrivalCompact, plan_fleet, run_fleet
from segue.model.conversation import Compaction, CompactionState, Provider
from segue.providers.sessions import read_session
from segue_testbed.claude_cli import ClaudeHome, claude_bin
from segue_testbed.codex_cli import CodexHome, codex_bin
from segue_testbed.fixtures import all_fixtures
from segue_testbed.standin import anthropic as A
from segue_testbed.standin import openai as O
from segue_testbed.standin.server import StandIn

pytestmark = pytest.mark.realcli

FIXTURES = {f.name: f for f in all_fixtures()}


def _portable(path: Path) -> list[Compaction]:
    return [
        i
        for i in read_session(path).items
        if isinstance(i, Compaction) and i.state is CompactionState.PORTABLE
    ]


def test_arrival_compaction_runs_claude_code_on_the_new_session(
    standin: StandIn, tmp_path: Path
) -> None:
    fixture = FIXTURES["codex-multi_turn"]
    lane = standin.lane()
    lane.script("anthropic", A.Summary("The user asked three short questions; all answered."))
    claude = ClaudeHome(tmp_path / "claude", lane)
    shutil.copytree(fixture.home, claude.home, dirs_exist_ok=True)
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    claude.trust(cwd)
    env = {
        **claude.env(),
        "SEGUE_CLAUDE_BIN": str(claude_bin()),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
    }
    plan = plan_fleet(Provider.CODEX, sessions=[fixture.spec["session_id"]], env=env, agents=[])

    result = run_fleet(plan, env=env, arrival_compact=ArrivalCompact.ON)

    (outcome,) = result.outcomes
    assert outcome.switch is not None and outcome.switch.path is not None
    assert outcome.notes == ["arrival compaction: compacted by Claude Code"], outcome.notes
    summaries = [c.summary for c in _portable(outcome.switch.path)]
    assert any("three short questions" in s for s in summaries)


def test_arrival_compaction_is_off_for_a_small_session_by_default(
    standin: StandIn, tmp_path: Path
) -> None:
    fixture = FIXTURES["codex-multi_turn"]
    claude = ClaudeHome(tmp_path / "claude", standin.lane())
    shutil.copytree(fixture.home, claude.home, dirs_exist_ok=True)
    Path(fixture.spec["cwd"]).mkdir(parents=True, exist_ok=True)
    env = {**claude.env(), "SEGUE_CLAUDE_BIN": str(claude_bin()), "SEGUE_DATA_DIR": str(tmp_path)}
    plan = plan_fleet(Provider.CODEX, sessions=[fixture.spec["session_id"]], env=env, agents=[])
    result = run_fleet(plan, env=env, record=False)
    assert result.outcomes[0].notes == []  # auto: a small history needs no compaction
    assert not claude.model_requests()


def test_source_compaction_is_codex_compacting_its_own_thread_first(
    standin: StandIn, tmp_path: Path
) -> None:
    fixture = FIXTURES["codex-multi_turn"]
    lane = standin.lane()
    lane.script("openai", O.LocalSummary("Three questions, three answers; nothing pending."))
    codex = CodexHome(tmp_path / "codex", lane)
    shutil.copytree(fixture.home, codex.home, dirs_exist_ok=True)
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    env = {
        **codex.env(),
        "SEGUE_CODEX_BIN": str(codex_bin()),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
    }
    plan = plan_fleet(Provider.CODEX, sessions=[fixture.spec["session_id"]], env=env, agents=[])

    result = run_fleet(plan, env=env, source_compact=True, arrival_compact=ArrivalCompact.OFF)

    (outcome,) = result.outcomes
    assert outcome.notes == ["source compaction: compacted by Codex"], outcome.notes
    assert outcome.switch is not None and outcome.switch.path is not None
    carried = [c.summary for c in _portable(outcome.switch.path)]
    assert any("nothing pending" in s for s in carried)  # the switch carried Codex's summary
