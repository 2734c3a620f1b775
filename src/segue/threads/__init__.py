"""The app-thread graph: one conversation across providers, remembered, and checked against the
sessions on disk before every decision (the files are the truth; the store is their cache).

An app thread's runs are its typed prompts, whichever CLI ran them; each provider thread (a
native Claude Code or Codex session) holds some runs natively and was handed the others. The
graph lives in segue's store, append-only::

    from segue.store import open_store
    from segue.threads import ThreadStore, adopt, decide_move, sync

    with open_store() as store:
        graph = adopt(store, "01a22910")            # a native session becomes an app thread
        graph = sync(store, graph.thread.id).graph  # pick up turns typed in the CLI since
        decision = decide_move(store, graph.thread.id, Provider.CLAUDE)
        print(decision.strategy, decision.reason)

:func:`segue.threads.strategy.decide` is the pure decision and
:func:`segue.threads.reconcile.reconcile` the pure check against the disk; a switch carries a
decision out (:mod:`segue.switch`).
"""

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
from segue.threads.moves import decide_move
from segue.threads.repository import NewRun, ThreadStore
from segue.threads.strategy import Decision, Facts, Strategy, decide
from segue.threads.sync import SyncResult, adopt, sync

__all__ = [
    "AppThread",
    "Decision",
    "Facts",
    "Handoff",
    "HandoffForm",
    "HandoffStatus",
    "HandoffStrategy",
    "NewRun",
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
    "decide_move",
    "graph_to_json",
    "load_config",
    "provider_thread_names",
    "summary_to_json",
    "sync",
]
