"""Step 5 of a switch, **prepare**: the session that carries the decided move out, worked out
and not yet written.

- ``no_handoff``: the target's provider thread already holds every run: it is resumed as it is;
- ``delta_into_existing``: the runs it missed, read from the sessions that ran them (as the
  decision read them), go into a native fork of its session, as native items when they fit the
  target's budget unshrunk, else as a summary of them;
- ``full_into_existing``: the same fork, with a summary of the whole thread;
- ``full_into_new``: a new session of the target holding the whole thread (the source session,
  and any run on the line it does not hold, after it);
- ``unsupported``: refused, with the reason.

Redaction (``--redact-secrets``) applies on every one of these paths, and what the store keeps of
a handoff never holds a detected secret. A dry run stops here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

from segue.formats.atomic import NativeSession
from segue.model.codec import item_to_json
from segue.model.conversation import Conversation, Item, Provider
from segue.model.errors import SwitchError
from segue.model.session_info import SessionState
from segue.providers import entry
from segue.providers.sessions import SessionReads
from segue.switch.decide import FORKS, Decided, SwitchOptions, read_delta, run_items
from segue.switch.plan import checked_cwd, plan_switch
from segue.switch.source import Source, refuse_mid_turn
from segue.switch.summaries import write_summary
from segue.switch.sync import LoadedThread, source_cwd
from segue.threads.checkpoints import diff_line
from segue.threads.model import (
    HandoffForm,
    HandoffStatus,
    ProviderThread,
    Run,
    RunStatus,
)
from segue.threads.native import without_turns
from segue.threads.strategy import Decision, Facts, Strategy
from segue.transforms.handoff_summary import DEFAULT_MAX_CHARS, summarize_runs
from segue.transforms.plan import Plan
from segue.transforms.redact import redact_items, scan_items
from segue.transforms.state import session_state

__all__ = ["MoveKind", "Prepared", "off_the_line", "prepare_move"]


class MoveKind(StrEnum):
    RESUME = "resume"  # no_handoff: the target's session as it is
    NEW = "new"  # full_into_new
    FORK = "fork"  # delta_into_existing / full_into_existing


class Prepared(msgspec.Struct):
    """A move worked out and its session prepared, not yet written."""

    thread_id: str
    decision: Decision
    facts: Facts
    kind: MoveKind
    plan: Plan
    cwd: str
    target_pt: ProviderThread | None = None  # the provider thread resumed or forked
    session: NativeSession | None = None  # what to publish (new, fork)
    carried: tuple[Run, ...] = ()  # the runs whose items it carries
    covers: tuple[int, int] | None = None  # the runs the handoff covers (finished ones)
    text: str | None = None  # a summary handoff's text
    created_by: Provider | None = None  # who wrote that summary (None: segue)
    stored_items: list[dict[str, Any]] | None = None  # what the store keeps of a native delta
    supersedes: str | None = None
    warnings: list[str] = msgspec.field(default_factory=list)  # what the move loses
    checkpoint_id: str | None = None  # the workspace's latest checkpoint, named by the handoff


def off_the_line(pt: ProviderThread, line: set[int]) -> set[int]:
    """The places (0-based) of the turns of ``pt``'s file whose run is off the thread's line."""
    return {
        n
        for n, slot in enumerate(pt.turns or ())
        if slot.run is not None and slot.run > 0 and slot.run not in line
    }


def _lost_note(lost: Sequence[str]) -> str:
    return (
        f"run{'s' if len(lost) != 1 else ''} {', '.join(lost)} could not be carried: the session "
        "that ran it is gone or no longer holds it"
    )


def _finished(runs: Sequence[Run]) -> tuple[Run, ...]:
    """The runs a handoff can say it carried: all but a last one still working."""
    if runs and runs[-1].status is RunStatus.WORKING:
        return tuple(runs[:-1])
    return tuple(runs)


def _span(runs: Sequence[Run]) -> tuple[int, int] | None:
    return (runs[0].ordinal, runs[-1].ordinal) if runs else None


def _mid_turn(
    state: LoadedThread, source: Source, options: SwitchOptions, env: Mapping[str, str]
) -> str | None:
    """A note for a source whose last run has not finished; refused while its CLI runs it (as
    the agents given, or a scan now, say: a switch that writes asks again right before it
    writes, :func:`segue.switch.source.refuse_mid_turn`)."""
    line = state.graph.live_runs
    last = line[-1] if line else None
    if last is None or last.status is not RunStatus.WORKING:
        return None
    if last.provider_thread_id != state.source_pt.id:
        return None
    session, _ = session_state(source.conversation.items)
    if session is not SessionState.WORKING:
        return None
    refuse_mid_turn(source, env, options.agents)
    return (
        f"run {last.ordinal} had not finished (no CLI is running it): what is on disk so far "
        "is carried, and the run is not counted as carried"
    )


def prepare_move(
    state: LoadedThread,
    source: Source,
    decided: Decided,
    options: SwitchOptions,
    reads: SessionReads,
    env: Mapping[str, str],
) -> Prepared:
    """The move ``decided`` asks for, prepared: nothing is written."""
    graph = state.graph
    where = source.path
    to, decision = decided.to, decided.decision
    strategy, reason = decision.strategy, decision.reason
    if strategy is Strategy.UNSUPPORTED:
        raise SwitchError(f"{where}: cannot move to {to.value}: {reason}")
    cwd = source_cwd(state, source)
    notes: list[str] = []
    mid_turn = _mid_turn(state, source, options, env)
    if mid_turn:
        notes.append(mid_turn)
    now = options.now or datetime.now(UTC)
    thread_id = graph.thread.id
    nothing = Conversation(meta=source.conversation.meta)
    if strategy is Strategy.NO_HANDOFF and decision.provider_thread is not None:
        held = graph.provider_thread(decision.provider_thread)
        plan = plan_switch(nothing, to, env=env, cwd=cwd, profile=options.profile)
        plan.notes += [*notes, f"nothing to carry: {reason}"]
        return Prepared(thread_id, decision, decided.facts, MoveKind.RESUME, plan, cwd, held)
    move = _Move(state, source, decided, options, reads, env, cwd, now, notes)
    if strategy in FORKS:
        return _fork(move)
    return _new(move)


class _Move(msgspec.Struct, frozen=True):
    """What preparing one move works from."""

    state: LoadedThread
    source: Source
    decided: Decided
    options: SwitchOptions
    reads: SessionReads
    env: Mapping[str, str]
    cwd: str
    now: datetime
    notes: list[str]


def _new(move: _Move) -> Prepared:
    """``full_into_new``: a new session holding the whole thread."""
    state, source, options = move.state, move.source, move.options
    to, decision = move.decided.to, move.decided.decision
    reads, env, notes, now = move.reads, move.env, move.notes, move.now
    graph, pt = state.graph, state.source_pt
    where = source.path
    cwd = checked_cwd(source.conversation.meta.cwd or graph.thread.cwd, where, options.need_cwd)
    line = graph.live_runs
    covered = pt.coverage()
    conversation = source.conversation
    off = off_the_line(pt, {r.ordinal for r in line})
    if off:  # turns of the source that are no longer the thread's (a segue rollback): left out
        conversation = replace(conversation, items=without_turns(conversation.items, off))
        covered -= {slot.run for n, slot in enumerate(pt.turns or ()) if n in off}
        notes.append(
            f"{len(off)} turn{'s' if len(off) != 1 else ''} of this session are not on the "
            "thread's line (rolled back): left out"
        )
    missed = [r for r in line if r.ordinal not in covered]
    losses: list[str] = []
    if missed:  # runs on the line the source session does not hold: carried after it
        lost: list[str] = []
        items = run_items(graph, missed, reads, env, lost)
        conversation = replace(conversation, items=[*conversation.items, *items])
        kept = [str(r.ordinal) for r in missed if str(r.ordinal) not in lost]
        if kept:
            notes.append(
                f"runs {', '.join(kept)} are not in this session: carried after it, from the "
                "sessions that ran them"
            )
        if lost:
            losses.append(_lost_note(lost))
    plan = plan_switch(
        conversation,
        to,
        profile=options.profile,
        env=env,
        cwd=cwd,
        redact_secrets=options.redact_secrets,
    )
    if not plan.items:
        raise SwitchError(f"{where}: nothing in this session can be carried to {to.value}")
    session = entry(to).prepare(plan.items, cwd=cwd, env=env, now=now)
    if decision.strategy is not Strategy.FULL_INTO_NEW:
        notes.append(f"{decision.strategy.value}: {decision.reason}")
    plan.notes += notes
    finished = _finished(line)
    return Prepared(
        graph.thread.id,
        replace(decision, strategy=Strategy.FULL_INTO_NEW),
        move.decided.facts,
        MoveKind.NEW,
        plan,
        cwd,
        session=session,
        carried=tuple(line),
        covers=_span(finished),
        warnings=losses,
        checkpoint_id=None if state.checkpoint is None else state.checkpoint.id,
    )


def _fork(move: _Move) -> Prepared:
    """``delta_into_existing`` / ``full_into_existing``: a native fork of the target's session
    carrying the runs it missed (as native items, or as a summary)."""
    state, source, options = move.state, move.source, move.options
    to, decision = move.decided.to, move.decided.decision
    reads, env, notes, now, cwd = move.reads, move.env, move.notes, move.now, move.cwd
    graph = state.graph
    assert decision.covers is not None and decision.provider_thread is not None
    target = graph.provider_thread(decision.provider_thread)
    first, last = decision.covers
    delta = move.decided.delta  # the runs it missed, as read (and maybe planned) to decide
    if delta is None or delta.covers != decision.covers:
        delta = read_delta(graph, decision.covers, reads, env)
    wanted, items, lost = list(delta.runs), delta.items, delta.lost
    losses = [_lost_note(lost)] if lost else []
    e = entry(to)
    text: str | None = None
    created_by: Provider | None = None
    stored: list[dict[str, Any]] | None = None
    carried: list[Item] = []
    supersedes = None
    if decision.form is HandoffForm.SUMMARY:
        mark = state.checkpoint
        digest = summarize_runs(
            items,
            max_chars=DEFAULT_MAX_CHARS,
            first_run=first,
            workspace=None if mark is None else f"{mark.folder}: {diff_line(mark)}",
        )
        if options.dry_run:
            text = digest
            if options.summary_by is not None:
                notes.append(f"--summary-by {options.summary_by} would be asked to write it")
        else:
            written = write_summary(
                digest,
                by=options.summary_by,
                left=source.provider,
                entered=to,
                env=env,
            )
            text, created_by = written.text, written.created_by_provider
            notes += written.notes
        plan = plan_switch(
            Conversation(meta=source.conversation.meta), to, env=env, cwd=cwd,
            profile=options.profile,
        )  # fmt: skip
        supersedes = _regenerated(target, decision.covers)
        by = created_by or "segue"
        notes.append(f"runs {first}-{last} carried as a summary ({len(text):,} chars, by {by})")
    else:
        if delta.plan is not None:  # planned when it was decided
            plan = delta.plan
        else:
            missed = Conversation(meta=source.conversation.meta, items=items)
            plan = plan_switch(missed, to, env=env, cwd=cwd, redact_secrets=options.redact_secrets,
                               profile=options.profile)  # fmt: skip
        selected = e.select(items)
        found = scan_items(selected)
        carried = redact_items(selected, found) if options.redact_secrets else selected
        kept = carried if options.redact_secrets else redact_items(selected, found)
        stored = [item_to_json(item) for item in kept]
        notes.append(f"runs {first}-{last} carried as native items after the target's own history")
        if options.summary_by is not None:
            notes.append("--summary-by is not used: the runs fit as native items")
    parent = e.current_file(Path(target.path), env)
    session = e.fork(parent, carried, text, cwd=cwd, env=env, now=now)
    plan.notes += notes
    return Prepared(
        graph.thread.id,
        decision,
        move.decided.facts,
        MoveKind.FORK,
        plan,
        cwd,
        target,
        session,
        carried=tuple(wanted),
        covers=_span(_finished(wanted)) or decision.covers,
        text=text,
        created_by=created_by,
        stored_items=stored,
        supersedes=supersedes,
        warnings=losses,
        checkpoint_id=None if state.checkpoint is None else state.checkpoint.id,
    )


def _regenerated(target: ProviderThread, covers: tuple[int, int]) -> str | None:
    """The newest summary handoff of ``target`` that a new summary of ``covers`` regenerates
    (it covers no run outside them): recorded as superseded by it, never changed."""
    older = [
        h
        for h in target.handoffs
        if h.form is HandoffForm.SUMMARY
        and h.status is not HandoffStatus.SUPERSEDED
        and covers[0] <= h.covers[0]
        and h.covers[1] <= covers[1]
    ]
    return older[-1].id if older else None
