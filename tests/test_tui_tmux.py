"""``segue tui`` for real, in a private tmux server: three live Claude Code TUIs, two of them
stopped by a usage limit the stand-in gave them. Keys filter the parked agents, select them all
and switch them; the panes relaunch on the real Codex TUI with the history, which the next
request proves, and the table shows the agents where they now are. Before the confirmation
nothing touches an agent."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import psutil
import pytest

from segue_testbed.standin import openai as O
from segue_testbed.standin.server import StandIn
from segue_testbed.tmux_lab import TmuxLab
from tests.segue_cli import segue
from tests.test_agents import (
    START,
)
from tests.test_fleet_tmux import (
    _end_codex_of,
    _settled,
    _sha,
    ask_on_codex,
    segue_env,
    start_fleet,
)

pytestmark = pytest.mark.realcli

AGENTS = {"alpha": False, "charlie": True, "delta": True}  # name: stopped by a limit?


@pytest.fixture
def lab() -> Iterator[TmuxLab]:
    with TmuxLab(cols=140, rows=40) as lab:
        yield lab


def _keys(lab: TmuxLab, pane: str, *keys: str) -> None:
    for key in keys:
        lab.tmux("send-keys", "-t", pane, key)
        time.sleep(0.25)


def test_keys_in_segue_tui_move_the_parked_agents_to_codex_in_their_panes(
    standin: StandIn, lab: TmuxLab, tmp_path: Path
) -> None:
    fleet = start_fleet(standin, lab, tmp_path, AGENTS)
    panes, agents = fleet.panes, fleet.agents
    sources = fleet.sources
    hashes = _settled(sources)

    env, codex_lane = segue_env(fleet, standin, tmp_path)
    env["LANG"] = "C.UTF-8"
    tui = lab.window(
        "segue",
        [sys.executable, "-m", "segue", "tui", "--offline", "--under", str(tmp_path)],
        cwd=tmp_path,
        env=env,
    )
    try:
        lab.wait_for(tui, "3 rows: 3 running, 2 parked", START)
        lab.wait_for(tui, lambda: "planning" not in lab.screen(tui), START)
        _keys(lab, tui, "/")
        lab.tmux("send-keys", "-t", tui, "-l", "parked")
        lab.wait_for(tui, "2 match", 10)
        _keys(lab, tui, "Enter", "a", "s")
        lab.wait_for(tui, "Would switch 2 agents to Codex", START)
        # the sheet is up and nothing has been done to any agent
        for name, agent in agents.items():
            assert psutil.pid_exists(agent.pid), name
        assert {n: _sha(p) for n, p in sources.items()} == hashes

        codex_lane.script("openai", *[O.Text("ANSWER-FROM-CODEX") for _ in range(2)])
        _keys(lab, tui, "Enter")  # the confirm button has the focus
        lab.wait_for(tui, "Switched 2 agents to Codex", 120)
        assert psutil.pid_exists(agents["alpha"].pid)  # not selected: left alone
        time.sleep(0.5)
        _keys(lab, tui, "Enter")  # close: the fleet reloads
        _keys(lab, tui, "Escape")  # the filter goes
        # the table follows the agents: both on Codex now (it reads the fleet every 10 s), and
        # their Claude Code sessions, still parked, say where they went
        lab.wait_for(tui, "5 rows: 3 running, 2 parked", 60)
        lab.wait_for(tui, lambda: lab.screen(tui).count("Codex") >= 3, 30)  # rows and banner
        assert lab.screen(tui).count("moved to codex in batch") == 2
        # each pane is one agent: Codex's shared daemon is a server, not a fourth agent
        listed = orjson.loads(segue(["agents", "--json"], env).stdout)["agents"]
        socket = lab.socket  # (other tests run agents in tmux servers of their own)
        ours = {a["pane"]["id"]: a for a in listed if a["pane"] and a["pane"]["server"] == socket}
        assert {p: a["provider"] for p, a in ours.items()} == {
            panes["alpha"]: "claude",
            panes["charlie"]: "codex",
            panes["delta"]: "codex",
        }, listed
        assert not any("app-server" in a["command"] for a in ours.values()), listed
        assert len({ours[panes[n]]["session"] for n in ("charlie", "delta")}) == 2

        for name in ("charlie", "delta"):
            ask_on_codex(lab, fleet, name, codex_lane)
        _keys(lab, tui, "q")
        lab.wait_for(tui, lambda: "segue — the fleet" not in lab.screen(tui), 15)
    finally:
        _end_codex_of(env["CODEX_HOME"])
