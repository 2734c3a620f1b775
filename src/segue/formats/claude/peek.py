"""A listing row for a Claude Code transcript: its head, its tail, and one skeleton pass for
the active chain's prompts; and its outline, one line per record: its type and what it holds."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from segue.formats.claude.chain import active_chain
from segue.formats.claude.reader import read_lines
from segue.formats.claude.skeleton import skeleton_index
from segue.formats.jsonl import LineReport, as_dict, head_lines, iter_records, tail_lines
from segue.formats.peek import one_line, session_info
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


def outline(path: Path) -> Iterator[str]:
    for _, record in iter_records(path, LineReport()):
        kind = str(record.get("type", "?"))
        if record.get("subtype"):
            kind += f"/{record['subtype']}"
        content = as_dict(record.get("message")).get("content")
        if type(content) is list:
            parts = [
                str(b.get("type", "?")) + (f" {b['name']}" if b.get("name") else "")
                for b in content
                if type(b) is dict
            ]
            shown = "[" + ", ".join(parts) + "]"
        elif type(content) is str:
            shown = one_line(content, 90) or ""
        else:
            shown = ""
        yield f"{kind:<24} {shown}"
