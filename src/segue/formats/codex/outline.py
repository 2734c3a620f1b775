"""One line per record of a Codex rollout: its type, its payload's type and what it holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from segue.formats.jsonl import LineReport, as_dict, as_str, iter_records
from segue.formats.peek import one_line


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
