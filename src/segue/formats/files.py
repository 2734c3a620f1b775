"""Opening the files segue reads: regular files only, never a hang, every read bounded.

Anything named like a session can be something else: a FIFO (opening it for reading would wait
for a writer forever), a link to ``/dev/zero`` (an endless line), a directory, a dangling link.
Every session, config and database file segue reads is opened here: without blocking, then
checked to be a regular file, else refused with a one-line :class:`SessionError` naming it.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from segue.model.errors import ConfigError, SegueError, SessionError

__all__ = [
    "MAX_LINE",
    "is_regular",
    "newline_before",
    "noting_opened",
    "open_regular",
    "read_config",
    "read_regular",
]

# The longest line a reader takes (a Claude message with several images runs to tens of MB);
# a longer one is skipped with a report, so memory stays bounded whatever a file holds.
MAX_LINE = 128 << 20

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


_OPENED: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("opened", default=None)


@contextlib.contextmanager
def noting_opened() -> Iterator[list[str]]:
    """Within it, the files :func:`open_regular` opens are added to the list it gives (what a
    result read from several files depends on)."""
    opened: list[str] = []
    token = _OPENED.set(opened)
    try:
        yield opened
    finally:
        _OPENED.reset(token)


def open_regular(
    path: Path,
    buffering: int = -1,
    what: str = "file",
    error: type[SegueError] = SessionError,
) -> BinaryIO:
    """``path`` opened for reading in binary mode, if it is (or links to) a regular file.

    Raises ``error`` (":class:`SessionError`": "<path>: cannot read the …: <reason>" /
    "<path>: is a FIFO, not a regular …") otherwise. Opening never blocks: a FIFO is opened
    non-blocking, seen for what it is, and closed.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    noted = _OPENED.get()
    if noted is not None:
        noted.append(os.fspath(path))
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what}: {exc.strerror}") from None
    except ValueError:  # a NUL byte in the name
        raise error(f"{path!r}: not a usable file name") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise error(f"{path}: is {_kind(mode)}, not a regular {what}; not read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def read_regular(
    path: Path, limit: int, what: str = "file", error: type[SegueError] = SessionError
) -> bytes:
    """The whole of a small regular file, refused (``error``) when larger than ``limit``."""
    with open_regular(path, what=what, error=error) as f:
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise error(f"{path}: reading the {what} failed: {exc.strerror}") from None
    if len(data) > limit:
        raise error(f"{path}: larger than {limit:,} bytes; not a {what} segue reads")
    return data


CONFIG_LIMIT = 16 << 20


def read_config(path: Path, what: str) -> bytes | None:
    """A configuration file's bytes, or None when there is none; :class:`ConfigError` when it
    exists but cannot be read (not a regular file, no permission, absurdly large)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:
        pass  # let opening it say what is wrong
    except ValueError:
        raise ConfigError(f"{path!r}: not a usable file name") from None
    return read_regular(path, CONFIG_LIMIT, what, ConfigError)


def is_regular(path: Path) -> bool:
    """Whether ``path`` is (or links to) a regular file; False for anything that cannot be
    looked at (a dangling link, no permission)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


SCAN_CHUNK = 1 << 16  # how much is read at a time when looking back for a newline


def newline_before(fd: int, pos: int) -> int:
    """Where the last newline before offset ``pos`` of the open file ``fd`` is (-1: none),
    read backwards a chunk at a time."""
    while pos > 0:
        start = max(0, pos - SCAN_CHUNK)
        found = os.pread(fd, pos - start, start).rfind(b"\n")
        if found >= 0:
            return start + found
        pos = start
    return -1
