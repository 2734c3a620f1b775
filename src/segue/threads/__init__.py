"""The app-thread graph: one conversation across providers, remembered, and checked against the
sessions on disk before every decision (the files are the truth; the store is their cache).

An app thread's runs are its typed prompts, whichever CLI ran them; each provider thread (a
native Claude Code or Codex session) holds some runs natively and was handed the others. The
graph lives in segue's store, append-only::

    from segue.store import open_store
    from segue.threads import Facts, adopt, decide, load_config, sync

    with open_store() as store:
        graph = adopt(store, "01a22910")            # a native session becomes an app thread
        graph = sync(store, graph.thread.id).graph  # pick up turns typed in the CLI since
        decision = decide(graph, "claude", Facts(), load_config())
        print(decision.strategy, decision.reason)

:func:`segue.threads.strategy.decide` is the pure decision and
:func:`segue.threads.reconcile.reconcile` the pure check against the disk; a switch carries a
decision out (:mod:`segue.switch`).

Each name is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from segue.support.lazy import lazy_names

if TYPE_CHECKING:
    from segue.threads.config import StalenessConfig, config_path, load_config
    from segue.threads.documents import (
        coverage_lines,
        graph_to_json,
        provider_thread_names,
        summary_to_json,
    )
    from segue.threads.model import (
        AppThread,
        Handoff,
        HandoffForm,
        HandoffStatus,
        HandoffStrategy,
        ProviderThread,
        ProviderThreadStatus,
        Run,
        RunStatus,
        ThreadGraph,
        ThreadSummary,
        Transfer,
    )
    from segue.threads.repository import ThreadStore
    from segue.threads.strategy import Decision, Facts, Strategy, decide
    from segue.threads.syncing import SyncResult, adopt, sync

_WHERE = {
    "AppThread": "segue.threads.model",
    "Decision": "segue.threads.strategy",
    "Facts": "segue.threads.strategy",
    "Handoff": "segue.threads.model",
    "HandoffForm": "segue.threads.model",
    "HandoffStatus": "segue.threads.model",
    "HandoffStrategy": "segue.threads.model",
    "ProviderThread": "segue.threads.model",
    "ProviderThreadStatus": "segue.threads.model",
    "Run": "segue.threads.model",
    "RunStatus": "segue.threads.model",
    "StalenessConfig": "segue.threads.config",
    "Strategy": "segue.threads.strategy",
    "SyncResult": "segue.threads.syncing",
    "ThreadGraph": "segue.threads.model",
    "ThreadStore": "segue.threads.repository",
    "ThreadSummary": "segue.threads.model",
    "Transfer": "segue.threads.model",
    "adopt": "segue.threads.syncing",
    "config_path": "segue.threads.config",
    "coverage_lines": "segue.threads.documents",
    "decide": "segue.threads.strategy",
    "graph_to_json": "segue.threads.documents",
    "load_config": "segue.threads.config",
    "provider_thread_names": "segue.threads.documents",
    "summary_to_json": "segue.threads.documents",
    "sync": "segue.threads.syncing",
}

__all__ = [
    "AppThread",
    "Decision",
    "Facts",
    "Handoff",
    "HandoffForm",
    "HandoffStatus",
    "HandoffStrategy",
    "ProviderThread",
    "ProviderThreadStatus",
    "Run",
    "RunStatus",
    "StalenessConfig",
    "Strategy",
    "SyncResult",
    "ThreadGraph",
    "ThreadStore",
    "ThreadSummary",
    "Transfer",
    "adopt",
    "config_path",
    "coverage_lines",
    "decide",
    "graph_to_json",
    "load_config",
    "provider_thread_names",
    "summary_to_json",
    "sync",
]

__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
