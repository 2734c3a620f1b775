"""Publish a new session file atomically, never over an existing one.

A prepared session is the lines segue wrote, after (for a native fork) a copy of its parent's
lines: streamed from the parent file when it is published, so that a fork of a 100 MB session
never holds 100 MB in memory. The copy takes the parent's complete lines up to the size it had
when the fork was prepared; one that changed since is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import BinaryIO, cast

import msgspec

from segue.formats.files import open_regular
from segue.model.conversation import Provider
from segue.model.errors import SwitchError, TargetExists

__all__ = [
    "FileCopy",
    "NativeSession",
    "TargetExists",
    "publish",
    "publish_session",
    "remove_stale_partials",
]


COPY_CHUNK = 4 << 20  # how much of a parent is read at a time when it is copied


class FileCopy(msgspec.Struct, frozen=True):
    """A parent's lines, copied into a native fork: the complete lines of ``path`` in bytes
    ``start``-``end`` (as the parent was when the fork was prepared), each with ``old`` replaced
    by ``new`` when given (the session id a line names)."""

    path: Path
    start: int
    end: int
    old: bytes | None = None
    new: bytes | None = None
    head: bytes = b""  # the parent's first bytes, which must still be there

    @property
    def size(self) -> int:
        return self.end - self.start

    def write_into(self, out: int, at: int) -> int:
        """Copy into the file open as ``out``, from its offset ``at``, each ``old`` replaced by
        ``new`` on the way; return how many bytes were written. The copy goes through one
        reused buffer: on ext4, ``copy_file_range`` at a fork's unaligned offsets copied no
        faster, and finding the ids again after it cost a second pass and a write per line."""
        with self._open() as f:
            src = f.fileno()
            try:
                self._check(src)
                return self._copy(src, out, at)
            except OSError as exc:
                raise SwitchError(f"{self.path}: cannot copy: {exc.strerror}") from None

    def _copy(self, src: int, out: int, at: int) -> int:
        old = self.old if self.old and self.new is not None else None
        new = self.new or b""
        width = len(old) if old is not None else 0
        # an id of the same length (a session id for another) is replaced in the buffer, which
        # is then written in one piece: a write of many small parts cost more than the copy
        in_place = len(new) == width
        buf = bytearray(max(1, min(max(COPY_CHUNK, 2 * width), self.size)))  # an id fits twice
        view = memoryview(buf)
        pos, written = self.start, at
        while pos < self.end:
            n = _fill(src, view[: min(len(buf), self.end - pos)], pos)
            if n == 0:
                raise SwitchError(f"{self.path}: changed since the fork was prepared")
            parts: list[bytes | memoryview] = []
            last = 0  # where the part not written yet starts (after the last id replaced)
            if old is not None:
                i = buf.find(old, 0, n)
                while i >= 0:
                    if in_place:
                        buf[i : i + width] = new
                    else:
                        parts += (view[last:i], new)
                    last = i + width
                    i = buf.find(old, last, n)
            stop = n  # an id across the buffer's end: read again with the next part
            if old is not None and pos + n < self.end:
                stop = max(last, n - width + 1) if n >= width else n
            parts.append(view[:stop] if in_place else view[last:stop])
            done = _write_all(out, parts, written)
            _start_writeback(out, written, done)
            written += done
            pos += stop
        return written - at

    def _open(self) -> BinaryIO:
        return open_regular(self.path, buffering=0, what="session file to fork", error=SwitchError)

    def _check(self, src: int) -> None:
        """Refuse a parent that is no longer what the fork was prepared from."""
        if os.fstat(src).st_size < self.end or (
            self.head and os.pread(src, len(self.head), 0) != self.head
        ):
            raise SwitchError(f"{self.path}: changed since the fork was prepared")


def _read_into(fd: int, view: memoryview, at: int) -> int:
    """Read from offset ``at`` into ``view``; how many bytes came (0: the end of the file)."""
    if hasattr(os, "preadv"):
        return os.preadv(fd, [view], at)
    data = os.pread(fd, len(view), at)
    view[: len(data)] = data
    return len(data)


@cache
def _sync_file_range() -> Callable[[int, int, int, int], int] | None:
    """Linux's ``sync_file_range``, where there is one (Python does not offer it)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    call.restype = ctypes.c_int
    return cast(Callable[[int, int, int, int], int], call)


