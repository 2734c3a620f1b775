"""The fleet at a glance: each provider's usage, and every agent that runs or is parked, with
what a switch of it would do. What ``segue tui`` shows on its home screen; the same listing,
usage reading and dry runs as ``segue agents``, ``segue usage`` and ``segue switch --dry-run``.

Loaded in two steps so a screen can paint before the slow part: :func:`load_fleet` (the usage,
the agents scan, the session listing) and then :func:`plan_rows` (a dry-run switch of each row
to the other provider, row by row).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from segue.fleet.batch import is_below, is_parked, plan_fleet, under_root
from segue.fleet.moves import sessions_away
from segue.model.conversation import Provider
from segue.model.errors import SegueError
from segue.model.session_info import SessionInfo, SessionState
from segue.providers.sessions import list_sessions
from segue.running.agents import Agent, AgentState, list_agents
from segue.running.target import default_target, usable_providers
from segue.running.usage import ProviderUsage, read_usage

__all__ = ["FleetRow", "FleetView", "load_fleet", "plan_rows"]


class RowState:
    WORKING = "working"  # a live agent in the middle of a turn
    WAITING = "waiting"  # a last turn that never finished, and no process runs it
    IDLE = "idle"  # a live agent between turns
    PARKED = "parked"  # stopped by a usage limit that has not reset
    ERROR = "error"  # a session file segue cannot read


_AGENT_STATES = {AgentState.WORKING: RowState.WORKING, AgentState.PARKED: RowState.PARKED}


class FleetRow(msgspec.Struct):
    """One agent or parked session, and what switching it to the other provider would do."""

    provider: Provider
    session_id: str
    path: Path | None
    cwd: str | None
    title: str
    size: int
    state: str  # one of RowState
    reset_at: datetime | None = None
    pane: str | None = None  # its tmux pane
    pid: int | None = None
    agent: Agent | None = None
    problem: str | None = None  # why it cannot be read (an error row)
    label: str | None = None  # the dry run's plan: native / raw / shrunk
    loss_line: str | None = None  # … and what it would lose
    plan_note: str | None = None  # why it would not be switched, or cannot be
    away: str | None = None  # a batch moved it to the other provider, and it is not back

    @property
    def key(self) -> str:
        """What names the row across reloads: its file, else its process."""
        return str(self.path) if self.path is not None else f"pid:{self.pid}"

    @property
    def project(self) -> str:
        return os.path.basename(self.cwd.rstrip("/")) if self.cwd else "?"


class FleetView(msgspec.Struct):
    usages: list[ProviderUsage]
    rows: list[FleetRow]
    agents: list[Agent]
    problems: list[str] = msgspec.field(default_factory=list)  # what could not be listed
    now: datetime = msgspec.field(default_factory=lambda: datetime.now(UTC))

    @property
    def exhausted(self) -> list[Provider]:
        return [u.provider for u in self.usages if u.exhausted]


def _session_row(info: SessionInfo, agent: Agent | None) -> FleetRow:
    state = {
        SessionState.LIMIT: RowState.PARKED,
        SessionState.WORKING: RowState.WAITING,
    }.get(info.state, RowState.IDLE)
    row = FleetRow(
        info.provider,
        info.id,
        Path(info.path),
        info.cwd,
        info.label,
        info.size,
        state,
        info.reset_at if state == RowState.PARKED else None,
    )
    if agent is not None:
        row.agent, row.pid = agent, agent.pid
        row.pane = agent.pane.target if agent.pane is not None else None
        row.state = _AGENT_STATES.get(agent.state, RowState.IDLE)
        row.reset_at = agent.reset_at or row.reset_at
        row.cwd = row.cwd or agent.cwd
    return row


def _agent_row(agent: Agent) -> FleetRow:
    """A live agent whose session file is not written yet (or not listed)."""
    return FleetRow(
        agent.provider,
        agent.session_id or f"pid {agent.pid}",
        agent.session_path,
        agent.cwd,
        "",
        0,
        _AGENT_STATES.get(agent.state, RowState.IDLE),
        agent.reset_at,
        agent.pane.target if agent.pane is not None else None,
        agent.pid,
        agent,
    )


def _under(row: FleetRow, root: Path | None) -> bool:
    if root is None:
        return True
    return is_below(row.cwd or (str(row.path.parent) if row.path is not None else None), root)


def load_fleet(
    env: Mapping[str, str] | None = None,
    *,
    now: datetime | None = None,
    remote: bool = True,
    under: str | None = None,
    agents: Sequence[Agent] | None = None,
    usages: Sequence[ProviderUsage] | None = None,
) -> FleetView:
    """Each provider's usage, and a row per running agent and per parked session (a limit that
    has not reset), parked first, then working, waiting, idle; a session file that cannot be
    read is a row with its problem. Rows keep no dry run yet (:func:`plan_rows`).
    ``agents`` and ``usages`` are read from the machine when not given; ``under`` keeps only
    what works in that directory or below it."""
    env = dict(os.environ) if env is None else dict(env)
    now = now or datetime.now(UTC)
    root = None if under is None else under_root(under)
    found = list(list_agents(env, every_home=True) if agents is None else agents)
    if usages is None:  # the providers this user runs here (another is noise on the screen)
        usable = usable_providers(env)
        everyone = read_usage(env, now=now, remote=remote)
        usages = [u for u in everyone if u.provider in usable] or everyone
    read = list(usages)
    listing = list_sessions(None, None, env)
    by_path = {a.session_path: a for a in found if a.session_path is not None}
    rows: dict[str, FleetRow] = {}
    for info in listing.sessions:
        live = by_path.get(Path(info.path))
        if live is None and not is_parked(info, now):
            continue
        row = _session_row(info, live)
        rows[row.key] = row
    for agent in found:
        if agent.session_path is None or str(agent.session_path) not in rows:
            row = _agent_row(agent)
            rows.setdefault(row.key, row)
    for provider, path, why in listing.broken:
        rows[str(path)] = FleetRow(
            provider, path.stem, path, None, "", 0, RowState.ERROR, problem=why
        )
    order = [RowState.PARKED, RowState.WORKING, RowState.WAITING, RowState.IDLE, RowState.ERROR]
    kept = [r for r in rows.values() if _under(r, root) or r.state == RowState.ERROR]
    kept.sort(key=lambda r: (order.index(r.state), r.provider.value, r.cwd or "", r.session_id))
    problems: list[str] = []
    try:
        away = sessions_away(env)
    except SegueError as exc:  # a store that cannot be read: said, and the fleet still shown
        away, problems = {}, [f"the batches: {exc}"]
    for row in kept:
        row.away = away.get(row.session_id)
    problems += [p for p in listing.problems if all(p != why for _, _, why in listing.broken)]
    return FleetView(read, kept, found, problems, now)


def plan_rows(
    view: FleetView,
    env: Mapping[str, str] | None = None,
    *,
    done: Callable[[FleetRow], None] | None = None,
    redact_secrets: bool = False,
    stop: Callable[[], bool] | None = None,
) -> None:
    """Fill each row's dry-run switch to its provider's default target (the label and what it
    would lose), as ``segue switch --dry-run`` plans it; ``done`` is told of each row as it is
    planned, and ``stop`` is asked before each one. A row that cannot be planned says why."""
    env = dict(os.environ) if env is None else dict(env)
    targets: dict[Provider, Provider] = {}  # each provider's, worked out once (config, PATH)
    for row in view.rows:
        if stop is not None and stop():
            return
        # (a label: planned already, by a caller that kept the last plan)
        if row.label is None and row.away is not None:  # its work goes on over there
            row.plan_note = row.away  # (the return brings it back)
        elif row.label is None and row.path is None:
            row.plan_note = "no session file yet"
        if row.label is None and row.plan_note is None and row.state != RowState.ERROR:
            try:
                if row.provider not in targets:
                    targets[row.provider] = default_target(row.provider, env, usages=view.usages)
                plan = plan_fleet(
                    row.provider,
                    targets[row.provider],
                    sessions=[str(row.path)],
                    env=env,
                    agents=view.agents,
                    redact_secrets=redact_secrets,
                )
            except SegueError as exc:
                row.plan_note = str(exc)
            else:
                for c in plan.candidates:
                    row.label, row.loss_line = c.label, c.loss_line
                    row.plan_note = c.skip or c.error
        if done is not None:
            done(row)
