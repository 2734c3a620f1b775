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

if TYPE_CHECKING:  # (``X as X``: each name is exported)
    from segue.threads.config import StalenessConfig as StalenessConfig
    from segue.threads.config import load_config as load_config
    from segue.threads.documents import coverage_lines as coverage_lines
    from segue.threads.documents import graph_to_json as graph_to_json
    from segue.threads.documents import provider_thread_names as provider_thread_names
    from segue.threads.documents import summary_to_json as summary_to_json
    from segue.threads.model import AppThread as AppThread
    from segue.threads.model import Handoff as Handoff
    from segue.threads.model import HandoffForm as HandoffForm
    from segue.threads.model import HandoffStatus as HandoffStatus
    from segue.threads.model import HandoffStrategy as HandoffStrategy
    from segue.threads.model import ProviderThread as ProviderThread
    from segue.threads.model import ProviderThreadStatus as ProviderThreadStatus
    from segue.threads.model import Run as Run
    from segue.threads.model import RunStatus as RunStatus
    from segue.threads.model import ThreadGraph as ThreadGraph
    from segue.threads.repository import ThreadStore as ThreadStore
    from segue.threads.strategy import Facts as Facts
    from segue.threads.strategy import Strategy as Strategy
    from segue.threads.strategy import decide as decide
    from segue.threads.syncing import adopt as adopt
    from segue.threads.syncing import sync as sync

_WHERE = {
    name: f"segue.threads.{module}"
    for module, names in {
        "config": "StalenessConfig load_config",
        "documents": "coverage_lines graph_to_json provider_thread_names summary_to_json",
        "model": "AppThread Handoff HandoffForm HandoffStatus HandoffStrategy ProviderThread "
        "ProviderThreadStatus Run RunStatus ThreadGraph",
        "repository": "ThreadStore",
        "strategy": "Facts Strategy decide",
        "syncing": "adopt sync",
    }.items()
    for name in names.split()
}

__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
