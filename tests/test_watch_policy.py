"""``segue watch``'s policy on plain data: what a pass decides from the usage it read, what
earlier passes recorded and where the batches moved sessions, with the clock given. No file,
store, process or CLI: each decision the watch makes, and the one to do nothing."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import PurePath

from segue.fleet.moves import BatchMoves
from segue.model.conversation import Provider
from segue.watch.policy import (
    AgentSeen,
    Mode,
    Reading,
    Seen,
    WatchEvent,
    WatchPolicy,
    decide,
    news,
)

CLAUDE, CODEX = Provider.CLAUDE, Provider.CODEX
NOW = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)
RESET = NOW + timedelta(hours=3)
AUTO = WatchPolicy(move=Mode.AUTO, returns=Mode.AUTO)
ASK = WatchPolicy()
FINE = (Reading(CLAUDE), Reading(CODEX))


def _limited(provider: Provider, reset: datetime | None = RESET) -> Reading:
    return Reading(provider, exhausted=True, reset_at=reset, window="5-hour")


def _moved(batch: str, off: Provider = CODEX, *, at: datetime, reset: datetime) -> WatchEvent:
    return WatchEvent("moved", at, off, "Switched 2 agents", batch, reset, ("s1", "s2"))


def test_nothing_to_do_decides_nothing() -> None:
    decisions = decide(Seen(NOW, FINE), AUTO)
    assert decisions.returns == [] and decisions.states == [] and decisions.moves == []
    assert decisions.switches == {} and decisions.staying == {}


def test_an_exhausted_provider_moves_its_fleet_but_the_sessions_kept_or_refused() -> None:
    declined = WatchEvent("move_declined", NOW - timedelta(minutes=5), CODEX, "not confirmed",
                          reset_at=RESET, sessions=("no-1",))  # fmt: skip
    older = WatchEvent("move_failed", NOW - timedelta(days=2), CODEX, "x",
                       reset_at=RESET - timedelta(days=2), sessions=("old-limit",))  # fmt: skip
    moves = BatchMoves(avoid={"away-1": "moved off, not back", "no-1": "quiet"})
    seen = Seen(NOW, [Reading(CLAUDE), _limited(CODEX)], [older, declined], moves)
    decisions = decide(seen, ASK)
    (state,) = decisions.states
    assert (state.kind, state.provider, state.reset_at) == ("exhausted", CODEX, RESET)
    assert state.detail == "blocked by the 5-hour limit until 2026-12-01T17:00:00Z"
    (move,) = decisions.moves
    assert move.source is CODEX and move.ask
    assert move.reset_at == RESET and move.why == state.detail
    # the batches' reason first, then what this pass brought back, then this limit's refusals
    assert move.exclude({"back-1": "just brought back", "no-1": "just brought back"}) == {
        "away-1": "moved off, not back",
        "no-1": "quiet",
        "back-1": "just brought back",
    }
    assert move.exclude() == {"away-1": "moved off, not back", "no-1": "quiet"}
    (alone,) = decide(Seen(NOW, [Reading(CLAUDE), _limited(CODEX)], [older, declined]), AUTO).moves
    assert not alone.ask
    assert alone.exclude() == {"no-1": "declined for this limit"}  # not the older limit's


def test_both_exhausted_waits_for_the_earliest_reset_and_moves_nothing() -> None:
    early = NOW + timedelta(hours=1)
    decisions = decide(Seen(NOW, [_limited(CLAUDE, early), _limited(CODEX)]), AUTO)
    assert decisions.moves == []
    (state,) = decisions.states
    assert (state.kind, state.provider, state.reset_at) == ("waiting", None, early)
    assert state.detail == (
        "claude and codex are both exhausted: nothing moves; "
        "the earliest reset is 2026-12-01T15:00:00Z"
    )
    unknown = decide(Seen(NOW, [_limited(CLAUDE, None), _limited(CODEX, None)]), AUTO)
    assert unknown.states[0].detail.endswith("no reset time known")


def test_a_reset_passed_brings_the_batch_back_asked_or_done() -> None:
    history = [_moved("b1", at=NOW - timedelta(hours=5), reset=NOW - timedelta(minutes=1))]
    moves = BatchMoves(targets={"b1": {"t1", "t2"}}, back={"b1": {"t1"}})
    asked = decide(Seen(NOW, FINE, history, moves), ASK)
    (going,) = asked.returns
    assert (going.batch, going.to, going.ask) == ("b1", CODEX, True)
    assert going.skip == {"t1": "back already, or moved on by a later batch"}
    assert going.why == "codex's window has reset: back from batch b1"
    assert asked.moves == [] and asked.states == []
    done = decide(Seen(NOW, FINE, history, moves), AUTO)
    assert [(r.batch, r.ask) for r in done.returns] == [("b1", False)]


def test_a_return_waits_while_the_provider_is_exhausted_its_window_runs_or_it_is_quiet() -> None:
    reset = NOW - timedelta(minutes=1)
    history = [_moved("b1", at=NOW - timedelta(hours=5), reset=reset)]
    still = decide(Seen(NOW, [Reading(CLAUDE), _limited(CODEX)], history), AUTO)
    assert still.returns == [] and still.staying == {"b1": "codex is still exhausted"}
    assert [m.source for m in still.moves] == [CODEX]  # and its fleet moves off
    # the usage source says fine, but the window the batch hit has not reset yet
    early = decide(Seen(reset - timedelta(seconds=1), FINE, history), AUTO)
    assert early.returns == [] and early.staying["b1"].startswith("the window it hit resets")
    quiet = [_moved("b2", at=NOW - timedelta(minutes=5), reset=reset)]
    assert decide(Seen(NOW, FINE, quiet), AUTO).staying == {"b2": "moved within the quiet period"}
    never = WatchPolicy(returns=Mode.NEVER)
    assert decide(Seen(NOW, FINE, history), never).returns == []


def test_a_batch_back_already_or_moved_on_or_whose_return_was_declined_is_skipped() -> None:
    old = NOW - timedelta(hours=5)
    history = [
        _moved("back", at=old, reset=old),
        _moved("on", at=old, reset=old),
        _moved("said-no", at=old, reset=old),
        WatchEvent("return_declined", old, CODEX, "not confirmed", returns_batch="said-no"),
    ]
    moves = BatchMoves(
        targets={"back": {"a", "b"}, "on": {"c", "d"}, "said-no": {"e"}},
        back={"back": {"a", "b"}, "on": {"c"}},
        moved_on={"on": {"d"}},
    )
    decisions = decide(Seen(NOW, FINE, history, moves), AUTO)
    assert decisions.returns == []
    all_back = "back already, or moved on by a later batch"
    assert decisions.staying == {"back": all_back, "on": all_back}


def test_a_family_limit_is_said_and_switches_its_idle_agents_once() -> None:
    opus = Reading(CLAUDE, reset_at=RESET, window="weekly opus", family="opus",
                   suggestion="claude --model sonnet", switch_model="sonnet")  # fmt: skip
    switched = WatchEvent("model_switched", NOW, CLAUDE, "", reset_at=RESET, sessions=("done",))
    seen = Seen(NOW, [opus, Reading(CODEX)], [switched], root=PurePath("/work"))
    decisions = decide(seen, ASK)
    (state,) = decisions.states
    assert (state.kind, state.provider, state.detail) == (
        "family_limit",
        CLAUDE,
        "claude --model sonnet",
    )
    assert decisions.moves == [] and decisions.returns == []
    switch = decisions.switches[CLAUDE]
    assert (switch.model, switch.ask, switch.done) == ("sonnet", True, frozenset({"done"}))

    def agent(session: str, **changes: object) -> AgentSeen:
        given: dict[str, object] = {"pid": 1, "provider": CLAUDE, "session_id": session,
                                    "working": False, "pane": "%1", "cwd": "/work/app",
                                    "model": "claude-opus-4-1"}  # fmt: skip
        given.update(changes)
        return AgentSeen(**given)  # type: ignore[arg-type]

    agents = [
        agent("yes"),
        agent("busy", working=True),
        agent("no-pane", pane=None),
        agent("done"),
        agent("elsewhere", cwd="/tmp"),
        agent("sonnet", model="claude-sonnet-4"),
        agent("codex", provider=CODEX),
    ]
    assert [a.session_id for a in switch.pick(agents)] == ["yes"]
    assert not decide(seen, AUTO).switches[CLAUDE].ask
    told = Reading(CLAUDE, suggestion="claude --model sonnet")  # no model to switch to named
    assert decide(Seen(NOW, [told]), AUTO).switches == {}


def test_news_records_a_state_once_and_every_move() -> None:
    exhausted = WatchEvent("exhausted", NOW, CODEX, "blocked", reset_at=RESET)
    failed = WatchEvent("move_failed", NOW, CODEX, "no disk")
    moved = WatchEvent("moved", NOW, CODEX, "Switched", "b1", RESET)
    assert news([exhausted, failed, moved], []) == [exhausted, failed, moved]
    later = [WatchEvent(e.kind, NOW + timedelta(minutes=1), e.provider, e.detail, e.batch_id,
                        e.reset_at) for e in (exhausted, failed, moved)]  # fmt: skip
    assert news(later, [exhausted, failed, moved]) == [later[2]]
    changed = WatchEvent("exhausted", NOW, CODEX, "blocked", reset_at=RESET + timedelta(hours=1))
    assert news([changed], [exhausted]) == [changed]


def test_the_policy_loads_no_store_no_fleet_and_no_scanner() -> None:
    probe = (
        "import sys, segue.watch.policy; "
        "print([m for m in ('segue.store', 'segue.fleet.batch', 'segue.running', "
        "'segue.providers') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and done.stdout == "[]\n", done.stderr


def test_two_exhausted_move_to_a_third_that_is_free_and_usable() -> None:
    copilot = Provider("copilot")
    early = NOW + timedelta(hours=1)
    three = decide(Seen(NOW, [_limited(CLAUDE, early), _limited(CODEX), Reading(copilot)]), AUTO)
    assert sorted(m.source.value for m in three.moves) == ["claude", "codex"]
    assert [s.kind for s in three.states] == ["exhausted", "exhausted"]
    unusable = Reading(copilot, usable=False)  # not installed, never used here
    waits = decide(Seen(NOW, [_limited(CLAUDE, early), _limited(CODEX), unusable]), AUTO)
    assert waits.moves == [] and [s.kind for s in waits.states] == ["waiting"]
    every = decide(Seen(NOW, [_limited(CLAUDE), _limited(CODEX), _limited(copilot)]), AUTO)
    assert every.states[0].detail.startswith("claude, codex and copilot are all exhausted")
