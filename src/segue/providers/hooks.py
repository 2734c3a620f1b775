"""The CLIs' own end-of-turn hooks, as segue uses them: what installing one changed, and what
one reported when it ran.

``segue hooks install`` merges a hook into each CLI's settings (Claude Code's ``Stop`` and
``StopFailure`` hooks in ``settings.json``, Codex's ``notify`` program in ``config.toml``) that
runs ``segue hook <provider>``; nothing of the user's is removed, installing twice changes
nothing, and ``uninstall`` takes out exactly what was put in (a ``notify`` program the user had
is kept, run after segue's, and put back). A copy of the file as it was is kept in segue's state
folder before each change.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

import msgspec

from segue.model.errors import ConfigError
from segue.support.state_dir import state_dir

__all__ = [
    "HookChange",
    "HookEvent",
    "HookKind",
    "is_segue_hook",
    "json_object",
    "keep_copy",
    "replace_file",
    "text_field",
]


class HookKind(StrEnum):
    TURN_END = "turn_end"  # a turn ended: checkpoint the workspace
    LIMIT = "limit"  # a turn was ended by a usage limit
    OTHER = "other"  # nothing segue acts on


class HookChange(msgspec.Struct, frozen=True):
    """What installing or uninstalling a CLI's hook did (or, in a dry run, would do)."""

    path: Path
    changed: bool
    what: str  # for people: "added …", "already installed", "removed …"
    copy: Path | None = None  # the file as it was, kept in segue's state folder
    error: str | None = None  # why nothing could be done (the file is left as it is)


class HookEvent(msgspec.Struct, frozen=True):
    """What a CLI's hook said when it ran."""

    kind: HookKind
    session_id: str | None = None
    transcript: str | None = None  # the session's file, when the CLI names it
    cwd: str | None = None
    detail: str | None = None  # the event, or the error that ended the turn
    then: tuple[str, ...] = ()  # a program of the user's to run after segue's (Codex notify)
    payload: str | None = None  # what to hand that program
    message: str | None = None  # the turn's last words (a limit's "resets 3:56pm")


def is_segue_hook(argv: Sequence[str], provider: str) -> bool:
    """Whether a command is segue's hook for ``provider``: ``… segue hook <provider>``."""
    for i in range(1, len(argv) - 1):
        if argv[i] == "hook" and argv[i + 1] == provider:
            before = argv[i - 1]
            return before == "segue" or before.endswith(("/segue", "segue.exe"))
    return False


def keep_copy(path: Path, env: Mapping[str, str], name: str) -> Path | None:
    """A copy of ``path`` as it is, in segue's state folder (None: there is no file)."""
    if not path.is_file():
        return None
    folder = state_dir(env) / "hooks"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    copy = folder / f"{name}.{stamp}"
    try:
        shutil.copy2(path, copy)
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot keep a copy before changing it: {exc.strerror}"
        ) from None
    return copy


def replace_file(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its mode (0600 for a new one); a
    symbolic link (a settings file kept with the user's dotfiles) stays one: its target is
    replaced."""
    if path.is_symlink():
        path = path.resolve()
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o600
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.segue-", dir=path.parent)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write it: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write it: {exc.strerror}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def json_object(raw: bytes | str) -> dict[str, object]:
    """A hook's JSON input as an object; anything else (nothing, garbage) is an empty one."""
    import orjson

    try:
        data = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def text_field(data: Mapping[str, object], key: str) -> str | None:
    """A non-empty string field of a hook's input (None for anything else)."""
    value = data.get(key)
    return value if isinstance(value, str) and value else None
