"""What each provider thread's file says now: the I/O half of a sync.

For every provider thread the file it continues in (the registry's ``current_file``: a Codex
thread that was rolled back continues in a newer generation file) is checked against the stamp
recorded when segue last looked. Unchanged, it is not read at all; gone from its place, it is
looked for by its session id (a file moved to another project folder is followed); appended,
touched or in a new file, it is read, once per command
(:class:`segue.providers.sessions.SessionReads`).
What it found is an :class:`Observation`; deciding what that means for the thread is
:mod:`segue.threads.reconcile`'s job.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from segue.formats.files import is_regular
from segue.formats.stamp import Change, Stamp, check_stamp
from segue.model.conversation import Provider
from segue.model.errors import SegueError
from segue.providers import ProviderEntry, entry
from segue.providers.sessions import SessionReads
from segue.threads.model import ProviderThread
from segue.threads.native import NativeTurn, split_native_turns

__all__ = ["Observation", "observe", "observe_former", "provider_entry"]


class Observation(msgspec.Struct, frozen=True):
    """One provider thread's file as it is now."""

    provider_thread_id: str
    change: Change  # same / appended / touched / changed / empty / gone
    path: str  # where the thread's file is now (followed when it moved)
    stamp: Stamp | None = None
    turns: list[NativeTurn] | None = None  # None: not read (unchanged, changed, or gone)
    model: str | None = None
    why: str | None = None  # what is wrong with a file that is gone or cannot be read
    moved_from: str | None = None  # the path it was recorded at, when it moved
    former: int | None = None  # which of its former files this is (None: its current file)


def provider_entry(name: str) -> ProviderEntry | None:
    """The registry entry of a provider named in the store (None: one this segue lacks)."""
    try:
        return entry(Provider(name))
    except (ValueError, KeyError):
        return None


def _locate(e: ProviderEntry, native_id: str, env: Mapping[str, str]) -> Path | None:
    """Where a session whose file is no longer at its place is now (moved), if anywhere."""
    found = [p for p in e.session_files(env) if e.session_id(p) == native_id and is_regular(p)]
    if not found:
        return None
    return e.current_file(max(found, key=lambda p: p.name), env)


def _gone_why(path: Path) -> str:
    try:
        os.stat(path)
    except FileNotFoundError:
        return "is a dangling link" if os.path.islink(path) else "no longer exists"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a loop of symbolic links"
        return f"cannot be read: {exc.strerror}"
    except ValueError:
        return "is not a usable file name"
    if os.path.isdir(path):
        return "is a directory"
    return "is not a regular file"


def observe(pt: ProviderThread, reads: SessionReads, env: Mapping[str, str]) -> Observation:
    """What ``pt``'s file says now (reading it only when its stamp says it changed)."""
    e = provider_entry(pt.provider)
    recorded = Path(pt.path)
    if e is None:
        return Observation(pt.id, Change.SAME, pt.path, pt.stamp, why="unknown provider")
    try:
        current = e.current_file(recorded, env)
    except (OSError, SegueError):
        current = recorded
    moved_from = None
    if current != recorded and current.name == recorded.name and not is_regular(recorded):
        moved_from = str(recorded)  # the registry found it elsewhere under the same name
    if not is_regular(current):
        why = _gone_why(current)
        try:
            found = _locate(e, pt.native_id, env)
        except (OSError, SegueError):
            found = None
        if found is None:
            return Observation(pt.id, Change.GONE, str(current), why=why)
        moved_from, current = str(current), found
    same_file = current == recorded or moved_from is not None
    if pt.stamp is not None and same_file:
        change, stamp = check_stamp(pt.stamp, current)
        if change is Change.GONE:
            return Observation(pt.id, change, str(current), why="could not be read")
        if change is Change.EMPTY:
            return Observation(pt.id, change, str(current), stamp, why="is empty")
        if change is Change.CHANGED or change is Change.SAME:  # not read
            return Observation(pt.id, change, str(current), stamp, moved_from=moved_from)
    else:
        change = Change.APPENDED if current != recorded else Change.TOUCHED
    try:
        conversation = reads.read(current, e.provider)
    except SegueError as exc:
        return Observation(pt.id, Change.GONE, str(current), why=f"cannot be read ({exc})")
    turns = split_native_turns(conversation)
    stamp = reads.stamp(current)
    if stamp is not None and stamp.size == 0:
        return Observation(pt.id, Change.EMPTY, str(current), stamp, why="is empty")
    return Observation(
        pt.id,
        change,
        str(current),
        stamp,
        turns,
        conversation.meta.model,
        moved_from=moved_from,
    )


def observe_former(
    pt: ProviderThread, index: int, reads: SessionReads, env: Mapping[str, str]
) -> Observation | None:
    """What a file ``pt`` continued from says now; None when it is as it was."""
    former = pt.former[index]
    path = Path(former.path)
    e = provider_entry(pt.provider)
    if e is None:
        return None
    if former.stamp is None:
        change, stamp = Change.TOUCHED, None
    else:
        change, stamp = check_stamp(former.stamp, path)
    if change is Change.SAME:
        return None
    if change is not Change.APPENDED and change is not Change.TOUCHED:
        return Observation(pt.id, change, str(path), stamp, former=index)
    try:
        conversation = reads.read(path, e.provider)
    except SegueError:
        return Observation(pt.id, Change.GONE, str(path), former=index)
    return Observation(
        pt.id, change, str(path), reads.stamp(path), split_native_turns(conversation), former=index
    )
