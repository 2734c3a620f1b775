"""The thread graph checked against what its files say: the pure half of a sync.

Each provider thread remembers its file's turns as segue last saw them (its *layout*: each
turn's prompt hash and the run it is, natively or carried by a handoff). Given what the files
say now (:class:`segue.threads.observe.Observation`), :func:`reconcile` works out, with no I/O:

- **gone** (deleted, emptied, not a regular file): the provider thread is ``missing``, never a
  target, until its file is back;
- **moved**: followed (its path is revised);
- **changed in place** (the bytes segue saw are no longer there): ``divergent``;
- **rewound** (its CLI went back: a turn segue counted is gone or holds another prompt): the
  runs from the earliest one undone are rolled back, on every provider thread (the thread went
  back there), and any other provider thread that still holds one of them is ``divergent``;
- **appended**: its new turns become the next runs, in the order they started. A turn typed in a
  provider thread that did not hold every run on the thread's line at that point (work typed
  into both sides at once) is not merged into an order that never happened: that provider
  thread is ``divergent``, and its turns are recorded as ``divergent`` runs, off the line.

What to record is returned as :class:`Changes` (inserts only: new runs, new versions of runs,
new revisions of provider threads); nothing is recorded here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import msgspec
from msgspec.structs import replace

from segue.formats.stamp import Change
from segue.support.text import short
from segue.threads.documents import provider_thread_names
from segue.threads.model import (
    AppThread,
    FormerFile,
    Handoff,
    ProviderThread,
    ProviderThreadStatus,
    Run,
    RunStatus,
    ThreadGraph,
    Transfer,
    TurnSlot,
    assemble,
    prompt_hash,
    span,
)
from segue.threads.native import NativeTurn
from segue.threads.observe import Observation

__all__ = [
    "UNKNOWN_RUN",
    "Changes",
    "DecisionRecord",
    "SyncResult",
    "held_runs",
    "layout_of",
    "match_prompts",
    "reconcile",
    "turns_to_layout",
]

_R = TypeVar("_R", ProviderThread, Run)
_FOREVER = datetime.max.replace(tzinfo=UTC)
PROMPT_SHOWN = 50


class DecisionRecord(msgspec.Struct, frozen=True):
    """A strategy decision to record, with the facts it was decided on."""

    target_provider: str
    strategy: str
    form: str | None
    reason: str
    provider_thread_id: str | None
    covers: tuple[int, int] | None
    inputs: dict[str, Any] | None


class Changes(msgspec.Struct):
    """What a sync (and a switch after it) adds to the store: inserts only.

    ``base`` is what the store held when the changes were worked out (the thread's highest run
    ordinal and each provider thread's revision): recording them checks it, so two writers never
    interleave."""

    thread: AppThread | None = None  # a thread adopted now
    provider_threads: list[ProviderThread] = msgspec.field(default_factory=list)  # new ones
    # id -> its new revision
    revisions: dict[str, ProviderThread] = msgspec.field(default_factory=dict)
    runs: list[Run] = msgspec.field(default_factory=list)  # new runs
    run_versions: dict[int, Run] = msgspec.field(default_factory=dict)  # ordinal -> next version
    transfers: list[Transfer] = msgspec.field(default_factory=list)
    handoffs: list[Handoff] = msgspec.field(default_factory=list)
    decisions: list[DecisionRecord] = msgspec.field(default_factory=list)
    base_ordinal: int = 0
    base_versions: dict[str, int] = msgspec.field(default_factory=dict)

    @classmethod
    def based_on(cls, graph: ThreadGraph) -> Changes:
        """No changes yet, worked out on ``graph`` as the store holds it."""
        return cls(
            base_ordinal=max((r.ordinal for r in graph.runs), default=0),
            base_versions={pt.id: pt.version for pt in graph.provider_threads},
        )

    @property
    def empty(self) -> bool:
        return not any(getattr(self, f) for f in self.__struct_fields__ if not f.startswith("base"))

    def absorb(self, later: Changes) -> None:
        """Add what ``later`` (worked out on the graph these changes lead to) records: a record
        it revises that these changes add is added as revised, and one both revise gets one new
        revision, the later state."""
        if later.thread is not None:
            self.thread = later.thread
        _revise(self.provider_threads, self.revisions, later.revisions, lambda pt: pt.id)
        self.provider_threads += later.provider_threads
        _revise(self.runs, self.run_versions, later.run_versions, lambda run: run.ordinal)
        self.runs += later.runs
        self.transfers += later.transfers
        self.handoffs += later.handoffs
        self.decisions += later.decisions


def _revise(
    new: list[_R], revised: dict[Any, _R], later: dict[Any, _R], key: Callable[[_R], Any]
) -> None:
    """``later``'s revisions, over the records these changes add (``new``) or revise."""
    at = {key(record): n for n, record in enumerate(new)}
    for k, record in later.items():
        if k in at:
            new[at[k]] = replace(record, version=1)
        elif k in revised:
            revised[k] = replace(record, version=revised[k].version)
        else:
            revised[k] = record


class SyncResult(msgspec.Struct):
    """What a sync found: the graph as it is now, and what it recorded."""

    graph: ThreadGraph
    changes: Changes
    new_runs: list[Run] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)  # what the user should know


