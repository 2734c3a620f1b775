"""``segue agents``: the real CLIs running in the panes of a private tmux server, each found with
its session file, its pane and its state (the sessions are the ones the CLIs wrote here), and
ended and respawned in its pane the way the fleet switch does it.

The TUIs start offline as in ``test_interactive_resume.py``; the Codex homes also hide the
"switch to a cheaper model" dialog that follows a usage limit (``hide_rate_limit_model_nudge``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import psutil
import pytest

from segue.cli.documents import agent_to_json
from segue.model.conversation import Provider
from segue.providers import entry
from segue.running.agents import Agent, AgentState, end_agent, list_agents
from segue.running.tmux import capture, keep_on_exit, pane_dead, respawn
from segue_testbed.claude_cli import API_KEY, ClaudeHome, claude_bin
from segue_testbed.codex_cli import CodexHome, codex_bin
from segue_testbed.standin import anthropic as A
from segue_testbed.standin import openai as O
from segue_testbed.standin.server import Lane, StandIn
from segue_testbed.tmux_lab import TmuxLab

pytestmark = pytest.mark.realcli

START = 30.0  # seconds for a TUI to come up
SETTLE = 20.0  # seconds for a turn to end and its records to land
CLAUDE_READY = "bypass permissions on"
CODEX_READY = "? for shortcuts"
RESET = int(time.time()) // 60 * 60 + 3 * 3600  # a usage window that resets in about 3 hours


@pytest.fixture
def lab() -> Iterator[TmuxLab]:
    with TmuxLab() as lab:
        yield lab


def claude_home(root: Path, lane: Lane, cwd: Path, *, oauth: bool = False) -> dict[str, str]:
    home = ClaudeHome(root, lane, oauth=oauth)
    home.trust(cwd)
    approve_key(home)
    return tui_env(home)


def approve_key(home: ClaudeHome) -> None:
    """The TUI asks whether to use an API key it has not seen: answered yes beforehand."""
    path = home.config_dir / ".claude.json"
    config = orjson.loads(path.read_bytes())
    config["customApiKeyResponses"] = {"approved": [API_KEY[-20:]], "rejected": []}
    path.write_bytes(orjson.dumps(config))


def tui_env(
    home: ClaudeHome, lane: Lane | None = None, oauth: bool | None = None
) -> dict[str, str]:
    """The environment of a Claude Code TUI in a tmux pane of ``home`` (on ``lane``)."""
    env = home.env({"TERM": "tmux-256color"}, lane=lane, oauth=oauth)
    env.pop("NO_COLOR", None)
    return env


def codex_home(root: Path, lane: Lane, cwd: Path) -> dict[str, str]:
    home = CodexHome(root, lane)
    config = home.codex_home / "config.toml"
    config.write_text(
        config.read_text()
        + f'\n[projects.{orjson.dumps(str(cwd)).decode()}]\ntrust_level = "trusted"\n'
        + "\n[tui]\nscreen_reader_detection_done = true\n"
        + f'\n[notice.model_migrations]\n"{home.model}" = "gpt-6-sol"\n'
        + "\n[notice]\nhide_rate_limit_model_nudge = true\n"
    )
    env = home.env({"TERM": "tmux-256color"})
    env.pop("NO_COLOR", None)
    return env


def project(tmp_path: Path, name: str) -> Path:
    cwd = tmp_path / name
    cwd.mkdir()
    return Path(os.path.realpath(cwd))


def mine(lab: TmuxLab) -> list[Agent]:
    """The agents in this test's tmux server (other tests' agents run on the machine too)."""
    socket = lab.socket
    return [
        a
        for a in list_agents(tmux_sockets=[socket], every_home=True)
        if a.pane and a.pane.server == socket
    ]


def wait_agents(
    lab: TmuxLab, ok: Callable[[dict[str, Agent]], bool], timeout: float = SETTLE
) -> dict[str, Agent]:
    """Poll until the agents by pane id satisfy ``ok``."""
    deadline = time.monotonic() + timeout
    while True:
        found = {a.pane.id: a for a in mine(lab) if a.pane}
        if ok(found):
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"agents now: {found}")
        time.sleep(0.2)


def start_claude(lab: TmuxLab, name: str, env: dict[str, str], cwd: Path, **kw: Any) -> str:
    pane = lab.window(name, [str(claude_bin()), "--dangerously-skip-permissions"], cwd=cwd,
                      env=env, **kw)  # fmt: skip
    lab.wait_for(pane, CLAUDE_READY, START)
    lab.input_ready(pane)
    return pane


def start_codex(lab: TmuxLab, name: str, env: dict[str, str], cwd: Path, **kw: Any) -> str:
    pane = lab.window(name, [str(codex_bin()), "--no-daemon"], cwd=cwd, env=env, **kw)
    lab.wait_for(pane, CODEX_READY, START)
    lab.input_ready(pane)
    return pane


def transcripts(env: dict[str, str]) -> list[Path]:
    return sorted(Path(env["CLAUDE_CONFIG_DIR"], "projects").glob("*/*.jsonl"))


def rollouts(env: dict[str, str]) -> list[Path]:
    return sorted(Path(env["CODEX_HOME"], "sessions").rglob("rollout-*.jsonl"))


def test_claude_agents_idle_parked_working_and_new(
    standin: StandIn, lab: TmuxLab, tmp_path: Path
) -> None:
    envs: dict[str, dict[str, str]] = {}
    panes: dict[str, str] = {}
    for name, oauth, reply in (
        ("idle", False, A.Text("IDLE-REPLY")),
        ("parked", True, A.RateLimited(subscriber=True, reset_at=RESET)),
        ("working", False, A.Stall()),
        ("new", False, None),
    ):
        lane = standin.lane()
        if reply is not None:
            lane.script("anthropic", reply)
        cwd = project(tmp_path, name)
        envs[name] = claude_home(tmp_path / f"home-{name}", lane, cwd, oauth=oauth)
        panes[name] = start_claude(lab, name, envs[name], cwd, via_shell=name == "idle")
    for name in ("idle", "parked", "working"):
        lab.type(panes[name], f"Prompt for the {name} agent.")
    lab.wait_for(panes["idle"], "IDLE-REPLY", SETTLE)
    lab.wait_for(panes["parked"], "Usage limit reached", SETTLE)
    found = wait_agents(
        lab,
        lambda f: (
            len(f) == 4
            and f[panes["idle"]].state is AgentState.IDLE
            and f[panes["parked"]].state is AgentState.PARKED
            and f[panes["working"]].state is AgentState.WORKING
            # (Claude Code says "busy" a moment before it writes the prompt to a new file)
            and f[panes["working"]].session_path is not None
        ),
    )
    # the parked agent's pane still shows Claude's wait banner, and it counts as parked
    assert "Continuing automatically" in lab.screen(panes["parked"])
    assert found[panes["parked"]].reset_at == datetime.fromtimestamp(RESET, UTC)
    for name, pane in panes.items():
        agent = found[pane]
        assert agent.provider is Provider.CLAUDE
        assert agent.cwd == str(project_path(tmp_path, name))
        assert agent.env_home["CLAUDE_CONFIG_DIR"] == envs[name]["CLAUDE_CONFIG_DIR"]
        if name == "new":  # no prompt yet: no file
            assert agent.session_path is None and agent.state is AgentState.IDLE
        else:
            assert agent.session_path is not None
            assert [agent.session_path] == transcripts(envs[name])
            assert agent.session_id == agent.session_path.stem
    # a scan for one home sees that home's agent only: the others are other accounts' agents
    socket = lab.socket
    for name, pane in panes.items():
        seen = list_agents(envs[name], tmux_sockets=[socket])
        assert [a.pane.id for a in seen if a.pane and a.pane.server == socket] == [pane]
    # the command line prints every home's
    out = subprocess.run(
        [sys.executable, "-m", "segue", "agents", "--json", "--socket", socket],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    printed = {
        a["pane"]["id"]: a
        for a in orjson.loads(out)["agents"]
        if a["pane"] and a["pane"]["server"] == socket
    }
    assert printed == {pane: agent_to_json(found[pane]) for pane in panes.values()}
    assert printed[panes["parked"]]["state"] == "parked"
    assert printed[panes["parked"]]["reset_at"] == datetime.fromtimestamp(
        RESET, UTC
    ).isoformat().replace("+00:00", "Z")
    assert printed[panes["new"]]["path"] is None

    # the idle one runs under a shell: the pane is found through its parent
    assert psutil.Process(found[panes["idle"]].pid).ppid() == lab.pane_pids()[panes["idle"]]

    # a CLI killed outright leaves its pid file behind: that is no agent
    killed = found[panes["new"]]
    os.kill(killed.pid, signal.SIGKILL)
    psutil.wait_procs([psutil.Process(killed.pid)], timeout=5)
    pid_file = Path(envs["new"]["CLAUDE_CONFIG_DIR"], "sessions", f"{killed.pid}.json")
    assert pid_file.exists()
    assert killed.pid not in {a.pid for a in list_agents(every_home=True)}


def test_codex_agents_idle_parked_working_and_new(
    standin: StandIn, lab: TmuxLab, tmp_path: Path
) -> None:
    limits = O.RateLimits(
        primary_used_percent=100.0, primary_window_minutes=300, primary_reset_at=RESET
    )
    envs: dict[str, dict[str, str]] = {}
    panes: dict[str, str] = {}
    lanes: dict[str, Lane] = {}
    for name, reply in (
        ("idle", O.Text("IDLE-REPLY")),
        ("parked", O.UsageLimit(RESET, rate_limits=limits)),
        ("working", O.Stall()),
        ("new", None),
    ):
        lane = lanes[name] = standin.lane()
        if reply is not None:
            lane.script("openai", reply)
        cwd = project(tmp_path, name)
        envs[name] = codex_home(tmp_path / f"home-{name}", lane, cwd)
        panes[name] = start_codex(lab, name, envs[name], cwd)
    for name in ("idle", "parked", "working"):
        lab.type(panes[name], f"Prompt for the {name} agent.")
    lab.wait_for(panes["idle"], "IDLE-REPLY", SETTLE)
    lab.wait_for(panes["parked"], "hit your usage limit", SETTLE)
    found = wait_agents(
        lab,
        lambda f: (
            len(f) == 4
            and f[panes["idle"]].state is AgentState.IDLE
            and f[panes["parked"]].state is AgentState.PARKED
            and f[panes["working"]].state is AgentState.WORKING
        ),
    )
    assert found[panes["parked"]].reset_at == datetime.fromtimestamp(RESET, UTC)
    for name, pane in panes.items():
        agent = found[pane]
        assert agent.provider is Provider.CODEX
        assert agent.cwd == str(project_path(tmp_path, name))
        assert agent.env_home["CODEX_HOME"] == envs[name]["CODEX_HOME"]
        assert agent.launcher_pid == lab.pane_pids()[pane]  # the npm package's node script
        assert agent.session_id is not None
        if name == "new":  # the thread exists, its rollout not yet
            assert agent.session_path is None and agent.state is AgentState.IDLE
            assert rollouts(envs[name]) == []
        else:
            assert agent.session_path is not None
            assert [agent.session_path] == rollouts(envs[name])
            assert agent.session_id in agent.session_path.name
    # the TUI's title request was answered aside, not with the scripted reply
    kinds = [O.request_kind(r) for r in lanes["idle"].requests_for("openai")]
    assert kinds.count("title") == 1 and O.defaults_served(lanes["idle"]) == []


def project_path(tmp_path: Path, name: str) -> Path:
    return Path(os.path.realpath(tmp_path / name))


def agent_in(lab: TmuxLab, pane: str, ok: Callable[[Agent], bool] = lambda a: True) -> Agent:
    return wait_agents(lab, lambda f: pane in f and ok(f[pane]))[pane]


def exited(pid: int) -> bool:
    """Gone, or exited and not yet reaped (tmux can leave a pane's process a zombie a while)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def claude_request_with(lane: Lane, text: str) -> dict[str, Any] | None:
    for request in lane.requests_for("anthropic"):
        body = orjson.dumps(request.body).decode()
        if A.side_request_kind(request) is None and text in body:
            found: dict[str, Any] = request.body
            return found
    return None


def codex_request_with(lane: Lane, text: str) -> dict[str, Any] | None:
    for request in lane.requests_for("openai"):
        if O.request_kind(request) == "turn" and text in orjson.dumps(request.body).decode():
            found: dict[str, Any] = request.body
            return found
    return None


@pytest.mark.parametrize("provider", [Provider.CLAUDE, Provider.CODEX])
def test_end_an_idle_agent_and_resume_it_in_its_pane(
    provider: Provider, standin: StandIn, lab: TmuxLab, tmp_path: Path
) -> None:
    first, second = "Remember the word lantern.", "Which word did I ask you to remember?"
    lane = standin.lane()
    cwd = project(tmp_path, "proj")
    if provider is Provider.CLAUDE:
        lane.script("anthropic", A.Text("NOTED-1"), A.Text("LANTERN-2"))
        env = claude_home(tmp_path, lane, cwd)
        pane_id = start_claude(lab, "agent", env, cwd)
        ready, request_with = CLAUDE_READY, claude_request_with
    else:
        lane.script("openai", O.Text("NOTED-1"), O.Text("LANTERN-2"))
        env = codex_home(tmp_path, lane, cwd)
        pane_id = start_codex(lab, "agent", env, cwd)
        ready, request_with = CODEX_READY, codex_request_with
    lab.type(pane_id, first)
    lab.wait_for(pane_id, "NOTED-1", SETTLE)
    # Claude Code may show the answer a moment before its transcript is on disk: wait for both.
    agent = agent_in(
        lab, pane_id, lambda a: a.state is AgentState.IDLE and a.session_path is not None
    )
    assert agent.pane is not None and agent.session_id is not None and agent.cwd is not None
    pane = agent.pane
    old = [p for p in (agent.pid, agent.launcher_pid) if p]

    keep_on_exit(pane)
    started = time.monotonic()
    assert end_agent(agent, timeout=5.0)
    ended_in = time.monotonic() - started
    assert all(exited(p) for p in old)
    lab.wait_for(pane_id, lambda: pane_dead(pane), 5)  # kept, showing how the CLI ended
    if provider is Provider.CLAUDE:  # it had time to clean up, as when it ends on its own
        assert not Path(env["CLAUDE_CONFIG_DIR"], "sessions", f"{agent.pid}.json").exists()
    assert pane_id not in {a.pane.id for a in mine(lab) if a.pane}
    assert ended_in < 3.0

    argv = [str(claude_bin() if provider is Provider.CLAUDE else codex_bin())]
    argv += entry(provider).resume_args(agent.session_id)
    if provider is Provider.CLAUDE:
        argv.append("--dangerously-skip-permissions")
    else:
        argv.insert(2, "--no-daemon")
    respawn(pane, agent.cwd, argv, env)
    lab.wait_for(pane_id, lambda: ready in capture(pane) and first in capture(pane), START)
    lab.input_ready(pane_id)
    lab.type(pane_id, second)
    lab.wait_for(pane_id, "LANTERN-2", SETTLE)
    body = request_with(lane, second)
    assert body is not None and first in orjson.dumps(body).decode()  # the history went along
    resumed = agent_in(lab, pane_id, lambda a: a.state is AgentState.IDLE)
    assert resumed.pid not in old
    assert (resumed.session_id, resumed.session_path) == (agent.session_id, agent.session_path)


def test_headless_runs_are_working_agents_outside_tmux(standin: StandIn, tmp_path: Path) -> None:
    """``claude -p`` and ``codex exec`` are agents too: working, and in no pane."""
    claude_lane, codex_lane = standin.lane(), standin.lane()
    claude_lane.script("anthropic", A.Stall())
    codex_lane.script("openai", O.Stall())
    cwd = project(tmp_path, "proj")
    claude = ClaudeHome(tmp_path / "c", claude_lane)
    codex = CodexHome(tmp_path / "x", codex_lane)
    runs = [
        subprocess.Popen(claude.args("Headless Claude."), cwd=cwd, env=claude.env(),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True),
        subprocess.Popen(codex.exec_command("Headless Codex."), cwd=cwd, env=codex.env(),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True),
    ]  # fmt: skip
    try:
        homes = {str(claude.config_dir), str(codex.codex_home)}

        def ours() -> dict[Provider, Agent]:
            return {
                a.provider: a
                for a in list_agents(every_home=True)
                if homes & set(a.env_home.values()) and a.session_path is not None
            }

        deadline = time.monotonic() + SETTLE
        while len(found := ours()) < 2 or any(
            a.state is not AgentState.WORKING for a in found.values()
        ):
            assert time.monotonic() < deadline, found
            time.sleep(0.2)
        assert all(a.pane is None for a in found.values())
        assert [found[Provider.CLAUDE].session_path] == sorted(
            claude.config_dir.glob("projects/*/*.jsonl")
        )
        assert [found[Provider.CODEX].session_path] == codex.rollouts()
    finally:
        for run in runs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.pid, signal.SIGKILL)
            run.wait(10)
