"""The registry of providers: one entry each, holding everything segue asks of a provider.

Like pandoc's table of readers and writers: the rest of segue looks a provider up here and
calls its entry (:class:`segue.providers.base.ProviderEntry`); nothing else branches on which
provider it is. Adding a provider is one package under ``formats/`` and one entry below.
"""

from __future__ import annotations

import os
from pathlib import Path

from segue.formats.files import open_regular
from segue.model.conversation import Provider
from segue.model.errors import SegueError, SessionError
from segue.providers.base import Env, ProviderEntry
from segue.providers.claude import ClaudeCode
from segue.providers.codex import Codex
from segue.providers.copilot import Copilot
from segue.transforms.budget import TargetProfile

__all__ = [
    "Env",
    "ProviderEntry",
    "UnknownProvider",
    "all_entries",
    "default_target",
    "entry",
    "entry_for_file",
    "known",
    "names",
    "register",
    "target_profile",
    "unregister",
]

# The order of the default targets (Codex first, as before there were three). A provider
# registered later comes after them as a default target, and before them when segue asks who
# wrote a file; of these, those that know their files by name are asked before Claude, which
# knows its own by content.
_ENTRIES: dict[Provider, ProviderEntry] = {
    entry.provider: entry for entry in (Codex(), ClaudeCode(), Copilot())
}
_BUILT_IN = tuple(_ENTRIES)


class UnknownProvider(SegueError, ValueError):
    """A provider this segue has no entry for (named in a store, a journal, an option)."""


def entry(provider: Provider) -> ProviderEntry:
    """The registry entry of ``provider``; :class:`UnknownProvider` for one this segue lacks."""
    try:
        return _ENTRIES[provider]
    except KeyError:
        raise UnknownProvider(
            f"no provider {str(provider)!r} in this segue (it knows {', '.join(names())})"
        ) from None


def known(name: str) -> Provider:
    """The provider called ``name``, checked against the registry: :class:`UnknownProvider`
    (a ``ValueError``) when this segue has no such provider."""
    if not isinstance(name, str) or not name or not name.isprintable():
        raise UnknownProvider(f"{name!r} is not a provider name")
    provider = Provider(name)
    entry(provider)
    return provider


def all_entries() -> tuple[ProviderEntry, ...]:
    return tuple(_ENTRIES.values())


def names() -> tuple[str, ...]:
    """Every provider's name, in alphabetical order (as options offer them)."""
    return tuple(sorted(p.value for p in _ENTRIES))


def register(new: ProviderEntry) -> None:
    """Add a provider. The whole of what segue needs of a provider is its entry: every command,
    option, store and graph takes it from here on. It is asked first when segue asks who wrote
    a file (an added provider is the more particular one)."""
    if new.provider in _ENTRIES:
        raise ValueError(f"provider {new.provider.value!r} is already registered")
    _ENTRIES[new.provider] = new


def unregister(provider: Provider) -> None:
    """Take a provider added by :func:`register` out again (a test, a plug-in unloaded)."""
    if provider not in _BUILT_IN:
        _ENTRIES.pop(provider, None)


def default_target(source: Provider) -> Provider:
    """Where a switch goes when the user names no target: the first other provider."""
    return next(p for p in _ENTRIES if p is not source)


HEAD_BYTES = 4096


def entry_for_file(path: Path) -> ProviderEntry:
    """The provider that wrote ``path``, judged by its name and first bytes."""
    with open_regular(path, what="session file") as f:
        try:
            head = f.read(HEAD_BYTES)
        except OSError as exc:
            raise SessionError(f"{path}: cannot read: {exc.strerror}") from None
    added = [e for p, e in _ENTRIES.items() if p not in _BUILT_IN]
    built_in = sorted((_ENTRIES[p] for p in _BUILT_IN), key=lambda e: e.known_by_content)
    for candidate in (*added, *built_in):
        if candidate.recognises(path, head):
            return candidate
    raise SessionError(f"{path}: not a session file of any provider segue knows")


def target_profile(
    provider: Provider, env: Env | None = None, cwd: str | None = None
) -> TargetProfile:
    """The model, window and auto-compaction point of ``provider``'s CLI as the user has it
    configured for a session in ``cwd`` (``env`` defaults to this process's environment)."""
    return entry(provider).target_profile(os.environ if env is None else env, cwd)
