"""Time values as the session files and segue's own output spell them.

One module for every conversion: ISO 8601 text from the files, epoch seconds (or milliseconds)
from limit records, and the two spellings segue writes (millisecond ``…Z`` in native files,
``…Z`` in JSON output).
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["from_epoch", "iso_ms", "iso_z", "parse_iso", "utc_minutes"]


def parse_iso(value: object) -> datetime | None:
    """An aware datetime from ISO 8601 text (naive text is UTC), or None for anything else."""
    if type(value) is not str:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def from_epoch(value: object) -> datetime | None:
    """A datetime from epoch seconds (or milliseconds), or None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value > 10_000_000_000:  # milliseconds
        value = value / 1000
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def iso_ms(moment: datetime) -> str:
    """``YYYY-MM-DDThh:mm:ss.mmmZ`` in UTC: how both CLIs stamp their records."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def iso_z(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``: how segue's JSON output spells a time."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def utc_minutes(moment: datetime | None) -> str:
    """``YYYY-MM-DD hh:mm UTC`` for a person, or ``unknown``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment else "unknown"