def turns_to_layout(turns: Sequence[NativeTurn], runs: Sequence[int | None]) -> list[TurnSlot]:
    return [TurnSlot(prompt_hash(t.prompt), r) for t, r in zip(turns, runs, strict=True)]


UNKNOWN_RUN = 0  # a turn recorded before layouts were: it may be any run before it


def layout_of(pt: ProviderThread, runs: Sequence[Run]) -> list[TurnSlot]:
    """The turns ``pt``'s file held when segue last saw it. For a revision recorded before
    layouts were (an older segue), its own runs at their places and the rest unknown."""
    if pt.turns is not None:
        return list(pt.turns)
    slots: list[TurnSlot] = [TurnSlot(None, UNKNOWN_RUN) for _ in range(pt.native_turns)]
    for run in runs:
        if run.provider_thread_id == pt.id and run.live and 1 <= run.native_turn <= len(slots):
            slots[run.native_turn - 1] = TurnSlot(prompt_hash(run.prompt), run.ordinal)
    return slots


def held_runs(
    pt: ProviderThread,
    layout: Sequence[TurnSlot],
    before: Sequence[TurnSlot] | None = None,
    known: Iterable[int] = (),
) -> set[int]:
    """The runs ``pt``'s file holds (what its next turn is built on): the runs its turns are,
    and the runs of the handoffs it was given: all of one whose turns are all still there (or
    that never had turns of its own: a summary), else those before the first one its file lost.
    A turn from before layouts were recorded may be any of the ``known`` runs."""
    held = {slot.run for slot in layout if slot.run is not None}
    if UNKNOWN_RUN in held:
        held.discard(UNKNOWN_RUN)
        held.update(known)
    earlier = layout if before is None else before
    for handoff in pt.handoffs:
        first, last = handoff.covers
        covered = range(first, last + 1)
        had = [s.run for s in earlier if s.run and first <= s.run <= last]
        has = {s.run for s in layout if s.run and first <= s.run <= last}
        lost = [run for run in had if run not in has]
        if not lost:
            held.update(covered)
        else:
            cut = min(lost)
            held.update(n for n in covered if n < cut)
    return held


def _compare(
    layout: Sequence[TurnSlot], turns: Sequence[NativeTurn]
) -> tuple[int, list[TurnSlot], list[tuple[int, NativeTurn]]]:
    """A file's turns now against the layout segue saw: how many of its turns still hold, that
    prefix with its prompts as they are now, and the turns after it (each with its place, from
    1)."""
    kept = next(  # the first place where the file's turns no longer are what segue saw
        (
            i
            for i, slot in enumerate(layout)
            if i >= len(turns) or slot.prompt not in (None, prompt_hash(turns[i].prompt))
        ),
        len(layout),
    )
    prefix = [TurnSlot(prompt_hash(turns[i].prompt), s.run) for i, s in enumerate(layout[:kept])]
    return kept, prefix, list(enumerate(turns[kept:], start=kept + 1))


def match_prompts(prompts: Sequence[str | None], runs: Sequence[Run]) -> list[TurnSlot]:
    """Which of ``runs`` each turn is, by its prompt's hash, in order (a turn matching none is
    no run: a handoff's own message; a prompt None matches nothing)."""
    hashes = [prompt_hash(r.prompt) for r in runs]
    slots: list[TurnSlot] = []
    at = 0
    for prompt in prompts:
        found = next((i for i in range(at, len(runs)) if hashes[i] == prompt), None)
        if found is None:
            slots.append(TurnSlot(prompt, None))
        else:
            slots.append(TurnSlot(prompt, runs[found].ordinal))
            at = found + 1
    return slots


