"""The sessions on this machine: find them, list them, read one.

Every provider in the registry is asked where its sessions are and how to read them; nothing here
knows a provider's file layout.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import msgspec

from segue.formats.files import noting_opened
from segue.formats.stamp import Change, Stamp, check_stamp, stamp_file
from segue.model.conversation import Conversation, Provider
from segue.model.errors import SegueError, SessionError
from segue.model.session_info import SessionInfo, SessionState
from segue.providers import Env, ProviderEntry, all_entries, entry, entry_for_file, known
from segue.support.state_dir import read_private_json, state_dir, write_private_json
from segue.support.version import __version__

__all__ = [
    "Listing",
    "SessionReads",
    "current_session",
    "find_session",
    "list_sessions",
    "read_session",
    "remembered_peeks",
    "session_files",
]


class Listing(msgspec.Struct):
    sessions: list[SessionInfo] = msgspec.field(default_factory=list)
    # files that could not be listed, and why
    problems: list[str] = msgspec.field(default_factory=list)
    # session files that could not be read: provider, path, why (also in problems)
    broken: list[tuple[Provider, Path, str]] = msgspec.field(default_factory=list)


def _entries(provider: Provider | None) -> tuple[ProviderEntry, ...]:
    return all_entries() if provider is None else (entry(provider),)


def _env(env: Env | None) -> Env:
    return os.environ if env is None else env


def session_files(
    provider: Provider | None = None, env: Env | None = None, problems: list[str] | None = None
) -> Iterator[tuple[Provider, Path]]:
    """Every session file of one provider (or of all), as ``(provider, path)``; folders that
    cannot be listed are reported in ``problems``."""
    for e in _entries(provider):
        for path in e.session_files(_env(env), problems):
            yield e.provider, path


def read_session(
    path: Path, provider: Provider | None = None, *, opaque_data: bool = True
) -> Conversation:
    """Read a session file into the neutral model (the provider is recognised when not given).
    Never writes to it. Raises :class:`SessionError` when it cannot be read (missing, not a
    regular file, unreadable). ``opaque_data=False``: Opaque items carry no data, and the read
    takes less memory."""
    reader = entry(provider) if provider is not None else entry_for_file(path)
    return reader.read(path, opaque_data=opaque_data)


def current_session(provider: Provider, path: Path, env: Env) -> tuple[Path, str]:
    """The file the session in ``path`` continues in now (a Codex thread that was rolled back
    goes on in a newer file), as an absolute path, and the session's id."""
    e = entry(provider)
    current = e.current_file(Path(os.path.abspath(path)), env)
    return current, e.session_id(current)


def _key(path: Path) -> Path:
    return Path(os.path.abspath(path))


class SessionReads:
    """The session files one command reads: each at most once (a second ask gets the same
    conversation), with the stamp it had just before it was read. Read without opaque data:
    nothing a command decides or writes looks at it, and a transcript's bulk beyond its tool
    outputs is there (prompt snapshots, request shapes)."""

    def __init__(self) -> None:
        self._read: dict[Path, tuple[Stamp | None, Conversation]] = {}

    def read(self, path: Path, provider: Provider | None = None) -> Conversation:
        """The session in ``path``, read now or earlier in this command."""
        key = _key(path)
        known = self._read.get(key)
        if known is not None:
            return known[1]
        stamp = stamp_file(key)
        conversation = read_session(key, provider, opaque_data=False)
        self._read[key] = (stamp, conversation)
        return conversation

    def prime(self, path: Path, stamp: Stamp, conversation: Conversation) -> None:
        """Take ``conversation`` as what ``path`` holds, if the file still has ``stamp`` (a
        preview's read, reused when nothing changed since)."""
        change, _ = check_stamp(stamp, path)
        if change is Change.SAME:
            self._read[_key(path)] = (stamp, conversation)

    def stamp(self, path: Path) -> Stamp | None:
        """The stamp ``path`` had when this command read it (None: not read, or gone)."""
        known = self._read.get(_key(path))
        return None if known is None else known[0]

    def forget(self, path: Path) -> None:
        """Drop what was read of ``path`` (a file this command then rewrote)."""
        self._read.pop(_key(path), None)


def list_sessions(
    provider: Provider | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Env | None = None,
) -> Listing:
    """Every session (``cwd=None``) or those whose working directory is ``cwd``, newest first.
    A file or folder that cannot be listed is reported in ``problems`` and the rest are still
    listed: nothing in one file stops the listing."""
    want = os.path.realpath(cwd) if cwd is not None else None
    listing = Listing()
    rows: list[SessionInfo] = []
    problems = listing.problems
    for e in _entries(provider):
        files = (
            e.session_files(_env(env), problems)
            if want is None
            else e.session_files_for(want, _env(env), problems)
        )
        for path in files:
            before = len(problems)
            row = _peek(e, path, problems)
            if row is not None and (want is None or _same_dir(row.cwd, want)):
                rows.append(row)
            elif row is None and len(problems) > before:
                listing.broken.append((e.provider, path, problems[-1]))
    listing.sessions = _latest_file_per_session(rows)
    listing.sessions.sort(key=lambda s: s.updated or "", reverse=True)
    return listing


