"""The fleet switch on recorded sessions: which sessions it takes, the batch, the tally, the
record in the store, and the way back."""

from __future__ import annotations

import hashlib
import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from segue.fleet.batch import check_source_compact, plan_fleet, return_plan, run_fleet
from segue.model.conversation import Provider
from segue.model.errors import SegueError
from segue.providers.sessions import read_session
from segue.running.agents import Agent, AgentState
from segue.store import open_store
from segue_testbed.fixtures import all_fixtures
from tests.segue_cli import segue

FIXTURES = all_fixtures()
# A moment when the recorded limits had not reset yet (Claude's rate_limited resets 22:51 that
# day; the Codex ones in 2030).
NOW = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """Every recorded session of Claude Code and Codex in one scratch home (Copilot's have
    tests of their own)."""
    root = tmp_path / "home"
    for fixture in FIXTURES:
        if fixture.provider == "copilot":
            continue
        shutil.copytree(fixture.home, root, dirs_exist_ok=True)
        Path(fixture.spec["cwd"]).mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(root),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
        "PATH": "/usr/bin:/bin",
    }


def _ids(provider: str, scenarios: set[str]) -> set[str]:
    return {
        f.spec["session_id"]
        for f in FIXTURES
        if f.provider == provider and f.spec["scenario"] in scenarios
    }


def test_default_selection_is_the_exhausted_providers_parked_sessions(
    home: dict[str, str],
) -> None:
    plan = plan_fleet(env=home, now=NOW, exhausted=[Provider.CODEX], agents=[])
    assert (plan.source, plan.target) == (Provider.CODEX, Provider.CLAUDE)
    assert "codex is exhausted" in plan.reason
    assert {c.session_id for c in plan.candidates} == _ids(
        "codex", {"stuck_agent", "usage_limited"}
    )
    assert all(c.state == "parked" and c.reset_at is not None for c in plan.candidates)
    assert all(c.label in ("native", "raw", "shrunk") and c.loss_line for c in plan.to_switch)

    claude = plan_fleet(env=home, now=NOW, exhausted=[Provider.CLAUDE], agents=[])
    assert {c.session_id for c in claude.candidates} == _ids(
        "claude", {"rate_limited", "api_key_rate_limited"}
    )


def test_no_exhausted_provider_needs_from(home: dict[str, str]) -> None:
    with pytest.raises(SegueError, match="no provider is exhausted"):
        plan_fleet(env=home, now=NOW, exhausted=[], agents=[])
    with pytest.raises(SegueError, match="both exhausted"):
        plan_fleet(env=home, now=NOW, exhausted=[Provider.CODEX, Provider.CLAUDE], agents=[])


def test_all_takes_every_session_of_the_source(home: dict[str, str]) -> None:
    plan = plan_fleet(Provider.CODEX, all_sessions=True, env=home, now=NOW, agents=[])
    codex = {f.spec["session_id"] for f in FIXTURES if f.provider == "codex"}
    assert {c.session_id for c in plan.candidates} == codex
    # no process runs them: an unfinished last turn is carried as it is, not skipped
    interrupted = [c for c in plan.candidates if c.session_id in _ids("codex", {"interrupted"})]
    assert [(c.state, c.skip) for c in interrupted] == [("working", None)]


def test_under_keeps_only_the_sessions_and_agents_working_below_a_directory(
    home: dict[str, str], tmp_path: Path
) -> None:
    # a live agent of this home on the stuck Codex session, and the home's other parked one
    stuck = next(f for f in FIXTURES if f.name == "codex-stuck_agent")
    path = Path(home["HOME"]) / Path(stuck.spec["transcript"]).relative_to("home")
    agent = Agent(
        Provider.CODEX, 1, None, path, None, None, AgentState.IDLE, None, ["codex"],
        {"HOME": home["HOME"]},
    )  # fmt: skip
    plan = plan_fleet(env=home, now=NOW, exhausted=[Provider.CODEX], agents=[agent])
    assert plan.under is None and len(plan.candidates) == 2
    assert {c.path: c.pid for c in plan.candidates}[path] == 1

    cwd = stuck.spec["cwd"]
    narrowed = plan_fleet(
        env=home, now=NOW, exhausted=[Provider.CODEX], agents=[agent], under=cwd + "/."
    )
    assert narrowed.under == cwd
    assert {c.path for c in narrowed.candidates} == {path}
    assert {c.cwd for c in narrowed.candidates} == {cwd}
    with pytest.raises(SegueError, match="--under ~nosuchuser-segue/x"):
        plan_fleet(env=home, now=NOW, exhausted=[Provider.CODEX], under="~nosuchuser-segue/x")
    nowhere = str(tmp_path / "nowhere")
    assert not plan_fleet(
        env=home, now=NOW, exhausted=[Provider.CODEX], agents=[agent], under=nowhere
    ).candidates


