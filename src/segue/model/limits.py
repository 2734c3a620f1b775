"""Provider-neutral helpers for limit texts: spotting them and reading a reset time out of them."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

# Line starts that Claude Code uses for its usage-limit notices (checked per line, because a
# compaction carrier wraps its summary in a preamble).
LIMIT_TEXT_PREFIXES = (
    "You've hit your",
    "You've used",
    "You're now using extra usage",
    "You're close to",
    "You're out of extra usage",
    "API Error",
    "Claude AI usage limit reached",
)


def looks_like_limit_text(text: str) -> bool:
    """True when any line of ``text`` starts like a rate-limit / usage-limit / API-error notice."""
    text = text.replace("\u2019", "'")  # Codex writes "You’ve hit your usage limit"
    return any(line.lstrip().startswith(LIMIT_TEXT_PREFIXES) for line in text.splitlines())


_MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}

# "resets 9:26pm (UTC)", "resets Dec 3, 6:46am (UTC)", "try again at 7:43 PM", "resets 10pm"
_RESET = (
    r"(?:resets?|try again at|again at)\s+"
    r"(?:(?P<mon>[A-Za-z]{3})[a-z]*\s+(?P<day>\d{1,2}),?\s+(?:at\s+)?)?"
    r"(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)?"
    r"(?:\s*\((?P<tz>[^)]+)\))?"
)  # (compiled by ``re`` on first use, and kept: not at every start)
_UNIX = r"\b(1[6-9]\d{8})\b"


def parse_reset_time(text: str, now: datetime) -> datetime | None:
    """The reset time a limit notice names, resolved against ``now`` (the notice's own time).

    Times without a date are the next such time after ``now``. A zone in parentheses is honoured
    for ``UTC``/``GMT``/``UTC±H``; other zones are assumed to be UTC (the CLIs print the
    machine's zone, which a reader cannot know; records that carry an epoch should be preferred).
    """
    m = re.search(_RESET, text, re.IGNORECASE)
    if m is None:
        unix = re.search(_UNIX, text)
        return datetime.fromtimestamp(int(unix.group(1)), UTC) if unix else None
    hour = int(m.group("h"))
    minute = int(m.group("m") or 0)
    ampm = (m.group("ampm") or "").replace(".", "").lower()
    if ampm == "pm" and hour != 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return None
    local_now = now.astimezone(_zone(m.group("tz")))
    candidate = local_now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if not m.group("mon"):
        if candidate <= local_now:  # the next such time
            candidate += timedelta(days=1)
        return candidate.astimezone(UTC)
    month = _MONTHS.get(m.group("mon").lower()[:3])
    if month is None:
        return None
    try:
        candidate = candidate.replace(month=month, day=int(m.group("day")))
    except ValueError:
        return None
    if candidate < local_now - timedelta(days=1):
        candidate = candidate.replace(year=candidate.year + 1)
    return candidate.astimezone(UTC)


def _zone(name: str | None) -> timezone:
    if not name:
        return UTC
    m = re.fullmatch(
        r"\s*(?:UTC|GMT)\s*(?:(?P<sign>[+-])(?P<h>\d{1,2})(?::?(?P<m>\d{2}))?)?\s*", name
    )
    if m is None or not m.group("sign"):
        return UTC
    delta = timedelta(hours=int(m.group("h")), minutes=int(m.group("m") or 0))
    return timezone(delta if m.group("sign") == "+" else -delta)
