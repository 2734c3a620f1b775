"""The workspace an app thread works in: snapshots of its files (checkpoints) as git commits
under segue's own refs, and putting a folder back to one, never through the user's index, HEAD,
branches or stash."""

from segue.workspace.changes import Change, Skipped, Snapshot
from segue.workspace.snapshot import Workspace, capture, changes_between, locate, max_file_bytes

__all__ = [
    "Change",
    "Skipped",
    "Snapshot",
    "Workspace",
    "capture",
    "changes_between",
    "locate",
    "max_file_bytes",
]
