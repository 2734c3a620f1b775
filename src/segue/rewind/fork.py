"""``segue fork``: a new thread from a thread's run N, with its own workspace, and no provider
chosen yet.

The fork records its lineage (the parent thread, the source run, the checkpoint its files came
from). Its workspace is a ``git worktree`` at checkpoint N (detached: the user's checkout and
branches are not touched), or, outside git, a copy of the checkpoint's files. Its first
``segue run`` chooses the provider and writes its first session (:mod:`segue.switch.fork`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from segue.model.errors import SegueError
from segue.rewind.access import synced_thread
from segue.threads import ThreadStore
from segue.threads.checkpoints import (
    Checkpoint,
    CheckpointKind,
    list_checkpoints,
    no_checkpoint,
    run_checkpoint,
    take_checkpoint,
)
from segue.threads.queries import add_transfer
from segue.workspace.restore import add_worktree, materialize
from segue.workspace.snapshot import locate

__all__ = ["Forked", "fork_thread"]


class Forked(msgspec.Struct, frozen=True):
    thread_id: str
    parent_thread_id: str
    at_run: int
    checkpoint: Checkpoint
    folder: str  # the fork's workspace
    worktree: bool  # a git worktree (else a copy of the files)
    notes: tuple[str, ...] = ()


def _default_into(folder: Path, at_run: int) -> Path:
    base = folder.parent / f"{folder.name}-fork-{at_run}"
    candidate, n = base, 2
    while candidate.exists():
        candidate = base.with_name(f"{base.name}-{n}")
        n += 1
    return candidate


def fork_thread(
    ref: str | None,
    at_run: int,
    *,
    into: str | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Forked:
    """Fork the thread ``ref`` names (default: this folder's) at run ``at_run`` into the folder
    ``into`` (default: ``<folder>-fork-<N>`` beside the thread's folder)."""
    env = dict(os.environ) if env is None else dict(env)
    if into is not None and not into.strip():
        raise SegueError("the fork's folder is an empty name: give one, or none for the default")
    notes: list[str] = []
    with synced_thread(ref, cwd, env) as (store, synced):
        graph = synced.graph
        thread_id = graph.thread.id
        notes += synced.notes
        live = [r.ordinal for r in graph.live_runs]
        if at_run not in live:
            span = f"{live[0]}-{live[-1]}" if live else "none"
            raise SegueError(f"thread {thread_id} has no run {at_run} on its line (runs: {span})")
        if not graph.thread.cwd:
            raise SegueError(f"thread {thread_id}'s folder is not known: nothing to fork from")
        ws = locate(graph.thread.cwd, env)
        found = list_checkpoints(store, thread_id)
        mark = run_checkpoint(found, str(ws.folder), at_run)
        if mark is None and at_run == live[-1]:  # the newest run: its folder is the one now
            taken = take_checkpoint(store, graph, env, CheckpointKind.APPROXIMATE)
            mark = taken.checkpoint
            if taken.note:
                notes.append(taken.note)
        if mark is None:
            raise SegueError(no_checkpoint(found, thread_id, at_run, "none"))
        target = Path(into).expanduser().absolute() if into else _default_into(ws.folder, at_run)
        if ws.private:
            count = materialize(ws, mark.commit_id, target)
            folder, worktree = target, False
            notes.append(f"{count} files copied from checkpoint {mark.commit_id[:12]}")
        else:
            folder, worktree = add_worktree(ws, mark.commit_id, target), True
        title = f"fork of {graph.thread.title or thread_id} at run {at_run}"
        fork = ThreadStore(store).create_thread(
            title=title[:80],
            cwd=str(folder),
            parent_thread_id=thread_id,
            parent_run_ordinal=at_run,
            parent_checkpoint_id=mark.id,
        )
        with store.writing(f"cannot record the fork of thread {thread_id}") as connection:
            add_transfer(
                connection,
                fork.id,
                type="fork",
                source_provider_thread_id=None,
                target_provider_thread_id=None,
                source_run_ordinal=at_run,
                resolution="pending",  # the provider is chosen at the fork's first run
                status="pending",
            )
    return Forked(fork.id, thread_id, at_run, mark, str(folder), worktree, tuple(notes))
