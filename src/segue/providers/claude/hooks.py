"""Claude Code's hooks for segue: a ``Stop`` hook (a turn ended) and a ``StopFailure`` hook on
``rate_limit`` (a usage limit ended it), in the user's ``settings.json``, each running
``segue hook claude``; the hook's input is a JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``; ``error`` and ``last_assistant_message`` for
a failure).

Claude Code waits for a ``Stop`` hook (the checkpoint is taken before the next prompt), but
kills a ``StopFailure`` hook as ``claude -p`` exits (measured with 2.1.328: a hook 50 ms long
never finished): that one goes on at once in a session of its own (``setsid -f``, its input
still on stdin), or where there is no ``setsid``, reads its input in the shell and goes on in
the background, its input as an argument.

The file is written in its own layout: its indent (tabs, four spaces, none), the spacing around
its colons, its line ends, what it has after its last line, its key order; a new file gets two
spaces and a newline. Uninstall gives back the bytes the file had before install, or removes
the file segue made, as :mod:`segue.providers.hooks` says (a note in segue's state folder)."""

from __future__ import annotations

import json
import re
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
    detached,
    hook_fields,
    is_segue_hook,
    keep_copy,
    read_file,
    undo_install,
    write_installed,
)

__all__ = ["hook_event", "install_hooks", "uninstall_hooks"]

EVENTS = {"Stop": None, "StopFailure": "rate_limit"}  # the event and its matcher
HOOK_TIMEOUT_S = 30


def _settings_path(env: Env) -> Path:
    return config_dir(env) / "settings.json"


def _parse(path: Path, data: bytes | None) -> dict[str, Any]:
    if data is None or not data.strip():
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


_KEY_COLON = re.compile(rb'"([ \t]*):([ \t]*)')
_ESCAPED = re.compile(rb"\\u[0-9a-fA-F]{4}")


def _dump(settings: dict[str, Any], like: bytes | None) -> bytes:
    """``settings`` as JSON laid out as ``like`` is (None or blank: two spaces, a newline)."""
    if like is None or not like.strip():
        return json.dumps(settings, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"
    body = like.strip()
    lead, trail = like[: len(like) - len(like.lstrip())], like[len(like.rstrip()) :]
    colon = _KEY_COLON.search(body)
    key_sep = ":" if colon is None else f"{colon[1].decode()}:{colon[2].decode()}"
    ascii_only = body.isascii() and _ESCAPED.search(body) is not None
    newline = b"\r\n" if b"\r\n" in body else b"\n"
    if colon is None:  # an empty object: no layout to follow but its lead and trail
        text = json.dumps(settings, indent=2, ensure_ascii=ascii_only).encode("utf-8")
        text = text.replace(b"\n", newline)
    elif b"\n" not in body:  # all on one line
        item_sep = ", " if re.search(rb'[\]}"\w],[ \t]', body) else ","
        text = json.dumps(settings, ensure_ascii=ascii_only, separators=(item_sep, key_sep)).encode(
            "utf-8"
        )
    else:
        lines = body.splitlines()[1:]
        indents = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
        unit = next((i for i in indents if i), b"")  # the first indented line is one level in
        text = json.dumps(
            settings, indent=unit.decode(), ensure_ascii=ascii_only, separators=(",", key_sep)
        ).encode("utf-8")
        text = text.replace(b"\n", newline)  # (a newline in a string is written \n)
    return lead + text + trail


def _same(edited: bytes, before: bytes | None) -> bool:
    """Whether the settings left say what the file said before install (no file: nothing)."""
    try:
        same: bool = orjson.loads(edited) == (
            orjson.loads(before) if before is not None and before.strip() else {}
        )
    except orjson.JSONDecodeError:
        return False
    return same


def install_hooks(env: Env, command: Sequence[str], *, dry_run: bool = False) -> HookChange:
    path = _settings_path(env)
    before = read_file(path)
    settings = _parse(path, before)
    hooks = _hooks_of(path, settings)
    had_ours = any(_has_ours(groups) for groups in hooks.values())
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
            line = detached(line)
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
    write_installed(path, env, before, _dump(settings, before), note=not had_ours)
    return HookChange(path, True, what, copy)


def uninstall_hooks(env: Env, *, dry_run: bool = False) -> HookChange:
    path = _settings_path(env)
    current = read_file(path)
    settings = _parse(path, current)
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
    back = undo_install(path, env, current or b"", _dump(settings, current), _same)
    return HookChange(path, True, what if back is None else f"{what}; {back}", copy)


def hook_event(args: Sequence[str], stdin: bytes) -> HookEvent:
    """What Claude Code's hook input says."""
    text = hook_fields(stdin)
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