# What a row was read from: its file's size, mtime, inode, ctime and device (a file rewritten
# with its time put back still has a new ctime), and the same of every other file the peek
# opened (a later generation of a rolled-back Codex thread reads its earlier files too).
_FileKey = tuple[int, int, int, int, int]
_Known = tuple[_FileKey, tuple[tuple[str, _FileKey], ...], SessionInfo]
_REMEMBERED: dict[str, _Known] | None = None
_LOOKED_AT: set[str] = set()  # the paths listed within the outermost remembered_peeks()

CACHE_FILE = "listing-cache.json"  # in segue's state folder
_CACHE_FORMAT = 2
_CACHE_LIMIT = 256 << 20


@contextmanager
def remembered_peeks(env: Env | None = None, *, persist: bool = False) -> Iterator[None]:
    """Within it, a listing reads only the files that changed since it last read them (their
    size, time or inode): what a long-lived process (``segue watch``, ``segue tui``) lists
    again and again. ``persist``: what the last such process listed is kept in segue's state
    folder (``listing-cache.json``) and read back at the start, so that its first listing reads
    only what changed since; a cache that cannot be read or written is left alone."""
    global _REMEMBERED
    outer = _REMEMBERED
    if outer is None:
        _LOOKED_AT.clear()
        _REMEMBERED = _read_cache(_env(env)) if persist else {}
    mine = _REMEMBERED
    try:
        yield
    finally:
        if outer is None and persist and mine is not None and _LOOKED_AT:
            _write_cache(_env(env), mine)
        if _REMEMBERED is mine:  # (an inner one that ends after its outer one leaves it ended)
            _REMEMBERED = outer


def _cache_key() -> str:
    return f"{__version__}/{_CACHE_FORMAT}"


# A cached row: path, file key, the files it depends on, provider, SessionInfo's fields from
# id to turns, state, reset time.
_MaybeStr = str | None
_Row = tuple[
    str,
    _FileKey,
    list[tuple[str, _FileKey]],
    str,
    str,
    str,
    _MaybeStr,
    _MaybeStr,
    _MaybeStr,
    _MaybeStr,
    _MaybeStr,
    int,
    int,
    SessionState,
    datetime | None,
]


def _read_cache(env: Env) -> dict[str, _Known]:
    found: dict[str, _Known] = {}
    document = read_private_json(state_dir(env) / CACHE_FILE, _CACHE_LIMIT)
    if not isinstance(document, dict) or document.get("key") != _cache_key():
        return found  # none, another segue's, or not one at all
    rows = document.get("rows")
    for row in rows if isinstance(rows, list) else ():
        try:
            path, key, others, provider, *info, state, reset_at = msgspec.convert(row, _Row)
            if reset_at is not None and reset_at.utcoffset() is None:
                continue  # a time with no zone: not one this segue wrote
            info_row = SessionInfo(known(provider), *info, state=state, reset_at=reset_at)  # type: ignore[misc]
            found[path] = (key, tuple(others), info_row)
        except (msgspec.ValidationError, ValueError):  # a row this segue cannot take
            continue
    return found


def _key_of(path: str | Path) -> _FileKey | None:
    try:
        s = os.stat(path)
    except (OSError, ValueError):
        return None
    return (s.st_size, s.st_mtime_ns, s.st_ino, s.st_ctime_ns, s.st_dev)


def _write_cache(env: Env, remembered: dict[str, _Known]) -> None:
    rows = []
    # what this listing looked at, and what it did not look at (a listing of one folder) and is
    # still there, as it was: the next listing of everything still finds it
    kept = _LOOKED_AT | {p for p in remembered if p not in _LOOKED_AT and os.path.lexists(p)}
    for path in sorted(kept):
        known_row = remembered.get(path)
        if known_row is None:
            continue
        key, depends, i = known_row
        reset = None if i.reset_at is None else i.reset_at.isoformat()
        fields = (i.id, i.path, i.cwd, i.title, i.first_prompt, i.model, i.updated, i.size)
        others = [[p, list(k)] for p, k in depends]
        rows.append([path, list(key), others, i.provider.value, *fields, i.turns, i.state.value])
        rows[-1].append(reset)
    write_private_json(state_dir(env) / CACHE_FILE, {"key": _cache_key(), "rows": rows})


