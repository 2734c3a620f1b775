"""Step 4 of a switch: how the thread moves to the target, and the session that takes it there.

The strategy order decides (:func:`segue.threads.strategy.decide`) on the graph as the
files say it is now; then the move is prepared, and nothing is written yet:

- ``no_handoff``: the target's provider thread already holds every run: it is resumed as it is;
- ``delta_into_existing``: the runs it missed, read from the sessions that ran them, go into a
  native fork of its session, as native items when they fit the target's budget unshrunk, else
  as a summary of them;
- ``full_into_existing``: the same fork, with a summary of the whole thread;
- ``full_into_new``: a new session of the target holding the whole thread (the source session,
  and any run on the line it does not hold, after it);
- ``unsupported``: refused, with the reason.

Redaction (``--redact-secrets``) applies on every one of these paths, and what the store keeps of
a handoff never holds a detected secret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec.structs import replace

from segue.formats.atomic import NativeSession
from segue.model.conversation import Conversation, Item, Provider
from segue.model.errors import SegueError, SwitchError
from segue.model.session_info import SessionState
from segue.providers import entry
from segue.providers.sessions import SessionReads
from segue.switch.plan import checked_cwd, plan_switch
from segue.switch.thread import LoadedThread, Source
from segue.threads.checkpoints import diff_line
from segue.threads.config import load_config
from segue.threads.model import (
    HandoffForm,
    HandoffStatus,
    ProviderThread,
    ProviderThreadStatus,
    Run,
    RunStatus,
    ThreadGraph,
)
from segue.threads.native import turn_items, without_turns
from segue.threads.observe import provider_entry
from segue.threads.strategy import Decision, Facts, Strategy, decide
from segue.transforms.budget import TargetProfile
from segue.transforms.handoff_summary import DEFAULT_MAX_CHARS, summarize_runs
from segue.transforms.plan import Label, Plan
from segue.transforms.redact import redact_items, scan_items
from segue.transforms.shrink import Unfittable
from segue.transforms.state import session_state

if TYPE_CHECKING:
    from segue.running.agents import Agent

__all__ = [
    "MoveKind",
    "Prepared",
    "SwitchOptions",
    "decide_move",
    "names_workspace",
    "prepare_move",
    "refuse_mid_turn",
    "run_items",
]


class MoveKind(StrEnum):
    RESUME = "resume"  # no_handoff: the target's session as it is
    NEW = "new"  # full_into_new
    FORK = "fork"  # delta_into_existing / full_into_existing


class SwitchOptions(msgspec.Struct, frozen=True):
    to: Provider | None = None
    dry_run: bool = False
    clean: bool = False
    need_cwd: bool = False  # refuse when the session's directory is gone (``--exec``)
    redact_secrets: bool = False
    summary_by: str | None = None  # who writes a summary handoff (None: segue)
    profile: TargetProfile | None = None  # the target as configured (None: the user's)
    now: datetime | None = None
    agents: Sequence[Agent] | None = None  # the running agents, when the caller scanned them


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


def _model_changed(graph: ThreadGraph, to: Provider, env: Mapping[str, str], cwd: str) -> bool:
    """Whether the model the user's CLI for ``to`` would run now differs from the one its
    provider thread ran (a Codex thread's encrypted reasoning is its model's; another model is a
    context to start afresh). Unknown on either side: not changed."""
    mine = [
        pt
        for pt in graph.provider_threads
        if pt.provider is to and pt.status is ProviderThreadStatus.ACTIVE
    ]
    target = entry(to)
    recorded = {target.model_key(pt.model) for pt in mine if pt.model}
    if not recorded:
        return False
    try:
        now = target.target_profile(env, cwd).model
    except SegueError:
        return False
    return now is not None and target.model_key(now) not in recorded


def run_items(
    graph: ThreadGraph,
    runs: Sequence[Run],
    reads: SessionReads,
    env: Mapping[str, str],
    lost: list[str] | None = None,
) -> list[Item]:
    """The items of ``runs``, in order, read from the sessions that ran them (each file once).
    A run whose session can no longer be read is left out and named in ``lost``."""
    turns: dict[str, list[list[Item]] | None] = {}
    items: list[Item] = []
    for run in runs:
        if run.provider_thread_id not in turns:
            pt = graph.provider_thread(run.provider_thread_id)
            e = provider_entry(pt.provider)  # None: a provider this segue does not know
            try:
                if e is None:
                    raise SwitchError(f"unknown provider {pt.provider.value!r}")
                conversation = reads.read(e.current_file(Path(pt.path), env), e.provider)
            except SegueError:
                turns[pt.id] = None
            else:
                turns[pt.id] = turn_items(conversation)
        mine = turns[run.provider_thread_id]
        if mine is None or not 1 <= run.native_turn <= len(mine):
            if lost is None:
                raise SwitchError(f"run {run.ordinal} is no longer in its session")
            lost.append(str(run.ordinal))
            continue
        items += mine[run.native_turn - 1]
    return items


def _off_the_line(pt: ProviderThread, line: set[int]) -> set[int]:
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


def refuse_mid_turn(source: Source, env: Mapping[str, str]) -> None:
    """Refuse the switch of a session its CLI is in the middle of a turn of, as the machine is
    now: the processes looked at afresh, each one's state read from its own word (Claude Code's
    ``busy``) and from the session file as it is now, whatever an earlier scan or an earlier
    read of the file said. Called under the switch's locks, right before it writes."""
    from segue.running.agents import working_on

    agent = working_on(source.provider, source.native_id, source.path, env=env)
    if agent is not None:
        raise _working(source, agent.pid)


