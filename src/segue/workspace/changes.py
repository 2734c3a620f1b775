"""What a snapshot records (pure data): the snapshot itself, each file it changed against its
base with the lines added and removed, and each file it left out with the reason. The graph
keeps these without loading git's side of :mod:`segue.workspace`."""

from __future__ import annotations

import msgspec

__all__ = ["Change", "Skipped", "Snapshot"]


class Change(msgspec.Struct, frozen=True):
    path: str  # relative to the workspace folder
    status: str  # added / modified / deleted / type (a file became a link, or back)
    added: int | None  # lines; None: a binary file
    removed: int | None


class Skipped(msgspec.Struct, frozen=True):
    path: str
    reason: str


class Snapshot(msgspec.Struct, frozen=True):
    commit: str
    tree: str
    ref: str
    changes: tuple[Change, ...]  # against ``base``
    skipped: tuple[Skipped, ...]
    base: str  # what the changes are counted against: previous / HEAD / nothing
