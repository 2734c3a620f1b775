"""The effective history segue computes is what the real CLI sends when it resumes the session.

Each fixture is copied into a scratch home, resumed once by its own CLI with a marker prompt,
and the request the CLI sent (the stand-in logs it) is compared with ``effective_history``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from segue.providers.sessions import read_session
from segue.transforms.effective import effective_history
from segue_testbed.fixtures import Fixture, all_fixtures
from segue_testbed.oracle import (
    atoms_from_claude_request,
    atoms_from_codex_request,
    atoms_from_history,
)
from segue_testbed.standin.server import StandIn

MARKER = "Reply with the word MARKER and nothing else."
FIXTURES = all_fixtures()


@pytest.mark.realcli
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_effective_history_is_what_the_cli_sends(
    fixture: Fixture, standin: StandIn, tmp_path: Path
) -> None:
    ours = atoms_from_history(effective_history(read_session(fixture.transcript)))
    lane = standin.lane()
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    if fixture.provider == "claude":
        from segue_testbed.claude_cli import ClaudeHome
        from segue_testbed.standin.anthropic import Text as ClaudeText

        lane.script("anthropic", ClaudeText("MARKER"))
        claude = ClaudeHome(tmp_path, lane)
        shutil.copytree(fixture.home, claude.home, dirs_exist_ok=True)
        run = claude.run(MARKER, cwd=cwd, resume=fixture.spec["session_id"])
        returncode, stdout, stderr = run.returncode, run.stdout, run.stderr
        requests = [r.body for r in claude.model_requests()]
        sent = atoms_from_claude_request(requests[0], MARKER)
    elif fixture.provider == "copilot":
        from segue_testbed.copilot_cli import CopilotHome
        from segue_testbed.standin.anthropic import Text as CopilotText

        lane.script("anthropic", CopilotText("MARKER"))
        copilot = CopilotHome(tmp_path, lane)
        shutil.copytree(fixture.home, copilot.home, dirs_exist_ok=True)
        done = copilot.run(MARKER, cwd=cwd, resume=fixture.spec["session_id"])
        returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
        requests = [r.body for r in copilot.model_requests()]  # type: ignore[attr-defined]
        sent = atoms_from_claude_request(requests[0], MARKER)
    else:
        from segue_testbed.codex_cli import CodexHome
        from segue_testbed.standin.openai import Text as CodexText
        from segue_testbed.standin.openai import request_kind

        lane.script("openai", CodexText("MARKER"))
        codex = CodexHome(tmp_path, lane, provider=fixture.spec.get("model_provider", "standin"))
        shutil.copytree(fixture.home, codex.home, dirs_exist_ok=True)
        ran = codex.exec(MARKER, cwd=cwd, resume=fixture.spec["session_id"])
        returncode, stdout, stderr = ran.returncode, ran.stdout, ran.stderr
        requests = [r.body for r in lane.requests_for("openai") if request_kind(r) == "turn"]
        sent = atoms_from_codex_request(requests[0], MARKER)
    assert returncode == 0, stderr[-2000:]
    assert "MARKER" in stdout
    assert sent.prompts == ours.prompts
    assert sent.replies == ours.replies
    assert sent.calls == ours.calls
    assert sent.results == ours.results
    assert len(sent.summaries) == len(ours.summaries)
    for theirs, mine in zip(sent.summaries, ours.summaries, strict=True):
        assert theirs == "<encrypted>" or mine in theirs or theirs in mine
