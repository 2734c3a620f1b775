"""The sessions on this machine: find them, list them, read one.

Every provider in the registry is asked where its sessions are and how to read them; nothing here
knows a provider's file layout.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from segue.conversation import Conversation, Provider
from segue.errors import SessionError
from segue.providers import Env, ProviderEntry, all_entries, entry, entry_for_file
from segue.session_info import SessionInfo

__all__ = ["Listing", "find_session", "list_sessions", "read_session", "session_files"]


@dataclass(slots=True)
class Listing:
    sessions: list[SessionInfo] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # files that could not be listed, and why


def _entries(provider: Provider | None) -> tuple[ProviderEntry, ...]:
    return all_entries() if provider is None else (entry(provider),)


def _env(env: Env | None) -> Env:
    return os.environ if env is None else env


def session_files(
    provider: Provider | None = None, env: Env | None = None
) -> Iterator[tuple[Provider, Path]]:
    """Every session file of one provider (or of all), as ``(provider, path)``."""
    for e in _entries(provider):
        for path in e.session_files(_env(env)):
            yield e.provider, path


def read_session(path: Path, provider: Provider | None = None) -> Conversation:
    """Read a session file into the neutral model (the provider is recognised when not given).
    Never writes to it. Raises :class:`SessionError` when it cannot be read."""
    if not path.is_file():
        raise SessionError(f"{path}: no such session file")
    reader = entry(provider) if provider is not None else entry_for_file(path)
    return reader.read(path)


def list_sessions(
    provider: Provider | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Env | None = None,
) -> Listing:
    """Every session (``cwd=None``) or those whose working directory is ``cwd``, newest first.
    A file that cannot be listed is reported in ``problems`` and the rest are still listed."""
    want = os.path.realpath(cwd) if cwd is not None else None
    listing = Listing()
    rows: list[SessionInfo] = []
    for e in _entries(provider):
        files = e.session_files(_env(env)) if want is None else e.session_files_for(want, _env(env))
        for path in files:
            try:
                row = e.peek(path)
            except (OSError, ValueError) as exc:
                listing.problems.append(f"{path}: {exc}")
                continue
            if want is None or _same_dir(row.cwd, want):
                rows.append(row)
    listing.sessions = _latest_file_per_session(rows)
    listing.sessions.sort(key=lambda s: s.updated or "", reverse=True)
    return listing


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
    return cwd is not None and (cwd == want or os.path.realpath(cwd) == want)


def find_session(ref: str, env: Env | None = None) -> tuple[Provider, Path]:
    """Resolve a session id, a unique id prefix, or a path to its file."""
    as_path = Path(ref).expanduser()
    if as_path.is_file():
        return entry_for_file(as_path).provider, as_path
    matches: list[tuple[Provider, Path, str]] = []
    for e in all_entries():
        for path in e.session_files(_env(env)):
            sid = e.session_id(path)
            if sid == ref:
                return e.provider, path
            if sid.startswith(ref):
                matches.append((e.provider, path, sid))
    if not matches:
        raise SessionError(f"no session matches {ref!r} (give an id, a unique id prefix or a path)")
    if len(matches) > 1:
        names = ", ".join(f"{p.value}:{sid}" for p, _, sid in matches[:5])
        more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
        raise SessionError(f"{ref!r} matches several sessions: {names}{more}")
    provider, path, _ = matches[0]
    return provider, path
