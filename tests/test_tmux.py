"""segue's tmux calls against a private tmux server (no CLI needed): finding panes, respawning a
command in one, reading its screen, a message on an attached client's status line."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from segue.running.agents import list_agents
from segue.running.tmux import (
    Pane,
    TmuxError,
    capture,
    default_sockets,
    display_message,
    list_panes,
    pane_dead,
    respawn,
)
from segue_testbed.terminal import Terminal
from segue_testbed.tmux_lab import TmuxLab

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def lab() -> Iterator[TmuxLab]:
    with TmuxLab() as lab:
        yield lab


def pane_of(lab: TmuxLab, pane_id: str) -> Pane:
    found = [p.pane for p in list_panes([lab.socket]) if p.pane.id == pane_id]
    assert len(found) == 1
    return found[0]


def test_panes_are_found_with_their_process_and_target(lab: TmuxLab, tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"]}
    first = lab.window("one", ["sleep", "60"], cwd=tmp_path, env=env)
    second = lab.window("two", ["sleep", "60"], cwd=tmp_path, env=env)
    panes = {p.pane.id: p for p in list_panes([lab.socket, lab.socket])}  # each server once
    assert set(panes) == {first, second}
    assert panes[second].pane.target == "lab:1.0" and panes[second].pane.server == lab.socket
    assert panes[first].pid == lab.pane_pids()[first] and not panes[first].dead
    assert lab.socket in default_sockets()  # a -L server lives in the user's socket folder


def test_no_tmux_or_no_server_means_no_panes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert list_panes([str(tmp_path / "no-such-socket")]) == []
    assert default_sockets({"TMUX_TMPDIR": str(tmp_path)}) == []
    folder = tmp_path / f"tmux-{os.getuid()}"
    folder.mkdir()
    with socket.socket(socket.AF_UNIX) as stale:  # a killed server's socket file stays
        stale.bind(str(folder / "default"))
    assert default_sockets({"TMUX_TMPDIR": str(tmp_path)}) == []
    monkeypatch.setenv("PATH", str(tmp_path))  # no tmux at all
    assert list_panes(default_sockets()) == []
    list_agents()  # and the agents are still listed, quietly without panes


def test_respawn_runs_a_command_in_the_pane_with_its_cwd_and_env(
    lab: TmuxLab, tmp_path: Path
) -> None:
    pane_id = lab.window("w", ["sleep", "60"], cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    pane = pane_of(lab, pane_id)
    work = tmp_path / "work dir"
    work.mkdir()
    respawn(pane, str(work), ["true"])
    lab.wait_for(pane_id, lambda: pane_dead(pane), 10)  # remain-on-exit: the pane stays
    # a dead pane respawns too (tmux 3.3 may drop the screen of a command that exits at once,
    # so this one stays)
    command = ["sh", "-c", 'echo "got $SEGUE_X in $(pwd)"; sleep 60']
    respawn(pane, str(work), command, {"SEGUE_X": "a b"})
    lab.wait_for(pane_id, lambda: f"got a b in {work}" in capture(pane), 10)
    assert not pane_dead(pane)


def test_pane_commands_fail_with_one_line(lab: TmuxLab, tmp_path: Path) -> None:
    lab.window("w", ["sleep", "60"], cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    gone = Pane(lab.socket, "%999", "lab:9.0")
    for call in (lambda: capture(gone), lambda: respawn(gone, str(tmp_path), ["true"])):
        with pytest.raises(TmuxError) as error:
            call()
        assert "\n" not in str(error.value) and "%999" in str(error.value)
    with pytest.raises(TmuxError, match="no command"):
        respawn(gone, str(tmp_path), [])


def test_display_message_reaches_an_attached_client(lab: TmuxLab, tmp_path: Path) -> None:
    pane_id = lab.window("w", ["sleep", "60"], cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    pane = pane_of(lab, pane_id)
    display_message(pane, "nobody is attached")  # no client: nothing happens
    argv = ["tmux", "-L", lab.name, "-f", "/dev/null", "attach", "-t", "lab"]
    with Terminal(argv, cwd=tmp_path, env={**os.environ, "TMUX": ""}) as term:
        lab.wait_for(pane_id, lambda: lab.tmux("list-clients").strip() != "", 10)
        display_message(pane, "segue: agent #1 moved to codex")
        term.wait_for("segue: agent #1 moved to codex", 10)
