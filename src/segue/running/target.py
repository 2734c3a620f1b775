"""Where work goes when the user names no target: with three providers there is no "other one".

Of the providers other than the source, segue takes one that is not exhausted and has the most
headroom (the least used of its windows, as :mod:`segue.running.usage` reads them; a provider
whose usage segue cannot read counts as unused). Ties go by the configured order, ``fallback`` in
``segue.toml``::

    fallback = ["claude", "codex", "copilot"]

(without it, the registry's order: codex, claude, copilot). A provider the order leaves out is
never taken by default, and of the others those this user can run here come first (the CLI
is installed, or its home folder is there). When every
other provider is exhausted, the one whose window resets first.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from segue.formats.files import read_config
from segue.model.conversation import Provider
from segue.model.errors import ConfigError
from segue.providers import all_entries, entry, known
from segue.running.usage import ProviderUsage, read_usage
from segue.support.places import config_file

__all__ = [
    "FALLBACK_KEY",
    "choose_target",
    "default_target",
    "fallback_order",
    "read_settings",
    "usable_providers",
]

FALLBACK_KEY = "fallback"


def read_settings(env: Mapping[str, str] | None = None) -> tuple[Path, dict[str, Any]]:
    """segue's settings file and what it holds (nothing when there is none);
    :class:`ConfigError` for one that cannot be read, is not a regular file (a FIFO is never
    waited on) or is not TOML."""
    path = config_file(env)
    raw = read_config(path, "segue configuration")  # a regular file, bounded; never a FIFO
    if raw is None:
        return path, {}
    import tomllib  # (only when there is a config: the parser costs a switch 3 ms to load)

    try:
        return path, tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def fallback_order(env: Mapping[str, str] | None = None) -> tuple[Provider, ...]:
    """The configured order of targets, else the registry's; :class:`ConfigError` for a
    ``fallback`` that is not a list of provider names this segue knows."""
    path, settings = read_settings(env)
    registry = tuple(e.provider for e in all_entries())
    value = settings.get(FALLBACK_KEY)
    if value is None:
        return registry
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: {FALLBACK_KEY} must be a list of provider names")
    try:
        order = tuple(dict.fromkeys(known(v) for v in value))
    except ValueError as exc:
        raise ConfigError(f"{path}: {FALLBACK_KEY}: {exc}") from None
    return order


def _headroom(usage: ProviderUsage | None) -> float:
    window = None if usage is None else usage.blocking
    if window is None or window.used_percent is None:
        return 100.0
    return max(0.0, 100.0 - window.used_percent)


def choose_target(
    source: Provider,
    usages: Sequence[ProviderUsage],
    order: Sequence[Provider],
    installed: frozenset[Provider] | None = None,
) -> Provider:
    """The target for work leaving ``source`` (pure): see the module's rule."""
    by_provider = {u.provider: u for u in usages}
    others = [p for p in order if p is not source]
    if not others:
        raise ConfigError(f"no provider to move {source.value} work to (fallback names none)")
    if installed:
        others = [p for p in others if p in installed] or others
    free = [p for p in others if not (by_provider.get(p) and by_provider[p].exhausted)]
    if free:
        return max(free, key=lambda p: (_headroom(by_provider.get(p)), -others.index(p)))
    latest = datetime.max.replace(tzinfo=UTC)

    def reset(p: Provider) -> datetime:
        blocking = by_provider[p].blocking
        return blocking.resets_at if blocking and blocking.resets_at else latest

    return min(others, key=lambda p: (reset(p), others.index(p)))


def usable_providers(env: Mapping[str, str]) -> frozenset[Provider]:
    """The providers this user can run here: the CLI is installed (as ``env`` finds it), or its
    home folder is there (it has been used on this machine)."""
    return frozenset(
        e.provider for e in all_entries() if e.executable(env) is not None or _is_dir(e.home(env))
    )


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def default_target(
    source: Provider,
    env: Mapping[str, str] | None = None,
    *,
    now: datetime | None = None,
    usages: Sequence[ProviderUsage] | None = None,
    exhausted: Collection[Provider] = (),
) -> Provider:
    """Where work from ``source`` goes when the user names no target, by the usage this machine
    reads (its session files and caches, nothing asked remotely) unless ``usages`` are given;
    ``exhausted`` are taken as exhausted whatever the usage says (a caller that read more)."""
    env = os.environ if env is None else env
    order = fallback_order(env)
    if usages is None:
        others = [p for p in order if p is not source]
        usages = read_usage(env, now=now, remote=False, providers=others)
    usages = [replace(u, exhausted=True) if u.provider in exhausted else u for u in usages]
    entry(source)  # a provider this segue knows
    return choose_target(source, usages, order, usable_providers(env))
