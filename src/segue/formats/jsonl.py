"""JSON Lines as both providers keep their sessions: tolerant reading, and the one line writer.

One rule set for both providers: a truncated last line (a CLI in the middle of an append) is
ignored with a note; any other malformed line is reported with its file and line number and the
rest of the file is still read. Nothing here ever opens a file for writing.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
import orjson

from segue.formats.files import MAX_LINE, open_regular
from segue.model.conversation import Skip
from segue.model.errors import SessionError

# Session lines run to tens of kilobytes (tool output); a 1 MiB buffer makes line iteration
# about five times faster than the default 8 KiB one.
READ_BUFFER = 1 << 20


class LineReport(msgspec.Struct):
    """What a pass over a file could not use."""

    skipped: list[Skip] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)


def iter_records(path: Path, report: LineReport) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, record)`` for every well-formed JSON object line of ``path``.

    Line numbers are 1-based. Blank lines are ignored silently. The file is streamed, so memory
    holds one line at a time plus what the caller keeps; a line longer than
    :data:`~segue.formats.files.MAX_LINE` is skipped (and reported) without being held. Raises
    :class:`SessionError` for a file that is not a regular file or cannot be read.
    """
    with open_regular(path, READ_BUFFER, "session file") as f:
        try:
            yield from iter_records_in(bounded_lines(f), str(path), report)
        except OSError as exc:
            raise SessionError(f"{path}: reading failed: {exc.strerror}") from None


# Stands for a line longer than MAX_LINE (never valid JSON, so it costs nothing on the fast path).
OVERLONG = b"\x00 overlong line"


def bounded_lines(f: BinaryIO, limit: int = MAX_LINE) -> Iterator[bytes]:
    """The lines of ``f``, each at most ``limit`` bytes: a longer one is read past in chunks and
    yielded as :data:`OVERLONG`, so no line can exhaust memory."""
    readline = f.readline
    while True:
        line = readline(limit)
        if not line:
            return
        if len(line) == limit and not line.endswith(b"\n"):
            while True:
                rest = readline(READ_BUFFER)
                if not rest or rest.endswith(b"\n"):
                    break
            yield OVERLONG
            continue
        yield line


def iter_records_in(
    lines: Iterable[bytes], name: str, report: LineReport
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Like :func:`iter_records` over any iterable of byte lines (each ending in ``\\n`` except
    perhaps the last)."""
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    lineno = 0
    for line in lines:
        lineno += 1
        try:
            record = loads(line)
        except decode_error as exc:
            if line is OVERLONG:
                report.skipped.append(
                    Skip(name, lineno, f"longer than {MAX_LINE >> 20} MiB; not read")
                )
                continue
            if not line.strip():
                continue
            if not line.endswith(b"\n"):
                report.notes.append(
                    f"{name}:{lineno}: last line is incomplete (the CLI may be writing it); ignored"
                )
            else:
                report.skipped.append(Skip(name, lineno, f"not valid JSON: {exc}"))
            continue
        if type(record) is not dict:
            report.skipped.append(Skip(name, lineno, "not a JSON object"))
            continue
        yield lineno, record


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty dict (for reading optional fields)."""
    return value if type(value) is dict else {}


def as_str(value: Any, default: str = "") -> str:
    return value if type(value) is str else default


def str_or_none(value: object) -> str | None:
    return value if type(value) is str else None


def split_lines(data: bytes) -> list[bytes]:
    """Lines as JSON Lines defines them: ended by ``\\n`` only (a ``\\r`` is whitespace)."""
    lines = data.split(b"\n")
    last = lines.pop()
    out = [line + b"\n" for line in lines]
    if last:
        out.append(last)
    return out


def head_lines(path: Path, limit: int = 64 * 1024) -> list[bytes]:
    """The complete lines within the first ``limit`` bytes (the first line even if longer, up to
    :data:`MAX_LINE`)."""
    with open_regular(path, what="session file") as f:
        data = f.read(limit)
        if len(data) == limit and not data.endswith(b"\n"):
            cut = data.rfind(b"\n")
            if cut == -1:  # one long first line: read the rest of it, within the bound
                data += f.readline(MAX_LINE - limit)
                if len(data) >= MAX_LINE and not data.endswith(b"\n"):
                    return []
            else:
                data = data[: cut + 1]
    return split_lines(data)


def tail_lines(path: Path, limit: int = 256 * 1024) -> list[bytes]:
    """The complete lines within the last ``limit`` bytes (at least the last line, unless it is
    longer than :data:`MAX_LINE`). Linear in the length of the last line, whatever it is."""
    with open_regular(path, what="session file") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return []
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            size = len(mm)
            floor = max(0, size - 1 - MAX_LINE)
            last_start = mm.rfind(b"\n", floor, size - 1) + 1
            if last_start == 0 and floor > 0:  # the last line alone is over the bound
                return []
            start = min(max(0, size - limit), last_start)
            if start > 0 and mm[start - 1] != 0x0A:
                start = mm.find(b"\n", start) + 1
            data = mm[start:size]
    return split_lines(data)


def dump_lines(records: Iterable[Mapping[str, Any]]) -> list[bytes]:
    """Records as JSON Lines lines (compact, UTF-8, each ending in ``\\n``)."""
    return [orjson.dumps(record) + b"\n" for record in records]
