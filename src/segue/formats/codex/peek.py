"""A listing row for a Codex rollout, from its head, its tail and a skim for prompts."""

from __future__ import annotations

import os
from pathlib import Path

from segue.formats.codex.reader import read_lines, read_session
from segue.formats.codex.skeleton import prompt_lines
from segue.formats.jsonl import head_lines, tail_lines
from segue.formats.peek import session_info
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
