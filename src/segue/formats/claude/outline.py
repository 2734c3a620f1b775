"""One line per record of a Claude Code transcript: its type and what it holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from segue.formats.jsonl import LineReport, as_dict, iter_records
from segue.formats.peek import one_line


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
