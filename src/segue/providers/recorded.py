"""Usage as a provider's newest session files recorded it: their limit windows, their newest
usage-limit error and their newest model reply.

Provider-neutral: each provider passes its session files and a function that reads a file's
tail into the neutral model (its own reader). Only the newest few files are looked at, and only
their tails, so this stays fast with thousands of sessions.
"""

from __future__ import annotations

import contextlib
import heapq
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TypeGuard

import msgspec

from segue.model.conversation import (
    ALL_MODELS,
    AssistantMessage,
    Conversation,
    ErrorKind,
    ErrorNotice,
    LimitSignal,
    LimitWindow,
)
from segue.model.errors import SegueError
from segue.model.times import parse_iso
from segue.providers.base import UsageReading

__all__ = ["NEWEST_FILES", "SESSION_SOURCE", "newest_files", "recorded_usage"]

NEWEST_FILES = 5
SESSION_SOURCE = "session file"


def newest_files(files: Iterable[Path], count: int = NEWEST_FILES) -> list[Path]:
    """The ``count`` most recently modified of ``files`` (unreadable ones are left out)."""
    stamped: list[tuple[float, Path]] = []
    for path in files:
        with contextlib.suppress(OSError):
            stamped.append((path.stat().st_mtime, path))
    return [path for _, path in heapq.nlargest(count, stamped, key=lambda pair: pair[0])]


def recorded_usage(
    files: Iterable[Path], read_tail: Callable[[Path], Conversation]
) -> UsageReading:
    """The windows the newest files report (newest observation per window), quiet notes about
    files that could not be read, and the newest usage-limit error with the newest reply: a
    provider's reading, before its other sources add to it."""
    windows: list[LimitWindow] = []
    notes: list[str] = []
    signal: LimitSignal | None = None
    last_success: datetime | None = None
    for path in newest_files(files):
        try:
            tail = read_tail(path)
        except (OSError, ValueError, SegueError) as exc:  # a FIFO, a link to nowhere: skipped
            notes.append(f"{path}: not read for usage ({exc})")
            continue
        file_windows = [_relabel(w) for w in tail.meta.limits]
        windows.extend(file_windows)
        for item in tail.items:
            when = parse_iso(item.timestamp)
            if when is None:
                continue
            if isinstance(item, AssistantMessage):
                last_success = when if last_success is None else max(last_success, when)
            elif _is_usage_limit(item) and _newer(when, signal):
                signal = _signal(item, when, file_windows)
    if signal is not None:
        signal = msgspec.structs.replace(signal, last_success=last_success)
    return UsageReading(windows, notes, signal)


def _newer(when: datetime, signal: LimitSignal | None) -> bool:
    return signal is None or signal.at is None or when > signal.at


def _is_usage_limit(item: object) -> TypeGuard[ErrorNotice]:
    return isinstance(item, ErrorNotice) and item.error_kind is ErrorKind.USAGE_LIMIT


def _relabel(window: LimitWindow) -> LimitWindow:
    return msgspec.structs.replace(window, source=f"{SESSION_SOURCE}: {window.source}")


def _signal(error: ErrorNotice, when: datetime, windows: list[LimitWindow]) -> LimitSignal:
    """The error as a signal. Its scope is the family of the window the same record (or, failing
    that, the file's exhausted windows) names, when every such window is family-scoped."""
    where = f"{error.prov.file}:{error.prov.line}"
    named = [w for w in windows if w.source == f"{SESSION_SOURCE}: {where}"]
    candidates = named or [w for w in windows if w.exhausted]
    families = {w.scope for w in candidates}
    scope = families.pop() if len(families) == 1 else ALL_MODELS
    return LimitSignal(when, error.reset_at, scope, error.message, f"{SESSION_SOURCE}: {where}")
