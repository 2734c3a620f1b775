"""The CLIs' own end-of-turn hooks, as segue uses them: what installing one changed, and what
one reported when it ran.

``segue hooks install`` merges a hook into each CLI's settings (Claude Code's ``Stop`` and
``StopFailure`` hooks in ``settings.json``, Codex's ``notify`` program in ``config.toml``) that
runs ``segue hook <provider>``; nothing of the user's is removed, installing twice changes
nothing, and ``uninstall`` takes out exactly what was put in (a ``notify`` program the user had
is kept, run after segue's, and put back). A copy of the file as it was is kept in segue's state
folder before each change.

What uninstall undoes comes back byte for byte. ``install`` leaves a note in segue's state
folder (``hooks/installed-<key>.json``, 0600, one per settings file; ``key`` is a digest of the
file's path): the file's bytes before install (or that there was none, and which folders segue
made for it) and a digest of the bytes segue wrote. ``uninstall`` then:

- when the file is still what segue wrote, puts back the bytes it had, or removes the file (and
  the folders segue made for it, when empty) when there was none;
- when it changed since (the user's edit, the CLI's own settings), takes out segue's entries
  alone, in the file's own layout (its indent, line ends and what follows the last line); when
  what is left says exactly what the file said before install, the bytes it had come back (and
  a file segue made that is left empty goes).

Why a note: what segue wrote alone cannot say what the file was (a re-indented file, or one
that was not there, look the same once parsed), and a note in segue's own folder, beside the
copies it keeps there already, puts nothing in the CLI's folder and changes nothing the user
sees there. The note is read only for the file it names and removed by uninstall; without it
(installed by an older segue, the state folder cleared) uninstall takes out segue's entries as
above. A note is taken only when the file held none of segue's entries before install, so
putting it back never brings a hook back; it is written before the file is. The file is always
written atomically (a new file renamed over it).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from functools import partial
from pathlib import Path

import msgspec
import orjson

from segue.model.errors import ConfigError
from segue.support.state_dir import read_private_json, state_dir, write_private_json

__all__ = [
    "HookChange",
    "HookEvent",
    "HookKind",
    "detached",
    "hook_fields",
    "is_segue_hook",
    "json_object",
    "keep_copy",
    "read_file",
    "replace_file",
    "text_field",
    "undo_install",
    "write_installed",
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


def detached(line: str) -> str:
    """A hook's shell line that goes on at once in a session of its own (``setsid -f``, its
    input still on stdin), or where there is no ``setsid``, reads its input in the shell and goes
    on in the background with it as an argument (``--payload``): for a hook the CLI would kill,
    or whose work must wait for something the CLI does after the hook."""
    return (
        f"if command -v setsid >/dev/null 2>&1; then exec setsid -f {line} "
        f'>/dev/null 2>&1; else payload=$(cat); ({line} --payload "$payload" '
        ">/dev/null 2>&1 &); fi"
    )


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


def read_file(path: Path) -> bytes | None:
    """The bytes of a settings file, None when there is none."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror}") from None


class InstallNote(msgspec.Struct, frozen=True):
    """What ``install`` found and wrote: uninstall's way back (see the module's docstring)."""

    path: str
    before: str | None  # the file's bytes before install (base64); None: there was no file
    wrote: str  # sha256 of the bytes install wrote
    made: tuple[str, ...] = ()  # folders made for the file, the deepest first


def _note_path(path: Path, env: Mapping[str, str]) -> Path:
    key = hashlib.sha256(os.fsencode(path.absolute())).hexdigest()[:16]
    return state_dir(env) / "hooks" / f"installed-{key}.json"


def _read_note(path: Path, env: Mapping[str, str]) -> InstallNote | None:
    raw = read_private_json(_note_path(path, env))
    try:
        note = msgspec.convert(raw, InstallNote) if raw is not None else None
    except msgspec.ValidationError:
        return None
    return note if note is not None and note.path == str(path.absolute()) else None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_installed(
    path: Path, env: Mapping[str, str], before: bytes | None, data: bytes, *, note: bool = True
) -> None:
    """Write what install made of the file, after a note of how to undo it (``note=False``:
    the file already held some of segue's entries, so its bytes are no way back; a note left
    by an earlier install is dropped)."""
    if not note:
        with contextlib.suppress(OSError):
            _note_path(path, env).unlink()
        replace_file(path, data)
        return
    made = []
    folder = path.absolute().parent
    while not folder.exists() and folder != folder.parent:
        made.append(str(folder))
        folder = folder.parent
    kept = InstallNote(
        str(path.absolute()),
        None if before is None else base64.b64encode(before).decode("ascii"),
        _digest(data),
        tuple(made),
    )
    if not write_private_json(_note_path(path, env), msgspec.to_builtins(kept)):
        raise ConfigError(
            f"{path}: cannot keep a note of it in {state_dir(env) / 'hooks'} to undo the change "
            "later; left as it is"
        )
    replace_file(path, data)


def undo_install(
    path: Path,
    env: Mapping[str, str],
    current: bytes,
    edited: bytes,
    same: Callable[[bytes, bytes | None], bool],
) -> str | None:
    """Write what uninstall leaves of the file: ``current`` is the file now, ``edited`` it with
    segue's entries taken out, ``same(edited, before)`` whether it says what the file said
    before install (``before`` None: there was no file, so whether it is as good as none).
    What became of the file, for people, when it went back to what it was."""
    note = _read_note(path, env)
    if note is None:
        replace_file(path, edited)
        return None
    before = None if note.before is None else base64.b64decode(note.before)
    said = None
    if _digest(current) == note.wrote or same(edited, before):
        if before is None:
            _remove_made(path, note.made)
            said = "the file segue made is gone"
        else:
            replace_file(path, before)
            said = "the file is back as it was before install"
    else:
        replace_file(path, edited)
    with contextlib.suppress(OSError):
        _note_path(path, env).unlink()
    return said


def _remove_made(path: Path, made: Sequence[str]) -> None:
    """Remove the file segue made (a dangling link that led to it stays: it was there), then
    the folders it made for it, those that are empty."""
    target = path.resolve() if path.is_symlink() else path
    try:
        target.unlink(missing_ok=True)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot remove it: {exc.strerror}") from None
    for folder in made:
        try:
            os.rmdir(folder)
        except OSError:
            return  # not empty (or gone): it and those above it stay


def json_object(raw: bytes | str) -> dict[str, object]:
    """A hook's JSON input as an object; anything else (nothing, garbage) is an empty one."""
    try:
        data = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def text_field(data: Mapping[str, object], key: str) -> str | None:
    """A non-empty string field of a hook's input (None for anything else)."""
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def hook_fields(raw: bytes | str) -> Callable[[str], str | None]:
    """A hook's JSON input (:func:`json_object`) as a getter of its fields (:func:`text_field`)."""
    return partial(text_field, json_object(raw))
