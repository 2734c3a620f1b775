"""The disk is the truth, where a real CLI makes the change: a turn typed in the target, a
rewind in the source, a rewind in the target, a rollback of a Codex thread, a limit in a
headless run, a prompt that starts with ``-``, a session its CLI is still working on.

Every CLI runs against the stand-in model server; what it sent the model is the proof of what
history it loaded.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from segue_testbed.claude_cli import ClaudeHome, claude_bin
from segue_testbed.codex_cli import CodexHome, codex_bin
from segue_testbed.fixtures import all_fixtures
from segue_testbed.standin.anthropic import RateLimited, Stall
from segue_testbed.standin.anthropic import Text as ClaudeText
from segue_testbed.standin.openai import Text as CodexText
from segue_testbed.standin.openai import request_kind
from segue_testbed.standin.server import Lane, StandIn
from tests.segue_cli import segue, segue_json

pytestmark = pytest.mark.realcli

BY_NAME = {f.name: f for f in all_fixtures()}
PROMPT = "Reply with the word MARKER and nothing else."


def _homes(
    standin: StandIn, tmp_path: Path, fixture: str, *, oauth: bool = False
) -> tuple[Lane, CodexHome, ClaudeHome, dict[str, str], Path]:
    spec = BY_NAME[fixture]
    lane = standin.lane()
    # the stand-in counts message ids per lane from 1, as the lane that recorded the fixture
    # did: a session continued here must not get the ids its recorded replies have
    lane.state["anthropic_ids"] = 5000
    codex, claude = CodexHome(tmp_path, lane), ClaudeHome(tmp_path, lane, oauth=oauth)
    shutil.copytree(spec.home, codex.home, dirs_exist_ok=True)
    env = {
        **codex.env(),
        **claude.env(),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
        "SEGUE_CLAUDE_BIN": str(claude_bin()),
        "SEGUE_CODEX_BIN": str(codex_bin()),
        "ANTHROPIC_MODEL": "claude-sonnet-5-5",  # the model the Claude fixtures ran
    }
    cwd = Path(spec.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    return lane, codex, claude, env, cwd


def _claude_sent(lane: Lane) -> str:
    (request,) = [r.body for r in lane.requests_for("anthropic")][-1:]
    return orjson.dumps(request["messages"]).decode()


def _codex_sent(lane: Lane) -> str:
    turns = [r.body for r in lane.requests_for("openai") if request_kind(r) == "turn"]
    return orjson.dumps(turns[-1]["input"]).decode()


def test_a_turn_typed_in_the_codex_target_goes_back_into_claudes_own_session(
    standin: StandIn, tmp_path: Path
) -> None:
    fixture = BY_NAME["claude-multi_turn"]
    lane, codex, claude, env, cwd = _homes(standin, tmp_path, "claude-multi_turn")
    shutil.copytree(fixture.home, claude.home, dirs_exist_ok=True)
    sid = fixture.spec["session_id"]
    there = segue_json(["switch", sid, "--to", "codex", "--json"], env)
    typed = "Now a third cat name, please."
    lane.script("openai", CodexText("Whiskers."))
    ran = codex.exec(typed, cwd=cwd, resume=there["session_id"])
    assert ran.returncode == 0, ran.stderr[-2000:]

    back = segue_json(["switch", there["session_id"], "--to", "claude", "--json"], env)

    runs = len(fixture.spec["prompts"])
    assert back["thread"]["strategy"] == "delta_into_existing"
    assert back["thread"]["covers"] == [runs + 1, runs + 1]
    lane.script("anthropic", ClaudeText("MARKER"))
    assert claude.run(PROMPT, cwd=cwd, resume=back["session_id"]).returncode == 0
    sent = _claude_sent(lane)
    marks = [fixture.spec["prompts"][0], fixture.spec["prompts"][-1], typed, "Whiskers.", PROMPT]
    positions = [sent.index(m) for m in marks]
    assert positions == sorted(positions)
    assert sent.count(fixture.spec["prompts"][0]) == 1  # Claude's own runs are not carried again


def test_a_rewind_in_the_source_is_never_carried(standin: StandIn, tmp_path: Path) -> None:
    """Claude runs 1-3, switched to Codex; the user rewinds Claude to after run 1 and goes on
    there. The next switch must not fork the Codex session, which still holds runs 2-3."""
    fixture = BY_NAME["claude-multi_turn"]
    lane, codex, claude, env, cwd = _homes(standin, tmp_path, "claude-multi_turn")
    shutil.copytree(fixture.home, claude.home, dirs_exist_ok=True)
    sid = fixture.spec["session_id"]
    there = segue_json(["switch", sid, "--to", "codex", "--json"], env)
    redo = "Forget those: suggest a dog name instead."
    lane.script("anthropic", ClaudeText("Rex."))
    assert claude.rewind_run(sid, 1, redo, cwd=cwd).returncode == 0

    again = segue_json(["switch", sid, "--to", "codex", "--json"], env)

    assert again["thread"]["strategy"] == "full_into_new"
    assert "rolled back" in again["thread"]["reason"]
    assert again["session_id"] != there["session_id"]
    shown = segue_json(["thread", "show", sid, "--json"], env)
    status = {r["prompt"]: r["status"] for r in shown["runs"]}
    for undone in fixture.spec["prompts"][1:]:
        assert status[undone] == "rolled_back"
    assert status[redo] == "completed"
    codex_threads = {pt["native_id"]: pt for pt in shown["provider_threads"]}
    assert codex_threads[there["session_id"]]["status"] == "divergent"
    lane.script("openai", CodexText("MARKER"))
    assert codex.exec(PROMPT, cwd=cwd, resume=again["session_id"]).returncode == 0
    sent = _codex_sent(lane)
    assert fixture.spec["prompts"][0] in sent and redo in sent and "Rex." in sent
    for undone in fixture.spec["prompts"][1:]:
        assert undone not in sent


def test_a_rewind_in_the_target_is_recorded_and_carried_back(
    standin: StandIn, tmp_path: Path
) -> None:
    """Codex runs, switched to Claude; the user rewinds Claude's session to after its first
    turn and types a new prompt. The new turn is a run, the undone ones are rolled back, and
    the way back to Codex carries the new turn and none of the undone ones."""
    fixture = BY_NAME["codex-multi_turn"]
    lane, codex, claude, env, cwd = _homes(standin, tmp_path, "codex-multi_turn")
    there = segue_json(["switch", fixture.spec["session_id"], "--to", "claude", "--json"], env)
    l1 = there["session_id"]
    redo = "Start over from the first answer: one word only."
    lane.script("anthropic", ClaudeText("Done."))
    assert claude.rewind_run(l1, 1, redo, cwd=cwd).returncode == 0

    shown = segue_json(["thread", "show", l1, "--json"], env)
    runs = shown["runs"]
    assert runs[-1]["prompt"] == redo and runs[-1]["provider"] == "claude"
    assert runs[-1]["status"] == "completed"
    undone = [r["prompt"] for r in runs if r["status"] == "rolled_back"]
    assert undone == fixture.spec["prompts"][1:]
    back = segue_json(["switch", l1, "--to", "codex", "--json"], env)
    assert back["thread"]["strategy"] == "full_into_new"  # C1 still holds the undone runs
    lane.script("openai", CodexText("MARKER"))
    assert codex.exec(PROMPT, cwd=cwd, resume=back["session_id"]).returncode == 0
    sent = _codex_sent(lane)
    assert redo in sent and "Done." in sent and fixture.spec["prompts"][0] in sent
    for prompt in undone:
        assert prompt not in sent


def test_a_rollback_in_a_codex_source_rolls_the_thread_back(
    standin: StandIn, tmp_path: Path
) -> None:
    fixture = BY_NAME["codex-multi_turn"]
    lane, codex, claude, env, cwd = _homes(standin, tmp_path, "codex-multi_turn")
    c1 = fixture.spec["session_id"]
    there = segue_json(["switch", c1, "--to", "claude", "--json"], env)
    codex.rollback_turns(c1, 1, cwd=cwd)
    redo = "Only the first part counts; go on from there."
    lane.script("openai", CodexText("Going on."))
    assert codex.exec(redo, cwd=cwd, resume=c1).returncode == 0

    again = segue_json(["switch", c1, "--to", "claude", "--json"], env)

    assert (
        again["thread"]["strategy"] == "full_into_new"
        and again["session_id"] != (there["session_id"])
    )
    lane.script("anthropic", ClaudeText("MARKER"))
    assert claude.run(PROMPT, cwd=cwd, resume=again["session_id"]).returncode == 0
    sent = _claude_sent(lane)
    assert redo in sent and fixture.spec["prompts"][0] in sent
    for undone in fixture.spec["prompts"][1:]:
        assert undone not in sent


def test_a_prompt_that_starts_with_a_dash_reaches_the_model_as_a_prompt(
    standin: StandIn, tmp_path: Path
) -> None:
    fixture = BY_NAME["codex-multi_turn"]
    lane, _, _, env, cwd = _homes(standin, tmp_path, "codex-multi_turn")
    sid = fixture.spec["session_id"]
    for prompt in ("--version", "- fix the bug"):
        lane.script("openai", CodexText("OK."))
        args = ["run", "--thread", sid, "--json", "--", prompt]
        if prompt.startswith("- "):
            args = ["run", "--thread", sid, "--json", prompt]  # no -- needed: it has a space
        done = segue(args, env, cwd=cwd)
        assert done.returncode == 0, done.stderr
        doc = orjson.loads(done.stdout)  # one document
        assert doc["status"] == "completed" and doc["run"] is not None
        assert prompt in _codex_sent(lane)
    wrong = segue(["run", "--thread", sid, "--version"], env, cwd=cwd)
    assert wrong.returncode == 2 and "segue run -- PROMPT" in wrong.stderr


def test_a_limit_in_a_run_fails_the_run_and_leaves_the_thread_usable(
    standin: StandIn, tmp_path: Path
) -> None:
    fixture = BY_NAME["codex-multi_turn"]
    lane, _, claude, env, cwd = _homes(standin, tmp_path, "codex-multi_turn", oauth=True)
    sid = fixture.spec["session_id"]
    lane.script("anthropic", ClaudeText("On Claude."))
    first = segue(["run", "--thread", sid, "--provider", "claude", "--json", "Go on."], env)
    assert first.returncode == 0, first.stderr
    lane.script("anthropic", RateLimited(subscriber=True))

    limited = segue(["run", "--thread", sid, "--json", "And again."], env, cwd=cwd)

    assert limited.returncode == 1
    doc = orjson.loads(limited.stdout)  # one document, with the error in it
    assert doc["status"] == "failed" and doc["exit_code"] == 1
    assert "limit" in doc["error"].lower() and doc["run"] is not None
    shown = segue_json(["thread", "show", sid, "--json"], env)
    assert shown["runs"][-1]["status"] == "failed"
    claude_pt = next(pt for pt in shown["provider_threads"] if pt["provider"] == "claude")
    assert claude_pt["status"] == "active"  # a limit is not a failed resume
    lane.script("anthropic", ClaudeText("Back."))
    after = segue(["run", "--thread", sid, "--json", "Once more."], env, cwd=cwd)
    assert after.returncode == 0 and orjson.loads(after.stdout)["session_id"] == doc["session_id"]
    del claude


def test_a_session_its_cli_is_working_on_is_not_switched_or_run(
    standin: StandIn, tmp_path: Path
) -> None:
    fixture = BY_NAME["claude-multi_turn"]
    lane, _, claude, env, cwd = _homes(standin, tmp_path, "claude-multi_turn")
    shutil.copytree(fixture.home, claude.home, dirs_exist_ok=True)
    sid = fixture.spec["session_id"]
    segue_json(["thread", "adopt", sid, "--json"], env)
    lane.script("anthropic", Stall(seconds=60))
    busy = subprocess.Popen(
        claude.args("A long task.", resume=sid),
        cwd=cwd,
        env=claude.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not any(s.get("status") == "busy" for s in claude.live_sessions()):
            assert time.monotonic() < deadline and busy.poll() is None
            time.sleep(0.2)
        transcript = claude.transcript_for(sid)
        while b"A long task." not in transcript.read_bytes():
            assert time.monotonic() < deadline
            time.sleep(0.2)
        switched = segue(["switch", sid, "--to", "codex", "--json"], env)
        assert switched.returncode == 1
        assert "mid-turn" in orjson.loads(switched.stdout)["error"]
        ran = segue(["run", "--thread", sid, "--json", "Meanwhile."], env, cwd=cwd)
        assert ran.returncode == 1 and "mid-turn" in orjson.loads(ran.stdout)["error"]
        assert b"Meanwhile." not in transcript.read_bytes()
    finally:
        busy.terminate()
        busy.wait(30)


def test_a_turn_begun_after_the_fleet_was_planned_stops_that_agents_switch(
    standin: StandIn, tmp_path: Path
) -> None:
    # the batch is planned (and each switch previewed) while no CLI runs the session; then its
    # CLI starts a turn: the session's last record is an unanswered prompt, the CLI alive. The
    # confirmed switch asks the machine again, under its lock, right before writing
    from segue.fleet.batch import ArrivalCompact, plan_fleet, run_fleet
    from segue.model.conversation import Provider

    fixture = BY_NAME["claude-multi_turn"]
    lane, codex, claude, env, cwd = _homes(standin, tmp_path, "claude-multi_turn")
    shutil.copytree(fixture.home, claude.home, dirs_exist_ok=True)
    sid = fixture.spec["session_id"]
    plan = plan_fleet(Provider.CLAUDE, Provider.CODEX, sessions=[sid], env=env, agents=[])
    assert [(c.session_id, c.skip, c.error) for c in plan.candidates] == [(sid, None, None)]
    before = set(codex.codex_home.rglob("rollout-*.jsonl"))
    lane.script("anthropic", Stall(seconds=60))
    busy = subprocess.Popen(
        claude.args("A long task.", resume=sid),
        cwd=cwd,
        env=claude.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        transcript = claude.transcript_for(sid)
        while b"A long task." not in transcript.read_bytes() or not any(
            s.get("status") == "busy" for s in claude.live_sessions()
        ):
            assert time.monotonic() < deadline and busy.poll() is None
            time.sleep(0.2)

        result = run_fleet(plan, env=env, record=False, arrival_compact=ArrivalCompact.OFF)

        (outcome,) = result.outcomes
        assert outcome.switch is None and outcome.error is not None
        assert "mid-turn" in outcome.error and f"pid {busy.pid}" in outcome.error
        assert set(codex.codex_home.rglob("rollout-*.jsonl")) == before  # nothing written
        assert busy.poll() is None  # and the turn goes on
    finally:
        busy.terminate()
        busy.wait(30)
