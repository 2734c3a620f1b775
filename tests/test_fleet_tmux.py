"""The fleet switch for real: four Claude Code agents in the panes of a private tmux server, two
of them parked by a usage limit, moved to Codex in one step with ``--relaunch``.

Each pane then shows the real Codex TUI with the session loaded, and typing in it sends the
carried history (the stand-in's request log). Before the confirmation nothing touches a source
process or file.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import psutil
import pytest

from segue.running.agents import Agent, AgentState
from segue_testbed.claude_cli import ClaudeHome
from segue_testbed.codex_cli import CodexHome, codex_bin
from segue_testbed.standin import anthropic as A
from segue_testbed.standin import openai as O
from segue_testbed.standin.server import Lane, StandIn
from segue_testbed.tmux_lab import TmuxLab
from tests.segue_cli import segue
from tests.test_agents import (
    CODEX_READY,
    RESET,
    SETTLE,
    START,
    approve_key,
    project,
    start_claude,
    tui_env,
    wait_agents,
)

pytestmark = pytest.mark.realcli

AGENTS = {  # name: parked by a limit?
    "alpha": False,
    "bravo": False,
    "charlie": True,
    "delta": True,
}


@pytest.fixture
def lab() -> Iterator[TmuxLab]:
    with TmuxLab() as lab:
        yield lab


def _codex_target(root: Path, standin: StandIn, cwds: list[Path]) -> tuple[dict[str, str], Lane]:
    lane = standin.lane()
    home = CodexHome(root, lane)
    config = home.codex_home / "config.toml"
    trusted = "".join(
        f'\n[projects.{orjson.dumps(str(cwd)).decode()}]\ntrust_level = "trusted"\n' for cwd in cwds
    )
    config.write_text(
        config.read_text()
        + trusted
        + "\n[tui]\nscreen_reader_detection_done = true\n"
        + f'\n[notice.model_migrations]\n"{home.model}" = "gpt-6-sol"\n'
        + "\n[notice]\nhide_rate_limit_model_nudge = true\n"
    )
    env = home.env({"TERM": "tmux-256color"})
    env.pop("NO_COLOR", None)
    return env, lane


def segue_env(fleet: Fleet, standin: StandIn, tmp_path: Path) -> tuple[dict[str, str], Lane]:
    """segue's environment in these tests, and the Codex target's lane: a Codex home (in
    ``tmp_path``, trusting each agent's project), the fleet's Claude Code home, segue's own
    folders in ``tmp_path``, and the tmux servers' socket folder."""
    target_env, lane = _codex_target(tmp_path / "codex", standin, list(fleet.cwds.values()))
    return {
        **target_env,
        "CLAUDE_CONFIG_DIR": str(fleet.claude_config),
        "SEGUE_CODEX_BIN": str(codex_bin()),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
        "TMUX_TMPDIR": os.environ.get("TMUX_TMPDIR", "/tmp"),
    }, lane


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _settled(paths: dict[str, Path], timeout: float = 15.0) -> dict[str, str]:
    """The files' hashes once Claude Code has stopped writing them (it may add a record of its
    own a moment after the turn is shown ended): the same twice, half a second apart."""
    deadline = time.monotonic() + timeout
    last = {name: _sha(p) for name, p in paths.items()}
    while True:
        time.sleep(0.5)
        now = {name: _sha(p) for name, p in paths.items()}
        if now == last or time.monotonic() > deadline:
            return now
        last = now


def _end_codex_of(home: str) -> None:
    """Codex may leave its shared background server behind: end those of this test's home."""
    for process in psutil.process_iter(["name"]):
        try:
            if process.environ().get("CODEX_HOME") == home:
                process.kill()
        except psutil.Error:
            continue


@dataclass
class Fleet:
    panes: dict[str, str]  # name → tmux pane
    prompts: dict[str, str]  # name → the prompt each typed
    cwds: dict[str, Path]
    agents: dict[str, Agent]
    sources: dict[str, Path]  # name → its session file
    claude_config: Path  # the one Claude Code home they share, as one user's agents do


def start_fleet(standin: StandIn, lab: TmuxLab, tmp_path: Path, parked: dict[str, bool]) -> Fleet:
    """A live Claude Code TUI per name in ``lab``, each in a project of its own and all in one
    Claude Code home, that typed one prompt; those ``parked`` names were answered with a usage
    limit (a subscriber's), the others with a reply. Each talks to a stand-in lane of its own."""
    panes: dict[str, str] = {}
    prompts: dict[str, str] = {}
    cwds = {name: project(tmp_path, name) for name in parked}
    home = ClaudeHome(tmp_path / "claude", standin.lane())
    for cwd in cwds.values():
        home.trust(cwd)
    approve_key(home)
    for name, limited in parked.items():
        lane = standin.lane()
        lane.script(
            "anthropic",
            A.RateLimited(subscriber=True, reset_at=RESET) if limited else A.Text(f"NOTED-{name}"),
        )
        env = tui_env(home, lane, oauth=limited)
        panes[name] = start_claude(lab, name, env, cwds[name])
        prompts[name] = f"Remember that the {name} codeword is {name.upper()}-{len(name)}."
        lab.type(panes[name], prompts[name])
    for name, limited in parked.items():
        lab.wait_for(panes[name], "Usage limit reached" if limited else f"NOTED-{name}", SETTLE)
    found = wait_agents(
        lab,
        lambda f: all(
            panes[n] in f
            and f[panes[n]].session_path is not None
            and f[panes[n]].state is (AgentState.PARKED if p else AgentState.IDLE)
            for n, p in parked.items()
        ),
    )
    agents = {name: found[panes[name]] for name in parked}
    sources: dict[str, Path] = {}
    for name, agent in agents.items():
        assert agent.session_path is not None
        sources[name] = agent.session_path
    return Fleet(panes, prompts, cwds, agents, sources, home.config_dir)


def ask_on_codex(lab: TmuxLab, fleet: Fleet, name: str, codex_lane: Lane) -> None:
    """In the agent's pane, now the Codex TUI on its new session: a question whose request
    must carry the prompt the agent typed on Claude Code."""
    pane = fleet.panes[name]

    def loaded() -> bool:
        screen = lab.screen(pane)
        return CODEX_READY in screen and f"{name} codeword" in screen

    lab.wait_for(pane, loaded, START)
    lab.input_ready(pane)
    lab.type(pane, f"What is the {name} codeword?")
    lab.wait_for(pane, "ANSWER-FROM-CODEX", SETTLE)
    sent = [
        orjson.dumps(r.body).decode()
        for r in codex_lane.requests_for("openai")
        if O.request_kind(r) == "turn"
        and f"What is the {name} codeword?" in orjson.dumps(r.body).decode()
    ]
    assert sent and fleet.prompts[name] in sent[0]


def test_a_fleet_parked_on_claude_moves_to_codex_in_its_panes(
    standin: StandIn, lab: TmuxLab, tmp_path: Path
) -> None:
    fleet = start_fleet(standin, lab, tmp_path, AGENTS)
    panes, agents = fleet.panes, fleet.agents
    sources = fleet.sources
    hashes = _settled(sources)
    originals = {name: p.read_bytes() for name, p in sources.items()}

    env, codex_lane = segue_env(fleet, standin, tmp_path)
    try:
        # without the confirmation nothing happens to any agent
        # (--under: only this test's agents, not those of a test running alongside, nor the
        # agents of whoever runs the suite)
        scope = ["--under", str(tmp_path)]
        refused = segue(["switch", "--from", "claude", *scope], env)
        assert refused.returncode == 1 and "--yes" in refused.stderr, refused.stderr
        for name, agent in agents.items():
            assert psutil.pid_exists(agent.pid), name
            assert _sha(sources[name]) == hashes[name]
        assert "Switch" not in "".join(lab.screen(p) for p in panes.values())

        codex_lane.script("openai", *[O.Text("ANSWER-FROM-CODEX") for _ in AGENTS])
        done = segue(
            ["switch", "--from", "claude", *scope, "--yes", "--relaunch", "--json",
             "--arrival-compact", "off"],
            env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        result = orjson.loads(done.stdout)
        assert result["from"] == "claude" and result["to"] == "codex"
        assert result["summary"].startswith("Switched 4 agents to Codex"), [
            (a["state"], a["error"], a["skipped"]) for a in result["agents"]
        ]
        by_pane = {a["pane"]: a for a in result["agents"]}
        for name in AGENTS:
            agent = agents[name]
            assert agent.pane is not None
            row = by_pane[agent.pane.target]
            assert row["switch"] and row["switch"]["session_id"]
            assert any("relaunched on Codex" in note for note in row["notes"]), row["notes"]
            assert not psutil.pid_exists(agent.pid) or psutil.Process(agent.pid).status() == (
                psutil.STATUS_ZOMBIE
            )
            # segue wrote nothing there; Claude Code itself adds its exit bookkeeping
            assert sources[name].read_bytes().startswith(originals[name])

        # each pane runs Codex on its new session; typing there sends the carried history
        for name in AGENTS:
            ask_on_codex(lab, fleet, name, codex_lane)
    finally:
        _end_codex_of(env["CODEX_HOME"])


def _end_codex_of_home(home: Path) -> None:
    """The Codex processes (and their shared server) running with ``home`` as their HOME."""
    for process in psutil.process_iter(["name"]):
        try:
            if process.info["name"] == "codex" and process.environ().get("HOME") == str(home):
                process.kill()
        except psutil.Error:
            continue


def test_an_agent_of_another_home_is_moved_into_its_own_home(
    standin: StandIn, lab: TmuxLab, tmp_path: Path
) -> None:
    # a Claude Code agent of another home (its HOME holds its Claude Code and its Codex): its
    # session is named, so it moves, into the Codex of its own home, where its pane's Codex
    # finds it; the Codex home of whoever runs segue is left alone
    cwd = project(tmp_path, "theirs-project")
    theirs_env, theirs_codex = _codex_target(tmp_path / "theirs", standin, [cwd])
    theirs = Path(theirs_env["HOME"])
    claude = ClaudeHome(tmp_path / "theirs", standin.lane())
    assert claude.home == theirs
    claude.trust(cwd)
    approve_key(claude)
    lane = standin.lane()
    lane.script("anthropic", A.Text("NOTED-theirs"))
    pane = start_claude(lab, "theirs", tui_env(claude, lane), cwd)
    prompt = "Remember that the theirs codeword is THEIRS-6."
    lab.type(pane, prompt)
    lab.wait_for(pane, "NOTED-theirs", SETTLE)
    found = wait_agents(
        lab,
        lambda f: (
            pane in f and f[pane].session_path is not None and f[pane].state is AgentState.IDLE
        ),
    )
    agent = found[pane]
    assert agent.session_path is not None and agent.session_path.is_relative_to(theirs)

    mine_env, _ = _codex_target(tmp_path / "mine", standin, [cwd])
    mine = Path(mine_env["HOME"])
    env = {
        **mine_env,
        "CLAUDE_CONFIG_DIR": str(mine / ".claude"),
        "SEGUE_CODEX_BIN": str(codex_bin()),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
        "TMUX_TMPDIR": os.environ.get("TMUX_TMPDIR", "/tmp"),
    }
    theirs_codex.script("openai", O.Text("ANSWER-FROM-CODEX"))
    try:
        done = segue(
            ["switch", str(agent.session_path), "--to", "codex", "--yes", "--relaunch",
             "--json", "--arrival-compact", "off"],
            env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr + done.stdout
        (row,) = orjson.loads(done.stdout)["agents"]
        assert row["switch"] is not None, row
        written = Path(row["switch"]["path"])
        assert written.is_relative_to(theirs / ".codex" / "sessions"), written
        assert not list(mine.rglob("rollout-*.jsonl"))
        assert any("relaunched on Codex" in note for note in row["notes"]), row["notes"]

        # its pane runs Codex of its own home on that session: the history is there
        def loaded() -> bool:
            screen = lab.screen(pane)
            return CODEX_READY in screen and "theirs codeword" in screen

        lab.wait_for(pane, loaded, START)
        lab.input_ready(pane)
        lab.type(pane, "What is the theirs codeword?")
        lab.wait_for(pane, "ANSWER-FROM-CODEX", SETTLE)
        sent = [
            orjson.dumps(r.body).decode()
            for r in theirs_codex.requests_for("openai")
            if O.request_kind(r) == "turn"
        ]
        assert sent and prompt in sent[-1]
    finally:
        _end_codex_of_home(theirs)
        _end_codex_of(mine_env["CODEX_HOME"])
