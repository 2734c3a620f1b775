"""The workspace's checkpoint a switch names, taken beside its steps 4 to 7.

A real switch takes one of the newest run when the workspace has none (in a thread of its own:
git works in processes while the session is prepared and written); the handoff names the
latest. A dry run only looks it up. The move waits for it only where it needs it: before
preparing a summary that quotes the workspace's diff, and before recording.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import segue.threads.checkpoints as checkpoints  # (a module: tests replace what it takes)
from segue.model.errors import SegueError
from segue.store import Store
from segue.switch.decide import names_workspace
from segue.switch.sync import LoadedThread
from segue.threads.checkpoints import Checkpoint
from segue.threads.strategy import Decision

__all__ = ["Checkpointing"]


_QUIET = ("is gone", "is not known", "not snapshotted", "has no run", "not a folder")


def _checkpoint(state: LoadedThread, env: Mapping[str, str], *, dry_run: bool) -> None:
    """The workspace's latest checkpoint, which the handoff names; a real switch first takes
    one of the newest run when it has none (the folder as it is now: approximate). A folder
    that is gone or not a project is no news in a switch; anything else that stops it is a
    note, never a failure."""
    store = _checkpoint_store(state)
    if store is None:
        return
    try:
        if not dry_run:
            taken = checkpoints.take_checkpoint(
                store, state.graph, env, checkpoints.CheckpointKind.APPROXIMATE, missing_only=True
            )
            if taken.note and not any(q in taken.note for q in _QUIET):
                state.notes.append(taken.note)
        found = checkpoints.list_checkpoints(store, state.graph.thread.id)
        state.checkpoint = checkpoints.latest_checkpoint(found)
    except SegueError as exc:
        if not dry_run:
            state.notes.append(f"no checkpoint: {' '.join(str(exc).split())}")


def _checkpoint_store(state: LoadedThread) -> Store | None:
    """The store a checkpoint of the thread goes into; None when there is no store, or the
    thread was adopted by this command (its checkpoint comes next time)."""
    return None if state.changes.thread is not None else state.store


class Checkpointing:
    """The workspace's checkpoint (:func:`_checkpoint`), taken beside the move: git works in
    processes of its own while the session is prepared and copied. :meth:`done` waits for it
    and puts it in the state, before anything names it; leaving the block waits for it too."""

    def __init__(self, state: LoadedThread, env: Mapping[str, str], *, dry_run: bool) -> None:
        self._state, self._env, self._dry_run = state, env, dry_run
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    def __enter__(self) -> Checkpointing:
        if self._dry_run or _checkpoint_store(self._state) is None:
            _checkpoint(self._state, self._env, dry_run=self._dry_run)  # nothing to take
        else:
            self._thread = threading.Thread(target=self._take, name="segue-checkpoint")
            self._thread.start()
        return self

    def _take(self) -> None:
        try:
            _checkpoint(self._state, self._env, dry_run=False)
        except BaseException as exc:  # raised again where the switch waits for it
            self._failure = exc

    def wait(self) -> None:
        """Wait for the checkpoint, whatever became of it (a switch already failing)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def before_prepare(self, decision: Decision) -> None:
        """Wait for the checkpoint when preparing ``decision`` writes it into what it carries
        (:func:`~segue.switch.decide.names_workspace`); else it goes on beside the move."""
        if names_workspace(decision):
            self.done()

    def done(self) -> Checkpoint | None:
        """Wait for the checkpoint: the latest one, or the failure that stopped it."""
        self.wait()
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure
        return self._state.checkpoint

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.done()
        else:  # keep the first failure
            self.wait()
