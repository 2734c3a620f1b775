"""One app thread as ``segue thread show`` gives it: synced with its sessions first (runs typed
in a CLI become runs; a folder that changed since gets an approximate checkpoint), then its
runs, provider threads, checkpoints, rollbacks and forks."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec

from segue.model.errors import SessionError, StoreError
from segue.providers.sessions import find_session
from segue.switch.journal import open_recording
from segue.switch.locks import thread_lock
from segue.switch.sync import holding_thread
from segue.threads.checkpoints import (
    Checkpoint,
    CheckpointKind,
    list_checkpoints,
    take_checkpoint,
)
from segue.threads.repository import ThreadStore
from segue.threads.syncing import adopt, sync

if TYPE_CHECKING:
    from segue.threads.model import ThreadGraph

__all__ = ["ThreadView", "show_thread"]


class ThreadView(msgspec.Struct):
    graph: ThreadGraph
    forks: list[tuple[str, int | None, str | None]]  # forked threads: id, source run, title
    checkpoints: list[Checkpoint] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)  # what the sync found, and the journal


def show_thread(
    ref: str, env: Mapping[str, str] | None = None, *, adopting: bool = False
) -> ThreadView:
    """The thread ``ref`` names (a thread id or unique prefix, or a session id, prefix or path
    it holds), synced with the sessions on disk under the thread's lock. ``adopting``: a
    session no thread holds yet becomes one (``segue thread adopt``)."""
    env = dict(os.environ) if env is None else dict(env)
    if not ref.strip():
        raise StoreError("give a thread id or prefix, or a session it holds (got an empty one)")
    store, recorded = open_recording(env)
    with store:
        threads = ThreadStore(store)
        try:
            thread_id = threads.resolve(ref)
        except StoreError:  # a session it holds (an id, a prefix, or a path)?
            try:
                provider, path = find_session(ref, env)
            except SessionError:
                held = threads.thread_holding(ref)
            else:
                held = holding_thread(store, provider, path)
            if held is None and adopting:
                held = adopt(store, ref, env).thread.id
            if held is None:
                raise StoreError(
                    f"no thread {ref}, and no thread holds a session {ref} "
                    "(segue thread adopt SESSION makes one)"
                ) from None
            thread_id = held
        with thread_lock(thread_id, env):
            result = sync(store, thread_id, env)
            if result.new_runs:  # runs typed in a CLI without segue's hooks: the folder now
                taken = take_checkpoint(
                    store, result.graph, env, CheckpointKind.APPROXIMATE, missing_only=True
                )
                if taken.checkpoint is not None and taken.note:
                    result.notes.append(taken.note)
        forks = threads.forks_of(thread_id)
        found = list_checkpoints(store, thread_id)
    return ThreadView(result.graph, forks, found, [*recorded, *result.notes])