def test_an_agent_of_another_home_moves_only_when_its_session_is_named(
    home: dict[str, str], tmp_path: Path
) -> None:
    # another account's Codex (or another test's scratch home) runs a copy of the stuck session,
    # the same id in a home segue does not list: its usage is not this home's
    stuck = next(f for f in FIXTURES if f.name == "codex-stuck_agent")
    shutil.copytree(stuck.home, tmp_path / "elsewhere")
    copy = tmp_path / "elsewhere" / Path(stuck.spec["transcript"]).relative_to("home")
    agent = Agent(
        Provider.CODEX, 1, None, copy, None, None, AgentState.IDLE, None, ["codex"],
        {"HOME": str(tmp_path / "elsewhere")},
    )  # fmt: skip
    plan = plan_fleet(env=home, now=NOW, exhausted=[Provider.CODEX], agents=[agent])
    assert copy not in {c.path for c in plan.candidates}
    assert {c.session_id for c in plan.candidates} == _ids(
        "codex", {"stuck_agent", "usage_limited"}
    )
    assert all(c.pid is None for c in plan.candidates)
    # named by its file, it is moved, with its agent
    named = plan_fleet(Provider.CODEX, sessions=[str(copy)], env=home, now=NOW, agents=[agent])
    assert [(c.path, c.pid) for c in named.candidates] == [(copy, 1)]


def test_an_agent_of_another_home_that_names_no_home_is_not_switched(
    home: dict[str, str], tmp_path: Path
) -> None:
    # its process gave no HOME: where its CLI would read a switched session cannot be told,
    # so nothing is written anywhere for it
    stuck = next(f for f in FIXTURES if f.name == "codex-stuck_agent")
    shutil.copytree(stuck.home, tmp_path / "elsewhere")
    copy = tmp_path / "elsewhere" / Path(stuck.spec["transcript"]).relative_to("home")
    agent = Agent(
        Provider.CODEX, 1, None, copy, None, None, AgentState.IDLE, None, ["codex"],
        {"CODEX_HOME": str(tmp_path / "elsewhere" / ".codex")},
    )  # fmt: skip
    plan = plan_fleet(Provider.CODEX, sessions=[str(copy)], env=home, now=NOW, agents=[agent])
    (candidate,) = plan.candidates
    assert candidate.error is not None and "no HOME" in candidate.error
    assert "\n" not in candidate.error
    before = set(Path(home["HOME"], ".claude").rglob("*.jsonl"))
    result = run_fleet(plan, env=home, record=False)
    assert [o.switch for o in result.outcomes] == [None] and result.failed
    assert set(Path(home["HOME"], ".claude").rglob("*.jsonl")) == before
    assert not (tmp_path / "elsewhere" / ".claude").exists()


def test_a_batch_switches_in_parallel_records_itself_and_comes_back(
    home: dict[str, str],
) -> None:
    plan = plan_fleet(env=home, now=NOW, exhausted=[Provider.CODEX], agents=[])
    sources = {c.path: hashlib.sha256(c.path.read_bytes()).hexdigest() for c in plan.candidates}

    result = run_fleet(plan, env=home)

    assert [o.error for o in result.outcomes] == [None, None]
    assert result.tally_line().startswith("Switched 2 agents to Claude Code: ")
    for outcome in result.outcomes:
        assert outcome.switch is not None and outcome.switch.path is not None
        assert read_session(outcome.switch.path).meta.provider is Provider.CLAUDE
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sources} == sources
    assert result.batch_id is not None
    with open_store(env=home) as store:
        batch = store.get_batch(result.batch_id)
    assert batch.header.from_provider == "codex" and batch.header.to_provider == "claude"
    assert {a.result.session for a in batch.agents} == {c.session_id for c in plan.candidates}
    assert all(a.result.target_session for a in batch.agents)

    back = return_plan(env=home)
    assert (back.source, back.target) == (Provider.CLAUDE, Provider.CODEX)
    assert {c.session_id for c in back.candidates} == {
        str(o.switch.session_id) for o in result.outcomes if o.switch
    }
    returned = run_fleet(back, env=home)
    assert returned.tally_line().startswith("Switched 2 agents to Codex")
    # nothing happened on Claude since: each goes back to its own Codex session, as it is
    assert [o.thread.strategy for o in returned.outcomes if o.thread] == ["no_handoff"] * 2
    assert {str(o.switch.session_id) for o in returned.outcomes if o.switch} == {
        c.session_id for c in plan.candidates
    }
    # and the first batch was recorded in the app-thread graph as it went
    assert [o.thread.strategy for o in result.outcomes if o.thread] == ["full_into_new"] * 2


