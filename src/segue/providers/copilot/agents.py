"""A running Copilot CLI process → the session it works on.

The native ``copilot`` binary (started by the npm package's node script, its launcher) holds
``session-state/<id>/inuse.<pid>.hold`` open while it works on session ``<id>`` (measured with
1.0.102, from start-up on). A hold file left by a killed process means nothing: only one held
open counts. A process holding none (``copilot login``, ``help``) is not an agent.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil

from segue.formats.copilot.paths import EVENTS, is_session_name
from segue.providers.base import RunningSession, npm_launcher

__all__ = ["running_session"]

_HOME_VARS = ("HOME", "COPILOT_HOME")


def running_session(process: psutil.Process) -> RunningSession | None:
    if os.path.basename(process.exe()) != "copilot":
        return None
    held = [
        Path(f.path)
        for f in process.open_files()
        if f.path.endswith(".hold") and os.path.basename(f.path).startswith("inuse.")
    ]
    sessions = [p.parent for p in held if p.parent.parent.name == "session-state"]
    sessions = [folder for folder in sessions if is_session_name(folder.name)]
    if not sessions:
        return None
    folder = sessions[-1]
    events = folder / EVENTS
    env = process.environ()
    homes = {k: env[k] for k in _HOME_VARS if k in env}
    return RunningSession(
        folder.name,
        events if events.is_file() else None,
        homes,
        launcher_pid=npm_launcher(process, ("copilot", "npm-loader.js", "index.js")),
    )
