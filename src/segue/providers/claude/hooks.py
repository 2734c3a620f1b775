"""Claude Code's hooks for segue: a ``Stop`` hook (a turn ended) and a ``StopFailure`` hook on
``rate_limit`` (a usage limit ended it), in the user's ``settings.json``, each running
``segue hook claude``; the hook's input is a JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``; ``error`` and ``last_assistant_message`` for
a failure).

Claude Code waits for a ``Stop`` hook (the checkpoint is taken before the next prompt), but
kills a ``StopFailure`` hook as ``claude -p`` exits (measured with 2.1.328: a hook 50 ms long
never finished): that one goes on at once in a session of its own (``setsid -f``, its input
still on stdin), or where there is no ``setsid``, reads its input in the shell and goes on in
the background, its input as an argument."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from segue.formats.claude.paths import config_dir
from segue.model.errors import ConfigError
from segue.providers.base import Env
from segue.providers.hooks import (
    HookChange,
    HookEvent,
    HookKind,
    is_segue_hook,
    json_object,
    keep_copy,
    replace_file,
    text_field,
)

__all__ = ["hook_event", "install_hooks", "uninstall_hooks"]

EVENTS = {"Stop": None, "StopFailure": "rate_limit"}  # the event and its matcher
HOOK_TIMEOUT_S = 30


def _settings_path(env: Env) -> Path:
    return config_dir(env) / "settings.json"


def _load(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror}") from None
    if not data.strip():
        return {}
    try:
        settings = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}); left as it is") from None
    if not isinstance(settings, dict):
        raise ConfigError(f"{path}: not a JSON object; left as it is")
    return settings


def _hooks_of(path: Path, settings: dict[str, Any]) -> dict[str, Any]:
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f'{path}: its "hooks" is not an object; left as it is')
    return hooks


def _ours(handler: object) -> bool:
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        argv = shlex.split(handler["command"])
    except ValueError:
        return False
    return is_segue_hook(argv, "claude")


def _has_ours(groups: object) -> bool:
    return isinstance(groups, list) and any(
        isinstance(g, dict) and isinstance(g.get("hooks"), list) and any(map(_ours, g["hooks"]))
        for g in groups
    )


def _write(path: Path, settings: dict[str, Any]) -> None:
    replace_file(path, orjson.dumps(settings, option=orjson.OPT_INDENT_2) + b"\n")


def install_hooks(env: Env, command: Sequence[str], *, dry_run: bool = False) -> HookChange:
    path = _settings_path(env)
    settings = _load(path)
    hooks = _hooks_of(path, settings)
    added = []
    for event, matcher in EVENTS.items():
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"{path}: its hooks.{event} is not a list; left as it is")
        if _has_ours(groups):
            continue
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        line = shlex.join(command)
        if event == "StopFailure":  # fire and forget: detached at once, in a session of its own
            line = (
                f"if command -v setsid >/dev/null 2>&1; then exec setsid -f {line} "
                f'>/dev/null 2>&1; else payload=$(cat); ({line} --payload "$payload" '
                ">/dev/null 2>&1 &); fi"
            )
        group["hooks"] = [{"type": "command", "command": line, "timeout": HOOK_TIMEOUT_S}]
        hooks[event] = [*groups, group]
        added.append(event)
    if not added:
        return HookChange(path, False, "already installed (Stop, StopFailure)")
    what = f"added the {' and '.join(added)} hook{'s' if len(added) > 1 else ''}"
    if dry_run:
        return HookChange(path, True, what)
    copy = keep_copy(path, env, "claude-settings.json")
    settings["hooks"] = hooks
    _write(path, settings)
    return HookChange(path, True, what, copy)


def uninstall_hooks(env: Env, *, dry_run: bool = False) -> HookChange:
    path = _settings_path(env)
    settings = _load(path)
    hooks = _hooks_of(path, settings)
    removed = []
    for event in list(hooks):
        groups = hooks[event]
        if not _has_ours(groups):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [h for h in group["hooks"] if not _ours(h)]
                if not handlers and group["hooks"]:
                    continue  # a group that held only segue's hook goes with it
                group = {**group, "hooks": handlers}
            kept.append(group)
        removed.append(event)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not removed:
        return HookChange(path, False, "not installed")
    what = f"removed segue's {' and '.join(removed)} hook{'s' if len(removed) > 1 else ''}"
    if dry_run:
        return HookChange(path, True, what)
    copy = keep_copy(path, env, "claude-settings.json")
    if hooks:
        settings["hooks"] = hooks
    else:
        settings.pop("hooks", None)
    _write(path, settings)
    return HookChange(path, True, what, copy)


def hook_event(args: Sequence[str], stdin: bytes) -> HookEvent:
    """What Claude Code's hook input says."""
    data = json_object(stdin)

    def text(key: str) -> str | None:
        return text_field(data, key)

    name = text("hook_event_name")
    kind = HookKind.OTHER
    if name == "Stop":
        kind = HookKind.TURN_END
    elif name == "StopFailure":
        error = text("error") or text("error_type") or text("matcher")
        kind = HookKind.LIMIT if error is None or "rate_limit" in error else HookKind.TURN_END
        name = f"{name}: {error}" if error else name
    return HookEvent(
        kind,
        session_id=text("session_id"),
        transcript=text("transcript_path"),
        cwd=text("cwd"),
        detail=name,
        message=(text("last_assistant_message") or "")[:500] or None,
    )
