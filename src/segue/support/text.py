"""Text for a person's line."""

from __future__ import annotations

__all__ = ["C_ESCAPES", "quoted", "short"]

C_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}  # as C writes them


def short(text: str, limit: int = 60) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: max(limit - 1, 0)] + "…"


def quoted(path: str) -> str:
    """``path`` as a person's line shows it: as it is when it holds only printable characters
    and no quote, backslash or space at its ends; else between double quotes, with a newline,
    a tab, a quote, a backslash and any other unprintable character escaped (as git quotes)."""
    if path and path.isprintable() and path == path.strip() and not any(c in path for c in '"\\'):
        return path
    return '"' + "".join(map(_escaped, path)) + '"'


def _escaped(c: str) -> str:
    if c in C_ESCAPES:
        return C_ESCAPES[c]
    if "\udc80" <= c <= "\udcff":  # (a byte that is not UTF-8)
        return f"\\x{ord(c) - 0xDC00:02x}"
    if not c.isprintable() and c != " ":
        return f"\\u{ord(c):04x}" if ord(c) > 0xFF else f"\\x{ord(c):02x}"
    return c
