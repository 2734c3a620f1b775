"""The fleet switch: every agent stuck on an exhausted provider moved to another one in one step.

plan (which sessions, in which direction, each one's dry-run switch: label and loss line) →
one confirmation → the switches, in parallel → optionally, relaunch each agent's tmux pane on its
new session → a tally, and a batch recorded in segue's store (``segue batches``), from which
``segue switch --return`` takes the agents back.

The source provider is never asked for anything unless the user opts into a source-side
compaction (refused when the source is exhausted), and no source process is touched before the
switch of its session is written.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path

import msgspec
from msgspec.structs import replace

from segue.fleet.relaunch import relaunch_pane
from segue.model.conversation import Provider
from segue.model.errors import SegueError
from segue.model.session_info import SessionInfo, SessionState
from segue.model.times import in_time, parse_iso, utc_minutes
from segue.providers import entry, known
from segue.providers.sessions import find_session, list_sessions
from segue.running.agents import Agent, in_home, list_agents
from segue.running.target import default_target
from segue.running.usage import ProviderUsage, exhausted_providers, read_usage, window_label
from segue.store import AgentResult, open_store
from segue.store.location import store_wait
from segue.store.store import StoreAbsent
from segue.switch import Preview, Switch, ThreadMove, carry_out, preview_switch, switch_session
from segue.transforms.plan import Label

__all__ = [
    "ArrivalCompact",
    "Candidate",
    "FleetPlan",
    "FleetResult",
    "Selection",
    "plan_fleet",
    "run_fleet",
]

RECENT_LIMIT = timedelta(hours=24)  # a limit with no reset time parks a session this long


class Selection(StrEnum):
    DEFAULT = "default"  # the exhausted provider's live agents and limit-parked sessions
    ALL = "all"  # every session of the source provider
    CWD = "cwd"  # the source provider's sessions of one directory
    SESSIONS = "sessions"  # the sessions named


class ArrivalCompact(StrEnum):
    AUTO = "auto"  # above half the target's window
    ON = "on"
    OFF = "off"


class Candidate(msgspec.Struct):
    """One session of the batch: what it is, what it is doing, and what its switch would do."""

    provider: Provider
    session_id: str
    path: Path
    cwd: str | None
    size: int
    state: str  # working / idle / parked (or the listing's idle / working / limit)
    reset_at: datetime | None = None
    pane: str | None = None  # the tmux pane it runs in, for people
    pid: int | None = None
    agent: Agent | None = None  # its live process
    skip: str | None = None  # why it will not be switched
    preview: Preview | None = None  # the dry run
    error: str | None = None  # why its switch cannot be done (or failed)

    @property
    def label(self) -> str | None:
        return None if self.preview is None else self.preview.plan.label.value

    @property
    def who(self) -> str:
        """The agent for people: its tmux pane, else its process, else its session."""
        return self.pane or (f"pid {self.pid}" if self.pid else self.session_id[:13])

    @property
    def plan_line(self) -> str:
        """What its switch would do: why it is skipped or cannot be, else what it would lose."""
        if self.skip:
            return f"skipped: {self.skip}"
        if self.error:
            return f"cannot switch: {self.error}"
        return self.loss_line or ""

    @property
    def loss_line(self) -> str | None:
        return None if self.preview is None else self.preview.plan.loss_line


class FleetPlan(msgspec.Struct):
    source: Provider
    target: Provider
    selection: Selection
    candidates: list[Candidate]
    reason: str  # why this direction
    redact_secrets: bool = False
    under: str | None = None  # only sessions working in this directory or below it
    # a return to a provider segue's usage readings say is still exhausted: that, in one line
    # (with its reset time); :func:`run_fleet` refuses such a plan unless forced
    blocked: str | None = None

    @property
    def to_switch(self) -> list[Candidate]:
        return [c for c in self.candidates if c.skip is None and c.error is None]

    def tally(self) -> dict[str, int]:
        """What the batch would do, agent by agent: each preview's label, or failed / skipped."""
        return _in_order(
            "skipped" if c.skip else "failed" if c.error else (c.label or "failed")
            for c in self.candidates
        )

    def tally_line(self) -> str:
        """``Would switch 3 agents to Claude Code: 2 native, 1 shrunk (1 skipped: working)``."""
        skipped = [str(c.skip) for c in self.candidates if c.skip]
        failing = f"{len(self.failing)} failing" if self.failing else None
        n = len(self.to_switch)
        return _tally_line("Would switch", n, self.target, self.tally(), skipped, failing)

    @property
    def failing(self) -> list[Candidate]:
        """The agents whose switch cannot be done (shown as failed rows)."""
        return [c for c in self.candidates if c.skip is None and c.error is not None]


