"""The documents the commands print with ``--json``: a switch, an agent, a session row, a fleet's
plan and result, usage windows, a thread move and the recorded batches. Stable: fields are only
ever added.

Items and conversations are spelled by the model's codec (:mod:`segue.model.codec`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from segue.cli.options import picked
from segue.model.codec import SCHEMA_VERSION, to_json_value
from segue.model.conversation import LimitWindow
from segue.model.session_info import SessionInfo
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
        "source": picked(
            switch,
            "provider=source.meta.provider id=source.meta.id path=source_path "
            "skipped=source.skipped",
        ),
        "target": picked(
            target,
            "provider model context_window auto_compact_tokens budget_tokens budget_chars "
            "chars_per_token window_budget_tokens request_limit_tokens tokenizer=tokenizer.name "
            "tokenizer_factor output_cap_bytes profile_source=source",
        ),
        "strategy": plan.label.value,  # deprecated: the plan's label, as "label" says it
        **picked(plan, "label summary=loss_line"),
        "dropped_compactions": [
            {"state": c.state.value, "file": c.prov.file, "line": c.prov.line}
            for c in plan.dropped_compactions
        ],
        **picked(plan, "not_carried chars_before chars_after"),
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
        **picked(
            plan,
            "shrink capped_results capped_chars trimmed_results trimmed_chars notes secrets "
            "secrets_redacted",
        ),
        "items": len(plan.items),
        **picked(switch, "dry_run session_id path cwd"),
        "resume_command": None
        if switch.session_id is None or switch.dry_run
        else switch.resume_command,
        "warnings": list(switch.warnings),
        "thread": thread_move_to_json(switch.thread),
    }


def agent_to_json(agent: Agent) -> dict[str, Any]:
    """A running agent as the stable ``segue agents --json`` object."""
    return picked(
        agent, "provider pid pane session=session_id path=session_path cwd state reset_at command"
    )


def session_info_to_json(info: SessionInfo) -> dict[str, Any]:
    """A listing row as the stable ``segue sessions --json`` object."""
    return picked(
        info, "provider id cwd path title first_prompt model updated size turns state reset_at"
    )


def _fleet_agent(candidate: Candidate, outcome: Outcome | None) -> dict[str, Any]:
    switch = outcome.switch if outcome is not None else None
    return {
        **picked(candidate, "session=session_id provider cwd pane pid state reset_at size"),
        "skipped": candidate.skip,
        "error": outcome.error if outcome is not None else candidate.error,
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
        **picked(plan, "from=source to=target selection under reason"),
        "dry_run": result is None,
        "blocked": plan.blocked,
        "tally": counted.tally(),
        "summary": counted.tally_line(),
        "notes": [] if result is None else list(result.notes),
        "agents": agents,
    }


def window_to_json(window: LimitWindow | None) -> dict[str, Any] | None:
    if window is None:
        return None
    return picked(window, "name minutes used_percent resets_at scope source observed_at")


def usage_to_json(usages: list[ProviderUsage]) -> dict[str, Any]:
    """``segue usage --json``: per provider its verdict, the window that blocks, the model
    switch to try, every window, and notes about sources that could not answer."""
    return {
        "providers": [
            {
                **picked(usage, "provider exhausted"),
                "blocking": window_to_json(usage.blocking),
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
    handoff = (
        None
        if move.handoff_id is None
        else picked(move, "id=handoff_id covers form created_by_provider")
    )
    return {
        **picked(move, "id=thread_id strategy reason"),
        "handoff": handoff,
        **picked(move, "provider_thread covers form recorded"),
    }


def batch_summary_to_json(summary: BatchSummary) -> dict[str, Any]:
    return picked(
        summary, "batch=id created_at from=from_provider to=to_provider planned agents tally"
    )


def batch_to_json(batch: Batch) -> dict[str, Any]:
    """``{"batch", "from", "to", "agents": [...]}`` with when, where and how it ran."""
    return {
        **picked(
            batch.header,
            "batch=id from=from_provider to=to_provider created_at planned selection options "
            "host pid segue_version",
        ),
        "tally": batch.tally,
        "agents": [_batch_agent(agent) for agent in batch.agents],
    }


def _batch_agent(agent: BatchAgent) -> dict[str, Any]:
    r = agent.result
    return {
        **picked(r, "ordinal session provider path cwd pane pid state skipped error"),
        "outcome": agent.outcome,
        "label": r.label,
        "target": None
        if r.target_session is None
        else picked(r, "provider=target_provider session=target_session path=target_path"),
        "first": picked(r, "provider=first_provider session=first_session"),
        **picked(r, "thread_strategy=strategy summary resume_command warnings"),
        "recorded_at": to_json_value(agent.recorded_at),
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
        "source": picked(r, "provider id=session path"),
        "target": picked(r, "provider=target_provider"),
        **picked(r, "strategy=label label summary"),
        "dry_run": False,
        **picked(r, "session_id=target_session path=target_path cwd resume_command warnings"),
        "thread": None if r.strategy is None else {"strategy": r.strategy},
    }
