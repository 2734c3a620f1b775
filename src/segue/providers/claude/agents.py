"""A running Claude Code process → the session it works on.

Claude Code writes ``<config dir>/sessions/<pid>.json`` for every running CLI (the TUI and
``claude -p``): the session id it works on now (it changes on ``/clear``, so the command line is
no guide), its cwd, ``status`` (``busy`` during a turn) and ``procStart``, the process's start
time in clock ticks (field 22 of ``/proc/<pid>/stat``). A file left by a killed CLI stays behind;
its pid may since belong to another process, so the start time must match. The CLI never keeps
its transcript open, so open files tell nothing.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import psutil

from segue.formats.claude import paths
from segue.providers.base import RunningSession

__all__ = ["running_session"]

_NAMES = ("claude", "claude.exe")
_HOME_VARS = ("HOME", "CLAUDE_CONFIG_DIR")


def is_claude(process: psutil.Process) -> bool:
    """The CLI (a native binary; launched by any link named ``claude``)."""
    return process.name() in _NAMES


def running_session(process: psutil.Process) -> RunningSession | None:
    if not is_claude(process):
        return None
    env = process.environ()
    record = _pid_record(paths.config_dir(env) / "sessions" / f"{process.pid}.json")
    if record is None or not _same_process(process, record):
        return None
    session_id = record.get("sessionId")
    cwd = record.get("cwd")
    homes = {k: env[k] for k in _HOME_VARS if k in env}
    if type(session_id) is not str or not paths.looks_like_session_id(session_id):
        return RunningSession(None, None, homes)
    path: Path | None = None
    if type(cwd) is str:
        candidate = paths.project_dir_for(cwd, env) / f"{session_id}.jsonl"
        path = candidate if candidate.is_file() else None
    return RunningSession(session_id, path, homes, busy=record.get("status") == "busy")


def _pid_record(path: Path) -> dict[str, object] | None:
    try:
        record = orjson.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return record if type(record) is dict else None


def _same_process(process: psutil.Process, record: dict[str, object]) -> bool:
    """Whether the pid file was written by this process, not an earlier one with its pid."""
    try:
        stat = Path(f"/proc/{process.pid}/stat").read_text()
    except OSError:  # no procfs: the file must be younger than the process
        started = record.get("startedAt")
        return type(started) is int and started / 1000 >= process.create_time() - 1
    fields = stat.rsplit(")", 1)[-1].split()
    return len(fields) > 19 and record.get("procStart") == fields[19]
