"""A listing row for a Codex rollout, from its head, its tail and a byte scan."""

from __future__ import annotations

from pathlib import Path

from segue.conversation import Provider
from segue.formats.codex.reader import read_lines, read_session
from segue.formats.jsonl import head_lines, matching_lines, tail_lines
from segue.formats.peek import session_info
from segue.session_info import SessionInfo

# Lines that can hold a prompt, a rollback or the thread's name.
PROMPT_LINES = (b'"role":"user"', b'"thread_rolled_back"', b'"thread_name_updated"')


def peek(path: Path) -> SessionInfo:
    size = path.stat().st_size
    head = read_lines(path, head_lines(path))
    if "history_base" in head.meta.extra:
        # A later generation of a rolled-back thread: its history starts in another file.
        whole = read_session(path)
        return session_info(path, Provider.CODEX, size=size, head=whole, tail=whole, scanned=whole)
    tail = read_lines(path, tail_lines(path))
    scanned = read_lines(path, matching_lines(path, PROMPT_LINES))
    return session_info(path, Provider.CODEX, size=size, head=head, tail=tail, scanned=scanned)
