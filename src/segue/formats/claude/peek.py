"""A listing row for a Claude Code transcript: its head, its tail, and one skeleton pass for
the active chain's prompts."""

from __future__ import annotations

import os
from pathlib import Path

from segue.formats.claude.chain import active_chain
from segue.formats.claude.reader import read_lines
from segue.formats.claude.skeleton import skeleton_index
from segue.formats.jsonl import head_lines, tail_lines
from segue.formats.peek import session_info
from segue.model.conversation import Provider
from segue.model.session_info import SessionInfo


def peek(path: Path) -> SessionInfo:
    size = os.stat(path).st_size
    head = read_lines(path, head_lines(path))
    tail = read_lines(path, tail_lines(path))
    index, candidates = skeleton_index(path)
    prompt_lines = [candidates[n] for n, _ in active_chain(index) if n in candidates]
    scanned = read_lines(path, prompt_lines, follow_chain=False)
    titles = index.titles
    scanned.meta.title = titles.get("custom") or titles.get("ai") or titles.get("summary")
    return session_info(path, Provider.CLAUDE, size=size, head=head, tail=tail, scanned=scanned)