_WRITE = 2  # SYNC_FILE_RANGE_WRITE: start writing what is dirty, without waiting for it


def _start_writeback(fd: int, at: int, length: int) -> None:
    """Start writing a copied part to the disk now, so that the fsync that makes the new
    session durable waits for less: a 100 MB fork's copy and its writing overlap (its fsync
    took 40 ms after the copy, 10 with this). Only advice: a system without it copies the same."""
    call = _sync_file_range()
    if call is not None and length > 0:
        call(fd, at, length, _WRITE)


def _fill(fd: int, view: memoryview, at: int) -> int:
    """Read into all of ``view`` from offset ``at``, over as many reads as it takes (a network
    or FUSE filesystem may return less than asked); less only at the end of the file."""
    n = 0
    while n < len(view):
        got = _read_into(fd, view[n:], at + n)
        if got == 0:
            break
        n += got
    return n


_IOV_MAX = 1024  # the fewest buffers one vectored write takes on the systems segue runs on


def _write_all(fd: int, parts: list[bytes | memoryview], at: int) -> int:
    """Write ``parts`` one after another from offset ``at``; how many bytes that was."""
    total = sum(len(p) for p in parts)
    done = i = 0
    while i < len(parts):
        batch = parts[i : i + _IOV_MAX] if hasattr(os, "pwritev") else parts[i : i + 1]
        n = (
            os.pwritev(fd, batch, at + done)
            if len(batch) > 1
            else os.pwrite(fd, batch[0], at + done)
        )
        if n == 0 and any(len(b) for b in batch):
            raise OSError(errno.EIO, "the file took none of what was written")
        done += n
        while i < len(parts) and n >= len(parts[i]):
            n -= len(parts[i])
            i += 1
        if n:
            parts[i] = memoryview(parts[i])[n:]
    return total


class NativeSession(msgspec.Struct):
    """A session file a writer prepared but has not published yet: its id, the path it will
    take, and its lines (after ``head`` and ``copied``, a native fork's new first line and its
    parent's lines). Everything that can fail about a write fails while preparing one, but a
    parent that changed since; publishing only puts the bytes in place."""

    provider: Provider
    session_id: str
    path: Path
    lines: list[bytes]  # the lines segue wrote itself, last
    notes: list[str] = msgspec.field(default_factory=list)
    head: list[bytes] = msgspec.field(default_factory=list)  # lines before the copy
    copied: FileCopy | None = None

    @property
    def size(self) -> int:
        copied = 0 if self.copied is None else self.copied.size
        return sum(map(len, self.head)) + copied + sum(map(len, self.lines))

    def write_into(self, f: BinaryIO) -> None:
        """Write the file into ``f`` (a parent's copy straight from file to file)."""
        for line in self.head:
            f.write(line)
        if self.copied is not None:
            f.flush()
            at = f.tell()
            f.seek(at + self.copied.write_into(f.fileno(), at))
        for line in self.lines:
            f.write(line)


def publish_session(session: NativeSession, mode: int = 0o600) -> Path:
    """:func:`publish` for a prepared session (a fork's copy of its parent streamed)."""
    return _publish(session.path, session.write_into, mode)


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

    def write(f: BinaryIO) -> None:
        for line in lines:
            f.write(line)

    return _publish(path, write, mode)


def _publish(path: Path, write: Callable[[BinaryIO], None], mode: int) -> Path:
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
            with os.fdopen(fd, "wb", buffering=1 << 20) as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
        except SwitchError:
            raise
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
        if pid_text.isdigit() and not process_alive(int(pid_text)):
            try:
                candidate.unlink(missing_ok=True)
            except OSError:
                continue
            removed.append(candidate)
    return removed


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
