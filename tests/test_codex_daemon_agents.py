"""Codex TUIs whose turns run in Codex's shared app-server daemon (its default since 0.169):
which thread each process works on, as the agents scan tells it, on the recorded rollouts of two
real sessions. The daemon holds every lock and rollout; a TUI holds none. The processes are
stand-ins with the fields psutil gives (a real daemon-mode pair is driven in
tests/test_tui_tmux.py)."""

from __future__ import annotations

import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

import segue.providers.codex.agents as codex_agents
from segue_testbed.fixtures import all_fixtures

FIXTURES = {f.name: f for f in all_fixtures()}


class Process:
    """What the scan asks of a process."""

    def __init__(self, pid: int, argv: list[str], cwd: str, files: list[Path], env: Any) -> None:
        self.pid, self.argv, self._cwd, self.files, self._env = pid, argv, cwd, files, env
        self.info = {"name": "codex"}

    def name(self) -> str:
        return "codex"

    def exe(self) -> str:
        return "/usr/lib/codex/bin/codex"

    def cmdline(self) -> list[str]:
        return self.argv

    def open_files(self) -> list[Any]:
        return [types.SimpleNamespace(path=str(f)) for f in self.files]

    def environ(self) -> dict[str, str]:
        return dict(self._env)

    def cwd(self) -> str:
        return self._cwd

    def parent(self) -> None:
        return None


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    a, b = FIXTURES["codex-chat"], FIXTURES["codex-multi_turn"]
    home = tmp_path / "home"
    rollouts = {}
    for f in (a, b):
        target = home / str(f.spec["transcript"]).removeprefix("home/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.transcript.read_bytes())
        rollouts[f.spec["session_id"]] = target
    locks = home / ".codex" / "thread-writer-locks"
    locks.mkdir(parents=True)
    for thread in rollouts:
        (locks / f"{thread}.lock").touch()
    env = {"HOME": str(home)}
    processes: list[Process] = []
    scans = [0]

    def process_iter(attrs: object = None) -> Iterator[Process]:
        scans[0] += 1
        return iter(list(processes))

    monkeypatch.setattr(psutil, "process_iter", process_iter)
    monkeypatch.setattr(codex_agents, "_seen", {})
    daemon_argv = ["codex", "app-server", "--listen", "unix://", "--managed-daemon"]

    def daemon(*threads: str) -> Process:
        files = [locks / f"{t}.lock" for t in threads] + [rollouts[t] for t in threads]
        return Process(1, daemon_argv, str(home), files, env)

    yield {
        "a": a.spec["session_id"],
        "b": b.spec["session_id"],
        "cwd_a": a.spec["cwd"],
        "cwd_b": b.spec["cwd"],
        "env": env,
        "rollouts": rollouts,
        "processes": processes,
        "daemon": daemon,
        "scans": scans,
    }


def session(process: Process) -> str | None:
    codex_agents._seen.clear()  # each case is a new scan
    found = codex_agents.running_session(process)  # type: ignore[arg-type]
    return None if found is None else found.session_id


def test_the_daemon_is_a_server_and_a_resumed_tui_works_on_its_thread(
    world: dict[str, Any],
) -> None:
    daemon = world["daemon"](world["a"])
    tui = Process(2, ["codex", "resume", world["a"]], world["cwd_a"], [], world["env"])
    world["processes"][:] = [daemon, tui]
    assert session(daemon) is None
    assert session(tui) == world["a"]
    found = codex_agents.running_session(tui)  # type: ignore[arg-type]
    assert found is not None and found.path == world["rollouts"][world["a"]]


def test_a_fresh_tui_takes_the_daemons_one_thread_in_its_folder_that_no_one_resumed(
    world: dict[str, Any],
) -> None:
    daemon = world["daemon"](world["a"], world["b"])
    fresh = Process(3, ["codex"], world["cwd_b"], [], world["env"])
    world["processes"][:] = [daemon, fresh]
    assert session(fresh) == world["b"]
    # another fresh TUI in a folder where the daemon's thread is one a TUI resumed: not told
    resumed = Process(4, ["codex", "resume", "--no-alt-screen", world["a"]], world["cwd_a"], [],
                      world["env"])  # fmt: skip
    second = Process(5, ["codex"], world["cwd_a"], [], world["env"])
    world["processes"][:] = [daemon, resumed, second]
    assert session(resumed) == world["a"]
    assert session(second) is None


def test_codex_commands_that_are_not_its_tui_are_never_agents(world: dict[str, Any]) -> None:
    daemon = world["daemon"](world["a"])
    world["processes"][:] = [daemon]
    for argv in (["codex", "login"], ["codex", "mcp-server"], ["codex", "exec", "hi"]):
        assert session(Process(6, argv, world["cwd_a"], [], world["env"])) is None, argv


def test_after_new_a_resumed_tui_is_on_the_thread_the_daemon_holds(
    world: dict[str, Any],
) -> None:
    # resumed A, then /new in folder B's: the daemon no longer holds A, but holds B there
    daemon = world["daemon"](world["b"])
    tui = Process(7, ["codex", "resume", world["a"]], world["cwd_b"], [], world["env"])
    world["processes"][:] = [daemon, tui]
    assert session(tui) == world["b"]


def test_one_look_at_the_processes_serves_a_whole_scan(world: dict[str, Any]) -> None:
    daemon = world["daemon"](world["a"], world["b"])
    tuis = [Process(10 + n, ["codex"], world["cwd_b"], [], world["env"]) for n in range(20)]
    world["processes"][:] = [daemon, *tuis]
    codex_agents._seen.clear()
    world["scans"][0] = 0
    for tui in tuis:
        codex_agents.running_session(tui)  # type: ignore[arg-type]
    assert world["scans"][0] == 1
