"""A listing row for a Copilot session, from its head, its tail and a skim for prompts; and the
one-line-per-event outline ``segue show --outline`` prints."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from segue.formats.copilot.reader import read_lines
from segue.formats.files import open_regular
from segue.formats.jsonl import (
    OVERLONG,
    READ_BUFFER,
    LineReport,
    as_dict,
    as_str,
    bounded_lines,
    head_lines,
    iter_records,
    tail_lines,
)
from segue.formats.peek import one_line, session_info
from segue.model.conversation import Provider
from segue.model.session_info import SessionInfo

_PROMPT = b'"user.message"'


def prompt_lines(path: Path) -> Iterator[bytes]:
    """The lines that can be prompts: ``user.message`` events (the type is near a line's start)."""
    with open_regular(path, READ_BUFFER, "session file") as f:
        for line in bounded_lines(f):
            if line is not OVERLONG and _PROMPT in line[:64]:
                yield line


def peek(path: Path) -> SessionInfo:
    size = os.stat(path).st_size
    head = read_lines(path, head_lines(path))
    tail = read_lines(path, tail_lines(path))
    scanned = read_lines(path, prompt_lines(path))
    provider = Provider("copilot")
    return session_info(path, provider, size=size, head=head, tail=tail, scanned=scanned)


def outline(path: Path) -> Iterator[str]:
    for _, event in iter_records(path, LineReport()):
        data = as_dict(event.get("data"))
        kind = as_str(event.get("type"), "?")
        text = as_str(data.get("content")) or as_str(data.get("message"))
        if not text and data.get("toolName"):
            text = as_str(data.get("toolName"))
        yield f"{kind:<40} {one_line(text, 70) or ''}"