def _peek(e: ProviderEntry, path: Path, problems: list[str]) -> SessionInfo | None:
    remembered = _REMEMBERED
    if remembered is not None:
        _LOOKED_AT.add(str(path))
        key = _key_of(path)
        if key is not None:
            known = remembered.get(str(path))
            if known is not None and known[0] == key and all(_key_of(p) == k for p, k in known[1]):
                return known[2]
            with noting_opened() as opened:
                row = _read_peek(e, path, problems)
            keys = {p: _key_of(p) for p in sorted(set(opened) - {str(path)})}
            depends = tuple((p, k) for p, k in keys.items() if k is not None)
            if row is not None and len(depends) == len(keys):
                remembered[str(path)] = (key, depends, row)
            else:
                remembered.pop(str(path), None)
            return row
    return _read_peek(e, path, problems)


def _read_peek(e: ProviderEntry, path: Path, problems: list[str]) -> SessionInfo | None:
    try:
        return e.peek(path)
    except SegueError as exc:
        problems.append(str(exc))
    except (OSError, ValueError) as exc:
        problems.append(f"{path}: {exc}")
    except Exception as exc:  # a bug in segue: reported, and the listing goes on
        problems.append(f"{path}: internal error ({type(exc).__name__}: {exc}); please report it")
    return None


def _latest_file_per_session(rows: list[SessionInfo]) -> list[SessionInfo]:
    """One row per session: a thread kept in several files (Codex writes a new generation file
    when a thread is rolled back) is listed once, by its newest file, which reads them all."""
    by_id: dict[tuple[Provider, str], SessionInfo] = {}
    for row in rows:
        key = (row.provider, row.id)
        known = by_id.get(key)
        if known is None or Path(row.path).name > Path(known.path).name:
            by_id[key] = row
    return list(by_id.values())


def _same_dir(cwd: str | None, want: str) -> bool:
    if cwd is None:
        return False
    try:
        return cwd == want or os.path.realpath(cwd) == want
    except (OSError, ValueError):
        return False


def _as_path(ref: str) -> Path | None:
    """``ref`` as a file to read, when something (not a folder) is there."""
    try:
        path = Path(ref).expanduser()
        return path if os.path.lexists(path) and not os.path.isdir(path) else None
    except (RuntimeError, ValueError, OSError):  # ~nosuchuser, a NUL byte
        return None


def find_session(ref: str, env: Env | None = None) -> tuple[Provider, Path]:
    """Resolve a session id, a unique id prefix, or a path to its file.

    A session is known by the id in its file name (what ``segue sessions`` prints and its CLI
    resumes); the id its records give, when a copied or renamed file differs, is accepted
    too. A thread kept in several files (Codex generations) is its newest file."""
    if not ref.strip():
        raise SessionError("give a session id, a unique id prefix or a path (got an empty one)")
    as_path = _as_path(ref)
    if as_path is not None:
        return entry_for_file(as_path).provider, as_path
    problems: list[str] = []
    files = [(e, path) for e in all_entries() for path in e.session_files(_env(env), problems)]
    by_name = _matches(ref, ((e, path, e.session_id(path)) for e, path in files))
    if not by_name:
        by_name = _matches(
            ref, ((e, path, e.recorded_id(path)) for e, path in files), recorded=True
        )
    if not by_name:
        unread = f" ({len(problems)} folders could not be read: {problems[0]})" if problems else ""
        raise SessionError(
            f"no session matches {ref!r} (give an id, a unique id prefix or a path){unread}"
        )
    sessions = sorted({(p, sid) for p, _, sid in by_name})
    if len(sessions) > 1:
        names = ", ".join(f"{p.value}:{sid}" for p, sid in sessions[:5])
        more = f" and {len(sessions) - 5} more" if len(sessions) > 5 else ""
        raise SessionError(f"{ref!r} matches several sessions: {names}{more}")
    provider, path, _ = max(by_name, key=lambda m: m[1].name)  # the newest generation file
    return provider, path


def _matches(
    ref: str, candidates: Iterable[tuple[ProviderEntry, Path, str | None]], recorded: bool = False
) -> list[tuple[Provider, Path, str]]:
    """The candidates whose id is ``ref`` (all of them, if any is), else those it prefixes."""
    exact: list[tuple[Provider, Path, str]] = []
    prefixed: list[tuple[Provider, Path, str]] = []
    for e, path, sid in candidates:
        if sid is None:
            continue
        listed = e.session_id(path) if recorded else sid
        if sid == ref:
            exact.append((e.provider, path, listed))
        elif sid.startswith(ref):
            prefixed.append((e.provider, path, listed))
    return exact or prefixed