class _Work:
    """The state of one reconciliation as it goes."""

    def __init__(self, graph: ThreadGraph) -> None:
        self.graph = graph
        self.names = provider_thread_names(graph)
        self.runs: dict[int, Run] = {r.ordinal: r for r in graph.runs}
        self.pts: dict[str, ProviderThread] = {pt.id: pt for pt in graph.provider_threads}
        self.layouts = {pt.id: layout_of(pt, graph.runs) for pt in graph.provider_threads}
        self.before = {k: list(v) for k, v in self.layouts.items()}
        self.original = dict(self.runs)
        self.former: dict[str, list[FormerFile | None]] = {
            pt.id: list(pt.former) for pt in graph.provider_threads
        }
        self.fields: dict[str, dict[str, Any]] = {}
        self.reasons: dict[str, dict[str, None]] = {}  # (each once, in order)
        self.new_runs: list[Run] = []
        self.notes: list[str] = []

    def name(self, pt_id: str) -> str:
        pt = self.pts[pt_id]
        return f"{self.names.get(pt_id, '?')} ({pt.provider} {pt.native_id})"

    def status(self, pt_id: str) -> ProviderThreadStatus:
        value = self.fields.get(pt_id, {}).get("status")
        return value if isinstance(value, ProviderThreadStatus) else self.pts[pt_id].status

    def revise(self, pt_id: str, reason: str | None, **values: Any) -> None:
        self.fields.setdefault(pt_id, {}).update(values)
        if reason:
            self.reasons.setdefault(pt_id, {})[reason] = None

    def held(self, pt_id: str) -> set[int]:
        pt = self.pts[pt_id]
        # what a turn of an older revision (no layout) may be: a live run up to the last one it
        # ran or was given
        reach = max(
            [r.ordinal for r in self.original.values() if r.provider_thread_id == pt_id]
            + [h.covers[1] for h in pt.handoffs],
            default=None,
        )  # None: nothing tells (a record of an older segue with no runs and no handoffs)
        known = [n for n, r in self.original.items() if r.live and (reach is None or n <= reach)]
        return held_runs(pt, self.layouts[pt_id], self.before[pt_id], known)


def reconcile(graph: ThreadGraph, observations: Sequence[Observation]) -> SyncResult:
    """What the files say about ``graph``: the graph as it is now, and what to record."""
    work = _Work(graph)
    rewinds: list[tuple[int, str]] = []
    pending: dict[Key, list[tuple[int, NativeTurn]]] = {}
    for seen in observations:
        if seen.provider_thread_id not in work.pts:
            continue
        if seen.former is None:
            _observed(work, seen, rewinds, pending)
        else:
            _observed_former(work, seen, pending)
    _roll_back(work, rewinds)
    _mark_holders_of_undone_runs(work)
    _record_new_turns(work, pending)
    return _outcome(work)


Key = tuple[str, int | None]  # a provider thread, and which former file (None: its own)


def _observed_former(
    work: _Work, seen: Observation, pending: dict[Key, list[tuple[int, NativeTurn]]]
) -> None:
    """A file the provider thread continued from: a turn typed there is off the line."""
    assert seen.former is not None
    files = work.former[seen.provider_thread_id]
    former = files[seen.former]
    if former is None:
        return
    if seen.turns is None:  # gone, emptied or rewritten: no longer watched
        files[seen.former] = None
        return
    _, prefix, fresh = _compare(former.turns, seen.turns)
    files[seen.former] = FormerFile(former.path, seen.stamp, tuple(prefix))
    if fresh:
        pending[(seen.provider_thread_id, seen.former)] = fresh


