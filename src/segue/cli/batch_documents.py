"""Batches as JSON documents: what ``segue batches --json`` prints (stable; fields are only
ever added)."""

from __future__ import annotations

from typing import Any

from segue.model.codec import SCHEMA_VERSION
from segue.model.times import iso_z
from segue.store.records import AgentResult, Batch, BatchAgent, BatchSummary

__all__ = ["agent_to_json", "batch_to_json", "summary_to_json"]


def summary_to_json(summary: BatchSummary) -> dict[str, Any]:
    return {
        "batch": summary.id,
        "created_at": iso_z(summary.created_at),
        "from": summary.from_provider,
        "to": summary.to_provider,
        "planned": summary.planned,
        "agents": summary.agents,
        "tally": summary.tally,
    }


def batch_to_json(batch: Batch) -> dict[str, Any]:
    """``{"batch", "from", "to", "agents": [...]}`` with when, where and how it ran."""
    header = batch.header
    return {
        "batch": header.id,
        "from": header.from_provider,
        "to": header.to_provider,
        "created_at": iso_z(header.created_at),
        "planned": header.planned,
        "selection": header.selection,
        "options": header.options,
        "host": header.host,
        "pid": header.pid,
        "segue_version": header.segue_version,
        "tally": batch.tally,
        "agents": [agent_to_json(agent) for agent in batch.agents],
    }


def agent_to_json(agent: BatchAgent) -> dict[str, Any]:
    r = agent.result
    return {
        "ordinal": r.ordinal,
        "session": r.session,
        "provider": r.provider,
        "path": r.path,
        "cwd": r.cwd,
        "pane": r.pane,
        "pid": r.pid,
        "state": r.state,
        "skipped": r.skipped,
        "error": r.error,
        "outcome": agent.outcome,
        "label": r.label,
        "target": None
        if r.target_session is None
        else {"provider": r.target_provider, "session": r.target_session, "path": r.target_path},
        "first": {"provider": r.first_provider, "session": r.first_session},
        "thread_strategy": r.strategy,
        "summary": r.summary,
        "resume_command": r.resume_command,
        "warnings": list(r.warnings),
        "recorded_at": iso_z(agent.recorded_at),
        "switch": _switch(r),
    }


def _switch(r: AgentResult) -> dict[str, Any] | None:
    """The deprecated ``switch`` object: the whole ``segue switch --json`` document for a row an
    earlier version recorded, else the part of it the row keeps: who and where, the label, the
    summary line, the resume command, the warnings, and the thread move's strategy (the plan's
    figures are in ``segue switch --json``, not in the store)."""
    if r.switch is not None or r.target_session is None:
        return r.switch
    return {
        "schema": SCHEMA_VERSION,
        "source": {"provider": r.provider, "id": r.session, "path": r.path},
        "target": {"provider": r.target_provider},
        "strategy": r.label,
        "label": r.label,
        "summary": r.summary,
        "dry_run": False,
        "session_id": r.target_session,
        "path": r.target_path,
        "cwd": r.cwd,
        "resume_command": r.resume_command,
        "warnings": list(r.warnings),
        "thread": None if r.strategy is None else {"strategy": r.strategy},
    }
