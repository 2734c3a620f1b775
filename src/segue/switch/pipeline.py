"""``segue switch``: one session's conversation moved to another provider, in six steps.

    source → lock → sync → decide → write → record

1. **source**: the session is found and read, once (:class:`segue.providers.sessions.SessionReads`
   serves every later ask for the same file);
2. **lock**: the session's lock, then its thread's, held to the end (:mod:`.locks`);
3. **sync**: the thread checked against every file it relies on (:mod:`.thread`);
4. **decide**: the strategy (:mod:`segue.threads.strategy`) on what the files say, and the
   session that carries it out, prepared (:mod:`.decide`);
5. **write**: that session published atomically, or nothing for a resume (:mod:`.record`);
6. **record**: the sync, the decision and what was written, in one transaction, or in the
   journal when the store cannot record (:mod:`.record`, :mod:`.journal`).

A dry run stops after step 4: it takes no lock and writes nothing (no store, no folder). A
dry run's result can be carried out later (:func:`carry_out`, the fleet's confirmed preview):
the session shown is published as it was prepared when nothing it was worked out from changed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec.structs import replace

from segue.model.conversation import Provider
from segue.model.errors import SessionError, SwitchError
from segue.providers import default_target, entry
from segue.providers.sessions import SessionReads, current_session, find_session
from segue.switch.decide import (
    MoveKind,
    Prepared,
    SwitchOptions,
    decide_move,
    names_workspace,
    prepare_move,
    refuse_mid_turn,
)
from segue.switch.locks import SwitchLocks
from segue.switch.record import preview_move, record_move, write_move
from segue.switch.result import Switch, ThreadMove
from segue.switch.thread import LoadedThread, Source, load_thread
from segue.transforms.budget import TargetProfile

if TYPE_CHECKING:
    from segue.running.agents import Agent
    from segue.store import Store
    from segue.threads.checkpoints import Checkpoint
    from segue.threads.strategy import Decision

__all__ = ["carry_out", "switch_session"]


def switch_session(
    ref: str,
    to: Provider | None = None,
    *,
    dry_run: bool = False,
    clean: bool = False,
    env: Mapping[str, str] | None = None,
    profile: TargetProfile | None = None,
    now: datetime | None = None,
    need_cwd: bool = False,
    redact_secrets: bool = False,
    summary_by: str | None = None,
    agents: Sequence[Agent] | None = None,
    within: bool = False,
    checkpoint: bool = True,
) -> Switch:
    """Switch the session ``ref`` (an id, a unique id prefix or a path) to provider ``to``
    (default: another provider), as its app thread's strategy decides: what ``segue switch``
    does. ``clean`` asks for a new session; ``need_cwd`` refuses before writing when the
    session's directory does not exist; ``redact_secrets`` replaces the secrets the switch
    finds by markers naming their kind; ``summary_by`` names who writes a summary handoff
    (claude, codex, left, entered); ``agents`` are the running agents, when already scanned.
    ``within`` allows ``to`` to be the session's own provider: the thread moves to that
    provider's best session, or a new one (``segue run`` on a thread whose session there
    cannot be resumed). ``checkpoint`` False takes no checkpoint of the newest run (a rollback's
    copies: the folder is not that run's)."""
    env = dict(os.environ) if env is None else dict(env)
    provider, path, target = _resolve(ref, to, env, within)
    options = SwitchOptions(
        target, dry_run, clean, need_cwd, redact_secrets, summary_by, profile, now, agents
    )
    reads = SessionReads()
    with SwitchLocks(env, dry_run=dry_run) as locks:
        locks.session(provider, entry(provider).session_id(path))
        source = read_source(provider, path, reads, env)
        state = load_thread(source, reads, env, locks, dry_run=dry_run)
        with _Checkpointing(state, env, dry_run=dry_run or not checkpoint) as mark:
            decision, facts = decide_move(state, source, target, options, reads, env)
            mark.before_prepare(decision)
            prepared = prepare_move(state, source, target, decision, facts, options, reads, env)
            if dry_run:  # (a dry run's checkpoint was only looked up, on entering)
                return _preview(state, source, prepared, options, env)
            return write_and_record(state, source, prepared, reads, env, mark)


def carry_out(preview: Switch, env: Mapping[str, str] | None = None) -> Switch:
    """Carry out a dry run: publish exactly the session it prepared (the plan the user saw) if
    the source and the thread are as they were; otherwise switch afresh (with a warning)."""
    env = dict(os.environ) if env is None else dict(env)
    shown = preview.prepared
    if preview.source_path is None or shown is None or preview.options is None:
        raise SwitchError("only a dry run of a session file can be carried out")
    options = replace(preview.options, dry_run=False)
    provider = preview.source.meta.provider
    path = preview.source_path
    reads = SessionReads()
    with SwitchLocks(env, dry_run=False) as locks:
        locks.session(provider, entry(provider).session_id(path))
        if preview.source_stamp is not None:
            reads.prime(path, preview.source_stamp, preview.source)
        source = read_source(provider, path, reads, env)
        state = load_thread(source, reads, env, locks, dry_run=False)
        with _Checkpointing(state, env, dry_run=False) as mark:
            return _carry_out(preview, shown, options, source, state, reads, env, mark)


def _carry_out(
    preview: Switch,
    shown: Prepared,
    options: SwitchOptions,
    source: Source,
    state: LoadedThread,
    reads: SessionReads,
    env: dict[str, str],
    mark: _Checkpointing,
) -> Switch:
    """Steps 4 to 6 of a carried-out preview: the session it showed when nothing it was worked
    out from changed, else worked out again."""
    decision, facts = decide_move(state, source, preview.target, options, reads, env)
    mark.before_prepare(decision)
    synced_new_runs = state.changes.thread is None and bool(state.changes.runs)
    same = (
        decision == shown.decision
        and source.stamp == preview.source_stamp
        and not synced_new_runs
        and _unchanged(state, shown)
    )
    if same:
        prepared = _rebased(shown, state)
    else:
        prepared = prepare_move(state, source, preview.target, decision, facts, options, reads, env)
        prepared.plan.notes.append(
            "the thread changed since the preview was shown: the switch was worked out again"
        )
    return write_and_record(state, source, prepared, reads, env, mark)


_QUIET = ("is gone", "is not known", "not snapshotted", "has no run", "not a folder")


def _checkpoint(state: LoadedThread, env: Mapping[str, str], *, dry_run: bool) -> None:
    """The workspace's latest checkpoint, which the handoff names; a real switch first takes
    one of the newest run when it has none (the folder as it is now: approximate). A folder
    that is gone or not a project is no news in a switch; anything else that stops it is a
    note, never a failure."""
    from segue.model.errors import SegueError
    from segue.threads.checkpoints import (
        CheckpointKind,
        latest_checkpoint,
        list_checkpoints,
        take_checkpoint,
    )

    store = _checkpoint_store(state)
    if store is None:
        return
    try:
        if not dry_run:
            taken = take_checkpoint(
                store, state.graph, env, CheckpointKind.APPROXIMATE, missing_only=True
            )
            if taken.note and not any(q in taken.note for q in _QUIET):
                state.notes.append(taken.note)
        state.checkpoint = latest_checkpoint(list_checkpoints(store, state.graph.thread.id))
    except SegueError as exc:
        if not dry_run:
            state.notes.append(f"no checkpoint: {' '.join(str(exc).split())}")


def _checkpoint_store(state: LoadedThread) -> Store | None:
    """The store a checkpoint of the thread goes into; None when there is no store, or the
    thread was adopted by this command (its checkpoint comes next time)."""
    return None if state.changes.thread is not None else state.store


class _Checkpointing:
    """The workspace's checkpoint (:func:`_checkpoint`), taken beside the move: git works in
    processes of its own while the session is prepared and copied. :meth:`done` waits for it
    and puts it in the state, before anything names it; leaving the block waits for it too."""

    def __init__(self, state: LoadedThread, env: Mapping[str, str], *, dry_run: bool) -> None:
        self._state, self._env, self._dry_run = state, env, dry_run
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    def __enter__(self) -> _Checkpointing:
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


def _rebased(shown: Prepared, state: LoadedThread) -> Prepared:
    """A preview's prepared move on the thread as this command loaded it (a thread adopted in
    memory again has new ids; its runs are the same)."""
    runs = {r.ordinal: r for r in state.graph.runs}
    target = None
    if shown.target_pt is not None:
        target = state.graph.provider_thread(shown.target_pt.id)
    return replace(
        shown,
        thread_id=state.graph.thread.id,
        carried=tuple(runs.get(r.ordinal, r) for r in shown.carried),
        target_pt=target,
    )


def _unchanged(state: LoadedThread, shown: Prepared) -> bool:
    """Whether the provider thread a preview forks or resumes is still what it was."""
    if shown.target_pt is None:
        return True
    try:
        now = state.graph.provider_thread(shown.target_pt.id)
    except KeyError:
        return False
    return now.stamp == shown.target_pt.stamp and now.path == shown.target_pt.path


def _resolve(
    ref: str, to: Provider | None, env: Mapping[str, str], within: bool = False
) -> tuple[Provider, Path, Provider]:
    try:
        provider, path = find_session(ref, env)
    except SessionError as exc:
        raise SwitchError(str(exc)) from None
    target = default_target(provider) if to is None else to
    if provider is target and not within:
        raise SwitchError(f"{path} is already a {target.value} session")
    return provider, path, target


def read_source(
    provider: Provider, path: Path, reads: SessionReads, env: Mapping[str, str]
) -> Source:
    """Step 1: the session, in the file it continues in now, read once."""
    current, native_id = current_session(provider, path, env)
    try:
        conversation = reads.read(current, provider)
    except SessionError as exc:
        raise SwitchError(str(exc)) from None
    return Source(provider, current, native_id, conversation, reads.stamp(current))


def _result(
    state: LoadedThread,
    source: Source,
    prepared: Prepared,
    move: ThreadMove,
    warnings: list[str],
    env: Mapping[str, str],
) -> Switch:
    """The switch as the user is told of it: the session to continue is the one resumed
    (``no_handoff``) until a written one replaces it."""
    target = prepared.plan.target.provider
    switch = Switch(
        source.conversation,
        source.path,
        target,
        prepared.plan,
        prepared.cwd,
        warnings=[*state.notes, *prepared.warnings, *warnings],
        thread=move,
        program=entry(target).program(env),
    )
    if prepared.kind is MoveKind.RESUME and prepared.target_pt is not None:
        switch.session_id = prepared.target_pt.native_id
        switch.path = Path(prepared.target_pt.path)
    return switch


def _preview(
    state: LoadedThread,
    source: Source,
    prepared: Prepared,
    options: SwitchOptions,
    env: Mapping[str, str],
) -> Switch:
    if state.store is not None:
        state.store.close()
    switch = _result(state, source, prepared, preview_move(state, prepared), [], env)
    switch.dry_run = True
    switch.prepared, switch.source_stamp, switch.options = prepared, source.stamp, options
    return switch


def write_and_record(
    state: LoadedThread,
    source: Source,
    prepared: Prepared,
    reads: SessionReads,
    env: Mapping[str, str],
    mark: _Checkpointing | None = None,
) -> Switch:
    """Steps 5 and 6, once the checkpoint ``mark`` is taking is done (none: the state's). What
    was written is recorded whatever became of the checkpoint: a checkpoint that failed in a way
    nothing foresaw (a bug) is a warning then, never a session published and not recorded.
    First, under the locks and right before writing, the machine is asked afresh whether the
    source's CLI is in the middle of a turn (a preview, a plan or a read made earlier may
    predate the turn): then nothing is written."""
    try:
        refuse_mid_turn(source, env)
        written = write_move(prepared, env)
    except BaseException:
        if mark is not None:
            mark.wait()
        if state.store is not None:
            state.store.close()
        raise
    checkpoint = state.checkpoint
    if mark is not None:
        try:
            checkpoint = mark.done()
        except Exception as exc:
            checkpoint = None
            state.notes.append(f"no checkpoint: internal error: {type(exc).__name__}: {exc}")
    if not names_workspace(prepared.decision):  # (a summary keeps the one its text names)
        prepared.checkpoint_id = None if checkpoint is None else checkpoint.id
    move, warnings = record_move(state, source, prepared, written, reads, env)
    switch = _result(
        state, source, prepared, move, [*(written.warnings if written else []), *warnings], env
    )
    if written is not None:
        switch.session_id, switch.path, switch.written = written.session_id, written.path, True
    return switch