def _working(source: Source, pid: int) -> SwitchError:
    return SwitchError(
        f"{source.provider.value} session {source.native_id} is mid-turn: "
        f"{entry(source.provider).label} (pid {pid}) is still working on it; "
        "switch it when the turn has ended"
    )


def _mid_turn(
    state: LoadedThread, source: Source, options: SwitchOptions, env: Mapping[str, str]
) -> str | None:
    """A note for a source whose last run has not finished; refused while its CLI runs it (as
    the agents given, or a scan now, say: a switch that writes asks again right before it
    writes, :func:`refuse_mid_turn`)."""
    line = state.graph.live_runs
    last = line[-1] if line else None
    if last is None or last.status is not RunStatus.WORKING:
        return None
    if last.provider_thread_id != state.source_pt.id:
        return None
    session, _ = session_state(source.conversation.items)
    if session is not SessionState.WORKING:
        return None
    from segue.running.agents import working_on

    agent = working_on(
        source.provider, source.native_id, source.path, agents=options.agents, env=env
    )
    if agent is not None:
        raise _working(source, agent.pid)
    return (
        f"run {last.ordinal} had not finished (no CLI is running it): what is on disk so far "
        "is carried, and the run is not counted as carried"
    )


def decide_move(
    state: LoadedThread,
    source: Source,
    to: Provider,
    options: SwitchOptions,
    reads: SessionReads,
    env: Mapping[str, str],
) -> tuple[Decision, Facts]:
    """The strategy for moving the thread to ``to``, on the graph as the disk says."""
    from segue.switch.thread import source_cwd

    graph = state.graph
    cwd = source_cwd(state, source)
    facts = Facts(clean=options.clean, model_changed=_model_changed(graph, to, env, cwd))
    config = load_config(env)
    decision = decide(graph, to.value, facts, config)
    if options.redact_secrets and decision.provider_thread is not None:
        held = _secrets_held(graph.provider_thread(decision.provider_thread), reads, env)
        if held:  # resuming or forking it would carry them on: a new, redacted session instead
            facts = replace(
                facts, conflict=f"it holds {held}, and --redact-secrets asks for none to be carried"
            )
            decision = decide(graph, to.value, facts, config)
    if decision.strategy is Strategy.DELTA_INTO_EXISTING and decision.covers is not None:
        missed = [r for r in graph.live_runs if _in(r, decision.covers)]
        items = run_items(graph, missed, reads, env, [])
        try:
            plan = plan_switch(Conversation(meta=source.conversation.meta, items=items), to,
                               env=env, cwd=cwd, profile=options.profile)  # fmt: skip
            fits = plan.label is not Label.SHRUNK and plan.fits
        except Unfittable:  # not even the last run fits as native items
            fits = False
        if not fits:
            facts = replace(facts, delta_fits_natively=False)
            decision = decide(graph, to.value, facts, config)
    return decision, facts


