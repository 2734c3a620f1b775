"""Publish a new session file atomically, never over an existing one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


class TargetExists(FileExistsError):
    """A file already has the target's name; segue never overwrites one."""


def publish(path: Path, lines: Iterable[bytes], mode: int = 0o600) -> Path:
    """Write ``lines`` to a hidden temporary file beside ``path``, fsync it, then hard-link it to
    ``path`` (which fails if the name is taken) and remove the temporary name.

    A crash at any point leaves either no file under ``path`` or the complete one: never a
    truncated session under a name a CLI would pick up. Temporary files start with ``.segue-``
    and end in ``.partial``, which no CLI's session glob matches.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        raise TargetExists(f"{path}: already exists; refusing to overwrite it")
    fd, tmp_name = tempfile.mkstemp(prefix=".segue-", suffix=".partial", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            for line in lines:
                f.write(line)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise TargetExists(f"{path}: already exists; refusing to overwrite it") from None
        _fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
