"""``segue run``: one headless turn of an app thread on a provider, through the thread's
strategy, the way an orchestrator drives the thread.

The thread's provider thread of its newest run is the source; the move to the provider asked
for is decided as ``segue switch`` decides it (no handoff, a native delta fork, or a new
session); then the provider's CLI runs the prompt headless on that session (``claude -p …
--resume``, ``codex exec resume …``), and the thread is synced, which records the run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from segue.conversation import Provider
from segue.errors import SegueError, SessionError, StoreError
from segue.providers import entry
from segue.providers.headless import run_headless
from segue.thread_switch import ThreadMove, switch_in_thread

if TYPE_CHECKING:
    from segue.threads import ThreadStore

__all__ = ["RunResult", "run_turn"]

RUN_TIMEOUT = 3600.0


@dataclass(frozen=True, slots=True)
class RunResult:
    thread_id: str
    provider: Provider
    session_id: str
    move: ThreadMove | None
    returncode: int
    output: str
    run_ordinal: int | None  # the run the turn became, once synced


def run_turn(
    prompt: str,
    *,
    thread: str | None = None,
    provider: Provider | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> RunResult:
    """Run ``prompt`` as the next run of ``thread`` (a thread id or prefix, or a session it
    holds; default: the thread of the newest session in ``cwd``) on ``provider`` (default: the
    provider of its newest run)."""
    from segue.store import open_store
    from segue.threads import ThreadStore, sync

    if not prompt.strip():
        raise SegueError("give a prompt to run (got an empty one)")
    env = dict(os.environ) if env is None else dict(env)
    cwd = cwd or os.getcwd()
    with open_store(env=env) as store:
        thread_id = _thread_id(ThreadStore(store), thread, cwd, env)
        graph = sync(store, thread_id, env).graph
        if not graph.live_runs:
            raise SegueError(f"thread {thread_id} has no run to continue from")
        latest = graph.provider_thread(graph.live_runs[-1].provider_thread_id)
        source = Provider(latest.provider)
    target = provider or source
    move: ThreadMove | None = None
    if target is source:
        session_id, session_cwd = latest.native_id, graph.thread.cwd or cwd
    else:
        switch, move = switch_in_thread(latest.native_id, target, env=env)
        assert switch.session_id is not None
        session_id, session_cwd = switch.session_id, switch.cwd
    e = entry(target)
    executable = e.executable(env)
    if executable is None:
        raise SegueError(e.not_installed())
    done = run_headless(
        e.headless_argv(executable, session_id, prompt), cwd=session_cwd, env=env,
        timeout=RUN_TIMEOUT,
    )  # fmt: skip
    if isinstance(done, str):
        raise SegueError(done)
    with open_store(env=env) as store:
        synced = sync(store, thread_id, env).graph
        if done.returncode != 0:
            _mark_failed_resume(store, synced, target, session_id, done.returncode)
    ordinal = synced.live_runs[-1].ordinal if len(synced.live_runs) > len(graph.live_runs) else None
    output = done.stdout if done.returncode == 0 else (done.stderr or done.stdout)
    return RunResult(thread_id, target, session_id, move, done.returncode, output, ordinal)


def _thread_id(threads: ThreadStore, ref: str | None, cwd: str, env: Mapping[str, str]) -> str:
    """The thread ``ref`` names (a thread, or a session it holds, adopted if need be), or the
    thread of the newest session in ``cwd``."""
    from segue.threads import adopt

    if ref:
        try:
            return threads.resolve(ref)
        except StoreError:
            held = threads.thread_holding(ref)
        if held is not None:
            return held
        try:
            return adopt(threads.store, ref, env).thread.id
        except SessionError as error:
            raise SessionError(f"no thread {ref}, and {error}") from None
    from segue.sessions import list_sessions

    rows = list_sessions(None, cwd, env).sessions
    if not rows:
        raise SegueError(f"no session in {cwd} to continue (name one with --thread)")
    return adopt(threads.store, str(Path(rows[0].path)), env).thread.id


def _mark_failed_resume(
    store: object, graph: object, provider: Provider, session_id: str, code: int
) -> None:
    """A provider thread whose resume failed is stale: the next move there starts afresh."""
    from segue.store import Store
    from segue.threads import ProviderThreadStatus, ThreadGraph, ThreadStore

    assert isinstance(store, Store) and isinstance(graph, ThreadGraph)
    for pt in graph.provider_threads:
        if pt.provider == provider.value and pt.native_id == session_id:
            ThreadStore(store).mark_provider_thread(
                graph.thread.id,
                pt.id,
                ProviderThreadStatus.STALE,
                f"resuming {session_id} failed (exit {code})",
            )
