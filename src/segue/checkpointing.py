"""``segue checkpoint`` and ``segue checkpoints``: take a checkpoint of a thread's workspace now,
and list a thread's checkpoints.

A checkpoint taken here follows the thread's newest run: *exact* when the CLI's own end-of-turn
hook asks for it (``segue hooks install``), else *approximate* (the folder as it is now, which
may hold edits made since the run ended). The thread is synced with its sessions first, under
its lock, so the newest run is the one on disk.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from segue.model.errors import CheckpointError
from segue.threads.checkpoints import Checkpoint, CheckpointKind

__all__ = ["Checkpoints", "Taken", "checkpoint_now", "list_thread_checkpoints"]


@dataclass(frozen=True, slots=True)
class Taken:
    thread_id: str
    checkpoint: Checkpoint
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Checkpoints:
    thread_id: str
    folder: str | None
    checkpoints: tuple[Checkpoint, ...]


def checkpoint_now(
    ref: str | None = None,
    *,
    exact: bool = False,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Taken:
    """Checkpoint the thread ``ref`` names (a thread id or prefix, or a session it holds;
    default: the thread of the newest session in ``cwd``) as its newest run's."""
    from segue.store import open_store
    from segue.switch import thread_lock
    from segue.switch.journal import open_recording
    from segue.threads import sync
    from segue.threads.checkpoints import take_checkpoint
    from segue.threads.syncing import thread_for

    env = dict(os.environ) if env is None else dict(env)
    store, recorded = open_recording(env)
    with store:
        thread_id = thread_for(store, ref, cwd or os.getcwd(), env)
    with thread_lock(thread_id, env), open_store(env=env) as store:
        synced = sync(store, thread_id, env)
        kind = CheckpointKind.EXACT if exact else CheckpointKind.APPROXIMATE
        taken = take_checkpoint(store, synced.graph, env, kind)
    if taken.checkpoint is None:
        if taken.note is None:
            raise CheckpointError(
                f"thread {thread_id} is mid-turn: its newest run has not ended (checkpoint it "
                "when it has)"
            )
        raise CheckpointError(taken.note.removeprefix("no checkpoint: "))
    notes = (*recorded, *synced.notes, *([taken.note] if taken.note else []))
    return Taken(thread_id, taken.checkpoint, notes)


def list_thread_checkpoints(
    ref: str | None = None, *, cwd: str | None = None, env: Mapping[str, str] | None = None
) -> Checkpoints:
    """The checkpoints of the thread ``ref`` names (default: the thread of the newest session in
    ``cwd``), oldest first."""
    from segue.switch.journal import open_recording
    from segue.threads import ThreadStore
    from segue.threads.checkpoints import list_checkpoints
    from segue.threads.syncing import thread_for

    env = dict(os.environ) if env is None else dict(env)
    store, _ = open_recording(env)
    with store:
        thread_id = thread_for(store, ref, cwd or os.getcwd(), env)
        graph = ThreadStore(store).graph(thread_id)
        found = list_checkpoints(store, thread_id)
    return Checkpoints(thread_id, graph.thread.cwd, tuple(found))
