"""Threads as JSON documents (``segue thread show --json``; stable, fields only ever added) and
the coverage table ``segue thread show`` prints."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from msgspec import to_builtins

from segue.model.times import iso_z
from segue.providers import all_entries
from segue.support.text import short
from segue.threads.model import Handoff, ProviderThread, ThreadGraph, ThreadSummary, span
from segue.transforms.secrets import mask

if TYPE_CHECKING:
    from segue.threads.checkpoints import Checkpoint

__all__ = [
    "PROVIDER_THREAD_COLUMNS",
    "RUN_COLUMNS",
    "checkpoint_to_json",
    "coverage_lines",
    "graph_to_json",
    "lineage_lines",
    "provider_thread_names",
    "provider_thread_rows",
    "run_rows",
    "summary_to_json",
]


def _handoff(h: Handoff) -> dict[str, Any]:
    return {
        "id": h.id,
        "covers": list(h.covers),
        "strategy": h.strategy.value,
        "form": h.form.value,
        "status": h.status.value,
        "created_by_provider": h.created_by_provider,
        "created_at": iso_z(h.created_at),
        "from_provider_threads": list(h.from_provider_threads),
        "target_run": h.target_run_ordinal,
        "supersedes": h.supersedes,
        "transfer": h.transfer_id,
        "checkpoint": h.checkpoint_id,
        # a summary's text as the target was given it; native items are counted, not repeated
        "text": h.text,
        "items": len(h.items) if h.items is not None else None,
    }


def _provider_thread(pt: ProviderThread) -> dict[str, Any]:
    return {
        "id": pt.id,
        "provider": pt.provider,
        "native_id": pt.native_id,
        "path": pt.path,
        "native_runs": list(pt.native_runs),
        "handoffs": [_handoff(h) for h in pt.handoffs],
        "status": pt.status.value,
        "reason": pt.reason,
        "model": pt.model,
        "origin": pt.origin,
        "native_turns": pt.native_turns,
        "former_files": [f.path for f in pt.former],
    }


def graph_to_json(graph: ThreadGraph) -> dict[str, Any]:
    t = graph.thread
    return {
        "id": t.id,
        "title": t.title,
        "cwd": t.cwd,
        "created_at": iso_z(t.created_at),
        "parent": None
        if t.parent_thread_id is None
        else {
            "thread": t.parent_thread_id,
            "run": t.parent_run_ordinal,
            "checkpoint": t.parent_checkpoint_id,
        },
        "rollbacks": [
            {
                "id": r.id,
                "to_run": r.to_run,
                "scope": r.scope,
                "undoes": r.undoes,
                "in_force": r in graph.active_rollbacks,
                "runs": [n for n, _ in r.runs],
                "handoffs_superseded": list(r.handoffs),
                "safety_checkpoint": r.safety_checkpoint_id,
                "checkpoint": r.target_checkpoint_id,
                "created_at": iso_z(r.created_at),
            }
            for r in graph.rollbacks
        ],
        "runs": [
            {
                "ordinal": r.ordinal,
                "provider": r.provider,
                "provider_thread": r.provider_thread_id,
                "handoff": r.handoff_id,
                "status": r.status.value,
                "prompt": r.prompt,
                "started_at": None if r.started_at is None else iso_z(r.started_at),
                "ended_at": None if r.ended_at is None else iso_z(r.ended_at),
                "native_turn": r.native_turn,
                "note": r.note,
            }
            for r in graph.runs
        ],
        "provider_threads": [_provider_thread(pt) for pt in graph.provider_threads],
    }


def summary_to_json(summary: ThreadSummary) -> dict[str, Any]:
    document: dict[str, Any] = to_builtins(summary, enc_hook=str)  # (times: as iso_z has them)
    return document


def provider_thread_names(graph: ThreadGraph) -> dict[str, str]:
    """Short names of a thread's provider threads, as the tables print them: the provider's mark
    and its count among that provider's threads (C1, L1, C2), by provider-thread id."""
    marks = {e.provider.value: e.mark for e in all_entries()}
    counts: Counter[str] = Counter()
    names = {}
    for pt in graph.provider_threads:
        mark = marks.get(pt.provider, pt.provider[:1].upper())
        counts[mark] += 1
        names[pt.id] = f"{mark}{counts[mark]}"
    return names


