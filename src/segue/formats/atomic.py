"""Publish a new session file atomically, never over an existing one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from segue.conversation import Provider
from segue.errors import SwitchError, TargetExists

__all__ = ["NativeSession", "TargetExists", "publish", "remove_stale_partials"]


@dataclass(slots=True)
class NativeSession:
    """A session file a writer prepared but has not published yet: its id, the path it will
    take, and its lines. Everything that can fail about a write fails while preparing one;
    publishing only puts the bytes in place."""

    provider: Provider
    session_id: str
    path: Path
    lines: list[bytes]
    notes: list[str] = field(default_factory=list)
    # where the lines segue wrote itself start (a native fork copies its parent's lines first)
    added: int = 0

    @property
    def size(self) -> int:
        return sum(len(line) for line in self.lines)


def publish(path: Path, lines: Iterable[bytes], mode: int = 0o600) -> Path:
    """Write ``lines`` to a hidden temporary file beside ``path``, fsync it, then hard-link it to
    ``path`` (which fails if the name is taken) and remove the temporary name.

    A crash at any point leaves either no file under ``path`` or the complete one: never a
    truncated session under a name a CLI would pick up. Temporary files are named
    ``.segue-<pid>-….partial``, which no CLI's session glob matches, and the next publish into
    the same folder removes those whose process is gone. Any failure (a full disk, a read-only
    or unwritable folder, a file size limit) raises :class:`SwitchError` naming the path, and
    leaves neither the file nor a temporary one.
    """
    try:
        make_private_dirs(path.parent)
    except OSError as exc:
        raise SwitchError(f"{path.parent}: cannot create the folder: {exc.strerror}") from None
    if os.path.lexists(path):
        raise TargetExists(f"{path}: already exists; refusing to overwrite it")
    remove_stale_partials(path.parent)
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=f"{PARTIAL_PREFIX}{os.getpid()}-", suffix=PARTIAL_SUFFIX, dir=path.parent
        )
    except OSError as exc:
        raise SwitchError(f"{path.parent}: cannot write the new session: {exc.strerror}") from None
    tmp = Path(tmp_name)
    try:
        try:
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as f:
                for line in lines:
                    f.write(line)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise SwitchError(f"{path}: cannot write the new session: {exc.strerror}") from None
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise TargetExists(f"{path}: already exists; refusing to overwrite it") from None
        except OSError as exc:
            raise SwitchError(
                f"{path}: cannot put the new session in place: {exc.strerror}"
            ) from None
        _fsync_dir(path.parent)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return path


def make_private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each new one 0700 (what sessions hold is
    private); existing folders are left as they are."""
    missing: list[Path] = []
    current = folder
    while not os.path.isdir(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    for new in reversed(missing):
        try:
            os.mkdir(new, 0o700)
        except FileExistsError:
            if not os.path.isdir(new):
                raise


PARTIAL_PREFIX = ".segue-"
PARTIAL_SUFFIX = ".partial"


def remove_stale_partials(folder: Path) -> list[Path]:
    """Remove temporary files that a killed writer left behind (their process is gone)."""
    removed: list[Path] = []
    try:
        candidates = list(folder.glob(f"{PARTIAL_PREFIX}*{PARTIAL_SUFFIX}"))
    except OSError:
        return removed
    for candidate in candidates:
        pid_text = candidate.name[len(PARTIAL_PREFIX) :].split("-", 1)[0]
        if pid_text.isdigit() and not _alive(int(pid_text)):
            try:
                candidate.unlink(missing_ok=True)
            except OSError:
                continue
            removed.append(candidate)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
