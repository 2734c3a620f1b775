"""Eight segue processes recording into one thread graph at once lose no record, duplicate
none and corrupt nothing: they adopt the same session (one thread results), number runs of one
thread (no ordinal is given twice or skipped) and record handoffs, on SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
from pathlib import Path

from segue.model.conversation import Provider
from segue.store import open_store
from segue.threads import ThreadStore
from segue_testbed.fixtures import all_fixtures
from tests.test_store_concurrency import WORKERS, check_integrity, run_at_once
from tests.thread_records import add_provider_thread

RUNS = 10


def test_eight_processes_record_runs_and_handoffs_at_once(
    database_url: str, tmp_path: Path
) -> None:
    fixture = next(f for f in all_fixtures() if f.name == "codex-tool_cycle")
    shutil.copytree(fixture.home, tmp_path / "home")
    session = tmp_path / "home" / fixture.transcript.relative_to(fixture.home)
    with open_store(database_url) as store:
        threads = ThreadStore(store)
        shared = threads.create_thread(title="shared", cwd=None)
        add_provider_thread(
            store,
            shared.id,
            provider=Provider.CODEX,
            origin="adopted",
            native_id="n",
            path=str(session),
            native_turns=0,
            model=None,
        )
    go = tmp_path / "go"
    tails = [[str(w), str(RUNS), str(session), shared.id] for w in range(WORKERS)]
    done = run_at_once("tests.threads_worker", [database_url, str(go)], tails, go)
    check_integrity(database_url)
    with open_store(database_url) as store:
        threads = ThreadStore(store)
        graph = threads.graph(shared.id)
        adopted = {d["thread"] for d in done}
        assert len(adopted) == 1  # one session, one thread, whoever adopted it first
        (own,) = adopted
        assert len(threads.list_threads()) == 2
        own_graph = threads.graph(own)
    ordinals = sorted(n for d in done for n in d["ordinals"])
    assert ordinals == list(range(1, WORKERS * RUNS + 1))  # none lost, none given twice
    assert [r.ordinal for r in graph.runs] == ordinals
    assert sorted(r.prompt for r in graph.runs) == sorted(
        f"w{w}-r{n}" for w in range(WORKERS) for n in range(RUNS)
    )
    assert sorted(h.id for h in graph.handoffs) == sorted(h for d in done for h in d["handoffs"])
    assert len(graph.handoffs) == WORKERS * RUNS
    assert [r.prompt for r in own_graph.runs] == fixture.spec["prompts"]  # counted once
