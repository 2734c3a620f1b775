"""Records of a thread graph written by hand, as the tests need them (segue writes its records
only through a sync or a switch: :func:`segue.threads.queries.record_changes`). Each call is one
transaction holding the thread's lock, as segue's own writers do."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from segue.model.conversation import Provider
from segue.model.errors import StoreError
from segue.store import Store
from segue.store.ids import new_id
from segue.threads import queries
from segue.threads.model import (
    Handoff,
    HandoffForm,
    HandoffStatus,
    HandoffStrategy,
    ProviderThread,
    ProviderThreadStatus,
    Run,
    RunStatus,
)
from segue.threads.reconcile import Changes, DecisionRecord
from segue.threads.strategy import Decision, Facts


class NewRun(msgspec.Struct, frozen=True):
    """A run to record: the next ordinals of the app thread are given in order."""

    provider_thread_id: str
    native_turn: int
    prompt: str
    status: RunStatus = RunStatus.COMPLETED
    started_at: datetime | None = None
    ended_at: datetime | None = None
    handoff_id: str | None = None


def _record(store: Store, what: str, thread_id: str, changes: Changes) -> None:
    """Record ``changes`` on the thread as it is now."""
    with store.writing(f"{what} {thread_id}") as connection:
        queries.lock_thread(connection, thread_id)
        graph = queries.load_graph(connection, thread_id)
        assert graph is not None
        changes.base_ordinal = max((r.ordinal for r in graph.runs), default=0)
        queries.record_changes(connection, thread_id, changes)


def add_provider_thread(
    store: Store,
    thread_id: str,
    *,
    provider: Provider,
    origin: str,
    native_id: str,
    path: str,
    native_turns: int,
    model: str | None,
    reason: str | None = None,
) -> str:
    """A new provider thread (its first revision, active); returns its id."""
    pt = ProviderThread(
        id=new_id(),
        thread_id=thread_id,
        provider=provider,
        origin=origin,
        native_id=native_id,
        path=path,
        native_turns=native_turns,
        status=ProviderThreadStatus.ACTIVE,
        model=model,
        version=1,
        reason=reason,
    )
    _record(store, "cannot record a provider thread of", thread_id, Changes(provider_threads=[pt]))
    return pt.id


def record_runs(store: Store, thread_id: str, new: Sequence[NewRun]) -> list[Run]:
    """Record runs as the app thread's next ordinals."""
    out: list[Run] = []
    with store.writing(f"cannot record runs of thread {thread_id}") as connection:
        queries.lock_thread(connection, thread_id)
        graph = queries.load_graph(connection, thread_id)
        assert graph is not None
        latest = max((r.ordinal for r in graph.runs), default=0)
        pts = {pt.id: pt.provider for pt in graph.provider_threads}
        for n, spec in enumerate(new, start=latest + 1):
            if spec.provider_thread_id not in pts:
                raise StoreError(
                    f"provider thread {spec.provider_thread_id} is not in thread {thread_id}"
                )
            out.append(
                Run(
                    thread_id=thread_id,
                    ordinal=n,
                    provider=pts[spec.provider_thread_id],
                    provider_thread_id=spec.provider_thread_id,
                    native_turn=spec.native_turn,
                    status=spec.status,
                    prompt=spec.prompt,
                    handoff_id=spec.handoff_id,
                    started_at=spec.started_at,
                    ended_at=spec.ended_at,
                )
            )
        queries.record_changes(connection, thread_id, Changes(base_ordinal=latest, runs=out))
    return out


def record_handoff(
    store: Store,
    thread_id: str,
    *,
    to_provider_thread_id: str,
    from_provider_threads: Sequence[str],
    covers: tuple[int, int],
    strategy: HandoffStrategy,
    form: HandoffForm,
    status: HandoffStatus = HandoffStatus.READY,
    **fields: Any,
) -> Handoff:
    """Record a handoff (one that replaces another names it in ``supersedes``)."""
    handoff = Handoff(
        id=new_id(),
        thread_id=thread_id,
        to_provider_thread_id=to_provider_thread_id,
        from_provider_threads=tuple(from_provider_threads),
        covers=covers,
        strategy=strategy,
        form=form,
        status=status,
        created_at=datetime.now(UTC),
        **fields,
    )
    _record(store, "cannot record a handoff of", thread_id, Changes(handoffs=[handoff]))
    return handoff


def record_decision(
    store: Store, thread_id: str, target: str, decision: Decision, facts: Facts
) -> None:
    """Record a decision with its reason and the facts it was made on."""
    record = DecisionRecord(
        target_provider=target,
        strategy=decision.strategy.value,
        form=None if decision.form is None else decision.form.value,
        reason=decision.reason,
        provider_thread_id=decision.provider_thread,
        covers=decision.covers,
        inputs={"facts": facts.to_json()},
    )
    _record(store, "cannot record a decision of", thread_id, Changes(decisions=[record]))
