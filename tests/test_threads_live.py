"""Work done directly in a CLI since the last sync becomes the thread's next runs, once: the
real CLIs continue an adopted session (or a fork segue wrote) and ``sync`` counts their turns."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from segue.model.conversation import Provider
from segue.providers import entry
from segue.store import open_store
from segue.threads import adopt, sync
from segue_testbed.fixtures import all_fixtures
from segue_testbed.standin.server import StandIn
from tests.thread_records import add_provider_thread

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
        turns_in_fork = len(fixture.spec["prompts"]) + 1  # the parent's, and the handoff
        add_provider_thread(
            store,
            graph.thread.id,
            provider=Provider.CLAUDE,
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
