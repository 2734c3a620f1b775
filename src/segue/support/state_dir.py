"""Where segue keeps its own state (switch locks, the usage cache), and small private files in it.

``$SEGUE_STATE_DIR`` or the platform's place (platformdirs). Folders are created 0700 and files
0600, never through a symbolic link: the usage cache holds what a provider said about the
user's account.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from segue.support.places import user_folder

__all__ = ["read_private_json", "state_dir", "write_private_json"]


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where segue keeps its own state: ``$SEGUE_STATE_DIR`` or the platform's place."""
    env = os.environ if env is None else env
    override = env.get("SEGUE_STATE_DIR")
    return Path(override) if override else user_folder("state", env)


def read_private_json(path: Path, limit: int = 1 << 20) -> Any:
    """The JSON value in ``path``, or None when it is missing, unreadable, not a regular file
    (a FIFO is never waited on), not JSON, or longer than ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        with os.fdopen(fd, "rb") as f:
            data = f.read(limit + 1)
        return None if len(data) > limit else orjson.loads(data)
    except (OSError, orjson.JSONDecodeError):
        return None


def write_private_json(path: Path, value: Any) -> bool:
    """Replace ``path`` with ``value`` as JSON (mode 0600, folder 0700), atomically. False when
    it cannot be written: a cache is never worth an error."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".segue-", suffix=".tmp", dir=path.parent)
    except OSError:
        return False
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(orjson.dumps(value))
        os.replace(tmp, path)
        return True
    except (OSError, TypeError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