def test_source_compaction_is_refused_when_the_source_is_exhausted(home: dict[str, str]) -> None:
    plan = plan_fleet(env=home, now=NOW, exhausted=[Provider.CODEX], agents=[])
    with pytest.raises(SegueError, match="exhausted"):
        check_source_compact(plan, exhausted=[Provider.CODEX])
    check_source_compact(plan, exhausted=[])


def test_cli_preview_confirmation_and_json(home: dict[str, str]) -> None:
    preview = segue(
        ["switch", "--from", "codex", "--all", "--dry-run", "--json"], home, timeout=120
    )
    assert preview.returncode == 0, preview.stderr
    doc = orjson.loads(preview.stdout)
    assert doc["from"] == "codex" and doc["to"] == "claude" and doc["batch"] is None
    assert {a["session"] for a in doc["agents"]} >= _ids("codex", {"stuck_agent"})
    agent = doc["agents"][0]
    assert set(agent) >= {"session", "provider", "cwd", "pane", "state", "skipped", "error"}

    refused = segue(["switch", "--from", "codex", "--all"], home, timeout=120)
    assert refused.returncode == 1
    assert "confirm" in refused.stderr and "--yes" in refused.stderr
    assert refused.stderr.count("\n") == 1  # one line, no traceback

    done = segue(["switch", "--from", "codex", "--all", "--yes", "--json"], home, timeout=120)
    assert done.returncode == 0, done.stderr
    result = orjson.loads(done.stdout)
    assert result["batch"] and result["summary"].startswith("Switched ")
    switched = [a for a in result["agents"] if a["switch"]]
    assert switched and all(a["switch"]["session_id"] for a in switched)

    listed = segue(["batches", "--json"], home, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert result["batch"] in listed.stdout


def test_a_confirmed_preview_is_published_as_shown_unless_the_source_changed(
    home: dict[str, str],
) -> None:
    from segue.switch import carry_out, preview_switch

    fixture = next(f for f in FIXTURES if f.name == "codex-multi_turn")
    sid = fixture.spec["session_id"]
    preview = preview_switch(sid, Provider.CLAUDE, env=home)
    assert preview.shown.path is None and preview.shown.dry_run
    shown = preview.prepared.session
    assert shown is not None
    done = carry_out(preview, home)
    assert done.session_id == shown.session_id  # exactly what was shown
    assert done.path is not None and done.path.read_bytes() == b"".join(shown.lines)

    # the agent wrote on after the preview: the switch is planned afresh from the file
    stale = preview_switch(sid, Provider.CLAUDE, clean=True, env=home)
    assert stale.shown.source_path is not None and stale.prepared.session is not None
    with stale.shown.source_path.open("ab") as f:  # a scratch copy of a fixture, never the fixture
        f.write(fixture.transcript.read_bytes().splitlines(keepends=True)[-1])
    again = carry_out(stale, home)
    assert again.session_id != stale.prepared.session.session_id


def test_a_return_goes_on_past_a_session_that_is_gone_and_exits_non_zero(
    home: dict[str, str],
) -> None:
    plan = plan_fleet(env=home, now=NOW, exhausted=[Provider.CODEX], agents=[])
    result = run_fleet(plan, env=home)
    gone, kept = [o.switch for o in result.outcomes if o.switch is not None]
    assert gone is not None and gone.path is not None and kept is not None
    gone.path.unlink()  # one of the sessions the batch wrote: deleted since

    # (back to Codex, which the recorded limits hold until 2030: only with --force)
    done = segue(["switch", "--return", "--yes", "--force", "--json"], home, timeout=120)

    assert done.returncode == 1, done.stderr
    doc = orjson.loads(done.stdout)  # one document
    by = {a["session"]: a for a in doc["agents"]}
    assert by[str(gone.session_id)]["error"] and by[str(gone.session_id)]["switch"] is None
    back = by[str(kept.session_id)]["switch"]
    assert back is not None and back["thread"]["strategy"] == "no_handoff"
    assert "1 failed" in doc["summary"]


def _codex_files(home: dict[str, str]) -> set[Path]:
    return set(Path(home["HOME"], ".codex", "sessions").rglob("*.jsonl"))


def test_a_return_to_a_provider_still_exhausted_is_refused_unless_forced(
    home: dict[str, str],
) -> None:
    # moved off Codex, whose recorded usage limit (the usage_limited session) resets only on
    # 2030-03-17 17:46 UTC: every reading segue makes says Codex is still exhausted
    plan = plan_fleet(env=home, now=NOW, exhausted=[Provider.CODEX], agents=[])
    moved = run_fleet(plan, env=home)
    assert moved.batch_id is not None and not moved.failed
    before = _codex_files(home)

    refused = segue(["switch", "--return", "--yes"], home, timeout=120)
    assert refused.returncode == 1 and not refused.stdout
    assert refused.stderr.count("\n") == 1, refused.stderr  # one line, no traceback
    line = refused.stderr
    assert "codex is still exhausted" in line and "2030-03-17 17:46 UTC" in line, line
    assert "--force" in line
    as_json = segue(["switch", "--return", "--yes", "--json"], home, timeout=120)
    assert as_json.returncode == 1
    assert "2030-03-17 17:46 UTC" in orjson.loads(as_json.stdout)["error"]
    assert _codex_files(home) == before  # nothing written
    with open_store(env=home) as store:
        assert len(store.list_batches()) == 1  # and no return recorded

    # the preview shows the plan, and the same line under it
    preview = segue(["switch", "--return", "--dry-run"], home, timeout=120)
    assert preview.returncode == 0, preview.stderr
    assert "Claude Code → Codex (back from batch" in preview.stdout
    assert "warning: codex is still exhausted" in preview.stdout
    assert "2030-03-17 17:46 UTC" in preview.stdout
    doc = orjson.loads(
        segue(["switch", "--return", "--dry-run", "--json"], home, timeout=120).stdout
    )
    assert "2030-03-17 17:46 UTC" in doc["blocked"]

    # the library refuses such a plan too, unless forced
    back = return_plan(env=home, check_usage=True, remote=False)
    assert back.blocked is not None and "2030-03-17 17:46 UTC" in back.blocked
    with pytest.raises(SegueError, match="still exhausted"):
        run_fleet(back, env=home)
    assert return_plan(env=home).blocked is None  # (not asked: the caller has looked)

    # --force belongs to --return; and with it, they go back
    wrong = segue(["switch", "--from", "codex", "--all", "--force"], home, timeout=120)
    assert wrong.returncode == 2 and "--return" in wrong.stderr, wrong.stderr
    forced = segue(["switch", "--return", "--yes", "--force", "--json"], home, timeout=120)
    assert forced.returncode == 0, forced.stderr
    assert orjson.loads(forced.stdout)["summary"].startswith("Switched 2 agents to Codex")


def test_an_agent_at_work_on_a_copy_in_another_home_does_not_hold_this_session(
    home: dict[str, str], tmp_path: Path
) -> None:
    from segue.running.agents import working_on

    stuck = next(f for f in FIXTURES if f.name == "codex-stuck_agent")
    mine = Path(home["HOME"]) / Path(stuck.spec["transcript"]).relative_to("home")
    shutil.copytree(stuck.home, tmp_path / "elsewhere")
    copy = tmp_path / "elsewhere" / Path(stuck.spec["transcript"]).relative_to("home")
    sid = str(stuck.spec["session_id"])
    there = Agent(
        Provider.CODEX, 7, sid, copy, None, None, AgentState.WORKING, None, ["codex"],
        {"HOME": str(tmp_path / "elsewhere")},
    )  # fmt: skip
    assert working_on(Provider.CODEX, sid, mine, agents=[there]) is None
    assert working_on(Provider.CODEX, sid, copy, agents=[there]) is there
    assert working_on(Provider.CODEX, sid, agents=[there]) is there  # by id alone: the id's
