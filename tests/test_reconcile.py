"""The pure check of a thread against its files (``segue.threads.reconcile``), on graphs built
here: what a sequence of observations means for the runs and the provider threads. (Graph
records, not transcripts: every file a case stands for is described by its turns' prompts.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from segue.formats.stamp import Change
from segue.model.conversation import Provider
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
    TurnSlot,
    assemble,
    prompt_hash,
)
from segue.threads.native import NativeTurn
from segue.threads.observe import Observation
from segue.threads.reconcile import reconcile

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _at(n: int) -> datetime:
    return T0 + timedelta(minutes=n)


def _run(
    ordinal: int, pt: str, turn: int, prompt: str, status: RunStatus = RunStatus.COMPLETED
) -> Run:
    provider = Provider.CLAUDE if pt.startswith("L") else Provider.CODEX
    return Run("T", ordinal, provider, pt, turn, status, prompt, None, _at(ordinal), _at(ordinal))


def _pt(
    pt_id: str, layout: list[tuple[str, int | None]] | None, native_turns: int = 0
) -> ProviderThread:
    return ProviderThread(
        id=pt_id,
        thread_id="T",
        provider=Provider.CLAUDE if pt_id.startswith("L") else Provider.CODEX,
        origin="switch",
        native_id=f"{pt_id}-native",
        path=f"/sessions/{pt_id}.jsonl",
        native_turns=len(layout) if layout is not None else native_turns,
        status=ProviderThreadStatus.ACTIVE,
        model=None,
        version=1,
        turns=None if layout is None else tuple(TurnSlot(prompt_hash(p), r) for p, r in layout),
    )


def _handoff(hid: str, to: str, covers: tuple[int, int], form: HandoffForm) -> Handoff:
    strategy = HandoffStrategy.DELTA_SINCE_TARGET_LAST_SEEN
    return Handoff(hid, "T", to, (), covers, strategy, form, HandoffStatus.READY, T0)


def _graph(runs: list[Run], pts: list[ProviderThread], handoffs: list[Handoff]) -> ThreadGraph:
    return assemble(AppThread("T", T0, None, None), runs, pts, handoffs)


def _seen(pt_id: str, prompts: list[tuple[str, int]]) -> Observation:
    turns = [NativeTurn(p, RunStatus.COMPLETED, _at(n), _at(n)) for p, n in prompts]
    return Observation(pt_id, Change.APPENDED, f"/sessions/{pt_id}.jsonl", None, turns)


def test_a_session_written_after_a_rollback_is_not_taken_for_one_holding_it() -> None:
    """Runs 1-2 in Claude, 3 rolled back there; a Codex session written afterwards was handed
    the line (runs 1, 2 and the new 4), its handoff's range spanning 3. Syncing again changes
    nothing: it is not divergent."""
    runs = [
        _run(1, "L", 1, "p1"),
        _run(2, "L", 2, "p2"),
        _run(3, "L", 3, "p3", RunStatus.ROLLED_BACK),
        _run(4, "L", 3, "p4"),
    ]
    claude = _pt("L", [("p1", 1), ("p2", 2), ("p4", 4)])
    codex = _pt("C", [("p1", 1), ("p2", 2), ("p4", 4)])
    graph = _graph(runs, [claude, codex], [_handoff("h", "C", (1, 4), HandoffForm.NATIVE_ITEMS)])
    out = reconcile(graph, [_seen("C", [("p1", 1), ("p2", 2), ("p4", 4)])])
    assert {pt.id: pt.status for pt in out.graph.provider_threads} == {
        "L": ProviderThreadStatus.ACTIVE,
        "C": ProviderThreadStatus.ACTIVE,
    }
    assert not out.notes


def test_a_rewind_past_a_summary_takes_the_summarized_runs_with_it() -> None:
    """Claude holds runs 1-2 and a summary of Codex's runs 3-4 (its own message is the first
    run it carries); the user rewinds Claude to before that message and types a new prompt."""
    runs = [
        _run(1, "L", 1, "p1"),
        _run(2, "L", 2, "p2"),
        _run(3, "C", 3, "p3"),
        _run(4, "C", 4, "p4"),
    ]
    claude = _pt("L", [("p1", 1), ("p2", 2), ("<segue_handoff>", 3)])
    codex = _pt("C", [("p1", 1), ("p2", 2), ("p3", 3), ("p4", 4)])
    handoffs = [
        _handoff("h1", "C", (1, 2), HandoffForm.NATIVE_ITEMS),
        _handoff("h2", "L", (3, 4), HandoffForm.SUMMARY),
    ]
    out = reconcile(
        _graph(runs, [claude, codex], handoffs), [_seen("L", [("p1", 1), ("p2", 2), ("pX", 10)])]
    )
    status = {r.ordinal: r.status for r in out.graph.runs}
    assert status == {
        1: RunStatus.COMPLETED,
        2: RunStatus.COMPLETED,
        3: RunStatus.ROLLED_BACK,
        4: RunStatus.ROLLED_BACK,
        5: RunStatus.COMPLETED,
    }
    pts = {pt.id: pt for pt in out.graph.provider_threads}
    assert pts["L"].status is ProviderThreadStatus.ACTIVE and pts["L"].native_runs == (1, 2, 5)
    assert pts["C"].status is ProviderThreadStatus.DIVERGENT  # it still holds 3-4
    assert "went back to before run 3" in str(pts["L"].reason)


def test_parallel_work_is_seen_in_a_revision_recorded_before_layouts() -> None:
    """A Codex session recorded by an older segue (no layout) held runs 1-2; the thread went on
    to 3-4 in Claude; a turn typed into the Codex session now is parallel work."""
    runs = [
        _run(1, "C", 1, "p1"),
        _run(2, "C", 2, "p2"),
        _run(3, "L", 3, "p3"),
        _run(4, "L", 4, "p4"),
    ]
    codex = _pt("C", None, native_turns=2)
    claude = _pt("L", [("p1", 1), ("p2", 2), ("p3", 3), ("p4", 4)])
    graph = _graph(runs, [codex, claude], [_handoff("h", "L", (1, 2), HandoffForm.NATIVE_ITEMS)])
    out = reconcile(graph, [_seen("C", [("p1", 1), ("p2", 2), ("pX", 10)])])
    pts = {pt.id: pt for pt in out.graph.provider_threads}
    assert pts["C"].status is ProviderThreadStatus.DIVERGENT and "never saw" in str(pts["C"].reason)
    assert out.graph.runs[-1].status is RunStatus.DIVERGENT


def test_append_rewind_append_in_one_file() -> None:
    runs = [_run(1, "L", 1, "p1"), _run(2, "L", 2, "p2")]
    graph = _graph(runs, [_pt("L", [("p1", 1), ("p2", 2)])], [])
    first = reconcile(graph, [_seen("L", [("p1", 1), ("p2", 2), ("p3", 3)])])
    assert [r.ordinal for r in first.new_runs] == [3]
    second = reconcile(first.graph, [_seen("L", [("p1", 1), ("q2", 4)])])
    status = {r.ordinal: (r.prompt, r.status) for r in second.graph.runs}
    assert status == {
        1: ("p1", RunStatus.COMPLETED),
        2: ("p2", RunStatus.ROLLED_BACK),
        3: ("p3", RunStatus.ROLLED_BACK),
        4: ("q2", RunStatus.COMPLETED),
    }
    assert second.graph.provider_threads[0].status is ProviderThreadStatus.ACTIVE