def _observed(
    work: _Work,
    seen: Observation,
    rewinds: list[tuple[int, str]],
    pending: dict[Key, list[tuple[int, NativeTurn]]],
) -> None:
    pt = work.pts[seen.provider_thread_id]
    name = work.name(pt.id)
    if seen.why == "unknown provider":
        work.notes.append(f"{name}: this segue does not know the provider {str(pt.provider)!r}")
        return
    if seen.change in (Change.GONE, Change.EMPTY):
        reason = f"its file {seen.path} {seen.why or 'is gone'}"
        if pt.status is not ProviderThreadStatus.MISSING or pt.reason != reason:
            work.revise(pt.id, reason, status=ProviderThreadStatus.MISSING, stamp=seen.stamp)
        work.notes.append(f"{name}: {reason}; it is not a target until it is back")
        return
    back = pt.status is ProviderThreadStatus.MISSING
    moved = seen.moved_from is not None
    if moved:
        why = f"followed: its file moved from {seen.moved_from} to {seen.path}"
        work.revise(pt.id, why, path=seen.path, stamp=seen.stamp)
        work.notes.append(f"{name}: {why}")
    if back:
        work.revise(pt.id, f"its file {seen.path} is back", status=ProviderThreadStatus.ACTIVE)
        work.notes.append(f"{name}: its file {seen.path} is back")
    if seen.change is Change.CHANGED:
        reason = f"its file {seen.path} was changed in place: the records segue saw there are gone"
        if pt.status is not ProviderThreadStatus.DIVERGENT or back:
            work.revise(pt.id, reason, status=ProviderThreadStatus.DIVERGENT, stamp=seen.stamp)
            work.notes.append(f"{name}: {reason}")
        return
    if seen.turns is None:  # unchanged: not read
        if seen.stamp is not None and seen.stamp != pt.stamp and (moved or back):
            work.revise(pt.id, None, stamp=seen.stamp)
        return
    turns = seen.turns
    layout = work.layouts[pt.id]
    kept, prefix, fresh = _compare(layout, turns)
    undone = sorted({s.run for s in layout[kept:] if s.run})
    if undone:
        rewinds.append((undone[0], pt.id))
    # the prefix that still holds: its prompts as they are now, and its runs' endings
    work.layouts[pt.id] = prefix
    for i, slot in enumerate(prefix):
        run = work.runs.get(slot.run) if slot.run is not None else None
        if run is None or run.provider_thread_id != pt.id or run.status is not RunStatus.WORKING:
            continue
        now = turns[i]
        if now.status is not RunStatus.WORKING:
            work.runs[run.ordinal] = replace(
                run, status=now.status, ended_at=now.ended_at, note=now.note
            )
    if fresh:
        pending[(pt.id, None)] = fresh
    synced: str | None = None
    if not undone:
        if fresh:
            synced = f"synced: {len(fresh)} new native turn{'s' if len(fresh) != 1 else ''}"
        elif seen.path != pt.path and not moved:
            synced = "synced: the session continues in another file"
        elif len(turns) != pt.native_turns:
            synced = "synced"
    work.revise(
        pt.id,
        synced,
        path=seen.path,
        stamp=seen.stamp,
        native_turns=len(turns),
        model=seen.model or pt.model,
    )


def _roll_back(work: _Work, rewinds: list[tuple[int, str]]) -> None:
    """A rewind in a provider thread takes the thread back: every run from the earliest one
    undone is rolled back, wherever it ran."""
    for earliest, pt_id in sorted(rewinds):
        undone = [r for r in work.runs.values() if r.live and r.ordinal >= earliest]
        if not undone:
            continue
        own = [r.ordinal for r in undone if r.provider_thread_id == pt_id]
        others = [r.ordinal for r in undone if r.provider_thread_id != pt_id]
        note = f"rolled back: {work.name(pt_id)} went back to before run {earliest}"
        for run in undone:
            work.runs[run.ordinal] = replace(run, status=RunStatus.ROLLED_BACK, note=note)
        if not own:  # it went back past runs it was given (a handoff's)
            reason = f"its CLI went back to before run {earliest}: runs {span(others)} "
            reason += "are rolled back"
        else:
            reason = f"its CLI rolled back runs {', '.join(map(str, own))}"
            if others:
                reason += f", and with them runs {span(others)}, which came after"
        work.revise(pt_id, reason)
        work.notes.append(f"{work.name(pt_id)}: {reason}")


def _mark_holders_of_undone_runs(work: _Work) -> None:
    """A provider thread whose file still holds a run this sync rolled back (natively, or
    carried by a handoff) conflicts with the thread: it is divergent, never a target as it is.
    (Runs rolled back before are not held by sessions written since: their handoffs' ranges
    may span them, but what they carried was the line without them.)"""
    undone = {
        r.ordinal
        for r in work.runs.values()
        if r.status is RunStatus.ROLLED_BACK and work.original[r.ordinal].live
    }
    if not undone:
        return
    for pt_id in work.pts:
        status = work.status(pt_id)
        if status in (ProviderThreadStatus.DIVERGENT, ProviderThreadStatus.MISSING):
            continue
        holds = work.held(pt_id) & undone
        if holds:
            reason = f"it holds runs {span(holds)}, which were rolled back"
            work.revise(pt_id, reason, status=ProviderThreadStatus.DIVERGENT)
            work.notes.append(f"{work.name(pt_id)}: {reason}")


