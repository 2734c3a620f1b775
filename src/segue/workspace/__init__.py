"""The workspace an app thread works in: snapshots of its files (checkpoints) as git commits
under segue's own refs, and putting a folder back to one, never through the user's index, HEAD,
branches or stash.

Each name is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from segue.support.lazy import lazy_names

if TYPE_CHECKING:
    from segue.workspace.changes import Change, Skipped, Snapshot
    from segue.workspace.snapshot import (
        Workspace,
        capture,
        changes_between,
        locate,
        max_file_bytes,
        settle,
    )

_WHERE = {
    "Change": "segue.workspace.changes",
    "Skipped": "segue.workspace.changes",
    "Snapshot": "segue.workspace.changes",
    "Workspace": "segue.workspace.snapshot",
    "capture": "segue.workspace.snapshot",
    "changes_between": "segue.workspace.snapshot",
    "locate": "segue.workspace.snapshot",
    "max_file_bytes": "segue.workspace.snapshot",
    "settle": "segue.workspace.snapshot",
}

__all__ = [
    "Change",
    "Skipped",
    "Snapshot",
    "Workspace",
    "capture",
    "changes_between",
    "locate",
    "max_file_bytes",
    "settle",
]

__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
