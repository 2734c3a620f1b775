"""Carry a delta into an existing provider thread (strategy 2, ``delta_into_existing``): the
missed runs, read from the native sessions that ran them, written as a native fork of the
target's session, and recorded (transfer, handoff, the provider thread's new native id and
file) in one transaction.

The same fork carries a ``summary``-form handoff: a delta that does not fit natively, or the whole
thread (strategy 3, ``full_into_existing``), as a summary text in a context message (a developer
message for Codex, a marked user message for Claude) and no native items. The text is segue's
deterministic summary (:func:`segue.transforms.handoff_summary.summarize_runs`) unless the caller
gives one (a provider-written summary, recorded with ``created_by_provider``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from segue.conversation import Item, Provider
from segue.errors import SwitchError
from segue.formats.atomic import NativeSession
from segue.providers import entry
from segue.serialize import item_to_json
from segue.store import Store
from segue.threads import queries
from segue.threads.model import (
    Handoff,
    HandoffForm,
    HandoffStatus,
    HandoffStrategy,
    ProviderThread,
    ThreadGraph,
)
from segue.threads.native import native_turns
from segue.threads.strategy import Decision, Strategy
from segue.threads.sync import sync
from segue.transforms.effective import apply_rollbacks
from segue.transforms.handoff_summary import DEFAULT_MAX_CHARS, summarize_runs
from segue.transforms.turns import group_turns

__all__ = ["CarriedDelta", "carry_delta", "delta_items", "summary_of"]


@dataclass(frozen=True, slots=True)
class CarriedDelta:
    session: NativeSession  # the fork, published: resume it by ``session.session_id``
    handoff: Handoff
    warnings: list[str]


def delta_items(graph: ThreadGraph, covers: tuple[int, int], env: Mapping[str, str]) -> list[Item]:
    """The items of runs ``covers`` (inclusive), in order, from their own native sessions."""
    wanted = [r for r in graph.live_runs if covers[0] <= r.ordinal <= covers[1]]
    turns: dict[str, list[list[Item]]] = {}
    items: list[Item] = []
    for run in wanted:
        if run.provider_thread_id not in turns:
            pt = graph.provider_thread(run.provider_thread_id)
            e = entry(Provider(pt.provider))
            conversation = e.read(e.current_file(Path(pt.path), env))
            grouped = group_turns(apply_rollbacks(conversation.items))
            turns[pt.id] = [t.all_items for t in grouped if t.prompt is not None]
        mine = turns[run.provider_thread_id]
        if run.native_turn > len(mine):
            raise SwitchError(f"run {run.ordinal} is no longer in its session (rolled back?)")
        items += mine[run.native_turn - 1]
    return items


def summary_of(
    graph: ThreadGraph,
    covers: tuple[int, int],
    env: Mapping[str, str],
    max_chars: int = DEFAULT_MAX_CHARS,
) -> str:
    """segue's deterministic summary of runs ``covers`` of the thread."""
    return summarize_runs(delta_items(graph, covers, env), max_chars=max_chars, first_run=covers[0])


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


def carry_delta(
    store: Store,
    thread_id: str,
    decision: Decision,
    *,
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
    summary: str | None = None,
    created_by_provider: str | None = None,
) -> CarriedDelta:
    """Write and record the fork of the target's own session that a ``delta_into_existing`` or
    ``full_into_existing`` decision asks for: the missed runs as native items, or (``summary``
    form) a summary of the runs it covers: ``summary`` when given, else segue's own."""
    env = os.environ if env is None else env
    into_existing = (Strategy.DELTA_INTO_EXISTING, Strategy.FULL_INTO_EXISTING)
    if decision.strategy not in into_existing or decision.covers is None:
        raise SwitchError(f"not a move into an existing provider thread: {decision.strategy}")
    if decision.provider_thread is None or decision.form is None:
        raise SwitchError("the decision names no provider thread or handoff form")
    as_summary = decision.form is HandoffForm.SUMMARY
    graph = sync(store, thread_id, env).graph
    target = graph.provider_thread(decision.provider_thread)
    e = entry(Provider(target.provider))
    items = delta_items(graph, decision.covers, env)
    text: str | None = None
    if as_summary:
        text = summary or summarize_runs(
            items, max_chars=DEFAULT_MAX_CHARS, first_run=decision.covers[0]
        )
    parent = e.current_file(Path(target.path), env)
    cwd = graph.thread.cwd or os.getcwd()
    carried = [] if as_summary else items
    session = e.fork(parent, carried, text, cwd=cwd, env=env, now=now or datetime.now(UTC))
    warnings = e.publish(session, env)
    count = len(native_turns(e.read(session.path)))
    sources = sorted(
        {
            r.provider_thread_id
            for r in graph.live_runs
            if decision.covers[0] <= r.ordinal <= decision.covers[1]
        }
    )
    with store.writing(f"cannot record the delta of thread {thread_id}") as connection:
        queries.lock_thread(connection, thread_id)
        transfer = queries.add_transfer(
            connection,
            thread_id,
            type="return",
            source_provider_thread_id=sources[-1] if sources else None,
            target_provider_thread_id=target.id,
            source_run_ordinal=decision.covers[1],
            resolution=decision.strategy.value,
            status="done",
        )
        handoff = queries.add_handoff(
            connection,
            thread_id,
            to_provider_thread_id=target.id,
            from_provider_threads=sources,
            covers=decision.covers,
            strategy=HandoffStrategy.FULL_THREAD_SUMMARY
            if decision.strategy is Strategy.FULL_INTO_EXISTING
            else HandoffStrategy.DELTA_SINCE_TARGET_LAST_SEEN,
            form=decision.form,
            status=HandoffStatus.READY,
            text=text,
            items=None if as_summary else [item_to_json(item) for item in e.select(items)],
            created_by_provider=created_by_provider if as_summary else None,
            supersedes=_regenerated(target, decision.covers) if as_summary else None,
            transfer_id=transfer.id,
            target_run_ordinal=decision.covers[1] + 1,
        )
        fresh = queries.load_graph(connection, thread_id)
        assert fresh is not None
        queries.revise_provider_thread(
            connection,
            fresh.provider_thread(target.id),
            reason=f"runs {decision.covers[0]}-{decision.covers[1]} carried "
            f"{'as a summary' if as_summary else 'as native items'} into fork "
            f"{session.session_id} of {target.native_id}",
            native_id=session.session_id,
            path=str(session.path),
            native_turns=count,
        )
    return CarriedDelta(session, handoff, warnings)
