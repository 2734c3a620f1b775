"""Summary-form handoffs through ``segue switch``, with the real CLIs and the stand-in.

Run 1 on Codex (C1), ``segue switch`` to Claude Code (L1), runs 2-3 typed in Claude Code; Codex's
budget is then too small for runs 2-3 as native items, so ``segue switch`` back carries them as a
summary in a fork of C1: segue's own by default, or one a CLI wrote (``--summary-by``), never a
limit text. Then run 4 goes there: the summary reaches the model after C1's own history.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.model.conversation import ErrorNotice
from segue.providers import entry_for_file
from segue.providers.sessions import find_session
from segue.store import open_store
from segue.switch import Switch
from segue.threads import HandoffForm, ThreadStore
from segue.threads.model import Handoff, HandoffStatus, HandoffStrategy
from segue.threads.strategy import Decision, Strategy
from segue_testbed.claude_cli import ClaudeHome, claude_bin
from segue_testbed.codex_cli import CodexHome, codex_bin
from segue_testbed.fixtures import all_fixtures
from segue_testbed.standin.anthropic import Text as ClaudeText
from segue_testbed.standin.openai import Text as CodexText
from segue_testbed.standin.openai import UsageLimit, request_kind
from segue_testbed.standin.server import Lane, StandIn
from tests.segue_cli import segue_json

pytestmark = pytest.mark.realcli

BY_NAME = {f.name: f for f in all_fixtures()}
PROMPTS = ["Name a prime above 90.", "And one above 100?"]
ANSWERS = ["97.", "101."]
SMALL_BUDGET = "model_auto_compact_token_limit = 10\n"  # top level: before any table


@dataclass
class _World:
    lane: Lane
    codex: CodexHome
    claude: ClaudeHome
    env: dict[str, str]
    cwd: Path
    c1: str
    l1: str
    thread: str


def _two_runs_in_claude(standin: StandIn, tmp_path: Path) -> _World:
    fixture = BY_NAME["codex-reasoning"]
    lane = standin.lane()
    codex, claude = CodexHome(tmp_path, lane), ClaudeHome(tmp_path, lane)
    env = {
        **codex.env(),
        **claude.env(),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
        "SEGUE_CLAUDE_BIN": str(claude_bin()),
        "SEGUE_CODEX_BIN": str(codex_bin()),
    }
    shutil.copytree(fixture.home, codex.home, dirs_exist_ok=True)
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    there = segue_json(
        ["switch", fixture.spec["session_id"], "--to", "claude", "--json"], env, timeout=300
    )
    l1 = there["session_id"]
    for prompt, answer in zip(PROMPTS, ANSWERS, strict=True):
        lane.script("anthropic", ClaudeText(answer))
        ran = claude.run(prompt, cwd=cwd, resume=l1)
        assert ran.returncode == 0, ran.stderr[-2000:]
    return _World(
        lane, codex, claude, env, cwd, fixture.spec["session_id"], l1, there["thread"]["id"]
    )


def _back_to_codex(world: _World, *extra: str) -> dict[str, Any]:
    """``segue switch`` back to Codex with a budget too small for runs 2-3 as native items."""
    config = world.codex.codex_home / "config.toml"
    normal = config.read_text()
    config.write_text(SMALL_BUDGET + normal)
    try:
        args = ["switch", world.l1, "--to", "codex", "--json", *extra]
        return segue_json(args, world.env, timeout=300)
    finally:
        config.write_text(normal)


def _handoff(world: _World, handoff_id: str) -> Handoff:
    with open_store(env=world.env) as store:
        graph = ThreadStore(store).graph(world.thread)
    return next(h for h in graph.handoffs if h.id == handoff_id)


def _run_four(world: _World, fork: str) -> str:
    """Run 4 in the fork; what Codex sent the model."""
    world.lane.script("openai", CodexText("MARKER"))
    ran = world.codex.exec("Reply with MARKER.", cwd=world.cwd, resume=fork)
    assert ran.returncode == 0, ran.stderr[-2000:]
    turns = [r.body for r in world.lane.requests_for("openai") if request_kind(r) == "turn"]
    return orjson.dumps(turns[-1]["input"]).decode()


def test_a_delta_too_big_for_the_target_is_carried_as_segues_summary(
    standin: StandIn, tmp_path: Path
) -> None:
    world = _two_runs_in_claude(standin, tmp_path)

    back = _back_to_codex(world)

    move = back["thread"]
    assert move["strategy"] == "delta_into_existing"
    assert move["handoff"]["form"] == "summary" and move["handoff"]["covers"] == [2, 3]
    assert move["handoff"]["created_by_provider"] is None
    handoff = _handoff(world, move["handoff"]["id"])
    assert handoff.form is HandoffForm.SUMMARY and handoff.text is not None
    for text in [*PROMPTS, *ANSWERS]:
        assert text in handoff.text
    assert "run 2" in handoff.text and "run 1:" not in handoff.text
    sent = _run_four(world, back["session_id"])
    assert sent.index(BY_NAME["codex-reasoning"].spec["replies"][-1]) < sent.index(
        "# Handoff summary"
    )
    assert sent.count(PROMPTS[0]) == 1  # in the summary, not as native items too


@pytest.mark.parametrize(
    ("by", "writer", "api", "label"),
    [
        ("left", "claude", "anthropic", "Claude Code"),
        ("entered", "codex", "openai", "Codex"),
    ],
)
def test_summary_by_a_provider(
    standin: StandIn, tmp_path: Path, by: str, writer: str, api: str, label: str
) -> None:
    world = _two_runs_in_claude(standin, tmp_path)
    written = f"Handoff by {label}: the user asked for primes above 90 and 100 (97, 101)."
    world.lane.script(api, ClaudeText(written) if api == "anthropic" else CodexText(written))
    before = {p for home in (world.claude.config_dir, world.codex.codex_home)
              for p in home.rglob("*.jsonl")}  # fmt: skip

    back = _back_to_codex(world, "--summary-by", by)

    move = back["thread"]
    assert move["handoff"]["form"] == "summary"
    assert move["handoff"]["created_by_provider"] == writer, back["notes"]
    assert _handoff(world, move["handoff"]["id"]).text == written + "\n"
    assert any(f"written by {label}" in note for note in back["notes"])
    after = {p for home in (world.claude.config_dir, world.codex.codex_home)
             for p in home.rglob("*.jsonl")}  # fmt: skip
    assert [p.name for p in after - before] == [Path(back["path"]).name]  # the fork only
    assert written in _run_four(world, back["session_id"])


def test_a_limit_text_is_never_taken_for_a_summary(standin: StandIn, tmp_path: Path) -> None:
    world = _two_runs_in_claude(standin, tmp_path)
    limited = BY_NAME["claude-rate_limited"]
    notice = next(
        i.message
        for i in entry_for_file(limited.transcript).read(limited.transcript).items
        if isinstance(i, ErrorNotice)
    )
    world.lane.script("anthropic", ClaudeText(notice))

    back = _back_to_codex(world, "--summary-by", "claude")

    move = back["thread"]
    assert move["handoff"]["created_by_provider"] is None
    text = _handoff(world, move["handoff"]["id"]).text
    assert text is not None and text.startswith("# Handoff summary") and notice not in text
    assert any("limit or error text" in note for note in back["notes"])


def test_a_rate_limited_summarizer_falls_back_to_segues_summary(
    standin: StandIn, tmp_path: Path
) -> None:
    world = _two_runs_in_claude(standin, tmp_path)
    world.lane.script("openai", UsageLimit(resets_at=2_000_000_000))

    back = _back_to_codex(world, "--summary-by", "entered")

    move = back["thread"]
    assert move["handoff"]["form"] == "summary"
    assert move["handoff"]["created_by_provider"] is None
    text = _handoff(world, move["handoff"]["id"]).text
    assert text is not None and text.startswith("# Handoff summary")
    assert any("codex gave no summary" in note for note in back["notes"])


def test_a_whole_thread_summary_into_the_existing_thread_supersedes_the_older_one(
    standin: StandIn, tmp_path: Path
) -> None:
    world = _two_runs_in_claude(standin, tmp_path)
    back = _back_to_codex(world)
    delta = _handoff(world, back["thread"]["handoff"]["id"])
    fixture = BY_NAME["codex-reasoning"]

    decision = Decision(
        Strategy.FULL_INTO_EXISTING,
        "the delta chain is too complex",
        back["thread"]["provider_thread"],
        (1, 3),
        HandoffForm.SUMMARY,
    )
    carried = _carry_out(world, world.l1, decision)
    assert carried.thread is not None and carried.thread.handoff_id is not None
    with open_store(env=world.env) as store:
        graph = ThreadStore(store).graph(world.thread)

    full = next(h for h in graph.handoffs if h.id == carried.thread.handoff_id)
    assert full.strategy is HandoffStrategy.FULL_THREAD_SUMMARY and full.supersedes == delta.id
    assert full.text is not None
    for text in [fixture.spec["prompts"][0], *PROMPTS, *ANSWERS]:
        assert text in full.text
    statuses = {h.id: h.status for h in graph.handoffs}
    assert statuses[delta.id] is HandoffStatus.SUPERSEDED  # recorded, never changed
    assert _handoff(world, delta.id).text == delta.text
    assert carried.session_id is not None
    sent = _run_four(world, carried.session_id)
    assert sent.index(fixture.spec["replies"][-1]) < sent.rindex("# Handoff summary")


def _carry_out(world: _World, ref: str, decision: Decision) -> Switch:
    """The switch pipeline with its decision given (a strategy the seed's order reaches only
    for a thread whose delta chain is too complex)."""
    from msgspec.structs import replace

    from segue.model.conversation import Provider
    from segue.providers.sessions import SessionReads
    from segue.switch.decide import SwitchOptions, decide_move
    from segue.switch.locks import SwitchLocks
    from segue.switch.pipeline import write_and_record
    from segue.switch.prepare import prepare_move
    from segue.switch.source import read_source
    from segue.switch.sync import load_thread

    reads = SessionReads()
    source_provider, path = find_session(ref, world.env)
    options = SwitchOptions(Provider.CODEX)
    with SwitchLocks(world.env, dry_run=False) as locks:
        source = read_source(source_provider, path, reads, world.env)
        state = load_thread(source, reads, world.env, locks, dry_run=False)
        decided = decide_move(state, source, Provider.CODEX, options, reads, world.env)
        given = replace(decided, decision=decision)
        prepared = prepare_move(state, source, given, options, reads, world.env)
        return write_and_record(state, source, prepared, reads, world.env)