def _secrets_held(pt: ProviderThread, reads: SessionReads, env: Mapping[str, str]) -> str | None:
    """The secrets a provider thread's session holds, as "N secrets (kinds)", or None."""
    e = provider_entry(pt.provider)
    if e is None:
        return None
    try:
        conversation = reads.read(e.current_file(Path(pt.path), env), e.provider)
    except SegueError:
        return None
    counts = scan_items(conversation.items).counts
    if not counts:
        return None
    total = sum(counts.values())
    kinds = ", ".join(sorted(counts))
    return f"{total} secret{'s' if total != 1 else ''} ({kinds})"


def _in(run: Run, covers: tuple[int, int]) -> bool:
    return covers[0] <= run.ordinal <= covers[1]


_FORKS = (Strategy.DELTA_INTO_EXISTING, Strategy.FULL_INTO_EXISTING)


def names_workspace(decision: Decision) -> bool:
    """Whether preparing ``decision``'s move writes the workspace's latest diff into what it
    carries (a summary carried into a fork): it needs the checkpoint before it is prepared."""
    return decision.form is HandoffForm.SUMMARY and decision.strategy in _FORKS


def prepare_move(
    state: LoadedThread,
    source: Source,
    to: Provider,
    decision: Decision,
    facts: Facts,
    options: SwitchOptions,
    reads: SessionReads,
    env: Mapping[str, str],
) -> Prepared:
    """The move ``decision`` asks for, prepared: nothing is written."""
    from segue.switch.thread import source_cwd

    graph = state.graph
    where = source.path
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
        return Prepared(thread_id, decision, facts, MoveKind.RESUME, plan, cwd, held)
    move = _Move(state, source, to, decision, facts, options, reads, env, cwd, now, notes)
    if strategy in _FORKS:
        return _fork(move)
    return _new(move)


class _Move(msgspec.Struct, frozen=True):
    """What preparing one move works from."""

    state: LoadedThread
    source: Source
    to: Provider
    decision: Decision
    facts: Facts
    options: SwitchOptions
    reads: SessionReads
    env: Mapping[str, str]
    cwd: str
    now: datetime
    notes: list[str]


def _new(move: _Move) -> Prepared:
    """``full_into_new``: a new session holding the whole thread."""
    state, source, to, decision, options = (
        move.state, move.source, move.to, move.decision, move.options,
    )  # fmt: skip
    reads, env, notes, now = move.reads, move.env, move.notes, move.now
    graph, pt = state.graph, state.source_pt
    where = source.path
    cwd = checked_cwd(source.conversation.meta.cwd or graph.thread.cwd, where, options.need_cwd)
    line = graph.live_runs
    covered = pt.coverage()
    conversation = source.conversation
    off = _off_the_line(pt, {r.ordinal for r in line})
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
        move.facts,
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
    from segue.switch.summaries import write_summary

    state, source, to, decision, options = (
        move.state, move.source, move.to, move.decision, move.options,
    )  # fmt: skip
    reads, env, notes, now, cwd = move.reads, move.env, move.notes, move.now, move.cwd
    graph = state.graph
    assert decision.covers is not None and decision.provider_thread is not None
    target = graph.provider_thread(decision.provider_thread)
    first, last = decision.covers
    wanted = [r for r in graph.live_runs if _in(r, decision.covers)]
    lost: list[str] = []
    items = run_items(graph, wanted, reads, env, lost)
    losses: list[str] = []
    if lost:
        losses.append(_lost_note(lost))
        wanted = [r for r in wanted if str(r.ordinal) not in lost]
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
        missed = Conversation(meta=source.conversation.meta, items=items)
        plan = plan_switch(missed, to, env=env, cwd=cwd, redact_secrets=options.redact_secrets,
                           profile=options.profile)  # fmt: skip
        selected = e.select(items)
        found = scan_items(selected)
        carried = redact_items(selected, found) if options.redact_secrets else selected
        stored = _stored(carried if options.redact_secrets else redact_items(selected, found))
        notes.append(f"runs {first}-{last} carried as native items after the target's own history")
        if options.summary_by is not None:
            notes.append("--summary-by is not used: the runs fit as native items")
    parent = e.current_file(Path(target.path), env)
    session = e.fork(parent, carried, text, cwd=cwd, env=env, now=now)
    plan.notes += notes
    return Prepared(
        graph.thread.id,
        decision,
        move.facts,
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


def _stored(items: Sequence[Item]) -> list[dict[str, Any]]:
    from segue.model.codec import item_to_json

    return [item_to_json(item) for item in items]


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
