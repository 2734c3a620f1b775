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
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

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

    def write_into(self, out: int, at: int) -> None:
        """Copy into the file open as ``out``, from its offset ``at``: in the kernel where it
        can (``copy_file_range``), then each ``old`` overwritten in place (an id is as long as
        the id it replaces); else line by line through memory."""
        same_length = self.old is None or self.new is None or len(self.old) == len(self.new)
        if not same_length or not hasattr(os, "copy_file_range"):
            self._write_chunks(out, at)
            return
        with self._open() as f:
            src = f.fileno()
            try:
                self._check(src)
                done = 0
                while done < self.size:
                    n = os.copy_file_range(src, out, self.size - done, self.start + done, at + done)
                    if n == 0:
                        raise SwitchError(f"{self.path}: changed since the fork was prepared")
                    done += n
                if self.old is not None and self.new is not None:
                    for offset in self._occurrences(src):
                        os.pwrite(out, self.new, at + offset - self.start)
            except OSError as exc:
                if exc.errno in (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL):
                    self._write_chunks(out, at)  # a filesystem that cannot copy in the kernel
                    return
                raise SwitchError(f"{self.path}: cannot copy: {exc.strerror}") from None

    def _open(self) -> BinaryIO:
        return open_regular(self.path, buffering=0, what="session file to fork", error=SwitchError)

    def _check(self, src: int) -> None:
        """Refuse a parent that is no longer what the fork was prepared from."""
        if os.fstat(src).st_size < self.end or (
            self.head and os.pread(src, len(self.head), 0) != self.head
        ):
            raise SwitchError(f"{self.path}: changed since the fork was prepared")

    def _occurrences(self, src: int) -> Iterator[int]:
        """Where ``old`` is in the copied range (read once, a chunk at a time)."""
        assert self.old is not None
        width = len(self.old)
        at = self.start
        while at < self.end:
            data = os.pread(src, min(COPY_CHUNK, self.end - at), at)
            if not data:
                return
            find = data.find
            i = find(self.old)
            while i >= 0:
                if at + i + width <= self.end:
                    yield at + i
                i = find(self.old, i + 1)
            if at + len(data) >= self.end:
                return
            at += max(1, len(data) - width + 1)  # a match across the chunk's end is found next

    def _write_chunks(self, out: int, at: int) -> None:
        for data in self.chunks():
            view = memoryview(data)
            while view:
                n = os.pwrite(out, view, at)
                at += n
                view = view[n:]

    def chunks(self) -> Iterator[bytes]:
        with self._open() as f:
            try:
                self._check(f.fileno())
                at = self.start
                rest = b""
                while at < self.end:
                    data = os.pread(f.fileno(), min(COPY_CHUNK, self.end - at), at)
                    if not data:
                        raise SwitchError(f"{self.path}: changed since the fork was prepared")
                    at += len(data)
                    data = rest + data
                    cut = data.rfind(b"\n") + 1 if at < self.end else len(data)
                    data, rest = data[:cut], data[cut:]  # replace whole lines only
                    if self.old is not None and self.new is not None:
                        data = data.replace(self.old, self.new)
                    yield data
                if rest:
                    yield rest
            except OSError as exc:
                raise SwitchError(f"{self.path}: cannot read: {exc.strerror}") from None


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

    def chunks(self) -> Iterator[bytes]:
        """The file's bytes, in order (the parent's copy streamed as it is read)."""
        yield from self.head
        if self.copied is not None:
            yield from self.copied.chunks()
        yield from self.lines

    def write_into(self, f: BinaryIO) -> None:
        """Write the file into ``f`` (a parent's copy done in the kernel where it can be)."""
        for line in self.head:
            f.write(line)
        if self.copied is not None:
            f.flush()
            at = f.tell()
            self.copied.write_into(f.fileno(), at)
            f.seek(at + self.copied.size)
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
