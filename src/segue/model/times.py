"""Time values as the session files and segue's own output spell them.

One module for every conversion: ISO 8601 text from the files, epoch seconds (or milliseconds)
from limit records, and the two spellings segue writes (millisecond ``…Z`` in native files,
``…Z`` in JSON output).
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = [
    "ago",
    "from_epoch",
    "in_time",
    "iso_ms",
    "iso_z",
    "local_clock",
    "parse_iso",
    "utc_minutes",
]


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


def _span(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{max(minutes, 1)} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def in_time(moment: datetime, now: datetime) -> str:
    """How far ahead ``moment`` is, for a person: ``in 1 h 12 min``, ``now`` once it passed."""
    seconds = (moment - now).total_seconds()
    return "now" if seconds <= 0 else f"in {_span(seconds)}"


def ago(moment: datetime, now: datetime) -> str:
    """How long ago ``moment`` was: ``just now`` under a minute, ``3 min ago``, ``2 d 1 h ago``."""
    seconds = (now - moment).total_seconds()
    return "just now" if seconds < 60 else f"{_span(seconds)} ago"


def local_clock(moment: datetime, now: datetime) -> str:
    """``moment`` in the user's own zone: ``21:40 CET`` today, ``Dec 04 00:00 CET`` this year,
    ``2030-03-17 17:46 CET`` otherwise."""
    local, here = moment.astimezone(), now.astimezone()
    zone = local.strftime("%Z")
    if local.date() == here.date():
        text = local.strftime("%H:%M")
    elif local.year == here.year:
        text = local.strftime("%b %d %H:%M")
    else:
        text = local.strftime("%Y-%m-%d %H:%M")
    return f"{text} {zone}".strip()
