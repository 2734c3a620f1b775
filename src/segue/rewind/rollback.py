"""``segue rollback``: a thread taken back to run N, its files and its context together.

1. **Preview** (:func:`plan_rollback`, reading only): what changes on disk (files restored,
   removed, recreated, and what is left as it is), and in the graph (the runs rolled back, the
   handoffs superseded, each provider thread copied at run N or made divergent). Refused while
   an agent is at work on the thread.
2. **Safety snapshot**: the folder as it is now, edits since the last checkpoint included, so
   that ``segue rollback --undo`` puts it back; changes no checkpoint covers need the user's
   confirmation.
3. **Graph**: the rollback's record with the runs after N rolled back, the handoffs carrying
   them superseded, the provider threads holding them divergent (one transaction). From here on
   an interrupted rollback (kill -9) is undone by ``--undo``.
4. **Files**: the folder made byte for byte checkpoint N.
5. **Copies**: for each provider whose session held rolled-back runs, a new session holding runs
   1..N only (as ``segue switch --clean`` writes it), which its CLI resumes; where one cannot be
   written, the provider thread stays divergent and the next run there starts a new one.

``--files-only`` does steps 2 and 4; ``--context-only`` steps 3 and 5.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec
from msgspec.structs import replace

from segue.formats.files import is_regular
from segue.model.conversation import Provider
from segue.model.errors import CheckpointError, SegueError
from segue.rewind.access import read_thread, synced_thread
from segue.running.agents import list_agents
from segue.store import Store
from segue.support.text import quoted
from segue.switch import switch_session
from segue.threads.checkpoints import (
    Checkpoint,
    CheckpointKind,
    list_checkpoints,
    no_checkpoint,
    run_checkpoint,
    take_checkpoint,
)
from segue.threads.model import (
    ProviderThread,
    ProviderThreadStatus,
    Rollback,
    RunStatus,
    ThreadGraph,
)
from segue.threads.reconcile import Changes
from segue.threads.rollbacks import (
    finish_changes,
    record_rollback,
    rollback_changes,
    undo_changes,
)
from segue.workspace.changes import Skipped
from segue.workspace.restore import FileAction, preview, restore
from segue.workspace.snapshot import Workspace, is_commit, locate

__all__ = [
    "Copy",
    "RollbackDone",
    "RollbackPlan",
    "plan_rollback",
    "plan_undo",
    "rollback",
    "undo_rollback",
]


class Copy(msgspec.Struct, frozen=True):
    """A session written at run N for a provider whose session held rolled-back runs."""

    provider: Provider
    session_id: str | None
    path: str | None
    resume_command: str | None
    problem: str | None = None  # why none was written


class RollbackPlan(msgspec.Struct, frozen=True):
    thread_id: str
    to_run: int
    files: bool
    context: bool
    folder: str | None
    target: Checkpoint | None  # the checkpoint of run N (files)
    actions: tuple[FileAction, ...] = ()  # what changes on disk
    left: tuple[Skipped, ...] = ()  # what is left as it is on disk, and why
    uncovered: tuple[FileAction, ...] = ()  # changes no checkpoint covers (kept by the safety)
    runs: tuple[int, ...] = ()  # rolled back
    handoffs: tuple[str, ...] = ()  # superseded
    provider_threads: tuple[tuple[str, Provider, str], ...] = ()  # (id, provider, what happens)
    undo: bool = False
    refused: str | None = None  # why it cannot be done now (an agent at work on the thread)
    undoes: str | None = None  # (an undo) the rollback, undo or redo it undoes
    redo: bool = False  # (an undo) it undoes an undo: the runs it put back are rolled back again


class RollbackDone(msgspec.Struct, frozen=True):
    plan: RollbackPlan
    rollback_id: str
    safety: Checkpoint | None
    done: tuple[FileAction, ...] = ()
    failed: tuple[Skipped, ...] = ()
    copies: tuple[Copy, ...] = ()
    notes: tuple[str, ...] = ()


def _env(env: Mapping[str, str] | None) -> dict[str, str]:
    return dict(os.environ) if env is None else dict(env)


def _scope(files: bool, context: bool) -> str:
    return "files+context" if files and context else ("files" if files else "context")


def _working(graph: ThreadGraph, env: Mapping[str, str]) -> str | None:
    """Why the thread cannot be rolled back now: an agent in the middle of a turn of it."""
    if any(r.status is RunStatus.WORKING for r in graph.live_runs):
        mine = {pt.native_id for pt in graph.provider_threads}
        try:
            agents = list_agents(env)
        except (OSError, SegueError):
            agents = []
        for agent in agents:
            if agent.session_id in mine and agent.state.value == "working":
                return (
                    f"{agent.provider.value} (pid {agent.pid}) is in the middle of a turn of "
                    f"session {agent.session_id}: roll back when it has finished"
                )
    return None


def _plan(
    graph: ThreadGraph,
    found: list[Checkpoint],
    to_run: int,
    files: bool,
    context: bool,
    env: Mapping[str, str],
    *,
    create: bool = True,
) -> RollbackPlan:
    live = [r.ordinal for r in graph.live_runs]
    if not live:
        raise SegueError(f"thread {graph.thread.id} has no run to roll back to")
    if to_run not in live:
        raise SegueError(
            f"thread {graph.thread.id} has no run {to_run} on its line (its runs: "
            f"{live[0]}-{live[-1]})"
            if to_run < 1 or to_run > live[-1]
            else f"run {to_run} of thread {graph.thread.id} is not on its line (rolled back, or "
            "parallel work)"
        )
    folder = graph.thread.cwd
    target = None
    actions: list[FileAction] = []
    left: list[Skipped] = []
    uncovered: list[FileAction] = []
    if files:
        if not folder:
            raise SegueError(f"thread {graph.thread.id}'s folder is not known: --context-only?")
        ws = locate(folder, env, create=create)
        target = run_checkpoint(found, str(ws.folder), to_run)
        if target is None:
            why = no_checkpoint(found, graph.thread.id, to_run, "no checkpoint")
            raise SegueError(f"{why}: --context-only rolls back the conversation alone")
        _check_there(ws, target, f"the checkpoint of run {to_run}")
        actions, left = preview(ws, target.commit_id, left_out=target.skipped)
        here = str(ws.folder)
        mine = [c for c in found if c.kind is not CheckpointKind.SAFETY and c.folder == here]
        if mine and is_commit(ws, mine[-1].commit_id):  # the latest: what it does not cover
            uncovered, _ = preview(ws, mine[-1].commit_id)
    rollback_record, _ = rollback_changes(graph, to_run, scope=_scope(files, context))
    held = "run 1" if to_run == 1 else f"runs 1-{to_run}"
    what = [
        (pt_id, graph.provider_thread(pt_id).provider, f"divergent; a new session holds {held}")
        for pt_id, _ in (rollback_record.provider_threads if context else ())
    ]
    return RollbackPlan(
        graph.thread.id,
        to_run,
        files,
        context,
        folder,
        target,
        tuple(actions),
        tuple(left),
        tuple(uncovered),
        tuple(n for n, _ in rollback_record.runs) if context else (),
        rollback_record.handoffs if context else (),
        tuple(what),
        refused=_working(graph, env),
    )


def plan_rollback(
    ref: str | None,
    to_run: int,
    *,
    files: bool = True,
    context: bool = True,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> RollbackPlan:
    """What rolling the thread ``ref`` names (default: this folder's) back to run ``to_run``
    would change; nothing is written."""
    env = _env(env)
    graph, found = read_thread(ref, cwd, env, "nothing to roll back")
    return _plan(graph, found, to_run, files, context, env, create=False)


def rollback(
    ref: str | None,
    to_run: int,
    *,
    files: bool = True,
    context: bool = True,
    confirmed: bool = False,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> RollbackDone:
    """Roll the thread back to run ``to_run``. ``confirmed``: the user saw the preview and said
    yes (changes no checkpoint covers are then kept by the safety snapshot)."""
    env = _env(env)
    if not confirmed:
        raise SegueError("a rollback changes files and the thread: confirm it (--yes)")
    notes: list[str] = []
    with synced_thread(ref, cwd, env) as (store, synced):
        notes += synced.notes
        graph = synced.graph
        thread_id = graph.thread.id
        found = list_checkpoints(store, thread_id)
        plan = _plan(graph, found, to_run, files, context, env)
        none = f"no safety snapshot of {plan.folder}, so no rollback"
        safety = _safety(store, graph, plan, env, none if files else None)
        source = _copy_source(graph, to_run) if context else None
        later = frozenset({source.id}) if source is not None else frozenset()
        record, changes = rollback_changes(
            graph,
            to_run,
            scope=_scope(files, context),
            safety_checkpoint_id=None if safety is None else safety.id,
            target_checkpoint_id=None if plan.target is None else plan.target.id,
            later=later,
            only=None if context else frozenset(),  # (files only: no run rolled back)
        )
        record_rollback(store, graph, record, changes)
        done, failed = _restore(plan, safety, env, notes)
    copies: list[Copy] = []
    if context and record.provider_threads:
        copies = _copies(graph, record.provider_threads, source, to_run, env)
        with synced_thread(thread_id, cwd, env) as (store, synced):
            record_rollback(store, synced.graph, None, finish_changes(synced.graph, record))
    return RollbackDone(plan, record.id, safety, done, failed, tuple(copies), tuple(notes))


def _copy_source(graph: ThreadGraph, to_run: int) -> ProviderThread | None:
    """The session copies at run N are made from: the one of run N (or, gone, the newest
    session of the thread still on disk that holds runs 1..N)."""
    runs = {r.ordinal: r for r in graph.runs}
    candidates = [graph.provider_thread(runs[to_run].provider_thread_id)]
    candidates += [
        pt for pt in reversed(graph.provider_threads) if set(range(1, to_run + 1)) <= pt.coverage()
    ]
    for pt in candidates:
        usable = pt.status not in (ProviderThreadStatus.DIVERGENT, ProviderThreadStatus.MISSING)
        if usable and is_regular(Path(pt.path)):
            return pt
    return None


def _copies(
    graph: ThreadGraph,
    marked: tuple[tuple[str, str], ...],
    source: ProviderThread | None,
    to_run: int,
    env: Mapping[str, str],
) -> list[Copy]:
    """A session at run N for each provider whose session held rolled-back runs."""
    providers = dict.fromkeys(graph.provider_thread(pt_id).provider for pt_id, _ in marked)
    out: list[Copy] = []
    for provider in providers:
        if source is None:
            out.append(Copy(provider, None, None, None, "no session of the thread is on disk"))
            continue
        try:
            switch = switch_session(
                source.path, provider, clean=True, within=True, env=env, checkpoint=False
            )
        except SegueError as exc:
            out.append(Copy(provider, None, None, None, " ".join(str(exc).split())))
            continue
        out.append(
            Copy(
                provider,
                switch.session_id,
                None if switch.path is None else str(switch.path),
                switch.resume_command if switch.session_id else None,
            )
        )
    return out


def _safety(
    store: Store, graph: ThreadGraph, plan: RollbackPlan, env: Mapping[str, str], none: str | None
) -> Checkpoint | None:
    """Refused while an agent is at work on the thread; then a safety snapshot of its folder as
    it is now (``none``: what to say when none can be taken; None: no snapshot)."""
    if plan.refused is not None:
        raise SegueError(plan.refused)
    if none is None:
        return None
    taken = take_checkpoint(store, graph, env, CheckpointKind.SAFETY)
    if taken.checkpoint is None:
        raise CheckpointError(f"{none}: {taken.note}")
    return taken.checkpoint


def _restore(
    plan: RollbackPlan, safety: Checkpoint | None, env: Mapping[str, str], notes: list[str]
) -> tuple[tuple[FileAction, ...], tuple[Skipped, ...]]:
    """The plan's folder made its target (what ``safety`` or the target left out kept as it
    is): what was done and what failed; what was left as it is goes to ``notes``. Nothing
    without a safety snapshot (files left alone)."""
    target = plan.target
    if plan.folder is None or target is None or safety is None:
        return (), ()
    keep = (*safety.skipped, *target.skipped)
    restored = restore(locate(plan.folder, env), target.commit_id, safety.commit_id, keep=keep)
    notes += [f"{quoted(s.path)}: left as it is ({s.reason})" for s in restored.left]
    return restored.done, restored.failed


def _last_in_force(graph: ThreadGraph) -> Rollback:
    """The newest rollback, undo or redo of the thread in force: what ``--undo`` undoes."""
    force = graph.in_force
    last = next((record for record in reversed(graph.rollbacks) if record.id in force), None)
    if last is None:
        raise SegueError(f"thread {graph.thread.id} has no rollback to undo")
    return last


def _undo_preview(
    graph: ThreadGraph, last: Rollback, before: Checkpoint | None, env: Mapping[str, str]
) -> RollbackPlan:
    """What undoing ``last`` would do: the folder back to ``before`` (the safety snapshot
    ``last`` took), and its runs put back (or, for an undo, rolled back again)."""
    actions: list[FileAction] = []
    left: list[Skipped] = []
    if before is not None:
        ws = locate(before.folder, env, create=False)
        what = f"the safety snapshot of rollback {last.id}"
        _check_there(ws, before, what, then=": nothing was undone")
        actions, left = preview(ws, before.commit_id, left_out=before.skipped)
    redo = graph.undoing(last)
    return RollbackPlan(
        graph.thread.id,
        last.to_run,
        before is not None,
        bool(last.runs),
        None if before is None else before.folder,
        before,
        tuple(actions),
        tuple(left),
        runs=tuple(n for n, _ in last.runs),
        handoffs=() if redo else last.handoffs,
        undo=True,
        refused=_working(graph, env),
        undoes=last.id,
        redo=redo,
    )


def _check_there(ws: Workspace, checkpoint: Checkpoint, what: str, then: str = "") -> None:
    """Refused in one line when ``checkpoint``'s commit is gone from its repository."""
    if not is_commit(ws, checkpoint.commit_id):
        raise SegueError(
            f"{what} ({checkpoint.commit_id[:12]}) is gone from {checkpoint.repository} (its ref "
            f"{checkpoint.ref} was deleted, then git gc removed it){then}"
        )


