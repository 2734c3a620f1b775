"""``segue watch`` for real: Claude Code agents in the panes of a private tmux server, the
stand-in answering with the subscription usage-limit error, watch moving the parked and idle
agents to Codex (the working one left alone), and bringing them back once the window resets."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import psutil
import pytest

from segue.running.agents import AgentState
from segue_testbed.claude_cli import API_KEY, ClaudeHome, claude_bin
from segue_testbed.codex_cli import codex_bin
from segue_testbed.standin import anthropic as A
from segue_testbed.standin import openai as O
from segue_testbed.standin.accounts import serve_claude_usage
from segue_testbed.standin.server import StandIn
from segue_testbed.tmux_lab import TmuxLab
from tests.segue_cli import segue
from tests.test_agents import (
    CLAUDE_READY,
    CODEX_READY,
    SETTLE,
    START,
    project,
    start_claude,
    wait_agents,
)
from tests.test_fleet_tmux import _codex_target, _end_codex_of

pytestmark = pytest.mark.realcli

USAGE = orjson.loads(
    (Path(__file__).parent / "fixtures/usage/claude_oauth_usage.json").read_bytes()
)


@pytest.fixture
def lab() -> Iterator[TmuxLab]:
    with TmuxLab() as lab:
        yield lab


def test_watch_moves_the_parked_agents_off_claude_and_brings_them_back_after_the_reset(
    standin: StandIn, lab: TmuxLab, tmp_path: Path
) -> None:
    names = ("idle", "parked", "working")
    cwds = {n: project(tmp_path, n) for n in names}
    lane = standin.lane()
    home = ClaudeHome(tmp_path / "claude", lane, oauth=True)  # one user, three agents
    for cwd in cwds.values():
        home.trust(cwd)
    path = home.config_dir / ".claude.json"
    config = orjson.loads(path.read_bytes())
    config["customApiKeyResponses"] = {"approved": [API_KEY[-20:]], "rejected": []}
    path.write_bytes(orjson.dumps(config))
    claude_env = home.env({"TERM": "tmux-256color"})
    claude_env.pop("NO_COLOR", None)
    reset = int(time.time()) + 90  # the 5-hour window resets a minute and a half from now

    panes = {}
    lane.script("anthropic", A.Text("NOTED-idle"))
    panes["idle"] = start_claude(lab, "idle", claude_env, cwds["idle"])
    lab.type(panes["idle"], "Remember the idle codeword: IDLE-4.")
    lab.wait_for(panes["idle"], "NOTED-idle", SETTLE)
    lane.script("anthropic", A.RateLimited(subscriber=True, reset_at=reset))
    panes["parked"] = start_claude(lab, "parked", claude_env, cwds["parked"])
    lab.type(panes["parked"], "Remember the parked codeword: PARKED-6.")
    lab.wait_for(panes["parked"], "Usage limit reached", SETTLE)
    lane.script("anthropic", A.Stall())
    panes["working"] = start_claude(lab, "working", claude_env, cwds["working"])
    lab.type(panes["working"], "Think about it for a long time.")
    states = {"idle": AgentState.IDLE, "parked": AgentState.PARKED, "working": AgentState.WORKING}
    found = wait_agents(
        lab, lambda f: all(panes[n] in f and f[panes[n]].state is s for n, s in states.items())
    )
    working_pid = found[panes["working"]].pid

    target_env, codex_lane = _codex_target(tmp_path / "codex", standin, list(cwds.values()))
    env = {
        **target_env,
        "CLAUDE_CONFIG_DIR": str(home.config_dir),
        "SEGUE_CODEX_BIN": str(codex_bin()),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
        "TMUX_TMPDIR": os.environ.get("TMUX_TMPDIR", "/tmp"),
    }
    scope = ["--under", str(tmp_path), "--offline", "--json"]
    try:
        codex_lane.script("openai", O.Text("CODEX-ANSWER"))
        moved = segue(["watch", "--once", "--auto", *scope], env, timeout=300)
        assert moved.returncode == 0, moved.stderr
        events = [orjson.loads(line) for line in moved.stdout.splitlines()]
        assert [e["event"] for e in events] == ["exhausted", "moved"], events
        assert events[0]["provider"] == "claude" and "5-hour" in events[0]["detail"]
        assert len(events[1]["sessions"]) == 2  # the idle and the parked one
        assert psutil.pid_exists(working_pid)  # the working agent is left alone
        for name in ("idle", "parked"):

            def loaded(pane: str = panes[name], name: str = name) -> bool:
                screen = lab.screen(pane)
                return CODEX_READY in screen and f"{name} codeword" in screen

            lab.wait_for(panes[name], loaded, START)
        lab.input_ready(panes["parked"])
        lab.type(panes["parked"], "What is the parked codeword?")
        lab.wait_for(panes["parked"], "CODEX-ANSWER", SETTLE)
        # still exhausted: a second pass moves nothing
        again = segue(["watch", "--once", "--auto", "--return", "auto", *scope], env)
        assert again.returncode == 0 and "moved" not in again.stdout, again.stdout

        while time.time() < reset + 2:
            time.sleep(1)
        back = segue(
            ["watch", "--once", "--auto", "--return", "auto", "--quiet", "0", *scope],
            env,
            timeout=300,
        )
        assert back.returncode == 0, back.stderr
        returned = [orjson.loads(line) for line in back.stdout.splitlines()]
        assert [e["event"] for e in returned][:1] == ["returned"], returned
        assert returned[0]["returns_batch"] == events[1]["batch"]
        # the parked agent's Claude session holds the turn it had on Codex
        transcripts = [p.read_text() for p in home.transcripts()]
        assert any("What is the parked codeword?" in t and "CODEX-ANSWER" in t for t in transcripts)
        listed = orjson.loads(segue(["batches", "--json"], env).stdout)["batches"]
        assert sorted(b["watch"] for b in listed) == ["moved", "returned"]
    finally:
        _end_codex_of(target_env["CODEX_HOME"])


def test_a_limit_on_one_model_family_relaunches_the_agent_on_another_model_not_a_batch(
    standin: StandIn, lab: TmuxLab, tmp_path: Path
) -> None:
    lane = standin.lane()
    serve_claude_usage(lane, USAGE)  # Opus's weekly window used up; the others not
    cwd = project(tmp_path, "opus")
    home = ClaudeHome(tmp_path / "claude", lane, oauth=True)
    home.trust(cwd)
    creds = {"claudeAiOauth": {"accessToken": "sk-ant-oat01-segue-test", "expiresAt":
             int(time.time() * 1000) + 3_600_000, "scopes": ["user:inference"]}}  # fmt: skip
    (home.config_dir / ".credentials.json").write_bytes(orjson.dumps(creds))
    claude_env = home.env({"TERM": "tmux-256color"})
    claude_env.pop("NO_COLOR", None)
    lane.script("anthropic", A.Text("NOTED-opus"))
    pane = lab.window(
        "opus",
        [str(claude_bin()), "--dangerously-skip-permissions", "--model", "opus"],
        cwd=cwd,
        env=claude_env,
    )
    lab.wait_for(pane, CLAUDE_READY, START)
    lab.input_ready(pane)
    lab.type(pane, "Remember the opus codeword: OPUS-4.")
    lab.wait_for(pane, "NOTED-opus", SETTLE)
    agent = wait_agents(
        lab,
        lambda f: pane in f and f[pane].state is AgentState.IDLE and bool(f[pane].session_id),
    )[pane]
    env = {
        **claude_env,
        "SEGUE_CLAUDE_BIN": str(claude_bin()),
        "SEGUE_CLAUDE_USAGE_URL": lane.base_url,
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
        "TMUX_TMPDIR": os.environ.get("TMUX_TMPDIR", "/tmp"),
    }
    done = segue(["watch", "--once", "--auto", "--under", str(tmp_path), "--json"], env)
    assert done.returncode == 0, done.stderr
    events = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [e["event"] for e in events] == ["family_limit", "model_switched"], events
    assert events[1]["sessions"] == [agent.session_id]
    try:
        relaunched = wait_agents(lab, lambda f: pane in f and f[pane].pid != agent.pid, START)[pane]
    except TimeoutError:
        raise AssertionError(f"{events[1]['detail']}\n{lab.screen(pane)}") from None
    assert relaunched.command[-2:] == ["--model", "sonnet"], relaunched.command
    assert "--resume" in relaunched.command and agent.session_id in relaunched.command
    assert orjson.loads(segue(["batches", "--json"], env).stdout)["batches"] == []
