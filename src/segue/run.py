"""``segue run``: one headless turn of an app thread on a provider, through the thread's
strategy, the way an orchestrator drives the thread.

The thread is synced with its files first (under its lock, held to the end), and its newest
run's provider thread is the source. A move to another provider is decided as ``segue switch``
decides it (no handoff, a native delta fork, or a new session); then the provider's CLI runs the
prompt headless on that session (``claude -p … --resume``, ``codex exec resume …``; the prompt
always after ``--``, so one starting with ``-`` is a prompt, never an option), and the thread is
synced again, which records the run: completed, or failed with the error that ended it (a usage
limit fails the run; it does not make the provider thread stale). A session its CLI is still
working on is not run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from segue.formats.files import is_regular
from segue.model.conversation import Provider
from segue.model.errors import SegueError
from segue.model.limits import looks_like_limit_text
from segue.providers import entry, known
from segue.providers.headless import run_headless
from segue.providers.sessions import SessionReads
from segue.running.agents import working_on
from segue.store import Store, open_store
from segue.switch import session_lock, switch_session, thread_lock
from segue.switch.fork import resolve_fork
from segue.switch.journal import open_recording
from segue.switch.result import ThreadMove
from segue.threads import ThreadStore, sync
from segue.threads.checkpoints import (
    RUN_THREAD_VARIABLE,
    Checkpoint,
    CheckpointKind,
    take_checkpoint,
)
from segue.threads.model import ProviderThread, ProviderThreadStatus, RunStatus, ThreadGraph
from segue.threads.syncing import thread_for

__all__ = ["RunResult", "run_turn"]

RUN_TIMEOUT = 3600.0


class RunResult(msgspec.Struct, frozen=True):
    thread_id: str
    provider: Provider
    session_id: str
    move: ThreadMove | None
    returncode: int
    output: str
    run_ordinal: int | None  # the run the turn became, once synced
    status: str | None = None  # completed / failed / working (None: no run was recorded)
    error: str | None = None  # why it failed (the limit, the CLI's error)
    warnings: tuple[str, ...] = ()
    checkpoint: Checkpoint | None = None  # the workspace as the run ended


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
    if not prompt.strip():
        raise SegueError("give a prompt to run (got an empty one)")
    if thread is not None and not thread.strip():
        raise SegueError("--thread names no thread (got an empty one)")
    env = dict(os.environ) if env is None else dict(env)
    cwd = cwd or os.getcwd()
    store, recorded = open_recording(env)
    with store:
        thread_id = thread_for(store, thread, cwd, env)
    with thread_lock(thread_id, env):  # 1. where the run goes: the thread as its files say
        with open_store(env=env) as store:
            synced = sync(store, thread_id, env, reads=SessionReads())
            graph = synced.graph
            warnings = [*recorded, *synced.notes]
            if not graph.live_runs and graph.thread.parent_thread_id is not None:
                # a fork's first run: its provider is chosen now, and its session written
                warnings += resolve_fork(
                    store, graph, provider or _fork_provider(store, graph), env
                )
                graph = sync(store, thread_id, env).graph
            if not graph.live_runs:
                raise SegueError(f"thread {thread_id} has no run to continue from")
            # the folder before this turn, if the last run has no checkpoint yet
            before = take_checkpoint(
                store, graph, env, CheckpointKind.APPROXIMATE, missing_only=True
            )
            if before.note and not before.existing:
                warnings.append(before.note)
        latest = graph.provider_thread(graph.live_runs[-1].provider_thread_id)
        try:
            source = known(latest.provider)
        except ValueError:
            raise SegueError(
                f"thread {thread_id}'s last run ran on {latest.provider.value!r}, a provider this "
                "segue does not know (a newer segue recorded it?)"
            ) from None
        target = provider or source
        e = entry(target)
        executable = e.executable(env)
        if executable is None:  # before anything is switched or written
            raise SegueError(e.not_installed())
        usable = latest.status is ProviderThreadStatus.ACTIVE and is_regular(Path(latest.path))
        if not usable:
            warnings.append(
                f"the session of the last run ({latest.native_id}) is not resumed: "
                f"{latest.reason or latest.status.value}"
            )
        origin = latest if usable else _on_disk(graph)
        if origin is None:
            raise SegueError(f"no session of thread {thread_id} is left on disk to go on from")
    move: ThreadMove | None = None
    if target is source and usable:
        session_id, session_cwd = latest.native_id, graph.thread.cwd or cwd
    else:  # 2. the move there, as a switch makes it (its own locks, in their order)
        switch = switch_session(str(origin.path), target, env=env, within=True)
        assert switch.session_id is not None and switch.path is not None
        move = switch.thread
        warnings += switch.warnings
        session_id, session_cwd = switch.session_id, switch.cwd
    # 3. the turn, holding the session's lock and then the thread's (the order every switch
    # takes them in), and what it did, recorded
    with session_lock(target, session_id, env), thread_lock(thread_id, env):
        with open_store(env=env) as store:
            now = sync(store, thread_id, env)
        warnings += [n for n in now.notes if n not in warnings]
        _refuse_mid_turn(now.graph, target, session_id, env)
        done = run_headless(
            e.headless_argv(executable, session_id, prompt), cwd=session_cwd,
            env={**env, RUN_THREAD_VARIABLE: thread_id},  # its hooks leave the checkpoint to us
            timeout=RUN_TIMEOUT,
        )  # fmt: skip
        if isinstance(done, str):
            raise SegueError(done)
        with open_store(env=env) as store:
            after = sync(store, thread_id, env)
            warnings += after.notes
            new = [r for r in after.new_runs if r.prompt.strip() == prompt.strip()]
            run = new[-1] if new else (after.new_runs[-1] if after.new_runs else None)
            output = done.stdout if done.returncode == 0 else (done.stderr or done.stdout)
            error = (run.note or None) if run is not None else None
            checkpoint = None
            if run is not None:  # the folder as the turn left it
                taken = take_checkpoint(
                    store, after.graph, env, CheckpointKind.EXACT, run=run.ordinal
                )
                checkpoint = taken.checkpoint
                if taken.note:
                    warnings.append(taken.note)
            if done.returncode != 0:
                limited = looks_like_limit_text(done.stdout) or looks_like_limit_text(done.stderr)
                if run is None and not limited:
                    _mark_failed_resume(store, after.graph, target, session_id, done.returncode)
                error = (
                    error
                    or _last_line(done.stderr or done.stdout)
                    or f"{target.value} ended with exit code {done.returncode}"
                )
    return RunResult(
        thread_id,
        target,
        session_id,
        move,
        done.returncode,
        output,
        None if run is None else run.ordinal,
        None if run is None else run.status.value,
        error,
        tuple(warnings),
        checkpoint,
    )


def _on_disk(graph: ThreadGraph) -> ProviderThread | None:
    """The newest active provider thread on disk that holds every run on the line (a session a
    rollback wrote at its run), else the provider thread of the newest run whose session is
    still on disk and on the line (a stale one is a source to go on from, never a session to
    resume)."""
    line = {r.ordinal for r in graph.live_runs}
    for pt in reversed(graph.provider_threads):
        whole = pt.status is ProviderThreadStatus.ACTIVE and line <= pt.coverage()
        if whole and is_regular(Path(pt.path)):
            return pt
    for run in reversed(graph.live_runs):
        pt = graph.provider_thread(run.provider_thread_id)
        off = pt.status in (ProviderThreadStatus.DIVERGENT, ProviderThreadStatus.MISSING)
        if is_regular(Path(pt.path)) and not off:
            return pt
    return None


def _fork_provider(store: Store, graph: ThreadGraph) -> Provider:
    """A fork's first run, with no provider asked for, runs where its source point ran."""
    assert graph.thread.parent_thread_id is not None
    parent = ThreadStore(store).graph(graph.thread.parent_thread_id)
    at = graph.thread.parent_run_ordinal
    runs = [r for r in parent.live_runs if at is None or r.ordinal <= at]
    if not runs:
        raise SegueError(f"thread {graph.thread.id} was forked from no run (give --provider)")
    try:
        return known(runs[-1].provider)
    except ValueError:
        raise SegueError(
            f"run {runs[-1].ordinal} ran on an unknown provider (give --provider)"
        ) from None


