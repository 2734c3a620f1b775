"""Where Codex keeps its sessions."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson

from segue.formats.files import open_regular
from segue.formats.homes import cli_home
from segue.model.errors import SegueError


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """``$CODEX_HOME`` or ``~/.codex``."""
    return cli_home(env, "CODEX_HOME", ".codex")


def sessions_dir(env: Mapping[str, str] | None = None) -> Path:
    return codex_home(env) / "sessions"


def iter_session_files(
    env: Mapping[str, str] | None = None, problems: list[str] | None = None
) -> Iterator[Path]:
    """Every file named like a rollout under ``sessions/`` (any depth, as Codex's own lookup
    does; reading one refuses what is not a regular file). A folder that cannot be listed is
    reported in ``problems``."""
    yield from _walk(sessions_dir(env), problems)


def _walk(root: Path, problems: list[str] | None) -> Iterator[Path]:
    def report(exc: OSError) -> None:
        if problems is not None and not isinstance(exc, FileNotFoundError):
            problems.append(f"{exc.filename}: cannot list the folder: {exc.strerror}")

    for dirpath, dirs, files in os.walk(root, onerror=report):
        dirs.sort()
        for name in sorted(files):
            if name.startswith("rollout-") and name.endswith(".jsonl"):
                yield Path(dirpath) / name


_NAME_RE = re.compile(
    r"^rollout-(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2})-"
    r"(?P<id>[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})"
    r"(?:_(?P<gen>[0-9A-Fa-f-]{36}))?\.jsonl$"
)


def parse_name(path: Path) -> tuple[str, str | None] | None:
    """``(thread_id, generation)`` from ``rollout-<ts>-<thread id>[_<generation>].jsonl``.

    Codex starts a new *generation* file of the same thread when the thread is rolled back
    (its ``session_meta.history_base`` names the kept prefix of the previous file).
    """
    m = _NAME_RE.match(path.name)
    return (m.group("id"), m.group("gen")) if m else None


def session_id_from_name(path: Path) -> str | None:
    """The thread id in a rollout file name."""
    parsed = parse_name(path)
    return parsed[0] if parsed else None


def sessions_root_of(path: Path) -> Path | None:
    """The ``sessions`` folder a rollout file lives under."""
    return next((parent for parent in path.parents if parent.name == "sessions"), None)


def thread_files(root: Path, thread_id: str) -> list[Path]:
    """Every file (base and generations) of one thread under ``root``, oldest name first."""
    found = []
    for path in _walk(root, None):
        if thread_id in path.name:
            parsed = parse_name(path)
            if parsed and parsed[0] == thread_id:
                found.append(path)
    return sorted(found, key=lambda p: p.name)


def _first_meta(path: Path) -> dict[str, object]:
    """The payload of a rollout's first line (its ``session_meta``), reading nothing further;
    empty when it cannot be told."""
    try:
        with open_regular(path) as f:
            first = f.readline(1 << 20)
        record = orjson.loads(first)
    except (SegueError, OSError, ValueError):
        return {}
    payload = record.get("payload") if type(record) is dict else None
    return payload if type(payload) is dict else {}


def recorded_session_id(path: Path) -> str | None:
    """The thread id a rollout's ``session_meta`` records (normally the one in its name)."""
    value = _first_meta(path).get("id")
    return value if type(value) is str and value else None


def recorded_cwd(path: Path) -> str | None:
    """The working directory a rollout's first line records (as a real path), reading nothing
    further; None when it cannot be told."""
    cwd = _first_meta(path).get("cwd")
    if type(cwd) is not str:
        return None
    try:
        return os.path.realpath(cwd)
    except (OSError, ValueError):  # a NUL byte, a loop of links
        return None
