"""``segue switch``: one session's conversation moved to another provider, in seven steps, each
a module of this package::

    source → locks → sync → decide → prepare → write → record

1. **source** (:mod:`.source`): the session is found and read, once
   (:class:`segue.providers.sessions.SessionReads` serves every later ask for the same file);
2. **locks** (:mod:`.locks`): the session's lock, then its thread's, held to the end;
3. **sync** (:mod:`.sync`): the thread checked against every file it relies on;
4. **decide** (:mod:`.decide`): the strategy (:mod:`segue.threads.strategy`) on what the files
   say, decided once and passed along;
5. **prepare** (:mod:`.prepare`): the session that carries the decision out, prepared;
6. **write** (:mod:`.write`): that session published atomically, or nothing for a resume;
7. **record** (:mod:`.record`): the sync, the decision and what was written, in one
   transaction, or in the journal when the store cannot record (:mod:`.journal`).

The workspace's checkpoint is taken beside steps 4 to 7 (:mod:`.checkpoint`).

A dry run (:func:`preview_switch`) stops after step 5: it takes no lock and writes nothing (no
store, no folder). It returns a :class:`Preview`: the switch as it would be (``shown``) and what
carrying it out needs. :func:`carry_out` takes it (the fleet's confirmed preview): the session
shown is published as it was prepared when nothing it was worked out from changed.
:func:`switch_session` does both in one call, or only the dry run (``dry_run``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

import msgspec
from msgspec.structs import replace

from segue.formats.stamp import Stamp
from segue.model.conversation import Provider
from segue.providers import entry
from segue.providers.sessions import SessionReads
from segue.running.agents import Agent
from segue.switch.checkpoint import Checkpointing
from segue.switch.decide import Decided, SwitchOptions, decide_move, names_workspace
from segue.switch.locks import SwitchLocks
from segue.switch.prepare import MoveKind, Prepared, prepare_move
from segue.switch.record import preview_move, record_move
from segue.switch.result import Switch, ThreadMove
from segue.switch.source import Source, find_source, read_source, refuse_mid_turn
from segue.switch.sync import LoadedThread, load_thread
from segue.switch.write import write_move
from segue.transforms.budget import TargetProfile
from segue.transforms.plan import Plan

__all__ = ["Preview", "carry_out", "preview_switch", "switch_session"]


class Preview(msgspec.Struct):
    """A dry run of a switch: the switch as it would be (``shown``: nothing written, nothing
    recorded), and what :func:`carry_out` needs to publish exactly that session if nothing it
    was worked out from changed."""

    shown: Switch
    prepared: Prepared
    source_stamp: Stamp | None  # the source file as it was read
    options: SwitchOptions

    @property
    def plan(self) -> Plan:
        return self.shown.plan

    @property
    def thread(self) -> ThreadMove | None:
        return self.shown.thread


def preview_switch(
    ref: str,
    to: Provider | None = None,
    *,
    clean: bool = False,
    env: Mapping[str, str] | None = None,
    profile: TargetProfile | None = None,
    now: datetime | None = None,
    need_cwd: bool = False,
    redact_secrets: bool = False,
    summary_by: str | None = None,
    agents: Sequence[Agent] | None = None,
    within: bool = False,
) -> Preview:
    """A dry run of :func:`switch_session` (the same arguments): what it would do, to show, and
    to :func:`carry_out` once confirmed. It takes no lock and writes nothing."""
    env = dict(os.environ) if env is None else dict(env)
    provider, path, to = find_source(ref, to, env, within)
    options = SwitchOptions(
        to, True, clean, need_cwd, redact_secrets, summary_by, profile, now, agents
    )
    preview = _move(provider, path, options, env)
    assert isinstance(preview, Preview)
    return preview


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
    copies: the folder is not that run's). ``dry_run`` returns what :func:`preview_switch`
    shows."""
    env = dict(os.environ) if env is None else dict(env)
    provider, path, to = find_source(ref, to, env, within)
    options = SwitchOptions(
        to, dry_run, clean, need_cwd, redact_secrets, summary_by, profile, now, agents
    )
    switch = _move(provider, path, options, env, checkpoint=checkpoint)
    return switch.shown if isinstance(switch, Preview) else switch


