"""What a session file was when segue last looked, and whether it is still that.

A :class:`Stamp` is cheap to take and to check: the file's size, modification time, inode and
device, a hash of its first bytes and a hash of its last complete line (with where that line
starts). Checking one reads two small pieces of the file, never the whole of it, and tells
apart what the CLIs do to their sessions from what they never do:

- ``same``: nothing changed (a new modification time with the same bytes is still the same);
- ``appended``: the bytes segue saw are still there, and more follow (a turn was added);
- ``touched``: the bytes segue checks are as they were, but the file was written (its time,
  size or inode changed): the caller reads it to see what changed;
- ``changed``: the bytes segue saw are no longer there (edited, truncated or replaced in place);
- ``empty``: the file is there and holds nothing;
- ``gone``: nothing regular is there (deleted, a folder, a FIFO, a dangling link).

Only complete lines count: a last line still being written is not part of a stamp, so a CLI
finishing it is an append.
"""

from __future__ import annotations

import hashlib
import os
import stat
from enum import StrEnum
from pathlib import Path
from typing import Any

import msgspec

from segue.formats.files import newline_before

__all__ = ["Change", "Stamp", "check_stamp", "stamp_file"]

HEAD_BYTES = 4096  # the head a stamp hashes (less for a smaller file)
TAIL_BYTES = 65536  # of a longer last line, only its last part is hashed

_OPEN = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


class Change(StrEnum):
    SAME = "same"
    APPENDED = "appended"
    TOUCHED = "touched"
    CHANGED = "changed"
    EMPTY = "empty"
    GONE = "gone"


class Stamp(msgspec.Struct, frozen=True):
    size: int
    mtime_ns: int
    inode: int
    device: int
    head_len: int  # how many bytes ``head`` hashes
    head: str
    tail_at: int  # where the last complete line starts (0 and "" for a file with none)
    tail_len: int
    tail: str

    def to_json(self) -> dict[str, Any]:
        return msgspec.structs.asdict(self)

    @staticmethod
    def from_json(value: object) -> Stamp | None:
        """A stamp read back from the store; None for anything that is not a whole one."""
        try:
            return msgspec.convert(value, Stamp)
        except msgspec.ValidationError:
            return None


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _open(path: Path) -> int | None:
    """A descriptor of ``path`` if it is (or links to) a regular file; never blocks."""
    try:
        fd = os.open(path, _OPEN)
    except (OSError, ValueError):
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _last_line(fd: int, size: int) -> tuple[int, int]:
    """Where the last complete line of a file starts, and its length (0, 0: none)."""
    newline = newline_before(fd, size)  # the last complete line ends at the last newline
    if newline < 0:
        return 0, 0
    begin = newline_before(fd, newline) + 1  # and starts after the newline before it
    return begin, newline + 1 - begin


def _tail_hash(fd: int, at: int, length: int) -> str:
    take = min(length, TAIL_BYTES)
    return _digest(length.to_bytes(8, "little") + os.pread(fd, take, at + length - take))


def _stamp(fd: int) -> Stamp:
    info = os.fstat(fd)
    size = info.st_size
    head_len = min(size, HEAD_BYTES)
    head = _digest(os.pread(fd, head_len, 0))
    tail_at, tail_len = _last_line(fd, size)
    tail = _tail_hash(fd, tail_at, tail_len) if tail_len else ""
    return Stamp(
        size, info.st_mtime_ns, info.st_ino, info.st_dev, head_len, head, tail_at, tail_len, tail
    )


def stamp_file(path: Path) -> Stamp | None:
    """The stamp of ``path`` now; None when nothing regular is there or it cannot be read."""
    fd = _open(path)
    if fd is None:
        return None
    try:
        return _stamp(fd)
    except OSError:
        return None
    finally:
        os.close(fd)


def check_stamp(old: Stamp, path: Path) -> tuple[Change, Stamp | None]:
    """How ``path`` differs from what ``old`` saw, and its stamp now (None when gone)."""
    fd = _open(path)
    if fd is None:
        return Change.GONE, None
    try:
        now = _stamp(fd)
        if now.size == 0:
            return Change.EMPTY, now
        if (now.size, now.mtime_ns, now.inode, now.device) == (
            old.size,
            old.mtime_ns,
            old.inode,
            old.device,
        ) and (now.head, now.tail) == (old.head, old.tail):
            return Change.SAME, now
        if now.size < old.tail_at + old.tail_len or now.size < old.head_len:
            return Change.CHANGED, now
        if _digest(os.pread(fd, old.head_len, 0)) != old.head:
            return Change.CHANGED, now
        if old.tail_len and _tail_hash(fd, old.tail_at, old.tail_len) != old.tail:
            return Change.CHANGED, now
        if old.tail_len and os.pread(fd, 1, old.tail_at + old.tail_len - 1) != b"\n":
            return Change.CHANGED, now
        if (now.tail_at + now.tail_len) > (old.tail_at + old.tail_len):
            return Change.APPENDED, now
        return Change.TOUCHED, now
    except OSError:
        return Change.GONE, None
    finally:
        os.close(fd)
