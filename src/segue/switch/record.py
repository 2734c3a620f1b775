"""Step 7 of a switch, **record**: what was done, recorded.

The sync's findings, the decision, the new provider thread (or the fork's revision), the
transfer and the handoff go into the store in one transaction. A store that cannot record
leaves the switch made: what was written goes into segue's journal (:mod:`.journal`), the next
command that can record adopts it, and the user gets one warning. A dry run records nothing:
:func:`preview_move` says how it would move the thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from msgspec.structs import replace

import segue.threads.syncing as syncing  # (a module: tests make its recording fail)
from segue.model.errors import StoreError
from segue.providers.sessions import SessionReads
from segue.store.ids import new_id
from segue.switch.journal import entry_for, moved_into, replay_entries, save
from segue.switch.prepare import MoveKind, Prepared
from segue.switch.result import ThreadMove
from segue.switch.source import Source
from segue.switch.sync import LoadedThread
from segue.switch.write import Written, layout_for
from segue.threads.model import (
    Handoff,
    HandoffForm,
    HandoffStatus,
    HandoffStrategy,
    Transfer,
    TurnSlot,
    prompt_hash,
)
from segue.threads.reconcile import Changes, DecisionRecord, layout_of
from segue.threads.strategy import Strategy

__all__ = ["preview_move", "record_move"]


def _move_changes(
    state: LoadedThread, source: Source, prepared: Prepared, written: Written | None, now: datetime
) -> tuple[Changes, str | None, str | None]:
    """What the move adds to the store: (changes, the target's provider thread, the handoff)."""
    graph = state.graph
    thread_id = graph.thread.id
    decision = prepared.decision
    changes = Changes()
    pt_id: str | None = decision.provider_thread
    handoff_id: str | None = None
    if prepared.kind is MoveKind.NEW and written is not None:
        target = moved_into(
            graph, None, changes, provider=prepared.plan.target.provider,
            native_id=written.session_id, path=str(written.path),
            model=prepared.plan.target.model, stamp=written.stamp,
            turns=layout_for(written.turns, prepared.carried),
            reason=f"switched from {source.provider.value} {source.native_id}",
        )  # fmt: skip
        pt_id = target.id
        sources = sorted({r.provider_thread_id for r in prepared.carried}) or [state.source_pt.id]
        transfer = Transfer(
            new_id(), thread_id, "switch", state.source_pt.id, target.id,
            prepared.carried[-1].ordinal if prepared.carried else None,
            Strategy.FULL_INTO_NEW.value, "done", now,
        )  # fmt: skip
        changes.transfers.append(transfer)
        if prepared.covers is not None:
            handoff = _handoff(
                thread_id, target.id, sources, prepared, transfer.id, now,
                HandoffStrategy.FULL_THREAD_SUMMARY,
            )  # fmt: skip
            changes.handoffs.append(handoff)
            handoff_id = handoff.id
    elif prepared.kind is MoveKind.FORK and written is not None and prepared.target_pt is not None:
        old = prepared.target_pt
        if prepared.text is not None and prepared.covers is not None:
            # a summary's own message is the first run it carries: rewound away, it takes the
            # summarized runs with it
            first = prepared.covers[0]
            added = [TurnSlot(prompt_hash(t.prompt), first) for t in written.turns]
        else:
            added = layout_for(written.turns, prepared.carried)
        covers = prepared.covers or (0, 0)
        how = "as a summary" if prepared.text is not None else "as native items"
        moved_into(
            graph, old, changes, provider=old.provider, native_id=written.session_id,
            path=str(written.path), model=old.model, stamp=written.stamp,
            turns=[*layout_of(old, graph.runs), *added],
            reason=f"runs {covers[0]}-{covers[1]} carried {how} into fork "
            f"{written.session_id} of {old.native_id}",
        )  # fmt: skip
        sources = sorted({r.provider_thread_id for r in prepared.carried})
        transfer = Transfer(
            new_id(), thread_id, "return", sources[-1] if sources else None, old.id,
            covers[1], decision.strategy.value, "done", now,
        )  # fmt: skip
        changes.transfers.append(transfer)
        strategy = (
            HandoffStrategy.FULL_THREAD_SUMMARY
            if decision.strategy is Strategy.FULL_INTO_EXISTING
            else HandoffStrategy.DELTA_SINCE_TARGET_LAST_SEEN
        )
        handoff = _handoff(thread_id, old.id, sources, prepared, transfer.id, now, strategy)
        changes.handoffs.append(handoff)
        handoff_id = handoff.id
    changes.decisions.append(
        DecisionRecord(
            target_provider=prepared.plan.target.provider.value,
            strategy=decision.strategy.value,
            form=None if decision.form is None else decision.form.value,
            reason=decision.reason,
            provider_thread_id=decision.provider_thread,
            covers=decision.covers,
            inputs={"facts": prepared.facts.to_json()},
        )
    )
    return changes, pt_id, handoff_id


def _handoff(
    thread_id: str,
    to: str,
    sources: Sequence[str],
    prepared: Prepared,
    transfer_id: str,
    now: datetime,
    strategy: HandoffStrategy,
) -> Handoff:
    assert prepared.covers is not None
    form = prepared.decision.form if prepared.kind is MoveKind.FORK else HandoffForm.NATIVE_ITEMS
    return Handoff(
        id=new_id(),
        thread_id=thread_id,
        to_provider_thread_id=to,
        from_provider_threads=tuple(sources),
        covers=prepared.covers,
        strategy=strategy,
        form=form or HandoffForm.NATIVE_ITEMS,
        status=HandoffStatus.READY,
        created_at=now,
        text=prepared.text,
        items=prepared.stored_items,
        created_by_provider=prepared.created_by,
        transfer_id=transfer_id,
        target_run_ordinal=prepared.covers[1] + 1,
        supersedes=prepared.supersedes,
        checkpoint_id=prepared.checkpoint_id,
    )


def record_move(
    state: LoadedThread,
    source: Source,
    prepared: Prepared,
    written: Written | None,
    reads: SessionReads,
    env: Mapping[str, str],
) -> tuple[ThreadMove, list[str]]:
    """Record the sync, the decision and what was written; a store that cannot record it is a
    warning (and the journal keeps what was written, for the next command that can)."""
    now = datetime.now(UTC)
    more, pt_id, handoff_id = _move_changes(state, source, prepared, written, now)
    changes = state.changes
    changes.absorb(more)
    warnings: list[str] = []
    recorded = False
    store = state.store
    why = state.unrecorded
    if store is not None:
        try:
            if state.earlier is not None:
                earlier_graph, earlier_changes = state.earlier
                syncing.record_outcome(
                    store, earlier_graph, earlier_changes, "cannot record the sync"
                )
            syncing.record_outcome(
                store, state.graph, changes, f"cannot record the switch of {source.path}"
            )
            recorded = True
        except StoreError as exc:
            why = str(exc)
    if not recorded and written is not None:
        trouble = save(entry_for(state, source, prepared, written, why), env)
        if trouble is None and store is not None:
            try:
                replay_entries(store, reads, env)
            except StoreError as exc:
                why = str(exc)
            else:
                recorded, why = True, None
        if not recorded:
            kept = (
                "segue's journal keeps it for the next command that can record"
                if trouble is None
                else f"nor could segue's journal keep it ({trouble})"
            )
            warnings.append(
                f"the switch was made but not recorded in the app-thread graph: {why}; {kept}"
            )
    elif not recorded:
        warnings.append(f"not recorded in the app-thread graph: {why}")
    if store is not None:
        store.close()
    move = replace(
        preview_move(state, prepared),
        provider_thread=pt_id,
        handoff_id=handoff_id if recorded else None,
        covers=prepared.covers if handoff_id else None,
        created_by_provider=prepared.created_by,
        recorded=recorded,
    )
    return move, warnings


def _form(prepared: Prepared) -> str | None:
    if prepared.kind is MoveKind.RESUME:
        return None
    if prepared.kind is MoveKind.NEW:
        return "native_items"
    return None if prepared.decision.form is None else prepared.decision.form.value


def preview_move(state: LoadedThread, prepared: Prepared) -> ThreadMove:
    """How a dry run would move the thread."""
    return ThreadMove(
        state.graph.thread.id,
        prepared.decision.strategy.value,
        prepared.decision.reason,
        prepared.decision.provider_thread,
        None,
        prepared.covers,
        _form(prepared),
        None,
        False,
    )
