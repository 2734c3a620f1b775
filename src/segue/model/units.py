"""How segue prints sizes and counts for a person: one formatter each."""

from __future__ import annotations

__all__ = ["format_bytes", "format_count"]


def format_count(n: int) -> str:
    """A count in short form: 950 → "950", 1234 → "1.2k", 560_000 → "560k", 1_234_567 → "1.2M"."""
    if n < 1000:
        return str(n)
    if n < 999_500:
        return _scaled(n / 1000, "k")
    return _scaled(n / 1_000_000, "M")


def _scaled(value: float, unit: str) -> str:
    text = f"{value:.1f}" if value < 10 else f"{value:.0f}"
    return text.removesuffix(".0") + unit


def format_bytes(n: int) -> str:
    """A file size: "512 B", "43.1 KB", "2.3 MB" (binary units)."""
    if n < 1024:
        return f"{n} B"
    value = n / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
