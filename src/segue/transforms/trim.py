"""Cut the middle out of a long text, keeping its head and its tail (pure).

The head of a tool output holds the command's first lines and the tail its error or result,
which is why both CLIs truncate outputs this way themselves. segue cuts at line boundaries when
one is near, and leaves a one-line marker saying how much it cut, so a reader (person or model)
knows something is missing and how much.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from msgspec.structs import replace

from segue.model.conversation import Item, ToolResult

__all__ = ["cap_outputs", "cut_marker", "cut_middle", "cut_to_bytes", "was_cut"]

_MARKER_RE = re.compile(r"\[… [\d,]+ characters cut during provider switch …\]")
_MARKER_RESERVE = len(" [… 999,999,999 characters cut during provider switch …] ")
_SNAP = 0.2  # move a cut to a line boundary within the last (head) / first (tail) fifth


def cut_marker(chars: int) -> str:
    return f"[… {chars:,} characters cut during provider switch …]"


def was_cut(text: str) -> bool:
    return _MARKER_RE.search(text) is not None


def cut_middle(text: str, keep: int) -> str:
    """``text`` with about ``keep`` characters kept, half from its head and half from its tail,
    and a marker line between; ``text`` itself when it is not longer than that."""
    if len(text) <= keep + _MARKER_RESERVE:
        return text
    head_chars = max(keep // 2, 0)
    return _join(text, text[:head_chars], text[len(text) - (keep - head_chars) :])


def cut_to_bytes(text: str, max_bytes: int) -> str:
    """``text`` cut in the middle so that its UTF-8 encoding, marker included, takes at most
    ``max_bytes`` (what a target keeps of a tool output it replays), or ``text`` itself."""
    if len(text) * 4 <= max_bytes:  # fits whatever it holds
        return text
    data = text.encode()
    if len(data) <= max_bytes:
        return text
    keep = max(max_bytes - 4 * _MARKER_RESERVE, 0)
    head_bytes = keep // 2
    head = data[:head_bytes].decode(errors="ignore")
    tail = data[len(data) - (keep - head_bytes) :].decode(errors="ignore")
    return _join(text, head, tail)


def _join(text: str, head: str, tail: str) -> str:
    newline = head.rfind("\n")
    if newline >= len(head) * (1 - _SNAP):
        head = head[: newline + 1]
    newline = tail.find("\n")
    if 0 <= newline < len(tail) * _SNAP:
        tail = tail[newline + 1 :]
    cut = len(text) - len(head) - len(tail)
    before = "" if not head or head.endswith("\n") else "\n"
    after = "\n" if tail else ""
    return f"{head}{before}{cut_marker(cut)}{after}{tail}"


def cap_outputs(items: Sequence[Item], max_bytes: int | None) -> tuple[list[Item], int, int]:
    """Every tool output cut to ``max_bytes`` (what the target itself keeps of an output it
    replays), so that what is lost is what segue chose and reported. Returns the items, how
    many outputs were cut and how many characters."""
    if max_bytes is None:
        return list(items), 0, 0
    out: list[Item] = []
    count = chars = 0
    for item in items:
        if isinstance(item, ToolResult):
            cut = cut_to_bytes(item.output, max_bytes)
            if len(cut) < len(item.output):
                count += 1
                chars += len(item.output) - len(cut)
                item = replace(item, output=cut)
        out.append(item)
    return out, count, chars
