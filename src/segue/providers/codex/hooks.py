"""Codex's hook for segue: the ``notify`` program of ``config.toml``, which Codex runs after
each turn with one JSON argument (``type: agent-turn-complete``, ``thread-id``, ``cwd``).

Codex takes one ``notify`` program. When the user has one, segue's runs it afterwards with the
same argument: ``notify = [<segue>, "hook", "codex", "--", <theirs>…]``, and uninstalling puts
theirs back as it was. The file is edited with tomlkit, so its comments, order and layout stay.
Uninstall gives back the bytes the file had before install, or removes the file segue made, as
:mod:`segue.providers.hooks` says (a note in segue's state folder).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from segue.formats.codex.paths import codex_home
from segue.model.errors import ConfigError
from segue.providers.base import Env
from segue.providers.hooks import (
    HookChange,
    HookEvent,
    HookKind,
    hook_fields,
    is_segue_hook,
    keep_copy,
    read_file,
    undo_install,
    write_installed,
)

__all__ = ["hook_event", "install_hooks", "uninstall_hooks"]


def _config_path(env: Env) -> Path:
    return codex_home(env) / "config.toml"


def _parse(path: Path, data: bytes | None) -> Any:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    if data is None:
        return tomlkit.document()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc}") from None
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); left as it is") from None


def _notify(path: Path, doc: Any) -> list[str] | None:
    value = doc.get("notify")
    if value is None:
        return None
    items = list(value) if isinstance(value, list) else None
    if items is None or not all(isinstance(v, str) for v in items):
        raise ConfigError(f"{path}: its notify is not a list of strings; left as it is")
    return [str(v) for v in items]


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    """segue's part and the user's program it runs after (after ``--``)."""
    if "--" in argv:
        at = argv.index("--")
        return argv[:at], argv[at + 1 :]
    return argv, []


def _text(path: Path, doc: Any, notify: list[str] | None) -> bytes:
    """The file's new text, once it reads back as TOML whose top-level ``notify`` is
    ``notify``."""
    import tomllib

    import tomlkit

    text = tomlkit.dumps(doc)
    try:
        back = tomllib.loads(text).get("notify")
    except tomllib.TOMLDecodeError:
        back = ()
    if back != notify:
        raise ConfigError(f"{path}: segue could not edit it safely; left as it is")
    return text.encode("utf-8")


def _same(edited: bytes, before: bytes | None) -> bool:
    """Whether the file left is the one before install (no file: nothing but blank lines)."""
    return edited == before or (before is None and not edited.strip())


def install_hooks(env: Env, command: Sequence[str], *, dry_run: bool = False) -> HookChange:
    import tomlkit

    path = _config_path(env)
    before = read_file(path)
    doc = _parse(path, before)
    current = _notify(path, doc)
    if current is not None and is_segue_hook(current, "codex"):
        return HookChange(path, False, "already installed (notify)")
    new = [*command] if not current else [*command, "--", *current]
    what = (
        "set notify to segue's hook"
        if not current
        else f"set notify to segue's hook, which then runs yours ({current[0]})"
    )
    if dry_run:
        return HookChange(path, True, what)
    copy = keep_copy(path, env, "codex-config.toml")
    array = tomlkit.array()
    array.extend(new)
    doc["notify"] = array  # tomlkit puts a new top-level key before the first table
    write_installed(path, env, before, _text(path, doc, new))
    return HookChange(path, True, what, copy)


def uninstall_hooks(env: Env, *, dry_run: bool = False) -> HookChange:
    import tomlkit

    path = _config_path(env)
    now = read_file(path)
    doc = _parse(path, now)
    current = _notify(path, doc)
    if current is None or not is_segue_hook(current, "codex"):
        return HookChange(path, False, "not installed")
    _, theirs = _split(current)
    what = "put your notify program back" if theirs else "removed segue's notify"
    if dry_run:
        return HookChange(path, True, what)
    copy = keep_copy(path, env, "codex-config.toml")
    if theirs:
        array = tomlkit.array()
        array.extend(theirs)
        doc["notify"] = array
    else:
        del doc["notify"]
    back = undo_install(path, env, now or b"", _text(path, doc, theirs or None), _same)
    return HookChange(path, True, what if back is None else f"{what}; {back}", copy)


def hook_event(args: Sequence[str], stdin: bytes) -> HookEvent:
    """What Codex's notify argument says; the program to run after is what came after
    ``--``."""
    argv = list(args)
    payload = argv[-1] if argv else ""
    _, then = _split(argv[:-1]) if argv else ([], [])
    text = hook_fields(payload)
    kind = HookKind.TURN_END if text("type") == "agent-turn-complete" else HookKind.OTHER
    return HookEvent(
        kind,
        session_id=text("thread-id"),
        cwd=text("cwd"),
        detail=text("type"),
        then=tuple(then),
        payload=payload or None,
    )