class Outcome(msgspec.Struct):
    candidate: Candidate
    switch: Switch | None = None
    error: str | None = None
    notes: list[str] = msgspec.field(default_factory=list)  # relaunch, compaction
    thread: ThreadMove | None = None  # how it moved its app thread


class FleetResult(msgspec.Struct):
    plan: FleetPlan
    outcomes: list[Outcome]
    batch_id: str | None = None
    notes: list[str] = msgspec.field(default_factory=list)

    def tally(self) -> dict[str, int]:
        return _in_order(
            o.switch.plan.label.value
            if o.switch is not None
            else "failed"
            if o.error
            else "skipped"
            for o in self.outcomes
        )

    @property
    def failed(self) -> bool:
        """Whether any agent's switch failed (the command then exits non-zero)."""
        return any(o.error for o in self.outcomes)

    def tally_line(self) -> str:
        """``Switched 9 agents to Codex: 5 native, 3 raw, 1 shrunk (1 skipped: working)``."""
        switched = sum(1 for o in self.outcomes if o.switch is not None)
        skipped = [str(o.candidate.skip) for o in self.outcomes if o.switch is None and not o.error]
        failed = sum(1 for o in self.outcomes if o.error)
        failing = f"{failed} failed" if failed else None
        return _tally_line("Switched", switched, self.plan.target, self.tally(), skipped, failing)


def _in_order(keys: Iterable[str]) -> dict[str, int]:
    """How many of each key: the plan labels first (in Label's order), then failed, skipped."""
    counts = Counter(keys)
    order = [label.value for label in Label] + ["failed", "skipped"]
    return {k: counts[k] for k in order if k in counts}


def _tally_line(
    done: str,
    n: int,
    target: Provider,
    tally: Mapping[str, int],
    skipped: Sequence[str],
    failed: str | None,
) -> str:
    """``<done> N agents to <target>: <labels> (K skipped: <reasons>; <failed>)``."""
    labels = ", ".join(f"{v} {k}" for k, v in tally.items() if k in set(Label))
    line = f"{done} {n} agent{'s' if n != 1 else ''} to {entry(target).label}"
    line += f": {labels}" if labels else ""
    extra = [f"{len(skipped)} skipped: {', '.join(sorted(set(skipped)))}"] if skipped else []
    extra += [failed] if failed else []
    return line + (f" ({'; '.join(extra)})" if extra else "")


# -- planning ------------------------------------------------------------------------------------


def plan_fleet(
    source: Provider | None = None,
    target: Provider | None = None,
    *,
    sessions: Sequence[str] = (),
    cwd: str | None = None,
    all_sessions: bool = False,
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
    exhausted: Sequence[Provider] | None = None,
    agents: Sequence[Agent] | None = None,
    redact_secrets: bool = False,
    under: str | None = None,
    clean: bool = False,
    exclude: Mapping[str, str] | None = None,
) -> FleetPlan:
    """Which sessions a fleet switch takes, and what each one's switch would do.

    ``exhausted`` (the providers whose usage is exhausted) and ``agents`` (the running agents)
    are read from the machine when not given. By default only the agents of ``env``'s home of
    the CLI are taken (another home is another account, whose usage is its own); a session
    named in ``sessions`` is taken with its agent, whatever its home. ``under`` keeps only the
    sessions and agents working in that directory or below it (a session whose directory is
    unknown is left out).
    ``exclude``: sessions skipped with the reason given (no dry run is made of them)."""
    env = dict(os.environ) if env is None else dict(env)
    now = now or datetime.now(UTC)
    root = None if under is None else under_root(under)
    selection = (
        Selection.SESSIONS
        if sessions
        else Selection.ALL
        if all_sessions
        else Selection.CWD
        if cwd
        else Selection.DEFAULT
    )
    source, reason = _direction(source, sessions, env, exhausted)
    target = default_target(source, env, now=now) if target is None else target
    if source is target:
        raise SegueError(f"the source and the target are both {source.value}")
    running = list(_running_agents(env) if agents is None else agents)
    candidates = _select(source, selection, sessions, cwd, env, now, running)
    if root is not None:
        candidates = [c for c in candidates if _is_under(c, root)]
    for candidate in candidates:
        if candidate.skip is None and exclude and candidate.session_id in exclude:
            candidate.skip = exclude[candidate.session_id]
        if candidate.skip is not None or candidate.error is not None:
            continue
        try:
            candidate.preview = preview_switch(
                str(candidate.path),
                target,
                clean=clean,
                env=switch_env(env, candidate.agent, target),
                redact_secrets=redact_secrets,
                agents=running,
            )
        except SegueError as exc:
            candidate.error = str(exc)
    return FleetPlan(
        source,
        target,
        selection,
        candidates,
        reason,
        redact_secrets,
        under=None if root is None else str(root),
    )


