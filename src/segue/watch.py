"""``segue watch``: the fleet moved off a provider the moment it runs out, and brought back when
its window resets.

Each pass (:func:`watch_pass`):

1. **Returns first.** A batch watch moved off a provider comes back when that provider is no
   longer exhausted, its blocking window's reset (as seen when the batch moved) has passed, and
   the batch is older than the quiet period (a provider flapping around 100% does not bounce the
   fleet). Only idle agents come back: the return's plan skips a working one. ``--return ask``
   (the default) asks first, ``auto`` does it, ``never`` leaves the batches where they are.
2. **Exhaustion.** One provider exhausted, with agents parked on it (idle agents and sessions a
   limit stopped; a working agent is never touched, it is taken when it parks): the fleet
   switch to the other provider is planned, asked for once (``--ask``, the default) or done
   (``--auto``), and each agent's pane relaunched on its new session. A session that moved
   within the quiet period does not move again.
3. **Nothing to move.** Both providers exhausted: nothing moves; the earliest reset is shown. A
   limit on one model family (Claude's weekly Opus limit) moves nothing either: the model switch
   its provider suggests is shown instead.

Every decision is recorded in the store (``watch_events``): what was seen, what was moved or
returned, what was declined, with its reason; an unchanged state is recorded once, not every
pass. ``--once`` makes one pass; without it, passes run every ``--interval`` seconds until
SIGINT or SIGTERM, which end the loop between passes (never in the middle of a switch), and at
once when a CLI's hook notes a turn ended by a usage limit (``segue hooks install``: Claude
Code's ``StopFailure``). One watch runs per store: a second one refuses, naming the first.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import msgspec

from segue.fleet.moves import DEFAULT_QUIET, BatchMoves, batch_moves
from segue.model.conversation import Provider
from segue.model.errors import SegueError
from segue.model.times import iso_z

if TYPE_CHECKING:
    from pathlib import Path

    from segue.fleet.batch import FleetPlan
    from segue.running.agents import Agent
    from segue.running.usage import ProviderUsage
    from segue.store import Store

__all__ = [
    "DEFAULT_INTERVAL_S",
    "DEFAULT_QUIET",
    "Mode",
    "WatchEvent",
    "WatchPolicy",
    "watch",
    "watch_batches",
    "watch_pass",
]

DEFAULT_INTERVAL_S = 30.0
SIGNAL_POLL_S = 1.0  # how often the loop looks at the hooks' signals between passes


class Mode(StrEnum):
    AUTO = "auto"
    ASK = "ask"
    NEVER = "never"


class WatchPolicy(msgspec.Struct, frozen=True):
    move: Mode = Mode.ASK  # auto / ask
    returns: Mode = Mode.ASK  # auto / ask / never
    quiet: timedelta = DEFAULT_QUIET  # no session moves twice within it
    under: str | None = None  # only agents working in this directory or below it
    remote: bool = True  # ask the providers' usage services (cached), not only the files
    relaunch: bool = True  # restart each moved agent's tmux pane on its new session
    redact_secrets: bool = False  # secrets in what the moves and returns carry become markers


class WatchEvent(msgspec.Struct, frozen=True):
    kind: str  # exhausted / waiting / family_limit / moved / move_declined / move_failed /
    #            return_offered / returned / return_declined
    at: datetime
    provider: Provider | None = None
    detail: str = ""
    batch_id: str | None = None
    reset_at: datetime | None = None
    sessions: tuple[str, ...] = ()
    returns_batch: str | None = None  # a return: the batch it brought back

    def line(self) -> str:
        """``15:56:02 moved codex: Switched 3 agents to Claude Code: … (batch 01a2…)``."""
        at = self.at.astimezone().strftime("%H:%M:%S")
        who = f" {self.provider.value}" if self.provider else ""
        batch = f" (batch {self.batch_id})" if self.batch_id else ""
        return f"{at} {self.kind}{who}: {self.detail}{batch}"

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "at": iso_z(self.at),
            "provider": None if self.provider is None else self.provider.value,
            "detail": self.detail,
            "batch": self.batch_id,
            "returns_batch": self.returns_batch,
            "reset_at": None if self.reset_at is None else iso_z(self.reset_at),
            "sessions": list(self.sessions),
        }


Ask = Callable[[str], bool]  # the question (with the preview) → the user's answer


class _History(msgspec.Struct):
    """What earlier passes recorded."""

    events: list[WatchEvent] = msgspec.field(default_factory=list)

    def last(self, kind: str, provider: Provider | None) -> WatchEvent | None:
        for event in reversed(self.events):
            if event.kind == kind and event.provider == provider:
                return event
        return None

    def outstanding(self) -> list[WatchEvent]:
        """The batches watch moved whose return the user has not declined (whether every agent
        is back is the store's to say: :class:`BatchMoves`)."""
        declined = {
            e.returns_batch
            for e in self.events
            if e.kind == "return_declined" and e.detail == "not confirmed" and e.returns_batch
        }
        return [e for e in self.events if e.kind == "moved" and e.batch_id not in declined]


def _open(env: Mapping[str, str]) -> Store:
    from segue.store import open_store
    from segue.store.location import store_wait

    return open_store(env=env, busy_timeout=store_wait(env))


def _looked_back(
    env: Mapping[str, str], now: datetime, quiet: timedelta
) -> tuple[_History, BatchMoves]:
    """What earlier passes recorded, and where sessions went (:func:`_batches`); a store that
    does not exist yet is not made (a pass that finds nothing writes nothing)."""
    from segue.store import open_store
    from segue.store.store import StoreAbsent

    try:
        store = open_store(env=env, read_only=True)
    except StoreAbsent:
        return _History(), BatchMoves()
    except SegueError:
        store = _open(env)  # a store an older segue made: upgraded, as any recording command does
    with store:
        return _load(store), batch_moves(store, now, quiet)


def _load(store: Store) -> _History:
    from segue.store.tables import watch_events

    with store.reading("cannot read watch's records") as connection:
        rows = connection.rows(
            "SELECT * FROM watch_events ORDER BY at, id", None, watch_events.kinds
        )
        events = []
        for r in rows:
            try:
                provider = None if r["provider"] is None else Provider(r["provider"])
            except ValueError:
                provider = None
            detail = r["detail"] or ""
            returns = None
            if r["kind"] in ("returned", "return_declined", "return_offered") and detail.startswith(
                "["
            ):
                returns, _, detail = detail[1:].partition("] ")
            events.append(
                WatchEvent(
                    r["kind"],
                    r["at"],
                    provider,
                    detail,
                    r["batch_id"],
                    r["reset_at"],
                    tuple(str(s) for s in (r["sessions"] or ())),
                    returns or None,
                )
            )
    return _History(events)


def _record(store: Store, events: Sequence[WatchEvent]) -> None:
    from segue.store.ids import new_id
    from segue.store.tables import watch_events

    if not events:
        return
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


def _blocking(usage: ProviderUsage) -> tuple[datetime | None, str]:
    from segue.running.usage import window_label

    window = usage.blocking
    if window is None:
        return None, "exhausted"
    when = "" if window.resets_at is None else f" until {iso_z(window.resets_at)}"
    return window.resets_at, f"blocked by the {window_label(window)} limit{when}"


def _question(plan: FleetPlan, why: str) -> str:
    lines = [f"{plan.source.value} → {plan.target.value}: {why}"]
    for c in plan.candidates:
        state = c.skip or c.error or c.loss_line
        lines.append(f"  {c.session_id}  {c.pane or '-'}  {state}")
    lines.append(plan.tally_line())
    return "\n".join(lines)


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
    declined); ``agents`` are the running agents (default: scanned now)."""
    from segue.fleet.batch import plan_fleet, return_plan, run_fleet
    from segue.running.usage import read_usage

    env = dict(os.environ) if env is None else dict(env)
    now = now or datetime.now(UTC)
    usages = read_usage(env, now=now, remote=policy.remote)
    exhausted = {u.provider: u for u in usages if u.exhausted}
    history, view = _looked_back(env, now, policy.quiet)
    recent = view.avoid
    events: list[WatchEvent] = []
    recorded: list[WatchEvent] = []
    given = agents

    def agents_now() -> list[Agent]:
        nonlocal agents
        if agents is None:
            from segue.running.agents import list_agents

            agents = list(list_agents(env))
        return list(agents)

    def done(event: WatchEvent) -> None:
        """A move or a return: recorded at once, so a later failure cannot make it happen
        again."""
        events.append(event)
        with _open(env) as store:
            _record(store, [event])
        recorded.append(event)

    # 1. the batches that can come back
    for moved in history.outstanding():
        if policy.returns is Mode.NEVER or moved.provider is None or moved.batch_id is None:
            continue
        if moved.provider in exhausted:
            continue
        if moved.reset_at is not None and now < moved.reset_at:
            continue  # its usage source agrees, but the window it hit has not reset yet
        if now - moved.at < policy.quiet:
            continue
        batch = moved.batch_id
        targets = view.targets.get(batch, set())
        settled = view.back.get(batch, set()) | view.moved_on.get(batch, set())
        if targets and targets <= settled:
            continue  # every agent is back (by watch or by hand) or was moved on since
        skip = {s: "back already, or moved on by a later batch" for s in targets & settled}
        try:
            # back to the provider this batch moved off (a chain's first one may be another)
            plan = return_plan(
                batch,
                target=moved.provider,
                env=env,
                exclude=skip,
                redact_secrets=policy.redact_secrets,
            )
        except SegueError as exc:
            events.append(
                WatchEvent(
                    "return_declined",
                    now,
                    moved.provider,
                    f"cannot return: {exc}",
                    returns_batch=batch,
                )
            )
            continue
        if not plan.to_switch:
            continue  # every agent left is working (or gone): the next pass
        why = f"{moved.provider.value}'s window has reset: back from batch {batch}"
        if policy.returns is Mode.ASK and not (ask is not None and ask(_question(plan, why))):
            events.append(
                WatchEvent(
                    "return_declined", now, moved.provider, "not confirmed", returns_batch=batch
                )
            )
            continue
        result = run_fleet(plan, env=env, relaunch=policy.relaunch)
        back = [o for o in result.outcomes if o.switch is not None]
        done(
            WatchEvent(
                "returned",
                now,
                moved.provider,
                result.tally_line(),
                result.batch_id,
                sessions=tuple(o.candidate.session_id for o in back),
                returns_batch=batch,
            )
        )
        for o in back:  # neither side moves again in this pass
            recent.setdefault(o.candidate.session_id, "just brought back")
            if o.switch is not None and o.switch.session_id:
                recent.setdefault(o.switch.session_id, "just brought back")
        agents = given  # the panes changed: scanned again when needed

    # 2. a provider that ran out
    if len(exhausted) > 1:
        resets = [r for r in (_blocking(u)[0] for u in exhausted.values()) if r is not None]
        earliest = min(resets, default=None)
        when = (
            "no reset time known"
            if earliest is None
            else f"the earliest reset is {iso_z(earliest)}"
        )
        detail = (
            f"{' and '.join(p.value for p in exhausted)} are both exhausted: nothing moves; {when}"
        )
        events.append(WatchEvent("waiting", now, None, detail, reset_at=earliest))
    for usage in usages:
        if not usage.exhausted and usage.suggestion:
            family_reset = None if usage.blocking is None else usage.blocking.resets_at
            events.append(
                WatchEvent(
                    "family_limit", now, usage.provider, usage.suggestion, reset_at=family_reset
                )
            )
            for event in _switch_models(usage, policy, history, env, now, ask, agents_now):
                done(event)
    if len(exhausted) == 1:
        (usage,) = exhausted.values()
        reset_at, why = _blocking(usage)
        events.append(WatchEvent("exhausted", now, usage.provider, why, reset_at=reset_at))
        # sessions the user said no for, or whose switch failed, while this limit lasts are not
        # tried again
        for event in history.events:
            same = event.provider == usage.provider and event.reset_at == reset_at
            if event.kind in ("move_declined", "move_failed") and same:
                for session in event.sessions:
                    recent.setdefault(session, f"{event.kind.removeprefix('move_')} for this limit")
        off: FleetPlan | None
        try:
            off = plan_fleet(
                usage.provider,
                exhausted=[usage.provider],
                agents=agents_now(),
                env=env,
                now=now,
                under=policy.under,
                exclude=recent,
                redact_secrets=policy.redact_secrets,
            )
        except SegueError as exc:
            off = None
            events.append(WatchEvent("move_failed", now, usage.provider, str(exc)))
        if off is not None and off.to_switch:
            plan = off
            question = _question(plan, f"{usage.provider.value} is {why}")
            if policy.move is Mode.AUTO or (ask is not None and ask(question)):
                result = run_fleet(plan, env=env, relaunch=policy.relaunch)
                switched = tuple(o.candidate.session_id for o in result.outcomes if o.switch)
                tried = tuple(c.session_id for c in plan.to_switch)
                done(
                    WatchEvent(
                        "moved" if switched and result.batch_id else "move_failed",
                        now,
                        usage.provider,
                        result.tally_line(),
                        result.batch_id,
                        reset_at,
                        switched or tried,
                    )
                )
            else:
                events.append(
                    WatchEvent(
                        "move_declined",
                        now,
                        usage.provider,
                        "not confirmed",
                        reset_at=reset_at,
                        sessions=tuple(c.session_id for c in plan.to_switch),
                    )
                )
    kept = _news([e for e in events if e not in recorded], history)
    if kept:
        with _open(env) as store:
            _record(store, kept)
    return [e for e in events if e in recorded or e in kept]


_STATES = ("exhausted", "waiting", "family_limit")
_SAID_ONCE = ("move_failed", "return_declined")  # the same reason is not recorded twice


def _switch_models(
    usage: ProviderUsage,
    policy: WatchPolicy,
    history: _History,
    env: Mapping[str, str],
    now: datetime,
    ask: Ask | None,
    agents_now: Callable[[], list[Agent]],
) -> list[WatchEvent]:
    """A limit on one model family: the agents that run that family (and are not in the middle
    of a turn) relaunched on the model their provider suggests, asked for once or, with
    ``--auto``, done; never twice for the same limit."""
    from pathlib import Path

    from segue.fleet.relaunch import relaunch_on_model
    from segue.providers import entry
    from segue.running.agents import AgentState

    window, model = usage.blocking, usage.switch_model
    if window is None or model is None:
        return []
    family, reset_at = window.scope, window.resets_at
    done = {
        s
        for e in history.events
        if e.kind in ("model_switched", "model_declined")
        and e.provider == usage.provider
        and e.reset_at == reset_at
        for s in e.sessions
    }
    root = None if policy.under is None else Path(policy.under).expanduser()
    chosen: list[Agent] = []
    for agent in agents_now():
        if agent.provider is not usage.provider or agent.state is AgentState.WORKING:
            continue
        if agent.pane is None or agent.session_id is None or agent.session_id in done:
            continue
        if root is not None and not (agent.cwd and Path(agent.cwd).is_relative_to(root)):
            continue
        try:
            running = (
                None
                if agent.session_path is None
                else entry(agent.provider).peek(agent.session_path).model
            )
        except (SegueError, OSError, ValueError):
            running = None
        if running and family in running.replace("-", "").lower():
            chosen.append(agent)
    if not chosen:
        return []
    sessions = tuple(str(a.session_id) for a in chosen)
    question = (
        f"{usage.provider.value}: the {family} limit is used up; relaunch "
        f"{len(chosen)} agent{'s' if len(chosen) != 1 else ''} on {model}:\n"
        + "\n".join(f"  {a.session_id}  {a.pane.target if a.pane else '-'}" for a in chosen)
    )
    if policy.move is not Mode.AUTO and not (ask is not None and ask(question)):
        return [
            WatchEvent(
                "model_declined",
                now,
                usage.provider,
                "not confirmed",
                reset_at=reset_at,
                sessions=sessions,
            )
        ]
    lines = [relaunch_on_model(agent, model, env) for agent in chosen]
    return [
        WatchEvent(
            "model_switched",
            now,
            usage.provider,
            "; ".join(lines),
            reset_at=reset_at,
            sessions=sessions,
        )
    ]


def _news(events: list[WatchEvent], history: _History) -> list[WatchEvent]:
    """The events worth recording: a state (exhausted, waiting, a family limit) only when it
    changed since the last time it was recorded; every move, return and answer."""
    kept = []
    for event in events:
        if event.kind in _STATES:
            last = history.last(event.kind, event.provider)
            if last is not None and (last.detail, last.reset_at) == (event.detail, event.reset_at):
                continue
        if event.kind in _SAID_ONCE and event.batch_id is None:
            said = [
                e
                for e in history.events
                if (e.kind, e.provider, e.returns_batch) == (event.kind, event.provider,
                                                             event.returns_batch)
            ]  # fmt: skip
            if said and said[-1].detail == event.detail:
                continue
        kept.append(event)
    return kept


# --------------------------------------------------------------------------- the loop


@contextmanager
def _only_watch(env: Mapping[str, str], *, once: bool) -> Iterator[None]:
    """One watch per store: a lock in segue's state folder, named after the store (a single
    pass where that folder does not exist yet takes none: no watch can be running)."""
    import fcntl
    import hashlib

    from segue.store.location import database_url
    from segue.support.state_dir import state_dir

    folder = state_dir(env)
    if once and not folder.is_dir():
        yield
        return
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = hashlib.blake2b(str(database_url(env=env)).encode(), digest_size=8).hexdigest()
    path = folder / f"watch-{key}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            raise SegueError(f"segue watch is already running on this store ({holder})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}".encode(), 0)
        yield
    finally:
        os.close(fd)


def watch(
    policy: WatchPolicy,
    *,
    once: bool = False,
    interval: float = DEFAULT_INTERVAL_S,
    env: Mapping[str, str] | None = None,
    ask: Ask | None = None,
    emit: Callable[[WatchEvent], None] | None = None,
    stop: threading.Event | None = None,
) -> int:
    """``segue watch``: passes every ``interval`` seconds (one with ``once``) until SIGINT or
    SIGTERM (or ``stop``); each event goes to ``emit``. Returns how many passes ran."""
    env = dict(os.environ) if env is None else dict(env)
    stop = stop or threading.Event()
    if not 0 < interval < float("inf"):  # (nan too)
        raise SegueError(f"--interval {interval}: give a number of seconds above 0")
    import time

    from segue.providers.sessions import remembered_peeks
    from segue.support.state_dir import state_dir

    signals = state_dir(env) / "signals.jsonl"  # what the CLIs' hooks note (segue hooks install)

    def stamp() -> tuple[int, int] | None:
        try:
            info = signals.stat()
        except OSError:
            return None
        return info.st_size, info.st_mtime_ns

    passes = 0
    # the loop keeps the listing for its next start (listing-cache.json); one pass keeps nothing
    keep = remembered_peeks(env, persist=not once)
    with _stop_on_signals(stop), _only_watch(env, once=once), keep:
        last = stamp()
        while not stop.is_set():
            try:
                happened = watch_pass(policy, env=env, ask=ask)
            except SegueError as exc:
                if once:
                    raise
                # a pass that cannot be made (the store locked, a disk full): said, and the
                # loop goes on to the next one
                happened = [
                    WatchEvent("error", datetime.now(UTC), None, " ".join(str(exc).split()))
                ]
            for event in happened:
                if emit is not None:
                    emit(event)
            passes += 1
            if once:
                break
            deadline = time.monotonic() + interval
            while not stop.is_set() and (left := deadline - time.monotonic()) > 0:
                stop.wait(min(SIGNAL_POLL_S, left))
                if stamp() != last:  # a hook said a turn was ended by a limit: look now
                    last = stamp()
                    break
    return passes


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM end the loop between passes (a pass in progress finishes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def handler(signum: int, frame: object) -> None:
        stop.set()

    for s in previous:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def systemd_unit(argv: Sequence[str], env: Mapping[str, str]) -> str:
    """A systemd user unit that keeps ``segue watch`` running (``--print-unit``).

    segue's variables go in as ``Environment=`` lines but ``$SEGUE_DATABASE_URL``: a unit file
    is readable by every user of the machine, and the URL may hold the database's password. When
    it is set, the unit reads it from :func:`unit_environment_file` (``EnvironmentFile=``, a file
    the user keeps readable only by themselves; the service does not start without it, rather
    than watch the default store in its place). Every ``%`` and ``$`` is escaped, and every word
    quoted as systemd reads it back (:mod:`segue.support.systemd`)."""
    from segue.store.location import URL_VARIABLE
    from segue.support.systemd import environment_setting, exec_line, path_setting

    try:
        keep = [
            environment_setting(k, v)
            for k, v in env.items()
            if k.startswith(("SEGUE_", "CODEX_HOME", "CLAUDE_CONFIG_DIR")) and k != URL_VARIABLE
        ]
        lines = [
            "[Unit]",
            "Description=segue watch: move the agents off an exhausted provider, and back",
            "",
            "[Service]",
            f"ExecStart={exec_line(list(argv))}",
            *(f"Environment={k}" for k in keep),
        ]
        if env.get(URL_VARIABLE):
            path = path_setting(str(unit_environment_file(env)))
            lines += [
                f"# {URL_VARIABLE} (segue's store) is not written in this file: it may hold a",
                "# password, and a unit file is readable by every user. The service reads it",
                "# from the file below, one line, kept readable only by you (chmod 600); without",
                "# that file the service does not start:",
                f"#   {URL_VARIABLE}=postgresql://user:password@host/database",
                f"EnvironmentFile={path}",
            ]
    except ValueError as why:
        raise SegueError(f"cannot write the systemd unit: {why}") from None
    lines += [
        "Restart=on-failure",
        "RestartSec=30",
        "",
        "[Install]",
        "WantedBy=default.target",
    ]
    return "\n".join(lines) + "\n"


def unit_environment_file(env: Mapping[str, str]) -> Path:
    """The file the unit of :func:`systemd_unit` reads ``$SEGUE_DATABASE_URL`` from:
    ``watch.env`` in segue's config folder (``~/.config/segue/watch.env``)."""
    from segue.support.places import user_folder

    return user_folder("config", env) / "watch.env"
