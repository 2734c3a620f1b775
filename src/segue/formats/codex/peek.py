"""A listing row for a Codex rollout, from its head, its tail and a skim for prompts; and its
outline, one line per record: its type, its payload's type and what it holds."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from segue.formats.codex.reader import read_lines, read_session
from segue.formats.codex.skeleton import prompt_lines
from segue.formats.jsonl import LineReport, as_dict, as_str, head_lines, iter_records, tail_lines
from segue.formats.peek import one_line, session_info
from segue.model.conversation import Provider
from segue.model.session_info import SessionInfo


def peek(path: Path) -> SessionInfo:
    size = os.stat(path).st_size
    head = read_lines(path, head_lines(path))
    if "history_base" in head.meta.extra:
        # A later generation of a rolled-back thread: its history starts in another file.
        whole = read_session(path)
        return session_info(path, Provider.CODEX, size=size, head=whole, tail=whole, scanned=whole)
    tail = read_lines(path, tail_lines(path))
    scanned = read_lines(path, prompt_lines(path))
    return session_info(path, Provider.CODEX, size=size, head=head, tail=tail, scanned=scanned)


def outline(path: Path) -> Iterator[str]:
    for _, record in iter_records(path, LineReport()):
        payload = as_dict(record.get("payload"))
        kind = str(record.get("type", "?"))
        if payload.get("type"):
            kind += f"/{payload['type']}"
        if payload.get("role"):
            kind += f"({payload['role']})"
        content = payload.get("content")
        if type(content) is list:
            text = " ".join(as_str(as_dict(part).get("text")) for part in content)
        else:
            text = as_str(payload.get("message")) or as_str(payload.get("name"))
        yield f"{kind:<40} {one_line(text, 70) or ''}"