def under_root(under: str) -> Path:
    """The folder ``--under`` names, resolved (one line when it cannot be)."""
    try:
        return Path(under).expanduser().resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # ~nosuchuser, a symlink loop, a NUL
        raise SegueError(f"--under {under}: {exc}") from None


def is_below(where: str | None, root: Path) -> bool:
    """Whether the folder ``where`` is ``root`` or below it (unknown or unresolvable: no)."""
    if not where:
        return False
    try:
        return Path(where).resolve().is_relative_to(root)
    except (OSError, RuntimeError, ValueError):  # a path that cannot be resolved: not under it
        return False


def _is_under(candidate: Candidate, root: Path) -> bool:
    agent_cwd = candidate.agent.cwd if candidate.agent is not None else None
    return is_below(candidate.cwd or agent_cwd, root)


def _direction(
    source: Provider | None,
    sessions: Sequence[str],
    env: Mapping[str, str],
    exhausted: Sequence[Provider] | None,
) -> tuple[Provider, str]:
    if source is not None:
        return source, "chosen"
    if sessions:
        provider, _ = find_session(sessions[0], env)
        return provider, "the provider of the sessions named"
    if exhausted is None:
        exhausted = _exhausted_providers(env)
    if len(exhausted) == 1:
        return exhausted[0], f"{exhausted[0].value} is exhausted"
    if not exhausted:
        raise SegueError("no provider is exhausted now; say which to move off with --from")
    names = " and ".join(p.value for p in exhausted)
    raise SegueError(f"{names} are both exhausted; say which to move off with --from")


def _exhausted_providers(env: Mapping[str, str]) -> list[Provider]:
    return exhausted_providers(read_usage(env))


def _running_agents(env: Mapping[str, str]) -> list[Agent]:
    return list(list_agents(env, every_home=True))


def _select(
    source: Provider,
    selection: Selection,
    sessions: Sequence[str],
    cwd: str | None,
    env: Mapping[str, str],
    now: datetime,
    running: Sequence[Agent],
) -> list[Candidate]:
    by_path: dict[Path, Agent] = {}
    for agent in running:
        if agent.provider is source and agent.session_path is not None:
            by_path[agent.session_path] = agent
    found: dict[Path, Candidate] = {}
    if selection is Selection.SESSIONS:
        for ref in sessions:
            try:
                provider, path = find_session(ref, env)
                if provider is not source:
                    raise SegueError(f"{ref} is a {provider.value} session, not {source.value}")
                row = entry(provider).peek(path)
            except SegueError as exc:  # one session that cannot be found never stops the batch
                missing = Candidate(source, ref, Path(ref), None, 0, "missing", error=str(exc))
                found[Path(f"\0{ref}")] = missing
                continue
            found[path] = _candidate(row, by_path.get(path))
    else:
        where = cwd if selection is Selection.CWD else None
        listing = list_sessions(source, where, env)
        for row in listing.sessions:
            path = Path(row.path)
            live = by_path.get(path)
            if selection is Selection.DEFAULT and live is None and not is_parked(row, now):
                continue
            found[path] = _candidate(row, live)
        if selection is Selection.DEFAULT:
            for path, agent in by_path.items():
                # (the agents of another home of the CLI are another account's: named by their
                # session, they are moved; by default, never)
                if path not in found and path.is_file() and in_home(agent, env):
                    found[path] = _candidate(entry(source).peek(path), agent)
    candidates = sorted(found.values(), key=lambda c: (c.cwd or "", c.session_id))
    for candidate in candidates:
        # A live agent in the middle of a turn is left alone (unless a limit parked it); a
        # session whose last turn never finished and that no process runs is carried as it is.
        if candidate.state == "working" and candidate.pid is not None:
            candidate.skip = "working"
    return candidates


