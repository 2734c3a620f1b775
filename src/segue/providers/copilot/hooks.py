"""Copilot CLI's hooks for segue: a file of segue's own, ``<copilot home>/hooks/segue.json``.

Copilot CLI runs every ``hooks/*.json`` of its home (measured with 1.0.102): ``agentStop`` when a
turn ends (its input names ``sessionId``, ``cwd`` and ``transcriptPath``) and ``errorOccurred``
when one fails (its ``error.message`` is the model's refusal, a limit's text included). segue's
file runs ``segue hook copilot <event>`` for each, with the input on stdin, detached: the CLI
writes a new session's event log after its first ``agentStop`` hook has run (seen under load),
so the hook waits, in the background, until the log is there and still. Nothing of the user's
is edited: install writes the file (refusing one of that name that is not segue's) and uninstall
removes it, as :mod:`segue.providers.hooks` keeps a note to.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import orjson

from segue.formats.copilot.paths import copilot_home
from segue.model.errors import ConfigError
from segue.providers.base import Env
from segue.providers.hooks import (
    HookChange,
    HookEvent,
    HookKind,
    detached,
    is_segue_hook,
    json_object,
    keep_copy,
    read_file,
    text_field,
    undo_install,
    write_installed,
)

__all__ = ["hook_event", "install_hooks", "uninstall_hooks"]

EVENTS = ("agentStop", "errorOccurred")
TIMEOUT_S = 30


def _path(env: Env) -> Path:
    return copilot_home(env) / "hooks" / "segue.json"


def _text(command: Sequence[str]) -> bytes:
    import shlex

    hooks = {
        event: [
            {
                "type": "command",
                "bash": detached(shlex.join([*command, event])),
                "timeoutSec": TIMEOUT_S,
            }
        ]
        for event in EVENTS
    }
    return orjson.dumps({"version": 1, "hooks": hooks}, option=orjson.OPT_INDENT_2) + b"\n"


def _is_segues(path: Path, data: bytes) -> bool:
    """Whether the file holds segue's hooks and nothing else."""
    import shlex

    try:
        hooks = json_object(data).get("hooks")
        entries = [e for group in dict(hooks).values() for e in group] if hooks else []  # type: ignore[call-overload]
        words = [
            list(shlex.shlex(str(e.get("bash", "")), posix=True, punctuation_chars=True))
            for e in entries
        ]
        return bool(entries) and all(is_segue_hook(w, "copilot") for w in words)
    except (TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(
            f"{path}: not a hooks file segue can read ({exc}); left as it is"
        ) from None


def install_hooks(env: Env, command: Sequence[str], *, dry_run: bool = False) -> HookChange:
    path = _path(env)
    before = read_file(path)
    if before is not None:
        if not _is_segues(path, before):
            raise ConfigError(f"{path}: exists and is not segue's; left as it is")
        return HookChange(path, False, "already installed (hooks/segue.json)")
    what = "added hooks/segue.json (agentStop, errorOccurred)"
    if dry_run:
        return HookChange(path, True, what)
    write_installed(path, env, None, _text(command))
    return HookChange(path, True, what)


def uninstall_hooks(env: Env, *, dry_run: bool = False) -> HookChange:
    path = _path(env)
    now = read_file(path)
    if now is None or not _is_segues(path, now):
        return HookChange(path, False, "not installed")
    if dry_run:
        return HookChange(path, True, "removed hooks/segue.json")
    copy = keep_copy(path, env, "copilot-hooks-segue.json")
    said = undo_install(path, env, now, b"", lambda edited, before: before is None)
    if said is None:  # no note (an older segue, a cleared state folder): the file is segue's
        path.unlink(missing_ok=True)
    return HookChange(path, True, "removed hooks/segue.json", copy)


SETTLE_S, SETTLED_S = 20.0, 0.3  # how long to wait for the log at most, and to see it still


def _settled(transcript: str | None) -> None:
    """Wait until the session's event log is there and has not grown for a moment."""
    if not transcript:
        return
    deadline = time.monotonic() + SETTLE_S
    seen: int | None = None
    while time.monotonic() < deadline:
        try:
            size: int | None = os.stat(transcript).st_size
        except OSError:
            size = None
        if size is not None and size == seen:
            return
        seen = size
        time.sleep(SETTLED_S)


def hook_event(args: Sequence[str], stdin: bytes) -> HookEvent:
    """What Copilot's hook input says; the event is the argument segue's file passes."""
    data = json_object(stdin)
    event = args[0] if args else None
    kind = HookKind.OTHER
    message = None
    if event == "agentStop":
        kind = HookKind.TURN_END
        _settled(text_field(data, "transcriptPath"))
    elif event == "errorOccurred":
        error = data.get("error")
        message = text_field(error, "message") if isinstance(error, dict) else None
        low = (message or "").lower()
        limited = "rate_limit" in low or "limit" in low or "quota" in low or "429" in low
        kind = HookKind.LIMIT if limited else HookKind.OTHER
    return HookEvent(
        kind,
        session_id=text_field(data, "sessionId"),
        transcript=text_field(data, "transcriptPath"),
        cwd=text_field(data, "cwd"),
        detail=f"{event}: {message}" if message else event,
        message=(message or "")[:500] or None,
    )
