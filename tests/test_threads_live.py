"""Work done directly in a CLI since the last sync becomes the thread's next runs, once: the
real CLIs continue an adopted session (or a fork segue wrote) and ``sync`` counts their turns."""

from __future__ import annotations

import hashlib
import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from segue.conversation import Provider
from segue.providers import entry
from segue.store import open_store
from segue.threads import ThreadStore, adopt, sync
from segue_testbed.standin.server import StandIn
from tests.fixtures_index import all_fixtures

BY_NAME = {f.name: f for f in all_fixtures()}
PROMPT = "Reply with the word MARKER and nothing else."


@pytest.mark.realcli
def test_turns_typed_in_codex_after_adoption_are_synced_once(
    standin: StandIn, tmp_path: Path
) -> None:
    from segue_testbed.codex_cli import CodexHome
    from segue_testbed.standin.openai import Text

    fixture = BY_NAME["codex-reasoning"]
    lane = standin.lane()
    lane.script("openai", Text("MARKER"))
    codex = CodexHome(tmp_path, lane)
    shutil.copytree(fixture.home, codex.home, dirs_exist_ok=True)
    with open_store(f"sqlite:///{tmp_path / 'segue.db'}") as store:
        graph = adopt(store, fixture.spec["session_id"], codex.env())
        assert [r.prompt for r in graph.runs] == fixture.spec["prompts"]
        ran = codex.exec(PROMPT, cwd=Path(fixture.spec["cwd"]), resume=fixture.spec["session_id"])
        assert ran.returncode == 0, ran.stderr[-2000:]
        first = sync(store, graph.thread.id, codex.env())
        second = sync(store, graph.thread.id, codex.env())
    assert [r.prompt for r in first.new_runs] == [PROMPT] and second.new_runs == []
    assert [r.ordinal for r in second.graph.runs] == [1, 2]
    assert second.graph.provider_threads[0].native_runs == (1, 2)


@pytest.mark.realcli
def test_a_fork_segue_wrote_counts_only_the_turns_typed_into_it(
    standin: StandIn, tmp_path: Path
) -> None:
    """A Claude thread returned to with a native fork: the fork's copied turns and its delta are
    not runs of their own; the turn Claude runs in the fork is the thread's next run."""
    from segue_testbed.claude_cli import ClaudeHome
    from segue_testbed.standin.anthropic import Text

    fixture = BY_NAME["claude-thinking"]
    lane = standin.lane()
    lane.script("anthropic", Text("MARKER"))
    claude = ClaudeHome(tmp_path, lane)
    shutil.copytree(fixture.home, claude.home, dirs_exist_ok=True)
    parent = claude.home / fixture.transcript.relative_to(fixture.home)
    claude_entry = entry(Provider.CLAUDE)
    with open_store(f"sqlite:///{tmp_path / 'segue.db'}") as store:
        graph = adopt(store, str(parent))
        session = claude_entry.fork(
            parent,
            [],
            "Nothing happened elsewhere yet.",
            cwd=fixture.spec["cwd"],
            env=claude.env(),
            now=datetime.now(UTC),
        )
        claude_entry.publish(session, claude.env())
        threads = ThreadStore(store)
        turns_in_fork = len(fixture.spec["prompts"]) + 1  # the parent's, and the handoff
        threads.add_provider_thread(
            graph.thread.id,
            provider="claude",
            origin="fork",
            native_id=session.session_id,
            path=str(session.path),
            native_turns=turns_in_fork,
            model=None,
        )
        assert sync(store, graph.thread.id, claude.env()).new_runs == []
        ran = claude.run(PROMPT, cwd=Path(fixture.spec["cwd"]), resume=session.session_id)
        assert ran.returncode == 0, ran.stderr[-2000:]
        result = sync(store, graph.thread.id, claude.env())
    assert [(r.ordinal, r.prompt) for r in result.new_runs] == [(3, PROMPT)]
    fork_pt = result.graph.provider_threads[1]
    assert fork_pt.native_runs == (3,) and fork_pt.native_turns == turns_in_fork + 1