def is_parked(row: SessionInfo, now: datetime) -> bool:
    """A session whose last word is a limit that has not reset (a limit that names no reset
    time parks it for :data:`RECENT_LIMIT`)."""
    if row.state is not SessionState.LIMIT:
        return False
    if row.reset_at is not None:
        return row.reset_at > now
    when = parse_iso(row.updated)
    return when is not None and now - when < RECENT_LIMIT


def _candidate(row: SessionInfo, agent: Agent | None) -> Candidate:
    state = "parked" if row.state is SessionState.LIMIT else row.state.value
    reset = row.reset_at
    pane = pid = None
    if agent is not None:
        state = agent.state.value
        reset = agent.reset_at or reset
        pane = agent.pane.target if agent.pane is not None else None
        pid = agent.pid
    return Candidate(
        row.provider, row.id, Path(row.path), row.cwd, row.size, state, reset, pane, pid, agent
    )


def switch_env(env: Mapping[str, str], agent: Agent | None, target: Provider) -> dict[str, str]:
    """The environment an agent's switch runs with: segue's own, except for an agent of
    another home, whose session is in its home: there each CLI's home is the one its process
    has (its switch is written where its CLI, relaunched in its own environment, reads it).
    An agent whose home cannot be told, or cannot be written, is refused in one line."""
    env = dict(env)
    if agent is None or in_home(agent, env):
        return env
    who = agent.pane.target if agent.pane is not None else f"pid {agent.pid}"
    if not agent.env_home.get("HOME"):
        raise SegueError(
            f"{who} runs in another home, which its process does not name (no HOME): "
            "not switched, as its session would be written elsewhere"
        )
    for e in (entry(agent.provider), entry(target)):
        try:
            home = e.home(agent.env_home)
        except SegueError as exc:
            raise SegueError(f"{who}: its home of {e.label}: {exc}") from None
        if e.home_variable is not None:
            env[e.home_variable] = str(home)
        elif home != e.home(env):  # (only a HOME of its own could say it: not segue's to change)
            raise SegueError(f"{who}: {e.label} of its home ({home}) cannot be written by segue")
        if e.provider is target and not _writable(home):
            raise SegueError(
                f"{who}: {e.label} of its home ({home}) cannot be written: not switched"
            )
    return env


def _writable(folder: Path) -> bool:
    """Whether segue can create or write ``folder``: its nearest existing folder."""
    here = folder
    while not here.exists():
        if here.parent == here:
            return False
        here = here.parent
    return here.is_dir() and os.access(here, os.W_OK | os.X_OK)


# -- running -------------------------------------------------------------------------------------

Progress = Callable[[Outcome], None]


def check_source_compact(plan: FleetPlan, exhausted: Sequence[Provider] | None = None) -> None:
    """``--source-compact`` asks the source CLI for a turn: refused when the source is
    exhausted (that turn cannot happen, and its limit text must never become a summary)."""
    exhausted = _exhausted_providers(os.environ) if exhausted is None else exhausted
    if plan.source in exhausted:
        raise _exhausted_source(plan.source)


def _exhausted_source(provider: Provider) -> SegueError:
    return SegueError(
        f"--source-compact asks {entry(provider).label} for a turn, but {provider.value} "
        "is exhausted; switch without it (segue carries the history itself)"
    )


