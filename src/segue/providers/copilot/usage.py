"""Copilot CLI's limits, as its newest session files recorded them.

A refusal is a ``session.error`` event (a 429's ``errorType`` is ``rate_limit``; a monthly
premium allowance used up is a 402 ``quota_exceeded``); the reader reads its reset from the text
("Please retry after 2733 seconds", "try again in 2 hours"), or for a monthly allowance the first
of next month (GitHub resets premium requests then, at 00:00 UTC). A limit whose text names no
reset is reported without one. Copilot's quota service answers only with the user's GitHub token,
which segue does not use, so nothing is asked remotely.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from segue.formats.copilot.paths import iter_session_files
from segue.formats.copilot.reader import read_lines
from segue.formats.jsonl import tail_lines
from segue.model.conversation import Conversation
from segue.providers.base import Env, UsageReading
from segue.providers.recorded import recorded_usage

REMOTE_NOTE = (
    "Copilot's quota is read from its session files only (its service needs your GitHub token)"
)


def _read_tail(path: Path) -> Conversation:
    return read_lines(path, tail_lines(path))


def read_usage(env: Env, *, remote: bool, now: datetime) -> UsageReading:
    reading = recorded_usage(iter_session_files(env), _read_tail)
    if remote:
        reading.notes.append(REMOTE_NOTE)
    return reading
