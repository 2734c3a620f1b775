"""The errors segue raises on purpose, under one base class.

Every one carries a message written for a person: one line that names the file (and line) or the
setting at fault. The command line prints it as ``segue: <message>`` (or as JSON with ``--json``);
anything else reaching the top is a bug.
"""

from __future__ import annotations

__all__ = [
    "CheckpointError",
    "ConfigError",
    "SegueError",
    "SessionError",
    "StoreError",
    "SwitchError",
    "SwitchLocked",
    "TargetExists",
]


class SegueError(Exception):
    """Base of every error segue raises on purpose."""


class CheckpointError(SegueError):
    """A workspace cannot be snapshotted or restored: git is missing or refuses, the folder is
    gone or not one segue snapshots."""


class SessionError(SegueError):
    """A session could not be found or read."""


class ConfigError(SegueError):
    """A configuration file (Codex ``config.toml``, Claude ``settings.json``, segue's own) is
    unreadable or invalid."""


class StoreError(SegueError):
    """segue's database cannot be opened, migrated, read or written: a bad URL, a server that
    does not answer, a corrupt or locked SQLite file, a schema newer than this segue."""


class SwitchError(SegueError):
    """A switch cannot be done. Raised before anything is published, unless the message says
    otherwise."""


class SwitchLocked(SwitchError):
    """Another switch of the same session is running."""


class TargetExists(SwitchError, FileExistsError):
    """A file already has the target's name; segue never overwrites one."""
