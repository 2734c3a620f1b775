"""Text for a person's line."""

from __future__ import annotations

__all__ = ["quoted", "short"]


def short(text: str, limit: int = 60) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def quoted(path: str) -> str:
    """``path`` as a person's line shows it: as it is when it holds only printable characters
    and no quote, backslash or space at its ends; else between double quotes, with a newline,
    a tab, a quote, a backslash and any other unprintable character escaped (as git quotes)."""
    plain = (
        path.isprintable()
        and not any(c in path for c in '"\\')
        and path == path.strip()
        and path != ""
    )
    if plain:
        return path
    out = []
    for c in path:
        if c in '"\\':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif "\udc80" <= c <= "\udcff":  # (a byte that is not UTF-8)
            out.append(f"\\x{ord(c) - 0xDC00:02x}")
        elif not c.isprintable() and c != " ":
            out.append(f"\\u{ord(c):04x}" if ord(c) > 0xFF else f"\\x{ord(c):02x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'