def plan_undo(
    ref: str | None, *, cwd: str | None = None, env: Mapping[str, str] | None = None
) -> RollbackPlan:
    """What ``segue rollback --undo`` would do to the thread ``ref`` names (default: this
    folder's); nothing is written."""
    env = _env(env)
    graph, checkpoints = read_thread(ref, cwd, env, "nothing to undo")
    found = {c.id: c for c in checkpoints}
    last = _last_in_force(graph)
    return _undo_preview(graph, last, found.get(last.safety_checkpoint_id or ""), env)


def undo_rollback(
    ref: str | None,
    *,
    confirmed: bool = False,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> RollbackDone:
    """Undo the thread's newest rollback, undo or redo in force: the folder back to the safety
    snapshot it took (a new safety snapshot of the folder first, so that this too can be
    undone), and the runs and provider threads it changed back to what they were."""
    env = _env(env)
    if not confirmed:
        raise SegueError("undoing a rollback changes files and the thread: confirm it (--yes)")
    notes: list[str] = []
    with synced_thread(ref, cwd, env) as (store, synced):
        graph = synced.graph
        thread_id = graph.thread.id
        last = _last_in_force(graph)
        found = {c.id: c for c in list_checkpoints(store, thread_id)}
        before = found.get(last.safety_checkpoint_id or "")
        plan = _undo_preview(graph, last, before, env)  # (checks before anything is changed)
        none = None if before is None else f"no safety snapshot of {before.folder}"
        safety = _safety(store, graph, plan, env, none)
        safety_id = None if safety is None else safety.id
        if plan.redo:  # an undo undone: the runs it put back are rolled back again
            record, changes = rollback_changes(
                graph,
                last.to_run,
                scope=last.scope,
                safety_checkpoint_id=safety_id,
                target_checkpoint_id=last.safety_checkpoint_id,
                only=frozenset(n for n, _ in last.runs),
                undoes=last.id,
            )
        else:
            record, changes = undo_changes(graph, last, safety_checkpoint_id=safety_id)
            after = [
                r.ordinal
                for r in graph.live_runs
                if r.ordinal > max((n for n, _ in last.runs), default=last.to_run)
            ]
            if after and last.runs:  # runs built on the rolled-back line: its runs stay
                changes = Changes()
                record = replace(record, runs=(), provider_threads=())
                notes.append(
                    f"the thread went on after the rollback (runs {after[0]}-{after[-1]}): its "
                    f"runs stay as they are (runs {', '.join(str(n) for n, _ in last.runs)} "
                    "rolled back)"
                )
        record_rollback(store, graph, record, changes)
        done, failed = _restore(plan, safety, env, notes)
    return RollbackDone(plan, record.id, safety, done, failed, (), tuple(notes))
