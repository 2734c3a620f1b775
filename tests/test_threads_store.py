"""The thread graph in the store (SQLite and PostgreSQL): records come back as they were
written, nothing is changed in place (a newer record supersedes an older one), and a native
session adopted and synced counts each of its turns once."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from segue.model.conversation import Provider
from segue.model.errors import StoreError
from segue.store import open_store
from segue.threads import (
    Facts,
    HandoffForm,
    HandoffStatus,
    HandoffStrategy,
    ProviderThreadStatus,
    RunStatus,
    StalenessConfig,
    Strategy,
    ThreadStore,
    adopt,
    decide,
    graph_to_json,
    provider_thread_names,
    sync,
)
from segue_testbed.fixtures import Fixture, all_fixtures
from tests.thread_records import (
    NewRun,
    add_provider_thread,
    record_decision,
    record_handoff,
    record_runs,
)

BY_NAME = {f.name: f for f in all_fixtures()}


def _copy(fixture: Fixture, home: Path) -> Path:
    shutil.copytree(fixture.home, home, dirs_exist_ok=True)
    return home / fixture.transcript.relative_to(fixture.home)


def test_a_thread_graph_is_recorded_and_read_back(database_url: str) -> None:
    with open_store(database_url) as store:
        threads = ThreadStore(store)
        thread = threads.create_thread(title="fix the parser", cwd="/src/app")
        c1 = add_provider_thread(
            store,
            thread.id,
            provider=Provider.CODEX,
            origin="adopted",
            native_id="c-1",
            path="/c1",
            native_turns=5,
            model="gpt-5.5",
        )
        l1 = add_provider_thread(
            store,
            thread.id,
            provider=Provider.CLAUDE,
            origin="switch",
            native_id="l-1",
            path="/l1",
            native_turns=1,
            model=None,
        )
        record_runs(store, thread.id, [NewRun(c1, n, f"codex {n}") for n in range(1, 6)])
        h1 = record_handoff(
            store,
            thread.id,
            to_provider_thread_id=l1,
            from_provider_threads=[c1],
            covers=(1, 5),
            strategy=HandoffStrategy.FULL_THREAD_SUMMARY,
            form=HandoffForm.SUMMARY,
            text="runs 1-5: the parser",
            target_run_ordinal=6,
        )
        runs = record_runs(
            store,
            thread.id,
            [NewRun(l1, n, f"claude {n}", handoff_id=h1.id if n == 2 else None) for n in (2, 3, 4)],
        )
        assert [r.ordinal for r in runs] == [6, 7, 8]
        graph = threads.graph(thread.id)
    assert graph.thread == thread
    assert [(r.ordinal, r.provider) for r in graph.runs] == [
        *((n, "codex") for n in range(1, 6)),
        *((n, "claude") for n in (6, 7, 8)),
    ]
    assert provider_thread_names(graph) == {c1: "C1", l1: "L1"}  # as the seed names them
    doc = graph_to_json(graph)
    assert [pt["native_runs"] for pt in doc["provider_threads"]] == [[1, 2, 3, 4, 5], [6, 7, 8]]
    [given] = doc["provider_threads"][1]["handoffs"]
    assert given.pop("created_at").endswith("Z")
    assert given == {
        "id": h1.id,
        "covers": [1, 5],
        "strategy": "full_thread_summary",
        "form": "summary",
        "status": "ready",
        "created_by_provider": None,
        "from_provider_threads": [c1],
        "target_run": 6,
        "supersedes": None,
        "transfer": None,
        "checkpoint": None,
        "text": "runs 1-5: the parser",
        "items": None,
    }
    assert doc["runs"][5]["handoff"] == h1.id
    assert set(doc) >= {"id", "title", "runs", "provider_threads"}
    assert set(doc["runs"][0]) >= {"ordinal", "provider", "provider_thread", "handoff", "status"}
    assert set(doc["provider_threads"][0]) >= {
        "id",
        "provider",
        "native_id",
        "path",
        "native_runs",
        "handoffs",
        "status",
    }


def test_a_regenerated_handoff_supersedes_the_old_one_once(database_url: str) -> None:
    with open_store(database_url) as store:
        threads = ThreadStore(store)
        thread = threads.create_thread(title=None, cwd=None)
        pt = add_provider_thread(
            store,
            thread.id,
            provider=Provider.CODEX,
            origin="adopted",
            native_id="n",
            path="/p",
            native_turns=0,
            model=None,
        )
        kind = {
            "strategy": HandoffStrategy.DELTA_SINCE_TARGET_LAST_SEEN,
            "form": HandoffForm.SUMMARY,
        }
        old = record_handoff(
            store,
            thread.id,
            to_provider_thread_id=pt,
            from_provider_threads=[],
            covers=(1, 2),
            status=HandoffStatus.PENDING,
            **kind,  # type: ignore[arg-type]
        )
        new = record_handoff(
            store,
            thread.id,
            to_provider_thread_id=pt,
            from_provider_threads=[],
            covers=(1, 2),
            text="better",
            supersedes=old.id,
            **kind,  # type: ignore[arg-type]
        )
        with pytest.raises(StoreError, match=f"already superseded by {new.id}"):
            record_handoff(
                store,
                thread.id,
                to_provider_thread_id=pt,
                from_provider_threads=[],
                covers=(1, 2),
                supersedes=old.id,
                **kind,  # type: ignore[arg-type]
            )
        graph = threads.graph(thread.id)
    assert [(h.id, h.status) for h in graph.handoffs] == [
        (old.id, HandoffStatus.SUPERSEDED),
        (new.id, HandoffStatus.READY),
    ]
    assert [h.id for h in graph.provider_threads[0].handoffs] == [new.id]


def test_unknown_threads_and_ambiguous_prefixes_are_one_line_errors(database_url: str) -> None:
    with open_store(database_url) as store:
        threads = ThreadStore(store)
        with pytest.raises(StoreError, match="no thread ffff"):
            threads.resolve("ffff")
        with pytest.raises(StoreError, match="no thread 0123"):
            record_runs(store, "0123", [])
        a, b = (
            threads.create_thread(title="a", cwd=None),
            threads.create_thread(title="b", cwd=None),
        )
        assert threads.resolve(a.id[:30]) == a.id
        with pytest.raises(StoreError, match="ambiguous"):
            threads.resolve(a.id[:4] if a.id[:4] == b.id[:4] else "0")


def test_a_session_id_names_the_one_thread_holding_it(database_url: str) -> None:
    with open_store(database_url) as store:
        threads = ThreadStore(store)
        a, b = (
            threads.create_thread(title="a", cwd=None),
            threads.create_thread(title="b", cwd=None),
        )
        for thread, native in ((a, "abc-1"), (b, "abc-2"), (a, "dd-1")):
            add_provider_thread(
                store,
                thread.id,
                provider=Provider.CODEX,
                origin="adopted",
                native_id=native,
                path=f"/{native}",
                native_turns=1,
                model=None,
            )
        assert threads.thread_holding("ABC-2") == b.id
        assert threads.thread_holding("dd") == a.id
        assert threads.thread_holding("nothing") is None
        with pytest.raises(StoreError, match="abc names sessions of several threads"):
            threads.thread_holding("abc")


def test_a_codex_session_is_adopted_once_with_its_prompt_turns_as_runs(
    database_url: str, tmp_path: Path
) -> None:
    fixture = BY_NAME["codex-rollback"]
    path = _copy(fixture, tmp_path / "home")
    with open_store(database_url) as store:
        graph = adopt(store, str(path))
        again = adopt(
            store, fixture.spec["session_id"], {"CODEX_HOME": str(tmp_path / "home/.codex")}
        )
        assert again.thread.id == graph.thread.id
        assert len(ThreadStore(store).list_threads()) == 1
    kept = [p for p in fixture.spec["prompts"] if p not in fixture.spec["rolled_back_prompts"]]
    assert [r.prompt for r in graph.runs] == kept
    assert [r.ordinal for r in graph.runs] == [1, 2]
    (pt,) = graph.provider_threads
    assert pt.native_id == fixture.spec["session_id"] and pt.native_runs == (1, 2)
    assert "_" in Path(pt.path).name  # followed to the rollback's generation file
    assert graph.thread.title == kept[0] and graph.thread.cwd == fixture.spec["cwd"]


def test_sync_picks_up_new_turns_once_and_follows_a_rollback(
    database_url: str, tmp_path: Path
) -> None:
    """The base file of a thread that the CLI later rolled back: four turns; then the newer
    generation file appears, in which two of them are undone and one is added."""
    fixture = BY_NAME["codex-rollback"]
    home = tmp_path / "home"
    folder = _copy(fixture, home).parent
    path = next(p for p in folder.iterdir() if "_" not in p.name)  # the base file
    generation = next(p for p in folder.iterdir() if "_" in p.name)
    moved = tmp_path / generation.name
    generation.rename(moved)
    with open_store(database_url) as store:
        graph = adopt(store, str(path))
        assert [r.prompt for r in graph.runs] == fixture.spec["prompts"][: len(graph.runs)]
        before = len(graph.runs)
        assert sync(store, graph.thread.id).new_runs == []  # nothing new: nothing counted twice
        moved.rename(generation)
        result = sync(store, graph.thread.id)
        assert sync(store, graph.thread.id).new_runs == []
    kept = [p for p in fixture.spec["prompts"] if p not in fixture.spec["rolled_back_prompts"]]
    (pt,) = result.graph.provider_threads
    assert Path(pt.path) == generation
    live = [r.prompt for r in result.graph.runs if r.status is not RunStatus.ROLLED_BACK]
    undone = [r.prompt for r in result.graph.runs if r.status is RunStatus.ROLLED_BACK]
    assert before == 3 and undone == fixture.spec["rolled_back_prompts"]
    assert live == kept and [r.ordinal for r in result.graph.runs] == [1, 2, 3, 4]
    assert pt.native_runs == (1, 4) and pt.native_turns == 2
    assert pt.status is ProviderThreadStatus.ACTIVE  # its own CLI undid them: still usable
    assert pt.reason == "its CLI rolled back runs 2, 3"


def test_a_move_is_decided_recorded_and_explained(database_url: str, tmp_path: Path) -> None:
    path = _copy(BY_NAME["codex-reasoning"], tmp_path / "home")
    with open_store(database_url) as store:
        graph = adopt(store, str(path))
        config = StalenessConfig()
        graph = sync(store, graph.thread.id, {}).graph
        to_codex = decide(graph, "codex", Facts(), config)
        record_decision(store, graph.thread.id, "codex", to_codex, Facts())
        to_claude = decide(graph, "claude", Facts(clean=True), config)
        record_decision(store, graph.thread.id, "claude", to_claude, Facts(clean=True))
        engine = sa.create_engine(database_url)
        with engine.connect() as connection:
            rows = connection.execute(
                sa.text("SELECT target_provider, strategy, reason FROM decisions ORDER BY id")
            ).all()
        engine.dispose()
    assert to_codex.strategy is Strategy.NO_HANDOFF
    assert to_claude.strategy is Strategy.FULL_INTO_NEW
    assert [tuple(r) for r in rows] == [
        ("codex", "no_handoff", to_codex.reason),
        ("claude", "full_into_new", to_claude.reason),
    ]


def test_a_hand_edited_json_cell_reads_as_nothing_and_a_bad_time_is_one_line(
    tmp_path: Path,
) -> None:
    """SQLite keeps what anyone writes into a cell: a JSON column that no longer holds JSON
    reads as empty (the thread is still shown), and a time that is not one is a one-line
    error, never a traceback; so is an integer column holding words, and a BLOB in a text
    column reads as its text."""
    path = tmp_path / "segue.db"
    with open_store(f"sqlite:///{path}") as store:
        threads = ThreadStore(store)
        thread = threads.create_thread(title="t", cwd="/src")
        add_provider_thread(
            store,
            thread.id, provider=Provider.CODEX, origin="adopted", native_id="c-1",
            path="/c1", native_turns=1, model=None,
        )  # fmt: skip
    with sqlite3.connect(path) as edit:
        edit.execute("UPDATE provider_thread_revisions SET turns = '[[\"a\", 1', stamp = 'x'")
    with open_store(f"sqlite:///{path}") as store:
        (pt,) = ThreadStore(store).graph(thread.id).provider_threads
        assert pt.native_id == "c-1" and pt.turns is None and pt.stamp is None
    with sqlite3.connect(path) as edit:  # a BLOB where text belongs reads as its text
        edit.execute("UPDATE app_threads SET title = X'74c3af74fffe'")
    with open_store(f"sqlite:///{path}") as store:
        assert [t.title for t in ThreadStore(store).list_threads()] == ["tït\ufffd\ufffd"]
        threads = ThreadStore(store)
        record_runs(store, thread.id, [NewRun(pt.id, 1, "p")])
    with sqlite3.connect(path) as edit:
        edit.execute("UPDATE runs SET native_turn = 'abc'")
    with open_store(f"sqlite:///{path}") as store, pytest.raises(StoreError) as failed:
        ThreadStore(store).graph(thread.id)
    assert str(failed.value).endswith("a recorded number is not a whole number: 'abc'")
    with sqlite3.connect(path) as edit:
        edit.execute("UPDATE app_threads SET created_at = 'last tuesday'")
    with open_store(f"sqlite:///{path}") as store, pytest.raises(StoreError) as failed:
        ThreadStore(store).graph(thread.id)
    assert "'last tuesday'" in str(failed.value) and "\n" not in str(failed.value)
