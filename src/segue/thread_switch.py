"""``segue switch`` inside the app-thread graph: the source session's app thread is adopted (or
found), synced, and the seed's strategy decides how the move to the target provider is made.

- ``no_handoff``: the target's provider thread already holds every run: its session is resumed
  as it is, and nothing is written;
- ``delta_into_existing``: only the runs it missed are carried, after its own native history
  (encrypted reasoning, signatures, compactions kept), in a native fork of its session (never
  written into a file a live CLI may hold): as native items when they fit the target's budget
  unshrunk, else as a summary of them (``form=summary``);
- ``full_into_existing``: the same fork, carrying a summary of the whole thread;
- ``full_into_new``: today's switch, and the new session is recorded as the target's provider
  thread with the handoff (the whole thread as native items) and the transfer;
- ``unsupported``: refused, with the reason.

A summary is segue's deterministic one unless ``--summary-by`` names a provider to write it
(:mod:`segue.summaries`). When segue's store cannot be used, the switch is made as before and a
warning says that it was not recorded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from segue.conversation import Conversation, Provider
from segue.errors import SegueError, SwitchError
from segue.providers import default_target, entry
from segue.sessions import find_session, read_session
from segue.switch import Switch, plan_switch, switch_session
from segue.threads.model import ThreadGraph
from segue.threads.strategy import Decision
from segue.transforms.handoff_summary import DEFAULT_MAX_CHARS, summarize_runs

__all__ = ["ThreadMove", "switch_in_thread"]


@dataclass(frozen=True, slots=True)
class ThreadMove:
    """How a switch moved its app thread (``segue switch --json`` → ``"thread"``)."""

    thread_id: str
    strategy: str
    reason: str
    provider_thread: str | None  # the target's provider thread after the move
    handoff_id: str | None = None
    covers: tuple[int, int] | None = None
    form: str | None = None
    created_by_provider: str | None = None  # who wrote a summary handoff (None: segue)


def switch_in_thread(
    ref: str,
    to: Provider | None = None,
    *,
    dry_run: bool = False,
    clean: bool = False,
    env: Mapping[str, str] | None = None,
    need_cwd: bool = False,
    redact_secrets: bool = False,
    summary_by: str | None = None,
) -> tuple[Switch, ThreadMove | None]:
    """Switch a session as its app thread's strategy decides (see the module docstring).
    ``summary_by`` (claude, codex, left, entered) asks that provider's CLI to write a
    summary-form handoff; by default segue writes it."""
    env = dict(os.environ) if env is None else dict(env)
    provider, path = find_session(ref, env)
    to = default_target(provider) if to is None else to
    if provider is to:
        raise SwitchError(f"{path} is already a {to.value} session")
    try:
        from segue.store import open_store

        store = open_store(env=env)
    except SegueError as exc:
        switch = switch_session(
            str(path), to, dry_run=dry_run, env=env, need_cwd=need_cwd,
            redact_secrets=redact_secrets,
        )  # fmt: skip
        switch.warnings.append(f"not recorded in the app-thread graph: {exc}")
        return switch, None
    with store:
        return _move(store, path, to, dry_run, clean, env, need_cwd, redact_secrets, summary_by)


def _move(
    store: object,
    path: Path,
    to: Provider,
    dry_run: bool,
    clean: bool,
    env: dict[str, str],
    need_cwd: bool,
    redact_secrets: bool,
    summary_by: str | None,
) -> tuple[Switch, ThreadMove | None]:
    from segue.store import Store
    from segue.threads import (
        Facts,
        Strategy,
        ThreadStore,
        adopt,
        decide,
        load_config,
        sync,
    )

    assert isinstance(store, Store)
    graph = adopt(store, str(path), env)
    thread_id = graph.thread.id
    config = load_config(env)
    synced = sync(store, thread_id, env).graph
    facts = Facts(clean=clean, model_changed=_model_changed(synced, to, env))
    source = read_session(path)
    cwd = graph.thread.cwd or source.meta.cwd or os.getcwd()
    decision = decide(synced, to.value, facts, config)
    delta = decision.strategy is Strategy.DELTA_INTO_EXISTING and decision.covers is not None
    if delta and not _fits_natively(synced, decision, source, to, env, cwd):
        facts = replace(facts, delta_fits_natively=False)
        decision = decide(synced, to.value, facts, config)
    if not dry_run:
        ThreadStore(store).record_decision(thread_id, to.value, decision, facts)
    strategy, reason = decision.strategy, decision.reason

    if strategy is Strategy.UNSUPPORTED:
        raise SwitchError(f"{path}: cannot move to {to.value}: {reason}")

    if strategy is Strategy.NO_HANDOFF and decision.provider_thread is not None:
        held = graph.provider_thread(decision.provider_thread)
        nothing = Conversation(meta=source.meta)
        plan = plan_switch(nothing, to, env=env, cwd=cwd)
        plan.notes.append(f"nothing to carry: {reason}")
        switch = Switch(source, path, to, plan, cwd, held.native_id, Path(held.path))
        return switch, ThreadMove(thread_id, strategy.value, reason, held.id)

    into_existing = (Strategy.DELTA_INTO_EXISTING, Strategy.FULL_INTO_EXISTING)
    if strategy in into_existing and decision.covers is not None:
        if dry_run:
            first, last = decision.covers
            nothing = Conversation(meta=source.meta)
            plan = plan_switch(nothing, to, env=env, cwd=cwd)
            form = decision.form.value if decision.form is not None else None
            plan.notes.append(f"runs {first}-{last} would be carried into the target's session")
            preview = ThreadMove(
                thread_id, strategy.value, reason, decision.provider_thread, None,
                decision.covers, form,
            )  # fmt: skip
            return Switch(source, path, to, plan, cwd), preview
        return _into_existing(
            store, thread_id, decision, source, path, to, cwd, env, redact_secrets, summary_by
        )

    note = None
    if strategy is not Strategy.FULL_INTO_NEW:
        note = f"{strategy.value} is shown as a new session in a dry run ({reason})"
    switch = switch_session(
        str(path), to, dry_run=dry_run, env=env, need_cwd=need_cwd, redact_secrets=redact_secrets
    )
    if note:
        switch.plan.notes.append(note)
    if dry_run or switch.session_id is None or switch.path is None:
        return switch, ThreadMove(thread_id, strategy.value, reason, None)
    return switch, _record_new(store, thread_id, switch, reason, env)


def _model_changed(graph: object, to: Provider, env: Mapping[str, str]) -> bool:
    """Whether the model the user's CLI for ``to`` would run now differs from the one its
    provider thread ran (a Codex thread's encrypted reasoning is its model's; another model is a
    context to start afresh). Unknown on either side: not changed."""
    from segue.threads import ProviderThreadStatus, ThreadGraph

    assert isinstance(graph, ThreadGraph)
    mine = [
        pt
        for pt in graph.provider_threads
        if pt.provider == to.value and pt.status is ProviderThreadStatus.ACTIVE
    ]
    recorded = {_model_name(pt.model) for pt in mine if pt.model}
    if not recorded:
        return False
    try:
        now = entry(to).target_profile(env, graph.thread.cwd).model
    except SegueError:
        return False
    return now is not None and _model_name(now) not in recorded


def _model_name(model: str) -> str:
    """A model id without the spellings that do not change the model (``[1m]``, a date)."""
    base = model.strip().lower().removesuffix("[1m]")
    head, _, tail = base.rpartition("-")
    return head if tail.isdigit() and len(tail) == 8 else base


def _record_new(
    store: object, thread_id: str, switch: Switch, reason: str, env: Mapping[str, str]
) -> ThreadMove:
    """Record a switch that wrote a new session: the target's new provider thread, the transfer,
    and the handoff (the whole thread, as native items)."""
    from segue.store import Store
    from segue.threads import HandoffForm, HandoffStrategy, Strategy, ThreadStore, sync
    from segue.threads.native import native_turns

    assert isinstance(store, Store) and switch.session_id is not None
    assert switch.path is not None and switch.source_path is not None
    path, source, to = switch.source_path, switch.source, switch.target
    fresh = sync(store, thread_id, env).graph
    source_id = entry(source.meta.provider).session_id(path)
    source_pt = next(
        (pt for pt in fresh.provider_threads if pt.native_id == source_id or Path(pt.path) == path),
        None,
    )
    threads = ThreadStore(store)
    turns = len(native_turns(read_session(switch.path)))
    new_pt = threads.add_provider_thread(
        thread_id,
        provider=to.value,
        origin="switch",
        native_id=switch.session_id,
        path=str(switch.path),
        native_turns=turns,
        model=switch.plan.target.model,
        reason=f"switched from {switch.source.meta.provider.value} {switch.source.meta.id}",
    )
    last = max((r.ordinal for r in fresh.live_runs), default=0)
    transfer = threads.record_transfer(
        thread_id,
        type="switch",
        source_provider_thread_id=None if source_pt is None else source_pt.id,
        target_provider_thread_id=new_pt,
        source_run_ordinal=last,
        resolution=Strategy.FULL_INTO_NEW.value,
        status="done",
    )
    handoff = threads.record_handoff(
        thread_id,
        to_provider_thread_id=new_pt,
        from_provider_threads=[] if source_pt is None else [source_pt.id],
        covers=(1, last) if last else (0, 0),
        strategy=HandoffStrategy.FULL_THREAD_SUMMARY,
        form=HandoffForm.NATIVE_ITEMS,
        transfer_id=transfer.id,
        target_run_ordinal=last + 1,
    )
    move = ThreadMove(
        thread_id,
        Strategy.FULL_INTO_NEW.value,
        reason,
        new_pt,
        handoff.id,
        (1, last) if last else None,
        HandoffForm.NATIVE_ITEMS.value,
    )
    return move


def record_switch(switch: Switch, env: Mapping[str, str] | None = None) -> ThreadMove | None:
    """Record in the app-thread graph a switch made without deciding (a fleet's batch): the
    source's thread adopted or found, the decision (``full_into_new``) and the new provider
    thread. A store that cannot be used becomes a warning on the switch."""
    if switch.session_id is None or switch.source_path is None:
        return None
    env = dict(os.environ) if env is None else dict(env)
    try:
        from segue.store import open_store
        from segue.threads import Decision, Facts, Strategy, ThreadStore, adopt

        with open_store(env=env) as store:
            thread_id = adopt(store, str(switch.source_path), env).thread.id
            reason = "moved with its fleet"
            decision = Decision(Strategy.FULL_INTO_NEW, reason, None, None, None)
            ThreadStore(store).record_decision(thread_id, switch.target.value, decision, Facts())
            return _record_new(store, thread_id, switch, reason, env)
    except SegueError as exc:
        switch.warnings.append(f"not recorded in the app-thread graph: {exc}")
        return None


def _fits_natively(
    graph: ThreadGraph,
    decision: Decision,
    source: Conversation,
    to: Provider,
    env: Mapping[str, str],
    cwd: str,
) -> bool:
    """Whether the runs the decision covers fit the target's budget as native items (their plan
    shrinks nothing, and is within the budget)."""
    from segue.threads.delta import delta_items
    from segue.transforms.plan import Label

    assert decision.covers is not None
    missed = Conversation(meta=source.meta, items=delta_items(graph, decision.covers, env))
    plan = plan_switch(missed, to, env=env, cwd=cwd)
    return plan.label is not Label.SHRUNK and plan.chars_after <= plan.target.budget_chars


def _into_existing(
    store: object,
    thread_id: str,
    decision: Decision,
    source: Conversation,
    path: Path,
    to: Provider,
    cwd: str,
    env: dict[str, str],
    redact_secrets: bool,
    summary_by: str | None,
) -> tuple[Switch, ThreadMove]:
    """Strategies 2 and 3: a fork of the target's own session carrying the runs it missed, as
    native items or as a summary (of those runs, or of the whole thread)."""
    from segue.store import Store
    from segue.summaries import write_summary
    from segue.threads import HandoffForm, sync
    from segue.threads.delta import carry_delta, delta_items

    assert isinstance(store, Store) and decision.covers is not None
    first, last = decision.covers
    items = delta_items(sync(store, thread_id, env).graph, decision.covers, env)
    notes: list[str] = []
    if decision.form is HandoffForm.SUMMARY:
        digest = summarize_runs(items, max_chars=DEFAULT_MAX_CHARS, first_run=first)
        written = write_summary(
            digest, by=summary_by, left=source.meta.provider, entered=to, env=env
        )
        carried = carry_delta(
            store,
            thread_id,
            decision,
            env=env,
            now=datetime.now(UTC),
            summary=written.text,
            created_by_provider=written.created_by_provider,
        )
        plan = plan_switch(Conversation(meta=source.meta), to, env=env, cwd=cwd)
        by = written.created_by_provider or "segue"
        notes += written.notes
        notes.append(
            f"runs {first}-{last} carried as a summary ({len(written.text):,} chars, by {by})"
        )
    else:
        missed = Conversation(meta=source.meta, items=items)
        plan = plan_switch(missed, to, env=env, cwd=cwd, redact_secrets=redact_secrets)
        carried = carry_delta(store, thread_id, decision, env=env, now=datetime.now(UTC))
        notes.append(f"runs {first}-{last} carried as native items after the target's own history")
        if summary_by is not None:
            notes.append("--summary-by is not used: the runs fit as native items")
    plan.notes += notes
    switch = Switch(source, path, to, plan, cwd)
    switch.session_id, switch.path = carried.session.session_id, carried.session.path
    switch.warnings = list(carried.warnings)
    move = ThreadMove(
        thread_id,
        decision.strategy.value,
        decision.reason,
        decision.provider_thread,
        carried.handoff.id,
        decision.covers,
        carried.handoff.form.value,
        carried.handoff.created_by_provider,
    )
    return switch, move
