"""Usage and exhaustion per provider: the windows every source reported, merged, and whether
the provider can take work now.

Provider-neutral: each provider's entry reads its own sources
(:meth:`segue.providers.base.ProviderEntry.usage`); this module keeps the newest observation of
each window, drops windows that have already reset, and judges:

* **exhausted**: a window over all models is at 100% and resets in the future, or the newest
  usage-limit error in the provider's session files is newer than its newest model reply (and
  its reset, when known, is still ahead; an error with no reset counts for five hours);
* **blocking**: the most restrictive window: of the exhausted all-models windows the one that
  resets last, else the fullest window;
* **suggestion**: when only one model family is limited, the command that switches model.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

import msgspec

from segue.model.conversation import ALL_MODELS, LimitSignal, LimitWindow, Provider
from segue.providers import all_entries, entry
from segue.providers.base import UsageReading

__all__ = [
    "ProviderUsage",
    "exhausted_providers",
    "read_usage",
    "source_kind",
    "summarize",
    "window_label",
]

_LENGTHS = {300: "5-hour", 10080: "weekly"}

# How long a usage-limit error that names no reset time keeps a provider exhausted.
UNKNOWN_RESET_HOLD = timedelta(hours=5)


class ProviderUsage(msgspec.Struct):
    provider: Provider
    windows: list[LimitWindow]
    exhausted: bool
    blocking: LimitWindow | None
    suggestion: str | None
    notes: list[str] = msgspec.field(default_factory=list)  # sources that could not answer, quietly
    switch_model: str | None = None  # the model a family limit suggests switching to


def read_usage(
    env: Mapping[str, str] | None = None,
    *,
    now: datetime | None = None,
    remote: bool = True,
    providers: Sequence[Provider] | None = None,
) -> list[ProviderUsage]:
    """Usage of each provider (all of them by default), from its session files and, with
    ``remote``, its own usage service. Never raises for a source that cannot answer."""
    env = os.environ if env is None else env
    now = now or datetime.now(UTC)
    entries = all_entries() if providers is None else tuple(entry(p) for p in providers)
    return [summarize(e.provider, e.usage(env, remote=remote, now=now), now) for e in entries]


def exhausted_providers(usages: Iterable[ProviderUsage]) -> list[Provider]:
    return [u.provider for u in usages if u.exhausted]


def summarize(provider: Provider, reading: UsageReading, now: datetime) -> ProviderUsage:
    """One provider's verdict from what its sources said."""
    windows = _current(reading.windows, now)
    signal_window = _live_signal(provider, reading.signal, now)
    exhausted_all = [w for w in windows if w.scope == ALL_MODELS and w.exhausted]
    if signal_window is not None and not exhausted_all:
        windows.append(signal_window)
        exhausted_all = [signal_window]
    exhausted = bool(exhausted_all)
    if exhausted:
        blocking: LimitWindow | None = max(exhausted_all, key=_reset_key)
    else:
        known = [w for w in windows if w.used_percent is not None]
        blocking = max(known, key=lambda w: (w.used_percent or 0.0, _reset_key(w)), default=None)
    suggestion = switch_model = None
    if not exhausted and blocking is not None and blocking.exhausted:
        suggestion = reading.model_switch.get(blocking.scope)
        switch_model = reading.switch_models.get(blocking.scope)
    return ProviderUsage(
        provider, windows, exhausted, blocking, suggestion, list(reading.notes), switch_model
    )


def window_label(window: LimitWindow) -> str:
    """A window for a person: ``5-hour``, ``weekly``, ``weekly opus``, else its own name."""
    base = _LENGTHS.get(window.minutes or 0) or (window.name or "usage").replace("_", " ")
    if window.scope == ALL_MODELS or window.scope in base:
        return base
    return f"{base} {window.scope}"


def source_kind(window: LimitWindow) -> str:
    """The kind of source a window came from (``session file``, ``usage endpoint``, …), without
    the file or address that follows it."""
    return (window.source or "unknown").split(": ", 1)[0]


def _reset_key(window: LimitWindow) -> datetime:
    return window.resets_at or datetime.max.replace(tzinfo=UTC)


def _current(windows: Iterable[LimitWindow], now: datetime) -> list[LimitWindow]:
    """The newest observation of each window (by length and scope), leaving out windows whose
    reset time has passed (they have started over), longest windows last."""
    newest: dict[tuple[object, ...], LimitWindow] = {}
    oldest = datetime.min.replace(tzinfo=UTC)
    for window in windows:
        if window.resets_at is not None and window.resets_at <= now:
            continue
        key = (window.minutes if window.minutes is not None else window.name, window.scope)
        seen = newest.get(key)
        if seen is None or (window.observed_at or oldest) > (seen.observed_at or oldest):
            newest[key] = window
    return sorted(
        newest.values(), key=lambda w: (w.scope != ALL_MODELS, w.minutes or 0, w.name or "")
    )


def _live_signal(
    provider: Provider, signal: LimitSignal | None, now: datetime
) -> LimitWindow | None:
    """The usage-limit error as an exhausted window, when it still holds: newer than the last
    reply, over all models, and not yet reset."""
    if signal is None or signal.at is None or signal.scope != ALL_MODELS:
        return None
    if signal.last_success is not None and signal.last_success >= signal.at:
        return None
    if signal.resets_at is not None:
        if signal.resets_at <= now:
            return None
    elif now - signal.at > UNKNOWN_RESET_HOLD:
        return None
    return LimitWindow(
        provider, None, 100.0, signal.resets_at, ALL_MODELS, "usage_limit", signal.at, signal.source
    )
