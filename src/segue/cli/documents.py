"""The documents the commands print with ``--json``: a switch, an agent, a session row, a fleet's
plan and result, usage windows, a thread move and the recorded batches. Stable: fields are only
ever added.

Items and conversations are spelled by the model's codec (:mod:`segue.model.codec`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from segue.model.codec import SCHEMA_VERSION, to_json_value
from segue.model.conversation import LimitWindow
from segue.model.session_info import SessionInfo
from segue.model.times import iso_z
from segue.store.records import AgentResult, Batch, BatchAgent, BatchSummary

if TYPE_CHECKING:
    from segue.fleet.batch import Candidate, FleetPlan, FleetResult, Outcome
    from segue.running.agents import Agent
    from segue.running.usage import ProviderUsage
    from segue.switch import Switch
    from segue.switch.result import ThreadMove


def switch_to_json(switch: Switch) -> dict[str, Any]:
    """A switch (``segue.switch.Switch``) as the stable ``segue switch --json`` document, with
    how it moved its app thread."""
    plan = switch.plan
    target, before, after = plan.target, plan.measure_before, plan.measure_after
    return {
        "schema": SCHEMA_VERSION,
        "source": {
            "provider": switch.source.meta.provider.value,
            "id": switch.source.meta.id,
            "path": None if switch.source_path is None else str(switch.source_path),
            "skipped": [to_json_value(s) for s in switch.source.skipped],
        },
        "target": {
            "provider": target.provider.value,
            "model": target.model,
            "context_window": target.context_window,
            "auto_compact_tokens": target.auto_compact_tokens,
            "budget_tokens": target.budget_tokens,
            "budget_chars": target.budget_chars,
            "chars_per_token": target.chars_per_token,
            "window_budget_tokens": target.window_budget_tokens,
            "request_limit_tokens": target.request_limit_tokens,
            "tokenizer": target.tokenizer.name,
            "tokenizer_factor": target.tokenizer_factor,
            "output_cap_bytes": target.output_cap_bytes,
            "profile_source": target.source,
        },
        "strategy": plan.label.value,  # deprecated: the plan's label, as "label" says it
        "label": plan.label.value,
        "summary": plan.loss_line,
        "dropped_compactions": [
            {"state": c.state.value, "file": c.prov.file, "line": c.prov.line}
            for c in plan.dropped_compactions
        ],
        "not_carried": plan.not_carried,
        "chars_before": plan.chars_before,
        "chars_after": plan.chars_after,
        "tokens": {  # what the history costs the target by each limit, before and after
            "cli_estimate": {
                "before": before.cli_tokens,
                "after": after.cli_tokens,
                "limit": target.budget_tokens,
            },
            "tokenizer": {
                "name": target.counted_by,
                "before": before.tokens,
                "after": after.tokens,
                "limit": target.window_budget_tokens,
            },
            "deciding_limit": target.deciding_limit(after),
            "fits": plan.fits,
        },
        "shrink": None if plan.shrink is None else to_json_value(plan.shrink),
        "capped_results": plan.capped_results,
        "capped_chars": plan.capped_chars,
        "trimmed_results": plan.trimmed_results,
        "trimmed_chars": plan.trimmed_chars,
        "notes": list(plan.notes),
        "secrets": dict(plan.secrets),
        "secrets_redacted": plan.secrets_redacted,
        "items": len(plan.items),
        "dry_run": switch.dry_run,
        "session_id": switch.session_id,
        "path": None if switch.path is None else str(switch.path),
        "cwd": switch.cwd,
        "resume_command": None
        if switch.session_id is None or switch.dry_run
        else switch.resume_command,
        "warnings": list(switch.warnings),
        "thread": thread_move_to_json(switch.thread),
    }


def agent_to_json(agent: Agent) -> dict[str, Any]:
    """A running agent as the stable ``segue agents --json`` object."""
    return {
        "provider": agent.provider.value,
        "pid": agent.pid,
        "pane": to_json_value(agent.pane),
        "session": agent.session_id,
        "path": None if agent.session_path is None else str(agent.session_path),
        "cwd": agent.cwd,
        "state": agent.state.value,
        "reset_at": None if agent.reset_at is None else iso_z(agent.reset_at),
        "command": agent.command,
    }


def session_info_to_json(info: SessionInfo) -> dict[str, Any]:
    """A listing row as the stable ``segue sessions --json`` object."""
    return {
        "provider": info.provider.value,
        "id": info.id,
        "cwd": info.cwd,
        "path": info.path,
        "title": info.title,
        "first_prompt": info.first_prompt,
        "model": info.model,
        "updated": info.updated,
        "size": info.size,
        "turns": info.turns,
        "state": info.state.value,
        "reset_at": None if info.reset_at is None else iso_z(info.reset_at),
    }


def _fleet_agent(candidate: Candidate, outcome: Outcome | None) -> dict[str, Any]:
    switch = outcome.switch if outcome is not None else None
    error = outcome.error if outcome is not None else candidate.error
    return {
        "session": candidate.session_id,
        "provider": candidate.provider.value,
        "cwd": candidate.cwd,
        "pane": candidate.pane,
        "pid": candidate.pid,
        "state": candidate.state,
        "reset_at": None if candidate.reset_at is None else iso_z(candidate.reset_at),
        "size": candidate.size,
        "skipped": candidate.skip,
        "error": error,
        "plan": candidate.loss_line,
        "notes": [] if outcome is None else list(outcome.notes),
        "switch": None if switch is None else switch_to_json(switch),
    }


def fleet_to_json(plan: FleetPlan, result: FleetResult | None = None) -> dict[str, Any]:
    """``segue switch --from … --json``: the batch, its agents and their switches; a preview
    (``--dry-run``, or nothing to switch, no ``result``) has the same keys, with what it would
    do."""
    agents = (
        [_fleet_agent(c, None) for c in plan.candidates]
        if result is None
        else [_fleet_agent(o.candidate, o) for o in result.outcomes]
    )
    counted = plan if result is None else result
    return {
        "batch": None if result is None else result.batch_id,
        "from": plan.source.value,
        "to": plan.target.value,
        "selection": plan.selection.value,
        "under": plan.under,
        "reason": plan.reason,
        "dry_run": result is None,
        "blocked": plan.blocked,
        "tally": counted.tally(),
        "summary": counted.tally_line(),
        "notes": [] if result is None else list(result.notes),
        "agents": agents,
    }


def window_to_json(window: LimitWindow) -> dict[str, Any]:
    return {
        "name": window.name,
        "minutes": window.minutes,
        "used_percent": window.used_percent,
        "resets_at": to_json_value(window.resets_at),
        "scope": window.scope,
        "source": window.source,
        "observed_at": to_json_value(window.observed_at),
    }


def usage_to_json(usages: list[ProviderUsage]) -> dict[str, Any]:
    """``segue usage --json``: per provider its verdict, the window that blocks, the model
    switch to try, every window, and notes about sources that could not answer."""
    return {
        "providers": [
            {
                "provider": usage.provider.value,
                "exhausted": usage.exhausted,
                "blocking": None if usage.blocking is None else window_to_json(usage.blocking),
                "suggestion": usage.suggestion,
                "windows": [window_to_json(w) for w in usage.windows],
                "notes": list(usage.notes),
            }
            for usage in usages
        ]
    }


def thread_move_to_json(move: ThreadMove | None) -> dict[str, Any] | None:
    """How a switch moved its app thread (``segue switch --json`` → ``"thread"``)."""
    if move is None:
        return None
    handoff: dict[str, Any] | None = None
    if move.handoff_id is not None:
        handoff = {
            "id": move.handoff_id,
            "covers": to_json_value(move.covers),
            "form": move.form,
            "created_by_provider": move.created_by_provider,
        }
    return {
        "id": move.thread_id,
        "strategy": move.strategy,
        "reason": move.reason,
        "handoff": handoff,
        "provider_thread": move.provider_thread,
        "covers": to_json_value(move.covers),
        "form": move.form,
        "recorded": move.recorded,
    }


def batch_summary_to_json(summary: BatchSummary) -> dict[str, Any]:
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
        "agents": [_batch_agent(agent) for agent in batch.agents],
    }


def _batch_agent(agent: BatchAgent) -> dict[str, Any]:
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