def run_fleet(
    plan: FleetPlan,
    *,
    env: Mapping[str, str] | None = None,
    workers: int | None = None,
    record: bool = True,
    relaunch: bool = False,
    arrival_compact: ArrivalCompact = ArrivalCompact.AUTO,
    source_compact: bool = False,
    progress: Progress | None = None,
    force: bool = False,
) -> FleetResult:
    """Switch every candidate the plan takes, in parallel; skipped and failed ones are reported,
    never fatal. Then, per switched agent: the target's compaction on arrival, and with
    ``relaunch`` its tmux pane restarted on the new session (its source process ended only
    now, after the switch is written). Records the batch in segue's store. A return to a
    provider still exhausted (``plan.blocked``) is refused, unless ``force``."""
    env = dict(os.environ) if env is None else dict(env)
    if plan.blocked and not force:
        raise SegueError(f"{plan.blocked}; nothing was moved back")
    outcomes = [Outcome(c, error=c.error) for c in plan.candidates]
    todo = [o for o in outcomes if o.candidate.skip is None and o.error is None]

    def one(outcome: Outcome) -> None:
        candidate = outcome.candidate
        try:
            mine = switch_env(env, candidate.agent, plan.target)
            if source_compact and candidate.cwd:  # (a compaction never raises)
                _, note = entry(plan.source).compact(
                    candidate.path, candidate.session_id, candidate.cwd, mine
                )
                outcome.notes.append(f"source compaction: {note}")
            if candidate.preview is not None and not source_compact:
                outcome.switch = carry_out(candidate.preview, mine)
            else:
                outcome.switch = switch_session(
                    str(candidate.path),
                    plan.target,
                    env=mine,
                    redact_secrets=plan.redact_secrets,
                    agents=[] if candidate.agent is None else [candidate.agent],
                )
            outcome.thread = outcome.switch.thread
        except SegueError as exc:
            outcome.error = str(exc)
        else:
            arrived = arrival_compaction(outcome.switch, arrival_compact, mine)
            outcome.notes += [arrived] if arrived else []
        if progress is not None:
            progress(outcome)

    count = workers or min(8, max(1, len(todo)))
    with ThreadPoolExecutor(max_workers=count) as pool:
        list(pool.map(one, todo))
    result = FleetResult(plan, outcomes)
    if relaunch:
        for outcome in outcomes:
            if outcome.switch is not None:
                _relaunch(outcome, env)
    if record:
        _record(result, env)
    return result


def arrival_compaction(
    switch: Switch, mode: ArrivalCompact, env: Mapping[str, str] | None = None
) -> str | None:
    """Run the target CLI's own compaction on a session a switch wrote, when ``mode`` asks for
    it (``auto``: above half the target's window, for a CLI that does not compact on arrival by
    itself); what happened, or None when it was not asked for."""
    env = os.environ if env is None else env
    if not switch.written or switch.path is None or switch.session_id is None:
        return None
    target_entry = entry(switch.target)
    profile = switch.plan.target
    big = switch.plan.measure_after.tokens > profile.context_window // 2
    wanted = mode is ArrivalCompact.ON or (
        mode is ArrivalCompact.AUTO and big and not target_entry.compacts_on_arrival
    )
    if not wanted:
        return None
    _, note = target_entry.compact(switch.path, switch.session_id, switch.cwd, env)
    return f"arrival compaction: {note}"


def compact_source(ref: str, env: Mapping[str, str] | None = None) -> str:
    """``--source-compact`` for one session: its own CLI compacts it first, refused when its
    provider is exhausted (that turn cannot happen). What happened."""
    env = os.environ if env is None else env
    provider, path = find_session(ref, env)
    if provider in _exhausted_providers(env):
        raise _exhausted_source(provider)
    info = entry(provider).peek(path)
    if not info.cwd:
        return "source compaction: skipped (the session records no working directory)"
    _, note = entry(provider).compact(path, info.id, info.cwd, env)
    return f"source compaction: {note}"


def _relaunch(outcome: Outcome, env: Mapping[str, str]) -> None:
    switch = outcome.switch
    assert switch is not None and switch.session_id is not None
    candidate = outcome.candidate
    if candidate.agent is None or candidate.pane is None:
        outcome.notes.append(f"not in a tmux pane: continue it with {switch.resume_command}")
        return
    outcome.notes.append(relaunch_pane(candidate.agent, switch, env))


