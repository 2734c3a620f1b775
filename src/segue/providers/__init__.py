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
from segue.model.errors import SessionError
from segue.providers.base import Env, ProviderEntry
from segue.providers.claude import ClaudeCode
from segue.providers.codex import Codex
from segue.transforms.budget import TargetProfile

__all__ = [
    "Env",
    "ProviderEntry",
    "all_entries",
    "default_target",
    "entry",
    "entry_for_file",
    "target_profile",
]

# Codex first: its files are recognised by name, Claude's by content.
_ENTRIES: dict[Provider, ProviderEntry] = {
    entry.provider: entry for entry in (Codex(), ClaudeCode())
}


def entry(provider: Provider) -> ProviderEntry:
    return _ENTRIES[provider]


def all_entries() -> tuple[ProviderEntry, ...]:
    return tuple(_ENTRIES.values())


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
    for candidate in _ENTRIES.values():
        if candidate.recognises(path, head):
            return candidate
    raise SessionError(f"{path}: not a session file of any provider segue knows")


def target_profile(
    provider: Provider, env: Env | None = None, cwd: str | None = None
) -> TargetProfile:
    """The model, window and auto-compaction point of ``provider``'s CLI as the user has it
    configured for a session in ``cwd`` (``env`` defaults to this process's environment)."""
    return entry(provider).target_profile(os.environ if env is None else env, cwd)
