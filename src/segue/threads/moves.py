"""Deciding a move of an app thread to a provider: sync, decide, record. The entry point the
switch uses (``segue switch`` and the fleet's ``--return`` call it before writing anything)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from segue.model.conversation import Provider
from segue.store import Store
from segue.threads.config import StalenessConfig, load_config
from segue.threads.repository import ThreadStore
from segue.threads.strategy import Decision, Facts, decide
from segue.threads.syncing import sync

__all__ = ["decide_move"]


def decide_move(
    store: Store,
    thread_id: str,
    target: Provider,
    facts: Facts | None = None,
    *,
    config: StalenessConfig | None = None,
    env: Mapping[str, str] | None = None,
) -> Decision:
    """Sync the thread, decide how to move it to ``target`` and record the decision with its
    reason. ``config`` defaults to the user's ``segue.toml``."""
    env = os.environ if env is None else env
    graph = sync(store, thread_id, env).graph
    facts = facts or Facts()
    decision = decide(graph, target.value, facts, config or load_config(env))
    ThreadStore(store).record_decision(thread_id, target.value, decision, facts)
    return decision
