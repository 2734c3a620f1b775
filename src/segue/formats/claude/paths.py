"""Where Claude Code keeps its sessions."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson

from segue.formats.homes import cli_home
from segue.formats.jsonl import head_lines
from segue.model.errors import SegueError

_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")
_MAX_ENCODED = 200
_SESSION_ID = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
# Byte strings every transcript's first records carry (and no other CLI's files do).
TRANSCRIPT_MARKERS = (b'"sessionId":', b'"parentUuid":', b'"leafUuid":')


def looks_like_session_id(name: str) -> bool:
    return _SESSION_ID.match(name) is not None


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    return cli_home(env, "CLAUDE_CONFIG_DIR", ".claude")


def projects_dir(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / "projects"


def _java_hash(text: str) -> int:
    """Java's ``String.hashCode`` (int32, over UTF-16 code units)."""
    data = text.encode("utf-16-le")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def encode_cwd(cwd: str) -> str:
    """The folder name Claude Code uses for a working directory (its realpath, every
    non-alphanumeric character replaced by ``-``; long names get a hash suffix)."""
    encoded = _NON_ALNUM.sub("-", cwd)
    if len(encoded) <= _MAX_ENCODED:
        return encoded
    return encoded[:_MAX_ENCODED] + "-" + _base36(abs(_java_hash(cwd)))


def project_dir_for(cwd: str | Path, env: Mapping[str, str] | None = None) -> Path:
    return projects_dir(env) / encode_cwd(os.path.realpath(cwd))


def _entries(folder: Path, problems: list[str] | None) -> list[Path]:
    """The entries of a folder; one that cannot be listed is reported, not raised."""
    try:
        return sorted(folder.iterdir())
    except FileNotFoundError:
        return []
    except OSError as exc:
        if problems is not None:
            problems.append(f"{folder}: cannot list the folder: {exc.strerror}")
        return []


def _transcripts(folder: Path, problems: list[str] | None) -> Iterator[Path]:
    for entry in _entries(folder, problems):
        if entry.suffix == ".jsonl" and not entry.name.startswith("."):
            yield entry


def iter_session_files(
    env: Mapping[str, str] | None = None, problems: list[str] | None = None
) -> Iterator[Path]:
    """Every main-session transcript (``projects/<enc>/<id>.jsonl``); subagent files excluded.
    Anything named like one is yielded (reading it refuses what is not a regular file); a
    folder that cannot be listed is reported in ``problems``."""
    for project in _entries(projects_dir(env), problems):
        if is_dir(project):
            yield from _transcripts(project, problems)


def session_files_for(
    cwd: str, env: Mapping[str, str] | None = None, problems: list[str] | None = None
) -> Iterator[Path]:
    """The transcripts in the project folder of working directory ``cwd`` (a real path)."""
    yield from _transcripts(projects_dir(env) / encode_cwd(cwd), problems)


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def subagent_files(transcript: Path) -> list[Path]:
    """The subagent transcripts that belong to a session file, if any (whatever is named like
    one: the reader refuses, with a note, what is not a regular file)."""
    folder = transcript.with_suffix("") / "subagents"
    if not is_dir(folder):
        return []
    return [
        p for p in _entries(folder, None) if p.name.startswith("agent-") and p.suffix == ".jsonl"
    ]


def recorded_session_id(path: Path) -> str | None:
    """The ``sessionId`` a transcript's first records give (normally its file name)."""
    try:
        lines = head_lines(path)
    except (SegueError, OSError, ValueError):
        return None
    for line in lines:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        value = record.get("sessionId") if type(record) is dict else None
        if type(value) is str and value:
            return value
    return None
