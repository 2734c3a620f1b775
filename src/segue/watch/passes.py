"""One pass of ``segue watch``: observe (usage, watch's records, the batches) → decide
(:func:`segue.watch.policy.decide`, pure) → carry out (plans, questions, switches, relaunches)
→ record (``watch_events``), and the records read back."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from segue.fleet.batch import FleetPlan, FleetResult, plan_fleet, return_plan, run_fleet
from segue.fleet.moves import BatchMoves, batch_moves
from segue.fleet.relaunch import relaunch_on_model
from segue.model.conversation import Provider
from segue.model.errors import SegueError
from segue.providers import entry
from segue.running.agents import Agent, AgentState, list_agents
from segue.running.target import default_target, usable_providers
from segue.running.usage import ProviderUsage, read_usage, window_label
from segue.store import Store, open_store
from segue.store.ids import new_id
from segue.store.location import store_wait
from segue.store.store import StoreAbsent
from segue.store.tables import watch_events
from segue.watch.policy import (
    JUST_BACK,
    AgentSeen,
    Decisions,
    ModelSwitch,
    Move,
    Reading,
    Return,
    Seen,
    WatchEvent,
    WatchPolicy,
    decide,
    news,
)

__all__ = ["Ask", "observe", "watch_batches", "watch_pass"]

Ask = Callable[[str], bool]  # the question (with the preview) → the user's answer


def watch_pass(
    policy: WatchPolicy,
    *,
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
    ask: Ask | None = None,
    agents: Sequence[Agent] | None = None,
) -> list[WatchEvent]:
    """One pass of ``segue watch``: what it saw and did, recorded (a move or a return the
    moment it is made). ``ask`` answers the ``--ask`` questions (None: every question is
    declined); ``agents`` are the running agents (default: scanned when needed)."""
    env = dict(os.environ) if env is None else dict(env)
    seen = observe(policy, env, now or datetime.now(UTC))
    return _Pass(policy, env, seen, ask, agents).carry_out(decide(seen, policy))


def observe(policy: WatchPolicy, env: Mapping[str, str], now: datetime) -> Seen:
    """What a pass decides by: each provider's usage, what earlier passes recorded and where
    the batches moved sessions (a store that does not exist yet is not made)."""
    usages = read_usage(env, now=now, remote=policy.remote)
    history: list[WatchEvent] = []
    moves = BatchMoves()
    try:
        store = open_store(env=env, read_only=True)
    except StoreAbsent:
        store = None
    except SegueError:
        store = _open(env)  # a store an older segue made: upgraded, as any recording command does
    if store is not None:
        with store:
            history, moves = _load(store), batch_moves(store, now, policy.quiet)
    root = None if policy.under is None else Path(policy.under).expanduser()
    usable = usable_providers(env)
    readings = [_reading(u, u.provider in usable) for u in usages]
    return Seen(now, readings, history, moves, root)


def _reading(usage: ProviderUsage, usable: bool) -> Reading:
    window = usage.blocking
    if window is None:
        return Reading(usage.provider, usage.exhausted, suggestion=usage.suggestion, usable=usable)
    return Reading(
        usage.provider,
        usage.exhausted,
        window.resets_at,
        window_label(window),
        window.scope,
        usage.suggestion,
        usage.switch_model,
        usable,
    )


class _Pass:
    """The decisions carried out: each move and return recorded the moment it is made, the
    rest at the end when :func:`~segue.watch.policy.news` says it is new."""

    def __init__(
        self,
        policy: WatchPolicy,
        env: Mapping[str, str],
        seen: Seen,
        ask: Ask | None,
        agents: Sequence[Agent] | None,
    ) -> None:
        self.policy, self.env, self.seen, self.ask = policy, env, seen, ask
        self.now = seen.now
        self.exhausted = [r.provider for r in seen.readings if r.exhausted]
        self.given = self.agents = agents
        self.events: list[WatchEvent] = []
        self.recorded: list[WatchEvent] = []

    def carry_out(self, decisions: Decisions) -> list[WatchEvent]:
        back: dict[str, str] = {}  # the sessions brought back: neither side moves again
        for going in decisions.returns:
            self.bring_back(going, back)
        for state in decisions.states:
            self.events.append(state)
            switch = decisions.switches.get(state.provider) if state.provider else None
            if state.kind == "family_limit" and switch is not None:
                for event in self.switch_models(switch):
                    self.done(event)
        for move in decisions.moves:
            self.move(move, back)
        kept = news([e for e in self.events if e not in self.recorded], self.seen.history)
        if kept:
            with _open(self.env) as store:
                _record(store, kept)
        return [e for e in self.events if e in self.recorded or e in kept]

    def agents_now(self) -> list[Agent]:
        if self.agents is None:
            self.agents = list(list_agents(self.env))
        return list(self.agents)

    def asked(self, question: Callable[[], str]) -> bool:
        return self.ask is not None and self.ask(question())

    def done(self, event: WatchEvent) -> None:
        """A move or a return: recorded at once, so a later failure cannot make it happen
        again."""
        self.events.append(event)
        with _open(self.env) as store:
            _record(store, [event])
        self.recorded.append(event)

    def run(
        self,
        make: Callable[[], FleetPlan],
        ask: bool,
        why: str,
        failed: Callable[[SegueError], WatchEvent],
        declined: Callable[[tuple[str, ...]], WatchEvent],
    ) -> tuple[FleetResult, tuple[str, ...]] | None:
        """A plan made, asked for (with ``ask``) and run, with the sessions it tried to move;
        None when it cannot be made (``failed`` says so), moves nothing, or is declined."""
        try:
            plan = make()
        except SegueError as exc:
            self.events.append(failed(exc))
            return None
        tried = tuple(c.session_id for c in plan.to_switch)
        if not tried:
            return None  # every agent left is working (or gone): the next pass
        if ask and not self.asked(lambda: _question(plan, why)):
            self.events.append(declined(tried))
            return None
        return run_fleet(plan, env=self.env, relaunch=self.policy.relaunch), tried

    def bring_back(self, going: Return, back: dict[str, str]) -> None:
        now, to, batch = self.now, going.to, going.batch
        ran = self.run(
            # back to the provider this batch moved off (a chain's first one may be another)
            lambda: return_plan(
                batch,
                target=to,
                env=self.env,
                exclude=going.skip,
                redact_secrets=self.policy.redact_secrets,
            ),
            going.ask,
            going.why,
            lambda exc: WatchEvent(
                "return_declined", now, to, f"cannot return: {exc}", returns_batch=batch
            ),
            lambda _: WatchEvent("return_declined", now, to, "not confirmed", returns_batch=batch),
        )
        if ran is None:
            return
        moved = [o for o in ran[0].outcomes if o.switch is not None]
        sessions = tuple(o.candidate.session_id for o in moved)
        tally, made = ran[0].tally_line(), ran[0].batch_id
        self.done(
            WatchEvent("returned", now, to, tally, made, sessions=sessions, returns_batch=batch)
        )
        for o in moved:
            back.setdefault(o.candidate.session_id, JUST_BACK)
            if o.switch is not None and o.switch.session_id:
                back.setdefault(o.switch.session_id, JUST_BACK)
        self.agents = self.given  # the panes changed: scanned again when needed

    def move(self, move: Move, back: Mapping[str, str]) -> None:
        now, source, reset_at = self.now, move.source, move.reset_at
        ran = self.run(
            lambda: plan_fleet(
                source,
                default_target(source, self.env, now=now, exhausted=self.exhausted),
                exhausted=[source],
                agents=self.agents_now(),
                env=self.env,
                now=now,
                under=self.policy.under,
                exclude=move.exclude(back),
                redact_secrets=self.policy.redact_secrets,
            ),
            move.ask,
            f"{source.value} is {move.why}",
            lambda exc: WatchEvent("move_failed", now, source, str(exc)),
            lambda tried: WatchEvent(
                "move_declined", now, source, "not confirmed", reset_at=reset_at, sessions=tried
            ),
        )
        if ran is None:
            return
        result, tried = ran
        switched = tuple(o.candidate.session_id for o in result.outcomes if o.switch)
        kind = "moved" if switched and result.batch_id else "move_failed"
        tally = result.tally_line()
        self.done(
            WatchEvent(kind, now, source, tally, result.batch_id, reset_at, switched or tried)
        )

    def switch_models(self, switch: ModelSwitch) -> list[WatchEvent]:
        """The agents running the family a limit is on relaunched on the model suggested,
        asked for once or done; never twice for the same limit."""
        agents = self.agents_now()
        seen = [_seen(a, switch) for a in agents]
        picked = switch.pick(seen)
        chosen = [agent for agent, looked in zip(agents, seen, strict=True) if looked in picked]
        if not chosen:
            return []
        sessions = tuple(str(a.session_id) for a in chosen)
        provider, model, reset_at = switch.provider, switch.model, switch.reset_at
        question = (
            f"{provider.value}: the {switch.family} limit is used up; relaunch "
            f"{len(chosen)} agent{'s' if len(chosen) != 1 else ''} on {model}:\n"
            + "\n".join(f"  {a.session_id}  {a.pane.target if a.pane else '-'}" for a in chosen)
        )
        if switch.ask and not self.asked(lambda: question):
            no = "not confirmed"
            return [WatchEvent("model_declined", self.now, provider, no, None, reset_at, sessions)]
        said = "; ".join(relaunch_on_model(agent, model, self.env) for agent in chosen)
        return [WatchEvent("model_switched", self.now, provider, said, None, reset_at, sessions)]


def _seen(agent: Agent, switch: ModelSwitch) -> AgentSeen:
    """An agent as a family limit looks at it: the model its session runs is read only for
    an idle agent in a pane of the limited provider."""
    model = None
    if (
        agent.provider is switch.provider
        and agent.state is not AgentState.WORKING
        and agent.pane is not None
        and agent.session_path is not None
    ):
        with contextlib.suppress(SegueError, OSError, ValueError):
            model = entry(agent.provider).peek(agent.session_path).model
    working = agent.state is AgentState.WORKING
    pane = None if agent.pane is None else agent.pane.target
    return AgentSeen(agent.pid, agent.provider, agent.session_id, working, pane, agent.cwd, model)


def _question(plan: FleetPlan, why: str) -> str:
    lines = [f"{plan.source.value} → {plan.target.value}: {why}"]
    for c in plan.candidates:
        state = c.skip or c.error or c.loss_line
        lines.append(f"  {c.session_id}  {c.pane or '-'}  {state}")
    lines.append(plan.tally_line())
    return "\n".join(lines)


# --------------------------------------------------------------------------- the records


def _open(env: Mapping[str, str]) -> Store:
    return open_store(env=env, busy_timeout=store_wait(env))


def _load(store: Store) -> list[WatchEvent]:
    """What earlier passes recorded, oldest first."""
    with store.reading("cannot read watch's records") as connection:
        rows = connection.rows(
            "SELECT * FROM watch_events ORDER BY at, id", None, watch_events.kinds
        )
        events = []
        for r in rows:
            provider = None if r["provider"] is None else Provider(r["provider"])
            detail = r["detail"] or ""
            returns = None
            if r["kind"] in ("returned", "return_declined", "return_offered") and detail.startswith(
                "["
            ):
                returns, _, detail = detail[1:].partition("] ")
            sessions = tuple(str(s) for s in (r["sessions"] or ()))
            batch, reset_at, returns = r["batch_id"], r["reset_at"], returns or None
            events.append(
                WatchEvent(r["kind"], r["at"], provider, detail, batch, reset_at, sessions, returns)
            )
    return events


def _record(store: Store, events: Sequence[WatchEvent]) -> None:
    rows = [
        {
            "id": new_id(),
            "at": e.at,
            "kind": e.kind,
            "provider": None if e.provider is None else e.provider.value,
            "batch_id": e.batch_id,
            "reset_at": e.reset_at,
            "sessions": list(e.sessions),
            # a return names the batch it brings back first, in brackets
            "detail": f"[{e.returns_batch}] {e.detail}" if e.returns_batch else e.detail,
            "host": socket.gethostname(),
            "pid": os.getpid(),
        }
        for e in events
    ]
    with store.writing("cannot record what watch did") as connection:
        connection.insert(watch_events, rows)


def watch_batches(store: Store) -> dict[str, str]:
    """The batches ``segue watch`` made: id → ``moved`` (off an exhausted provider) or
    ``returned`` (back after the reset)."""
    with store.reading("cannot read watch's records") as connection:
        rows = connection.tuples(
            "SELECT batch_id, kind FROM watch_events "
            "WHERE batch_id IS NOT NULL AND kind IN ('moved', 'returned')"
        )
        return {str(batch): str(kind) for batch, kind in rows}
