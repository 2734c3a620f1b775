"""The model segue plans for is the model the user's real Claude Code runs.

For each way a user can configure Claude Code (environment, settings files of every level, a
settings ``env`` block, aliases and their remapping, the default), segue's target profile is
compared with the ``model`` field (and the 1M beta header) of the request the real CLI sends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.model.conversation import Provider
from segue.providers import entry
from segue_testbed.claude_cli import ClaudeHome
from segue_testbed.standin.anthropic import Text
from segue_testbed.standin.server import StandIn

pytestmark = pytest.mark.realcli

CASES: dict[str, dict[str, Any]] = {
    "default": {},
    "user settings alias": {"user": {"model": "sonnet"}},
    "project beats user": {"user": {"model": "sonnet"}, "project": {"model": "haiku"}},
    "local beats project": {
        "project": {"model": "haiku"},
        "local": {"model": "claude-sonnet-4-5"},
    },
    "env beats settings": {"user": {"model": "haiku"}, "env": {"ANTHROPIC_MODEL": "sonnet"}},
    "settings env block": {"user": {"model": "sonnet", "env": {"ANTHROPIC_MODEL": "fable"}}},
    "settings env block over the environment": {
        "user": {"env": {"ANTHROPIC_MODEL": "haiku"}},
        "env": {"ANTHROPIC_MODEL": "sonnet"},
    },
    "default remapped": {"env": {"ANTHROPIC_DEFAULT_MODEL": "claude-sonnet-4-5"}},
    "opus alias remapped, 1M by beta": {"env": {"ANTHROPIC_DEFAULT_OPUS_MODEL": "claude-opus-4-6"}},
    "retired id": {"env": {"ANTHROPIC_MODEL": "claude-opus-4-1"}},
}


@pytest.mark.parametrize("case", list(CASES))
def test_profile_model_is_the_model_claude_sends(
    case: str, standin: StandIn, tmp_path: Path
) -> None:
    spec = CASES[case]
    lane = standin.lane()
    lane.script("anthropic", Text("ok"))
    claude = ClaudeHome(tmp_path, lane)
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    user_settings = claude.config_dir / "settings.json"
    if "user" in spec:
        merged = {**orjson.loads(user_settings.read_bytes()), **spec["user"]}
        user_settings.write_bytes(orjson.dumps(merged))
    for level, name in (("project", "settings.json"), ("local", "settings.local.json")):
        if level in spec:
            (project / ".claude" / name).write_bytes(orjson.dumps(spec[level]))
    extra = spec.get("env", {})

    profile = entry(Provider.CLAUDE).target_profile(claude.env(extra), str(project))
    run = claude.run("Say ok.", cwd=project, env=extra)
    assert run.returncode == 0, run.stderr[-2000:]

    request = claude.model_requests()[-1]
    sent = request.body["model"]
    beta = request.headers.get("anthropic-beta", "")
    assert profile.model is not None
    expected = profile.model.removesuffix("[1m]")
    assert sent == expected, profile.source
    wants_beta = profile.model.endswith("[1m]")
    assert ("context-1m" in beta) == wants_beta, (beta, profile.source)
