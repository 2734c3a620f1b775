"""A running Codex process → the thread it works on.

Codex writes no pid file. The native ``codex`` binary holds ``$CODEX_HOME/thread-writer-locks/
<thread id>.lock`` open (with an exclusive ``flock``) from start-up, before the first turn, and
keeps the thread's rollout open from the first turn on. After ``/new`` it holds the old thread's
lock for a while too; thread ids are UUIDv7, so the largest is the newest. A lock file left on
disk by a killed Codex means nothing: only one held open counts. On node releases without
``process.execve`` the npm package's ``codex`` script runs the native binary as a child and
forwards signals to it: that node process is its launcher.

By default (Codex 0.169) the TUI runs its turns in a shared app-server daemon
(``codex app-server … --managed-daemon``, one per home): the daemon holds the locks and the
rollouts of every thread it serves, the TUI none. The daemon is a server, not an agent. A TUI
with no lock of its own works on the thread it resumed (``codex resume <id>``, as segue relaunches
a pane) while the daemon holds that thread, else on the daemon's one thread in the TUI's folder
that no other TUI resumed (none when that is not one thread: not told, rather than told wrong).
One look at the processes serves a whole agents scan.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec
import psutil

from segue.formats.codex import paths
from segue.providers.base import RunningSession, npm_launcher

__all__ = ["running_session"]

_LOCKS = "thread-writer-locks"
_DAEMON = "--managed-daemon"
_HOME_VARS = ("HOME", "CODEX_HOME")


def is_codex(process: psutil.Process) -> bool:
    """The native binary (its name first: cheap; the node launcher is named ``node``)."""
    return process.name() == "codex" and os.path.basename(process.exe()) == "codex"


def running_session(process: psutil.Process) -> RunningSession | None:
    if not is_codex(process):
        return None
    argv = process.cmdline()
    if "app-server" in argv[1:]:  # the TUIs' shared daemon, or one call to it: a server
        return None
    open_paths = [Path(f.path) for f in process.open_files()]
    threads = sorted(
        p.name.removesuffix(".lock")
        for p in open_paths
        if p.parent.name == _LOCKS and p.suffix == ".lock" and p.name.count(".") == 1
    )
    env = process.environ()
    homes = {k: env[k] for k in _HOME_VARS if k in env}
    if not threads:  # a TUI whose daemon writes for it, or not a thread's writer at all
        return _served(process, argv, env, homes)
    thread = threads[-1]
    rollout = next(
        (p for p in open_paths if paths.session_id_from_name(p) == thread and p.is_file()), None
    )
    return RunningSession(
        thread, rollout, homes, launcher_pid=npm_launcher(process, ("codex", "codex.js"))
    )


_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
# Codex's subcommands that are not its TUI (0.169): their processes are never an agent
_NOT_THE_TUI = frozenset(
    [
        "exec",
        "e",
        "login",
        "logout",
        "mcp",
        "mcp-server",
        "app-server",
        "completion",
        "sandbox",
        "debug",
        "apply",
        "a",
        "cloud",
        "responses-api-proxy",
        "stdio-to-uds",
        "generate-ts",
        "features",
        "help",
    ]
)


def _subcommand(argv: list[str]) -> str | None:
    """The first word after the options (``resume``, ``exec``, …; a prompt is one too)."""
    return next((a for a in argv[1:] if not a.startswith("-")), None)


def _resumed(argv: list[str]) -> str | None:
    """The thread ``codex resume [OPTIONS] <id>`` names."""
    if _subcommand(argv) != "resume":
        return None
    after = argv[argv.index("resume", 1) + 1 :]
    return next((a.lower() for a in after if _ID.fullmatch(a)), None)


class _Served(msgspec.Struct, frozen=True):
    """What the shared daemons of one Codex home serve, and which threads TUIs resumed."""

    locks: frozenset[str]  # the threads whose locks the daemons hold
    rollouts: dict[str, Path]  # thread → the rollout a daemon has open
    resumed: frozenset[str]  # threads a lockless TUI of this home names (codex resume <id>)


# one look at the daemons of a home serves every Codex process of one agents scan, and no other
# scan: each one begins by forgetting it (a look kept for a few seconds could miss a turn the
# daemon began since, however slow the machine is)
_seen: dict[Path, _Served] = {}


def new_scan() -> None:
    """An agents scan begins: every home's daemons are looked at again."""
    _seen.clear()


def _served_by_daemons(home: Path) -> _Served:
    """One look at the processes for a Codex home, kept until the next scan begins."""
    known = _seen.get(home)
    if known is not None:
        return known
    locks: set[str] = set()
    rollouts: dict[str, Path] = {}
    resumed: set[str] = set()
    for other in psutil.process_iter(["name"]):
        try:
            if other.info["name"] != "codex":
                continue
            argv = other.cmdline()
            if paths.codex_home(other.environ()) != home:
                continue
            if _DAEMON in argv:
                for f in other.open_files():
                    p = Path(f.path)
                    if p.parent.name == _LOCKS and p.suffix == ".lock":
                        locks.add(p.name.removesuffix(".lock"))
                    elif p.suffix == ".jsonl" and (tid := paths.session_id_from_name(p)):
                        rollouts[tid] = p
            elif (tid := _resumed(argv)) is not None:
                resumed.add(tid)
        except (psutil.Error, OSError):
            continue
    served = _Served(frozenset(locks), rollouts, frozenset(resumed))
    _seen[home] = served
    return served


def _served(
    process: psutil.Process, argv: list[str], env: dict[str, str], homes: dict[str, str]
) -> RunningSession | None:
    if _subcommand(argv) in _NOT_THE_TUI:
        return None  # ``codex login``, ``codex exec``, a server: not an agent
    served = _served_by_daemons(paths.codex_home(env))
    if not served.locks:
        return None  # no daemon writes for it: not a thread's writer
    thread = _resumed(argv)
    if thread is None or thread not in served.locks:
        # a fresh TUI (or one that went on with /new): the daemon's one thread in its folder
        # that no other TUI resumed; none when that is not one thread
        here = os.path.realpath(process.cwd())
        mine = [
            t
            for t, p in served.rollouts.items()
            if t in served.locks and t not in served.resumed and paths.recorded_cwd(p) == here
        ]
        if len(mine) != 1:
            return None
        thread = mine[0]
    rollout = served.rollouts.get(thread)
    if rollout is None or not rollout.is_file():
        files = paths.thread_files(paths.sessions_dir(env), thread)
        rollout = files[-1] if files else None
    return RunningSession(
        thread, rollout, homes, launcher_pid=npm_launcher(process, ("codex", "codex.js"))
    )