def return_plan(
    batch: str | None = None,
    *,
    target: Provider | None = None,
    env: Mapping[str, str] | None = None,
    redact_secrets: bool = False,
    clean: bool = False,
    dry_run: bool = False,
    exclude: Mapping[str, str] | None = None,
    usage: Sequence[ProviderUsage] | None = None,
    check_usage: bool = False,
    remote: bool = True,
    now: datetime | None = None,
) -> FleetPlan:
    """The plan that moves a recorded batch's agents back to their first provider, carrying the
    work each did since (its session on the provider it was moved to). An agent whose session
    is gone is one failed row; the others still go back. ``dry_run`` reads the store without
    creating or changing it; ``exclude``: sessions skipped with the reason given.

    With ``check_usage`` (or ``usage``, the readings already made) the provider it goes back to
    is looked at first (its session files and, with ``remote``, its usage service, at ``now``):
    still exhausted, the plan is ``blocked`` with the line that says until when."""
    env = dict(os.environ) if env is None else dict(env)
    try:
        store = open_store(env=env, read_only=dry_run, busy_timeout=store_wait(env))
    except StoreAbsent:
        raise SegueError("no batch has been recorded yet (segue batches lists them)") from None
    with store:
        if batch is None:
            summaries = store.list_batches(limit=1)
            if not summaries:
                raise SegueError("no batch has been recorded yet (segue batches lists them)")
            record = store.get_batch(summaries[0].id)
        else:
            record = store.find_batch(batch)
    moved = [a for a in record.agents if a.result.target_session]
    if not moved:
        raise SegueError(f"batch {record.id} moved no agent; nothing to take back")
    try:
        first = known(moved[0].result.first_provider or moved[0].result.provider)
        now_on = known(str(moved[0].result.target_provider))
    except ValueError:
        raise SegueError(f"batch {record.id} names a provider this segue does not know") from None
    sessions = [str(a.result.target_session) for a in moved]
    back = plan_fleet(
        now_on,
        target or first,
        sessions=sessions,
        env=env,
        redact_secrets=redact_secrets,
        clean=clean,
        exclude=exclude,
    )
    back.reason = f"back from batch {record.id}"
    if check_usage or usage is not None:
        back.blocked = still_exhausted(back.target, env, usage=usage, remote=remote, now=now)
    return back


def still_exhausted(
    provider: Provider,
    env: Mapping[str, str] | None = None,
    *,
    usage: Sequence[ProviderUsage] | None = None,
    remote: bool = True,
    now: datetime | None = None,
) -> str | None:
    """One line when segue's usage readings (``usage``, else read now) say ``provider`` is still
    exhausted, naming the limit and its reset time; None when it can take work."""
    now = now or datetime.now(UTC)
    if usage is None:
        env = os.environ if env is None else env
        usage = read_usage(env, now=now, remote=remote, providers=[provider])
    found = next((u for u in usage if u.provider is provider), None)
    if found is None or not found.exhausted:
        return None
    said = f"{provider.value} is still exhausted"
    window = found.blocking
    if window is None:
        return f"{said} (its reset time is not known)"
    if window.resets_at is None:
        return f"{said}: blocked by the {window_label(window)} limit (its reset time is not known)"
    return (
        f"{said}: blocked by the {window_label(window)} limit until "
        f"{utc_minutes(window.resets_at)} ({in_time(window.resets_at, now)})"
    )


def _record(result: FleetResult, env: Mapping[str, str]) -> None:
    plan = result.plan
    try:
        with open_store(env=env, busy_timeout=store_wait(env)) as store:
            batch = store.create_batch(
                plan.source,
                plan.target,
                selection={"kind": plan.selection.value, "reason": plan.reason},
                planned=len(result.outcomes),
            )
            result.batch_id = batch.id
            for n, outcome in enumerate(result.outcomes):
                c = outcome.candidate
                agent = AgentResult(
                    n,
                    c.provider,
                    c.session_id,
                    path=str(c.path),
                    cwd=c.cwd,
                    pane=c.pane,
                    pid=c.pid,
                    state=c.state,
                    skipped=c.skip,
                    error=outcome.error,
                )
                if outcome.switch is not None:
                    agent = _switched(agent, outcome.switch)
                store.add_agent(batch.id, agent)
    except SegueError as exc:
        result.notes.append(f"the batch was not recorded: {exc}")


def _switched(agent: AgentResult, switch: Switch) -> AgentResult:
    """``agent`` with what its switch did, as the store keeps it."""
    return replace(
        agent,
        target_provider=switch.target,
        target_session=switch.session_id,
        target_path=None if switch.path is None else str(switch.path),
        label=switch.plan.label.value,
        strategy=None if switch.thread is None else switch.thread.strategy,
        summary=switch.plan.loss_line,
        resume_command=None if switch.session_id is None else switch.resume_command,
        warnings=tuple(switch.warnings),
    )
