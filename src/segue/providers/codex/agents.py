"""A running Codex process → the thread it works on.

Codex writes no pid file. The native ``codex`` binary holds ``$CODEX_HOME/thread-writer-locks/
<thread id>.lock`` open (with an exclusive ``flock``) from start-up, before the first turn, and
keeps the thread's rollout open from the first turn on. After ``/new`` it holds the old thread's
lock for a while too; thread ids are UUIDv7, so the largest is the newest. A lock file left on
disk by a killed Codex means nothing: only one held open counts. On node releases without
``process.execve`` the npm package's ``codex`` script runs the native binary as a child and
forwards signals to it: that node process is its launcher.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil

from segue.formats.codex import paths
from segue.providers.base import RunningSession

__all__ = ["running_session"]

_LOCKS = "thread-writer-locks"
_HOME_VARS = ("HOME", "CODEX_HOME")


def is_codex(process: psutil.Process) -> bool:
    """The native binary (its name first: cheap; the node launcher is named ``node``)."""
    return process.name() == "codex" and os.path.basename(process.exe()) == "codex"


def running_session(process: psutil.Process) -> RunningSession | None:
    if not is_codex(process):
        return None
    open_paths = [Path(f.path) for f in process.open_files()]
    threads = sorted(
        p.name.removesuffix(".lock")
        for p in open_paths
        if p.parent.name == _LOCKS and p.suffix == ".lock" and p.name.count(".") == 1
    )
    if not threads:  # not a thread's writer: ``codex login``, a daemon, a command
        return None
    thread = threads[-1]
    rollout = next(
        (p for p in open_paths if paths.session_id_from_name(p) == thread and p.is_file()), None
    )
    env = process.environ()
    homes = {k: env[k] for k in _HOME_VARS if k in env}
    return RunningSession(thread, rollout, homes, launcher_pid=_launcher(process))


def _launcher(process: psutil.Process) -> int | None:
    """The npm package's node script that started this binary, if it did."""
    try:
        parent = process.parent()
        if parent is None or parent.name() != "node":
            return None
        script = parent.cmdline()[1:2]
    except psutil.Error:
        return None
    if script and os.path.basename(script[0]) in ("codex", "codex.js"):
        return parent.pid
    return None
