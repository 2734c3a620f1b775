"""Skimming a whole session file: each line decoded into a small struct of the few fields a
listing needs, the rest skipped without being built.

``msgspec`` decodes a line into a struct of just those fields and skips the others (message
texts, tool output) without creating them: faster than parsing the line. A line whose fields
have unexpected types is parsed with ``orjson`` instead, so callers see the record the reader
would. Lines that are not JSON objects, blank, or longer than the bound are passed over, as the
readers pass over them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import orjson

from segue.formats.files import open_regular
from segue.formats.jsonl import OVERLONG, READ_BUFFER, bounded_lines

__all__ = ["skim"]


def skim(
    path: Path, decode: Callable[[bytes], dict[str, Any]]
) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """``(line number, line, record)`` for every JSON object line of ``path``, where ``record``
    is ``decode(line)`` (a msgspec decoder turned into a dict) or, when that rejects the line's
    types, the whole record as ``orjson`` parses it."""
    with open_regular(path, READ_BUFFER, "session file") as f:
        for lineno, line in enumerate(bounded_lines(f), 1):
            if line is OVERLONG:
                continue
            try:
                record = decode(line)
            except msgspec.ValidationError:  # valid JSON, unexpected types
                try:
                    parsed = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if type(parsed) is not dict:
                    continue
                record = parsed
            except msgspec.DecodeError:  # not JSON
                continue
            yield lineno, line, record