@pytest.mark.realcli
def test_the_seeds_example_returns_to_codex_with_the_claude_runs_as_a_native_delta(
    standin: StandIn, tmp_path: Path
) -> None:
    """Run 1 in Codex (C1), runs 2-3 in Claude Code (L1, made by a switch), back to Codex for
    run 4: C1 is resumed through a native fork that holds its own records byte for byte
    (encrypted reasoning included) and then runs 2-3 as native items."""
    from segue import switch_session
    from segue.threads import HandoffForm, HandoffStrategy, Strategy, decide_move, graph_to_json
    from segue.threads.delta import carry_delta
    from segue_testbed.claude_cli import ClaudeHome
    from segue_testbed.codex_cli import CodexHome
    from segue_testbed.standin.anthropic import Text as ClaudeText
    from segue_testbed.standin.openai import Text as CodexText
    from segue_testbed.standin.openai import request_kind

    fixture = BY_NAME["codex-reasoning"]
    lane = standin.lane()
    codex, claude = CodexHome(tmp_path, lane), ClaudeHome(tmp_path, lane)
    env = {**codex.env(), **claude.env()}
    shutil.copytree(fixture.home, codex.home, dirs_exist_ok=True)
    c1_file = codex.home / fixture.transcript.relative_to(fixture.home)
    c1_sha = hashlib.sha256(c1_file.read_bytes()).hexdigest()
    cwd = Path(fixture.spec["cwd"])
    with open_store(f"sqlite:///{tmp_path / 'segue.db'}") as store:
        threads = ThreadStore(store)
        graph = adopt(store, fixture.spec["session_id"], env)
        switched = switch_session(fixture.spec["session_id"], Provider.CLAUDE, env=env)
        assert switched.session_id is not None and switched.path is not None
        l1 = threads.add_provider_thread(
            graph.thread.id,
            provider="claude",
            origin="switch",
            native_id=switched.session_id,
            path=str(switched.path),
            native_turns=1,
            model=None,
        )
        threads.record_handoff(
            graph.thread.id,
            to_provider_thread_id=l1,
            from_provider_threads=[graph.provider_threads[0].id],
            covers=(1, 1),
            strategy=HandoffStrategy.FULL_THREAD_SUMMARY,
            form=HandoffForm.NATIVE_ITEMS,
        )
        prompts = ["Name a prime above 90.", "And one above 100?"]
        for prompt, answer in zip(prompts, ["97.", "101."], strict=True):
            lane.script("anthropic", ClaudeText(answer))
            ran = claude.run(prompt, cwd=cwd, resume=switched.session_id)
            assert ran.returncode == 0, ran.stderr[-2000:]
        decision = decide_move(store, graph.thread.id, Provider.CODEX, env=env)
        assert decision.strategy is Strategy.DELTA_INTO_EXISTING and decision.covers == (2, 3)
        carried = carry_delta(store, graph.thread.id, decision, env=env)
        lane.script("openai", CodexText("MARKER"))
        ran_codex = codex.exec(PROMPT, cwd=cwd, resume=carried.session.session_id)
        assert ran_codex.returncode == 0, ran_codex.stderr[-2000:]
        final = sync(store, graph.thread.id, env).graph
        again = decide_move(store, graph.thread.id, Provider.CODEX, env=env)
    assert hashlib.sha256(c1_file.read_bytes()).hexdigest() == c1_sha
    (request,) = [r.body for r in lane.requests_for("openai") if request_kind(r) == "turn"]
    sent = orjson.dumps(request["input"]).decode()
    blob = next(
        orjson.loads(line)["payload"]["encrypted_content"]
        for line in c1_file.read_bytes().splitlines()
        if b'"encrypted_content"' in line and b'"response_item"' in line
    )
    marks = [blob, fixture.spec["replies"][-1], prompts[0], "97.", prompts[1], "101.", PROMPT]
    positions = [sent.index(mark) for mark in marks]
    assert positions == sorted(positions)
    doc = graph_to_json(final)
    assert [(r["ordinal"], r["provider"]) for r in doc["runs"]] == [
        (1, "codex"),
        (2, "claude"),
        (3, "claude"),
        (4, "codex"),
    ]
    c1, l1_doc = doc["provider_threads"]
    assert c1["native_runs"] == [1, 4] and l1_doc["native_runs"] == [2, 3]
    assert [(h["covers"], h["form"]) for h in c1["handoffs"]] == [([2, 3], "native_items")]
    assert c1["native_id"] == carried.session.session_id  # followed to the fork
    assert again.strategy is Strategy.NO_HANDOFF