def coverage_lines(graph: ThreadGraph) -> list[str]:
    """The coverage table: per provider thread, its native runs and its handoffs."""
    lines = []
    names = provider_thread_names(graph)
    for pt in graph.provider_threads:
        name = names[pt.id]
        lines.append(f"{name} native runs: {span(pt.native_runs)}")
        given = ", ".join(
            f"{h.id[:13]} covering {span(range(h.covers[0], h.covers[1] + 1))} ({h.form.value})"
            for h in pt.handoffs
        )
        lines.append(f"{name} handoffs: {given or '-'}")
    return lines


def checkpoint_to_json(checkpoint: Checkpoint) -> dict[str, Any]:
    """A checkpoint as ``segue checkpoints --json`` gives it."""
    return {
        "id": checkpoint.id,
        "thread": checkpoint.thread_id,
        "run": checkpoint.run_ordinal,
        "kind": checkpoint.kind.value,
        "provider": None if checkpoint.provider is None else checkpoint.provider.value,
        "created_at": iso_z(checkpoint.created_at),
        "folder": checkpoint.folder,
        "repository": checkpoint.repository,
        "private_repository": checkpoint.private,
        "ref": checkpoint.ref,
        "commit": checkpoint.commit_id,
        "tree": checkpoint.tree_id,
        "against": checkpoint.base,
        "added": checkpoint.added,
        "removed": checkpoint.removed,
        "files": to_builtins(checkpoint.files),  # [{path, status, added, removed}]
        "skipped": to_builtins(checkpoint.skipped),  # [{path, reason}]
    }


def lineage_lines(graph: ThreadGraph, forks: list[tuple[str, int | None, str | None]]) -> list[str]:
    """Where the thread came from, its rollbacks, and the threads forked from it (id, run,
    title)."""
    t = graph.thread
    lines = []
    if t.parent_thread_id is not None:
        at = f" at run {t.parent_run_ordinal}" if t.parent_run_ordinal else ""
        lines.append(f"forked from thread {t.parent_thread_id}{at}")
    active = graph.active_rollbacks
    for r in graph.rollbacks:
        if r.undoes is not None:
            lines.append(f"rollback {r.id[:13]}: undid {r.undoes[:13]}")
            continue
        state = "" if r in active else " (undone)"
        runs = ",".join(str(n) for n, _ in r.runs) or "-"
        lines.append(f"rollback {r.id[:13]}: to run {r.to_run} ({r.scope}), runs {runs}{state}")
    for fork_id, run, title in forks:
        at = f" at run {run}" if run else ""
        lines.append(f"fork {fork_id}{at}  {title or ''}".rstrip())
    return lines


RUN_COLUMNS = ("RUN", "PROVIDER", "THREAD", "HANDOFF", "STATUS", "PROMPT")
PROVIDER_THREAD_COLUMNS = ("THREAD", "PROVIDER", "STATUS", "NATIVE RUNS", "NATIVE ID")


def run_rows(graph: ThreadGraph) -> list[tuple[str, ...]]:
    """The runs table as ``segue thread show`` and ``segue tui`` show it (RUN_COLUMNS): each
    prompt's detected secrets masked, as ``segue sessions`` masks them."""
    names = provider_thread_names(graph)
    return [
        (
            str(r.ordinal),
            r.provider,
            names.get(r.provider_thread_id, "?"),
            (r.handoff_id or "-")[:13],
            r.status.value,
            short(mask(r.prompt)),
        )
        for r in graph.runs
    ]


def provider_thread_rows(graph: ThreadGraph) -> list[tuple[str, ...]]:
    """Each provider thread's row (PROVIDER_THREAD_COLUMNS)."""
    names = provider_thread_names(graph)
    return [
        (names[pt.id], pt.provider, pt.status.value, span(pt.native_runs), pt.native_id)
        for pt in graph.provider_threads
    ]
