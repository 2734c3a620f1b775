"""The coding agents running now: each CLI process, the session it works on, its tmux pane and
what it is doing.

Every process is offered to each provider's entry (``running_session``), which reads the files
the process itself uses (its own environment picks its home), so nothing here knows a provider.
State comes from the session file, the live process and what the CLI says of itself: *parked*
when the session's last word is a usage-limit or rate-limit error (even while the CLI waits for
the reset on screen), *working* while a turn is unfinished, *idle* otherwise (also before the
first prompt, when there is no file yet).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from pathlib import Path

import msgspec
import psutil

from segue.model.conversation import Provider
from segue.model.errors import SegueError
from segue.model.session_info import SessionInfo, SessionState
from segue.providers import ProviderEntry, all_entries
from segue.providers import entry as provider_entry
from segue.providers.base import RunningSession
from segue.running.tmux import Pane, PaneProcess, default_sockets, list_panes

__all__ = [
    "Agent",
    "AgentState",
    "Pane",
    "end_agent",
    "home_variables",
    "in_home",
    "list_agents",
    "working_on",
]


class AgentState(StrEnum):
    WORKING = "working"
    IDLE = "idle"
    PARKED = "parked"  # stopped by a usage or rate limit, until reset_at


class Agent(msgspec.Struct):
    provider: Provider
    pid: int
    session_id: str | None
    session_path: Path | None  # None until the CLI writes the session's file
    cwd: str | None
    pane: Pane | None  # None: not in a tmux pane segue can see
    state: AgentState
    reset_at: datetime | None
    command: list[str]
    env_home: dict[str, str]  # HOME and every CLI's home variable the process runs with
    launcher_pid: int | None = None  # a process that exits with it (Codex's node wrapper)
    started: float | None = None  # create time, against pid reuse


def list_agents(
    env: Mapping[str, str] | None = None,
    *,
    tmux_sockets: Sequence[str] | None = None,
    every_home: bool = False,
    panes: bool = True,
) -> list[Agent]:
    """Every Claude Code and Codex process of this machine that segue can inspect and that runs
    with ``env``'s home of its CLI, mapped to its session and (through its parents) to the tmux
    pane it runs in (not looked for without ``panes``). ``env`` also gives the tmux socket folder
    (``$TMUX_TMPDIR``); ``tmux_sockets`` adds servers to the user's default ones. Processes of
    other users, of other homes (unless ``every_home``), and processes that end during the scan
    are left out, quietly. Every scan looks afresh: nothing seen by an earlier one is reused."""
    entries = all_entries()
    for e in entries:
        e.new_scan()
    parents: dict[int, int] = {}
    mine = {e.provider: _home(e, os.environ if env is None else env) for e in entries}
    found: list[tuple[ProviderEntry, psutil.Process, RunningSession]] = []
    for process in psutil.process_iter():
        try:
            with process.oneshot():
                parents[process.pid] = process.ppid()
                match = next(
                    ((e, r) for e in entries if (r := e.running_session(process)) is not None), None
                )
        except (psutil.Error, OSError):
            continue
        if match is not None and (
            every_home or _runs_in(match[0], match[1].env_home, mine[match[0].provider])
        ):
            found.append((match[0], process, match[1]))
    if not found:
        return []
    made = [one for e, p, r in found if (one := _agent(e, p, r)) is not None]
    agents = [agent for agent, _ in made]
    if panes:
        servers = sorted({server for _, server in made if server})
        sockets = [*default_sockets(env), *(tmux_sockets or ()), *servers]
        by_pid = {p.pid: p for p in list_panes(sockets) if not p.dead}
        for agent in agents:
            agent.pane = _pane_of(agent.pid, parents, by_pid)
    agents.sort(key=lambda a: (a.pane.target if a.pane else "~", a.pid))
    return agents


def working_on(
    provider: Provider,
    session_id: str,
    path: Path | None = None,
    *,
    agents: Sequence[Agent] | None = None,
    env: Mapping[str, str] | None = None,
) -> Agent | None:
    """The agent in the middle of a turn of this session (named by its id, or its file), from
    ``agents`` or a scan now; None when there is none, or the scan cannot be made. A scan for a
    file looks at the CLIs of every home (a file is one session, whoever's home it is in); for
    an id alone, at those of ``env``'s home."""
    if agents is None:
        try:
            agents = list_agents(env, every_home=path is not None, panes=False)
        except (OSError, SegueError):
            return None
    for agent in agents:
        if path is not None and agent.session_path is not None:
            # (a file names one session; an id may be a copy's too, in another home)
            same = os.path.realpath(agent.session_path) == os.path.realpath(path)
        else:
            same = agent.session_id == session_id
        if agent.provider is provider and same and agent.state is AgentState.WORKING:
            return agent
    return None


def home_variables() -> list[str]:
    """The variables that choose the CLIs' homes: ``HOME``, then each one's own."""
    return ["HOME", *(e.home_variable for e in all_entries() if e.home_variable)]


def in_home(agent: Agent, env: Mapping[str, str] | None) -> bool:
    """Whether the agent's CLI runs with ``env``'s home of it: an agent of another account (or
    of another scratch home) works on sessions this one neither lists nor may move on its own,
    even when a copy of one carries the same id."""
    e = provider_entry(agent.provider)
    return _runs_in(e, agent.env_home, _home(e, os.environ if env is None else env))


def _runs_in(entry: ProviderEntry, theirs: Mapping[str, str], home: str | None) -> bool:
    """Whether a process with the environment ``theirs`` runs in ``home``, this CLI's home."""
    return home is not None and _home(entry, theirs) == home


def _home(entry: ProviderEntry, env: Mapping[str, str]) -> str | None:
    """The CLI's home folder for ``env``, None when there is none to say (no HOME, and a user
    the system does not know)."""
    try:
        return os.path.realpath(entry.home(env))
    except (SegueError, OSError):
        return None


def _agent(
    entry: ProviderEntry, process: psutil.Process, running: RunningSession
) -> tuple[Agent, str] | None:
    """The agent (its pane not yet looked for), and the tmux server it was started under
    (``$TMUX``: socket,pid,session), which may live outside the default folder (``tmux -S``)."""
    try:
        with process.oneshot():
            command = process.cmdline()
            cwd = process.cwd()
            started = process.create_time()
            environ = process.environ()
    except psutil.Error:
        return None
    # every CLI's home as this process has it: a switch of its session writes the other CLI's
    # session where the agent, relaunched with its own environment, will look for it
    homes = {
        name: environ[name]
        for name in home_variables()
        if name in environ and name not in running.env_home
    }
    state, reset_at = _state(entry, running)
    agent = Agent(
        provider=entry.provider,
        pid=process.pid,
        session_id=running.session_id,
        session_path=running.path,
        cwd=cwd,
        pane=None,
        state=state,
        reset_at=reset_at,
        command=command,
        env_home={**running.env_home, **homes},
        launcher_pid=running.launcher_pid,
        started=started,
    )
    return agent, environ.get("TMUX", "").split(",", 1)[0]


def _state(entry: ProviderEntry, running: RunningSession) -> tuple[AgentState, datetime | None]:
    info: SessionInfo | None = None  # (no file yet, or one that cannot be read)
    if running.path is not None:
        with contextlib.suppress(OSError, ValueError):
            info = entry.peek(running.path)
    if info is not None and info.state is SessionState.LIMIT:
        return AgentState.PARKED, info.reset_at
    working = running.busy or (info is not None and info.state is SessionState.WORKING)
    return (AgentState.WORKING if working else AgentState.IDLE), None


def _pane_of(pid: int, parents: Mapping[int, int], panes: Mapping[int, PaneProcess]) -> Pane | None:
    """The pane whose process is ``pid`` or one of its ancestors."""
    seen: set[int] = set()
    while pid > 1 and pid not in seen:
        if pid in panes:
            return panes[pid].pane
        seen.add(pid)
        pid = parents.get(pid, 0)
    return None


def end_agent(agent: Agent, timeout: float = 5.0) -> bool:
    """End an agent's CLI: SIGTERM, wait up to ``timeout`` seconds for it (and its launcher) to
    exit, then SIGKILL. True when the processes are gone (also when they already were). Meant
    for an idle or parked agent: a turn in flight is cut where it is.

    A process that exited but was not yet reaped by its parent (a zombie: tmux can leave a
    pane's process so for seconds) counts as gone: it holds no file and no lock."""
    processes = [p for p in (_same(agent.pid, agent.started), _same(agent.launcher_pid)) if p]
    if not processes:
        return True
    if not _signal(processes[0], signal.SIGTERM):
        return False
    alive = _wait_gone(processes, timeout)
    if not all(_signal(process, signal.SIGKILL) for process in alive):
        return False
    return not _wait_gone(alive, max(1.0, timeout / 5))


def _signal(process: psutil.Process, number: int) -> bool:
    """Send ``number`` to ``process``; False when that is not allowed."""
    try:
        process.send_signal(number)
    except psutil.NoSuchProcess:
        pass
    except psutil.AccessDenied:
        return False
    return True


def _wait_gone(processes: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait until every process has exited; the ones still running after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [p for p in processes if not _gone(p)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.02)


def _gone(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False


def _same(pid: int | None, started: float | None = None) -> psutil.Process | None:
    """The process ``pid`` if it still runs (and started at ``started``, when given)."""
    if pid is None:
        return None
    try:
        process = psutil.Process(pid)
        if started is not None and abs(process.create_time() - started) > 0.01:
            return None
        return process if process.status() != psutil.STATUS_ZOMBIE else None
    except psutil.Error:
        return None
