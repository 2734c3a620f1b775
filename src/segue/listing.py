"""Find sessions on this machine: list them, or resolve what the user typed to one file."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from segue.conversation import Provider
from segue.formats.claude import paths as claude_paths
from segue.formats.codex import paths as codex_paths
from segue.formats.summarize import summarize
from segue.session import SessionError
from segue.summary import SessionSummary


@dataclass(slots=True)
class Listing:
    sessions: list[SessionSummary] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # files that could not be summarized


def session_files(
    provider: Provider | None = None, env: Mapping[str, str] | None = None
) -> Iterator[tuple[Provider, Path]]:
    if provider in (None, Provider.CLAUDE):
        for path in claude_paths.iter_session_files(env):
            yield Provider.CLAUDE, path
    if provider in (None, Provider.CODEX):
        for path in codex_paths.iter_session_files(env):
            yield Provider.CODEX, path


def list_sessions(
    provider: Provider | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Listing:
    """Every session (``cwd=None``) or those whose working directory is ``cwd``, newest first."""
    want = os.path.realpath(cwd) if cwd is not None else None
    listing = Listing()
    for kind, path in _candidates(provider, want, env):
        try:
            summary = summarize(path, kind)
        except (OSError, ValueError) as exc:
            listing.problems.append(f"{path}: {exc}")
            continue
        if want is not None and not _same_dir(summary.cwd, want):
            continue
        listing.sessions.append(summary)
    listing.sessions = _latest_file_per_session(listing.sessions)
    listing.sessions.sort(key=lambda s: s.updated or "", reverse=True)
    return listing


def _latest_file_per_session(sessions: list[SessionSummary]) -> list[SessionSummary]:
    """One row per session: a rolled-back Codex thread has several files (generations) and the
    newest one carries the whole history."""
    by_id: dict[tuple[Provider, str], SessionSummary] = {}
    for summary in sessions:
        key = (summary.provider, summary.id)
        known = by_id.get(key)
        if known is None or Path(summary.path).name > Path(known.path).name:
            by_id[key] = summary
    return list(by_id.values())


def _candidates(
    provider: Provider | None, want: str | None, env: Mapping[str, str] | None
) -> Iterator[tuple[Provider, Path]]:
    if want is None:
        yield from session_files(provider, env)
        return
    if provider in (None, Provider.CLAUDE):
        folder = claude_paths.projects_dir(env) / claude_paths.encode_cwd(want)
        if folder.is_dir():
            for path in folder.glob("*.jsonl"):
                yield Provider.CLAUDE, path
    if provider in (None, Provider.CODEX):
        for path in codex_paths.iter_session_files(env):
            if _codex_cwd(path) in (want, None):
                yield Provider.CODEX, path


def _codex_cwd(path: Path) -> str | None:
    """The cwd from a rollout's first line, without reading further."""
    try:
        with path.open("rb") as f:
            first = f.readline()
        payload = orjson.loads(first).get("payload") or {}
        cwd = payload.get("cwd")
        return os.path.realpath(cwd) if isinstance(cwd, str) else None
    except (OSError, ValueError, AttributeError):
        return None


def _same_dir(cwd: str | None, want: str) -> bool:
    return cwd is not None and (cwd == want or os.path.realpath(cwd) == want)


def find_session(ref: str, env: Mapping[str, str] | None = None) -> tuple[Provider, Path]:
    """Resolve a session id, a unique id prefix, or a path to its file."""
    as_path = Path(ref).expanduser()
    if as_path.is_file():
        from segue.session import detect_provider

        return detect_provider(as_path), as_path
    matches: list[tuple[Provider, Path, str]] = []
    for kind, path in session_files(None, env):
        sid = session_id_of(kind, path)
        if sid == ref:
            return kind, path
        if sid.startswith(ref):
            matches.append((kind, path, sid))
    if not matches:
        raise SessionError(f"no session matches {ref!r} (give an id, a unique id prefix or a path)")
    if len(matches) > 1:
        names = ", ".join(f"{k.value}:{sid}" for k, _, sid in matches[:5])
        more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
        raise SessionError(f"{ref!r} matches several sessions: {names}{more}")
    kind, path, _ = matches[0]
    return kind, path


def session_id_of(kind: Provider, path: Path) -> str:
    """The session id a file name carries."""
    if kind is Provider.CODEX:
        return codex_paths.session_id_from_name(path) or path.stem
    return path.stem
