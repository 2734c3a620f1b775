"""The parent of a native fork, read only as much as a fork needs: where its complete lines end,
its first line, and its last lines (a fork copies the rest byte for byte, streamed)."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from segue.formats.files import MAX_LINE, newline_before, open_regular
from segue.formats.jsonl import split_lines
from segue.model.errors import SwitchError

__all__ = ["ParentFile", "read_parent"]

TAIL_BYTES = 2 << 20
HEAD_CHECK = 4096


class ParentFile(msgspec.Struct, frozen=True):
    path: Path
    end: int  # just after its last complete line (a line still being written is not copied)
    first: bytes  # its first line, whole
    head: bytes  # its first bytes, which must still be there when it is copied
    tail: list[bytes]  # its complete lines within the last TAIL_BYTES, in order
    whole: bool  # whether ``tail`` is every line of the file


def read_parent(path: Path, tail_bytes: int = TAIL_BYTES) -> ParentFile:
    """The facts a fork needs of ``path``; :class:`SwitchError` when it cannot be read."""
    with open_regular(path, buffering=0, what="session file to fork", error=SwitchError) as f:
        try:
            fd = f.fileno()
            size = os.fstat(fd).st_size
            start = max(0, size - tail_bytes)
            data = os.pread(fd, size - start, start)
            last_newline = data.rfind(b"\n")
            if last_newline < 0 and start == 0:
                raise SwitchError(f"{path}: no complete line to fork")
            end = start + last_newline + 1 if last_newline >= 0 else newline_before(fd, start) + 1
            data = data[: max(0, last_newline + 1)]
            if start > 0:  # the first line in the window may be cut: drop it
                cut = data.find(b"\n")
                data = data[cut + 1 :] if cut >= 0 else b""
            head = os.pread(fd, min(HEAD_CHECK, end), 0)
            first = os.pread(fd, min(end, 1 << 16), 0)
            while b"\n" not in first and len(first) < min(end, MAX_LINE):
                more = os.pread(fd, 1 << 20, len(first))
                if not more:
                    break
                first += more
            first = first[: first.find(b"\n") + 1] if b"\n" in first else first
        except OSError as exc:
            raise SwitchError(f"{path}: cannot read: {exc.strerror}") from None
    tail = [line for line in split_lines(data) if line.strip()]
    return ParentFile(path, end, first, head, tail, whole=start == 0)
