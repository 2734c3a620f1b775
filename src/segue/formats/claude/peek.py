"""A listing row for a Claude Code transcript, from its head, its tail and a byte scan."""

from __future__ import annotations

from pathlib import Path

from segue.conversation import Provider
from segue.formats.claude.reader import read_lines
from segue.formats.jsonl import head_lines, matching_lines, tail_lines
from segue.formats.peek import session_info
from segue.session_info import SessionInfo

# Lines that can hold a typed prompt, and lines that cannot although they match.
PROMPT_LINES = (b'"type":"user"',)
NOT_PROMPT_LINES = (b'"tool_use_id"', b'"isCompactSummary":true', b'"isSidechain":true')
TITLE_LINES = (b'"type":"custom-title"', b'"type":"ai-title"', b'"type":"summary"')


def peek(path: Path) -> SessionInfo:
    size = path.stat().st_size
    head = read_lines(path, head_lines(path))
    tail = read_lines(path, tail_lines(path))
    found = matching_lines(path, PROMPT_LINES, NOT_PROMPT_LINES) + matching_lines(path, TITLE_LINES)
    scanned = read_lines(path, found, follow_chain=False)
    return session_info(path, Provider.CLAUDE, size=size, head=head, tail=tail, scanned=scanned)