def carry_out(preview: Preview, env: Mapping[str, str] | None = None) -> Switch:
    """Carry out a dry run: publish exactly the session it prepared (the plan the user saw) if
    the source and the thread are as they were; otherwise switch afresh (with a note)."""
    env = dict(os.environ) if env is None else dict(env)
    shown = preview.shown
    assert shown.source_path is not None  # (a preview is of a session file)
    options = replace(preview.options, dry_run=False)
    switch = _move(shown.source.meta.provider, shown.source_path, options, env, preview=preview)
    assert isinstance(switch, Switch)
    return switch


def _move(
    provider: Provider,
    path: Path,
    options: SwitchOptions,
    env: Mapping[str, str],
    *,
    checkpoint: bool = True,
    preview: Preview | None = None,
) -> Switch | Preview:
    """The seven steps (a dry run: its :class:`Preview`, after step 5); a ``preview`` carried
    out publishes the session it prepared when nothing it was worked out from changed."""
    assert options.to is not None
    dry_run = options.dry_run
    reads = SessionReads()
    with SwitchLocks(env, dry_run=dry_run) as locks:
        locks.session(provider, entry(provider).session_id(path))
        if preview is not None and preview.source_stamp is not None:
            reads.prime(path, preview.source_stamp, preview.shown.source)
        source = read_source(provider, path, reads, env)
        state = load_thread(source, reads, env, locks, dry_run=dry_run)
        with Checkpointing(state, env, dry_run=dry_run or not checkpoint) as mark:
            decided = decide_move(state, source, options.to, options, reads, env)
            mark.before_prepare(decided.decision)
            if preview is not None and _still_shown(preview, decided, source, state):
                prepared = _rebased(preview.prepared, state)
            else:
                prepared = prepare_move(state, source, decided, options, reads, env)
                if preview is not None:
                    prepared.plan.notes.append(
                        "the thread changed since the preview was shown: the switch was worked "
                        "out again"
                    )
            if not dry_run:
                return write_and_record(state, source, prepared, reads, env, mark)
    if state.store is not None:
        state.store.close()
    shown = _result(state, source, prepared, preview_move(state, prepared), [], env)
    shown.dry_run = True
    return Preview(shown, prepared, source.stamp, options)


def _still_shown(preview: Preview, decided: Decided, source: Source, state: LoadedThread) -> bool:
    """Whether the move the preview showed is still the one to make: the same decision, on the
    same source file, in a thread with no new runs and the same provider thread (its file as it
    was) to go into."""
    shown = preview.prepared.target_pt
    if shown is not None:
        now = next((pt for pt in state.graph.provider_threads if pt.id == shown.id), None)
        if now is None or (now.stamp, now.path) != (shown.stamp, shown.path):
            return False
    synced_new_runs = state.changes.thread is None and bool(state.changes.runs)
    return (
        decided.decision == preview.prepared.decision
        and source.stamp == preview.source_stamp
        and not synced_new_runs
    )


def _rebased(shown: Prepared, state: LoadedThread) -> Prepared:
    """A preview's prepared move on the thread as this command loaded it (a thread adopted in
    memory again has new ids; its runs are the same)."""
    runs = {r.ordinal: r for r in state.graph.runs}
    pt = shown.target_pt
    target = None if pt is None else state.graph.provider_thread(pt.id)
    return replace(
        shown,
        thread_id=state.graph.thread.id,
        carried=tuple(runs.get(r.ordinal, r) for r in shown.carried),
        target_pt=target,
    )


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


def write_and_record(
    state: LoadedThread,
    source: Source,
    prepared: Prepared,
    reads: SessionReads,
    env: Mapping[str, str],
    mark: Checkpointing | None = None,
) -> Switch:
    """Steps 6 and 7, once the checkpoint ``mark`` is taking is done (none: the state's). What
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
