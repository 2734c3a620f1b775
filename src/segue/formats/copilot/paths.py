"""Where GitHub Copilot CLI keeps its sessions: ``$COPILOT_HOME`` (else ``~/.copilot``), one
folder ``session-state/<uuid>/`` a session, holding its event log ``events.jsonl`` and
``workspace.yaml``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson

from segue.formats.homes import cli_home
from segue.formats.jsonl import head_lines

EVENTS = "events.jsonl"
WORKSPACE = "workspace.yaml"
_UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)


def copilot_home(env: Mapping[str, str] | None = None) -> Path:
    """``$COPILOT_HOME`` or ``~/.copilot``."""
    return cli_home(env, "COPILOT_HOME", ".copilot")


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    return copilot_home(env) / "session-state"


def is_session_name(name: str) -> bool:
    return bool(_UUID_RE.match(name))


def session_id_of(path: Path) -> str:
    """A session's id: the name of the folder its event log is in."""
    return path.parent.name


def events_file(state: Path, session_id: str) -> Path:
    return state / session_id / EVENTS


def iter_session_files(
    env: Mapping[str, str] | None = None, problems: list[str] | None = None
) -> Iterator[Path]:
    """Every ``session-state/<uuid>/events.jsonl`` there is (reading one refuses what is not a
    regular file). A folder that cannot be listed is reported in ``problems``."""
    root = state_dir(env)
    try:
        names = sorted(os.listdir(root))
    except FileNotFoundError:
        return
    except OSError as exc:
        if problems is not None:
            problems.append(f"{root}: cannot list the folder: {exc.strerror}")
        return
    for name in names:
        if is_session_name(name):
            path = root / name / EVENTS
            if os.path.lexists(path):
                yield path


def recorded_session_id(path: Path) -> str | None:
    """The id the log's ``session.start`` names (a copied folder keeps its old one)."""
    for line in head_lines(path, 16 * 1024)[:4]:
        if b'"session.start"' in line:
            try:
                data = orjson.loads(line).get("data")
            except (orjson.JSONDecodeError, AttributeError):
                return None
            found = data.get("sessionId") if isinstance(data, dict) else None
            return found if isinstance(found, str) else None
    return None