def _record_new_turns(work: _Work, pending: dict[Key, list[tuple[int, NativeTurn]]]) -> None:
    """New turns become the next runs in the order they started (each file's turns in their own
    order); a turn built without a run already on the line is parallel work, and so is a turn
    typed in a file the provider thread continued from."""
    queues = {key: list(turns) for key, turns in pending.items()}
    ordinal = max(work.runs, default=0) + 1
    while queues:
        key = min(queues, key=lambda k: queues[k][0][1].started_at or _FOREVER)
        position, turn = queues[key].pop(0)
        if not queues[key]:
            del queues[key]
        pt_id, former = key
        pt = work.pts[pt_id]
        status, note = turn.status, turn.note
        typed = short(turn.prompt, PROMPT_SHOWN)
        if former is not None:
            old = work.former[pt_id][former]
            assert old is not None
            status = RunStatus.DIVERGENT
            note = (
                f"typed in {old.path}, a file {work.name(pt_id)} continued from (it continues "
                f"in {pt.path}): off the thread's line"
            )
            work.notes.append(f"{work.name(pt_id)}: a turn {typed!r} was {note}")
        elif work.status(pt_id) is ProviderThreadStatus.DIVERGENT:
            status = RunStatus.DIVERGENT
            note = f"typed in {work.name(pt_id)}, which is off the thread's line"
        else:
            line = {r.ordinal for r in work.runs.values() if r.live}
            unseen = sorted(line - work.held(pt_id))
            if unseen:
                where = sorted(
                    {work.names.get(work.runs[n].provider_thread_id, "?") for n in unseen}
                )
                reason = (
                    f"parallel work: its turn {typed!r} was typed after runs "
                    f"{span(unseen)} in {', '.join(where)}, which it never saw"
                )
                work.revise(pt_id, reason, status=ProviderThreadStatus.DIVERGENT)
                work.notes.append(f"{work.name(pt_id)}: {reason}")
                status, note = RunStatus.DIVERGENT, reason
        run = Run(
            thread_id=work.graph.thread.id,
            ordinal=ordinal,
            provider=pt.provider,
            provider_thread_id=pt_id,
            native_turn=position,
            status=status,
            prompt=turn.prompt,
            started_at=turn.started_at,
            ended_at=turn.ended_at,
            note=note,
        )
        work.runs[ordinal] = run
        work.new_runs.append(run)
        slot = TurnSlot(prompt_hash(turn.prompt), ordinal)
        if former is None:
            work.layouts[pt_id].append(slot)
        else:
            old = work.former[pt_id][former]
            assert old is not None
            work.former[pt_id][former] = replace(old, turns=(*old.turns, slot))
        ordinal += 1


def _outcome(work: _Work) -> SyncResult:
    graph = work.graph
    changes = Changes.based_on(graph)
    pts: list[ProviderThread] = []
    for pt_id, pt in work.pts.items():
        values = dict(work.fields.get(pt_id, {}))
        layout = tuple(work.layouts[pt_id])
        if layout != tuple(work.before[pt_id]) or (pt.turns is None and values):
            values["turns"] = layout
        former = tuple(f for f in work.former[pt_id] if f is not None)
        if former != pt.former:
            values["former"] = former
        if not values and pt_id not in work.reasons:
            pts.append(pt)
            continue
        reason = "; ".join(work.reasons.get(pt_id, {})) or pt.reason
        revised = replace(pt, **values, reason=reason, version=pt.version + 1)
        changes.revisions[pt_id] = revised
        pts.append(revised)
    for ordinal, run in work.runs.items():
        stored = work.original.get(ordinal)
        if stored is not None and run is not stored:
            changes.run_versions[ordinal] = replace(run, version=stored.version + 1)
    changes.runs = list(work.new_runs)
    runs = [changes.run_versions.get(n, r) for n, r in work.runs.items()]
    new_graph = assemble(graph.thread, runs, pts, graph.handoffs, graph.rollbacks)
    return SyncResult(new_graph, changes, list(work.new_runs), work.notes)