def _last_line(text: str) -> str | None:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else None


def _refuse_mid_turn(
    graph: ThreadGraph, provider: Provider, session_id: str, env: Mapping[str, str]
) -> None:
    """A session whose CLI is in the middle of a turn is not run: two turns at once would
    interleave in its file (and the run would be lost). The synced graph says whether its last
    run is unfinished; only then are the running agents looked at."""
    mine = {pt.id for pt in graph.provider_threads if pt.native_id == session_id}
    working = (r.provider_thread_id in mine and r.status is RunStatus.WORKING for r in graph.runs)
    if not any(working):
        return
    agent = working_on(provider, session_id, env=env)
    if agent is not None:
        raise SegueError(
            f"{provider.value} session {session_id} is mid-turn: {entry(provider).label} "
            f"(pid {agent.pid}) is still working on it; run the prompt when it has finished"
        )


def _mark_failed_resume(
    store: Store, graph: ThreadGraph, provider: Provider, session_id: str, code: int
) -> None:
    """A provider thread whose resume failed is stale: the next move there starts afresh."""
    for pt in graph.provider_threads:
        if pt.provider == provider.value and pt.native_id == session_id:
            ThreadStore(store).mark_provider_thread(
                graph.thread.id,
                pt.id,
                ProviderThreadStatus.STALE,
                f"resuming {session_id} failed (exit {code})",
            )
