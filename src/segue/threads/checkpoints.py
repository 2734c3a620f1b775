"""Checkpoints: the workspace as it was when a run ended, owned by the app thread's run whatever
provider ran it.

A checkpoint is a git commit of the thread's folder (:mod:`segue.workspace`) under
``refs/segue/checkpoints/<thread>/<run>``, chained to the thread's previous checkpoint, and a row
in the store naming it, with the files it changed against that previous one (``+added
-removed``) and the files it left out. It is *exact* when it was taken as the run ended (a hook
of the CLI, ``segue run``), *approximate* when a later look found the run done and took the
folder as it was then (a sync, a switch), and *safety* for the folder as it was before a
rollback.

Taking one never fails the command that asks: what stops it (no git, the folder gone) comes
back as a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import msgspec
from msgspec.structs import astuple

from segue.model.conversation import Provider
from segue.model.errors import CheckpointError
from segue.store import Store
from segue.store.ids import new_id
from segue.store.rows import from_json, from_row, optional_provider, row_of
from segue.store.tables import checkpoints
from segue.threads.model import RunStatus, ThreadGraph, Tolerant
from segue.workspace.changes import Change, Skipped
from segue.workspace.snapshot import capture, locate, max_file_bytes

__all__ = [
    "RUN_THREAD_VARIABLE",
    "Checkpoint",
    "CheckpointKind",
    "Taken",
    "checkpoint_ref",
    "diff_line",
    "latest_checkpoint",
    "list_checkpoints",
    "no_checkpoint",
    "run_checkpoint",
    "take_checkpoint",
]


# set by ``segue run`` for the CLI it runs: that turn's hook leaves the checkpoint to it
RUN_THREAD_VARIABLE = "SEGUE_RUN_THREAD"


class CheckpointKind(Tolerant):
    EXACT = "exact"  # taken as the run ended
    APPROXIMATE = "approximate"  # taken later: the folder as it was then
    SAFETY = "safety"  # the folder before a rollback, so the rollback can be undone
    UNKNOWN = "unknown"


class Checkpoint(msgspec.Struct, frozen=True):
    id: str
    thread_id: str
    run_ordinal: int
    kind: CheckpointKind
    provider: Provider | None
    folder: str
    repository: str
    private: bool
    ref: str
    commit_id: str
    tree_id: str
    base: str  # what ``files`` are counted against: previous / HEAD / nothing
    files: tuple[Change, ...]
    skipped: tuple[Skipped, ...]
    created_at: datetime

    @property
    def added(self) -> int:
        return sum(f.added or 0 for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed or 0 for f in self.files)


class Taken(msgspec.Struct, frozen=True):
    """What asking for a checkpoint came to: the checkpoint, or why there is none."""

    checkpoint: Checkpoint | None
    note: str | None = None  # why none was taken (or what it left out)
    existing: bool = False  # the run had one already: nothing was taken


def checkpoint_ref(thread_id: str, run: int, kind: CheckpointKind) -> str:
    """Where a checkpoint's commit is kept: an exact one at its run's name, every other one at
    a name of its own (a later ``segue checkpoint`` never moves the ref of the run's end)."""
    if kind is CheckpointKind.SAFETY:
        return f"refs/segue/safety/{thread_id}/{new_id()}"
    if kind is CheckpointKind.EXACT:
        return f"refs/segue/checkpoints/{thread_id}/{run}"
    return f"refs/segue/checkpoints/{thread_id}/{run}-{new_id()}"


def run_checkpoint(found: Sequence[Checkpoint], folder: str, run: int) -> Checkpoint | None:
    """The checkpoint a rollback or a fork takes the folder to at run ``run``: the one taken as
    the run ended (exact), else the newest taken after it (approximate)."""
    mine = [
        c
        for c in found
        if c.kind is not CheckpointKind.SAFETY and c.run_ordinal == run and c.folder == folder
    ]
    exact = [c for c in mine if c.kind is CheckpointKind.EXACT]
    chosen = exact or mine
    return chosen[-1] if chosen else None


def no_checkpoint(found: Sequence[Checkpoint], thread_id: str, run: int, none: str) -> str:
    """Why run ``run`` cannot be gone back to: the runs that have a checkpoint (``none``)."""
    have = sorted({c.run_ordinal for c in found if c.kind is not CheckpointKind.SAFETY})
    which = f"checkpoints of runs {', '.join(map(str, have))}" if have else none
    return f"run {run} of thread {thread_id} has no checkpoint ({which})"


def diff_line(checkpoint: Checkpoint, limit: int = 6) -> str:
    """One line naming the checkpoint and what it changed, e.g. ``checkpoint of run 3 (exact,
    3 files +12 -4 since run 2's: src/app.py +10 -4, …)``."""
    against = {
        "previous": "since the checkpoint before",
        "HEAD": "against HEAD",
        "nothing": "in all",
    }.get(checkpoint.base, checkpoint.base)
    files = checkpoint.files
    head = (
        f"checkpoint of run {checkpoint.run_ordinal} ({checkpoint.kind.value}, "
        f"{checkpoint.commit_id[:12]}): "
    )
    if not files:
        return head + f"no file changed {against}"
    shown = ", ".join(_file_part(f) for f in files[:limit])
    more = f", and {len(files) - limit} more" if len(files) > limit else ""
    count = f"{len(files)} file{'s' if len(files) != 1 else ''}"
    return head + f"{count} +{checkpoint.added} -{checkpoint.removed} {against}: {shown}{more}"


def _file_part(change: Change) -> str:
    if change.status == "deleted":
        return f"{change.path} deleted"
    lines = "binary" if change.added is None else f"+{change.added} -{change.removed}"
    return f"{change.path} {'new, ' if change.status == 'added' else ''}{lines}"


# ----------------------------------------------------------------------------- the rows

_FILES = tuple[tuple[str, str, int | None, int | None], ...]  # [[path, status, added, removed]]
_SKIPPED = tuple[tuple[str, str], ...]  # [[path, reason]]


def list_checkpoints(store: Store, thread_id: str) -> list[Checkpoint]:
    """Every checkpoint of the thread, oldest first (safety snapshots included)."""
    with store.reading(f"cannot read the checkpoints of thread {thread_id}") as connection:
        rows = connection.rows(
            "SELECT * FROM checkpoints WHERE thread_id = :id ORDER BY created_at, id",
            {"id": thread_id},
            checkpoints.kinds,
        )
    return [
        from_row(
            Checkpoint,
            row,
            kind=CheckpointKind(row["kind"]),
            provider=optional_provider(row["provider"]),
            private=bool(row["private"]),
            files=tuple(Change(*f) for f in from_json(row["files"], _FILES, ())),
            skipped=tuple(Skipped(*s) for s in from_json(row["skipped"], _SKIPPED, ())),
        )
        for row in rows
    ]


def latest_checkpoint(found: Sequence[Checkpoint]) -> Checkpoint | None:
    """The newest run checkpoint (not a safety one)."""
    return next((c for c in reversed(found) if c.kind is not CheckpointKind.SAFETY), None)


# ----------------------------------------------------------------------------- taking one


def take_checkpoint(
    store: Store,
    graph: ThreadGraph,
    env: Mapping[str, str],
    kind: CheckpointKind,
    *,
    run: int | None = None,
    missing_only: bool = False,
) -> Taken:
    """Snapshot the thread's folder as the checkpoint of ``run`` (default: its newest run on
    the line). ``missing_only``: only when that run has none yet (a sync's approximate one)."""
    live = graph.live_runs
    if run is not None:
        live = tuple(r for r in live if r.ordinal == run)
    target = live[-1] if live else None
    if target is not None and target.status is RunStatus.WORKING:
        if kind is not CheckpointKind.SAFETY:
            return Taken(None)  # mid-turn: the folder is not any run's end
        target = next((r for r in reversed(graph.live_runs[:-1])), None)
    if target is None and kind is not CheckpointKind.SAFETY:
        what = f"run {run}" if run is not None else "a run"
        return Taken(None, f"no checkpoint: thread {graph.thread.id} has no {what} on its line")
    folder = graph.thread.cwd
    if not folder:
        return Taken(None, "no checkpoint: the thread's folder is not known")
    found = list_checkpoints(store, graph.thread.id)
    ordinal = target.ordinal if target is not None else 0
    if missing_only and any(
        c.run_ordinal == ordinal and c.kind is not CheckpointKind.SAFETY for c in found
    ):
        return Taken(None, existing=True)
    if kind is CheckpointKind.EXACT:  # a run ends once: a second hook of it takes nothing
        same = [c for c in found if c.run_ordinal == ordinal and c.kind is CheckpointKind.EXACT]
        if same:
            return Taken(same[-1], existing=True)
    try:
        ws = locate(folder, env)
        previous = latest_checkpoint(
            [c for c in found if c.repository == str(ws.git.git_dir) and c.folder == str(ws.folder)]
        )
        ref = checkpoint_ref(graph.thread.id, ordinal, kind)
        message = (
            f"segue checkpoint: thread {graph.thread.id}, run {ordinal} ({kind.value})\n\n"
            f"folder: {ws.folder}\n"
        )
        snap = capture(
            ws,
            ref,
            parent=None if previous is None else previous.commit_id,
            message=message,
            max_bytes=max_file_bytes(env),
        )
    except CheckpointError as exc:
        return Taken(None, f"no checkpoint: {exc}")
    checkpoint = Checkpoint(
        id=new_id(),
        thread_id=graph.thread.id,
        run_ordinal=ordinal,
        kind=kind,
        provider=None if target is None else target.provider,
        folder=str(ws.folder),
        repository=str(ws.git.git_dir),
        private=ws.private,
        ref=snap.ref,
        commit_id=snap.commit,
        tree_id=snap.tree,
        base=snap.base,
        files=snap.changes,
        skipped=snap.skipped,
        created_at=datetime.now(UTC),
    )
    with store.writing(f"cannot record a checkpoint of thread {graph.thread.id}") as connection:
        connection.insert(
            checkpoints,
            row_of(
                checkpoint,
                checkpoints,
                files=[astuple(f) for f in checkpoint.files],
                skipped=[astuple(s) for s in checkpoint.skipped],
            ),
        )
    note = None
    if snap.skipped:
        shown = "; ".join(f"{s.path}: {s.reason}" for s in snap.skipped[:3])
        more = f"; and {len(snap.skipped) - 3} more" if len(snap.skipped) > 3 else ""
        note = f"the checkpoint of run {ordinal} left out {shown}{more}"
    return Taken(checkpoint, note)
