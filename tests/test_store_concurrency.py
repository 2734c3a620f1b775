"""Eight segue processes recording into one store at once lose no record and corrupt nothing:
on SQLite (WAL, a busy timeout, writes that take the lock up front) and on PostgreSQL."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import sqlalchemy as sa

from segue.model.conversation import Provider
from segue.store import AgentResult, head_revision, open_store
from segue.store.migrate import VERSION_TABLE
from segue.store.tables import TABLES
from tests.store_worker import agent

ROOT = Path(__file__).resolve().parent.parent
WORKERS = 8


def run_at_once(module: str, head: list[str], tails: list[list[str]], go: Path) -> list[Any]:
    """Start one worker ``python -m MODULE *head *tail`` per tail, let them import, then tell
    them all to go at once (``go`` appears); each one's JSON answer, after checking each ended
    well and said nothing on stderr."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", module, *head, *tail],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tail in tails
    ]
    go.touch()
    outputs = [p.communicate(timeout=300) for p in procs]
    for w, (proc, (_, err)) in enumerate(zip(procs, outputs, strict=True)):
        assert proc.returncode == 0 and err == "", f"worker {w} failed ({proc.returncode}): {err}"
    return [orjson.loads(out) for out, _ in outputs]


def run_workers(
    url: str, go: Path, batches: int, agents: int, shared: str | None = None
) -> list[list[str]]:
    """Eight store workers, each recording ``batches`` batches of ``agents`` agents (and agents
    into the ``shared`` batch)."""
    extra = [] if shared is None else [shared]
    tails = [[str(w), str(batches), str(agents), *extra] for w in range(WORKERS)]
    return run_at_once("tests.store_worker", [url, str(go)], tails, go)


def check_integrity(url: str) -> None:
    if url.startswith("sqlite"):
        path = sa.make_url(url).database
        assert path is not None
        with sqlite3.connect(path) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert connection.execute("PRAGMA foreign_key_check").fetchall() == []


def test_eight_processes_create_and_fill_a_new_store_at_once(
    database_url: str, tmp_path: Path
) -> None:
    batches, agents = 5, 10  # 50 agent rows each
    created = run_workers(database_url, tmp_path / "go", batches, agents)
    check_integrity(database_url)
    with open_store(database_url) as store:
        assert store.schema_revision() == head_revision()
        listed = {summary.id: summary for summary in store.list_batches()}
        assert sorted(listed) == sorted(batch_id for ids in created for batch_id in ids)
        assert len(listed) == WORKERS * batches
        for worker, ids in enumerate(created):
            for b, batch_id in enumerate(ids):
                batch = store.get_batch(batch_id)
                assert batch.header.selection == {"worker": worker}
                assert [a.result.ordinal for a in batch.agents] == list(range(agents))
                expected = [agent(worker, b, n, n) for n in range(agents)]
                assert [a.result.session for a in batch.agents] == [e.session for e in expected]
                assert [a.result.summary for a in batch.agents] == [e.summary for e in expected]
                tally = Counter("skipped" if e.skipped else e.label for e in expected)
                assert (
                    listed[batch_id].tally
                    == tally
                    == {"native": 3, "raw": 2, "shrunk": 3, "skipped": 2}
                )
    engine = sa.create_engine(database_url)
    with engine.connect() as connection:
        versions = connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
    engine.dispose()
    assert versions == [(head_revision(),)]


def test_processes_opening_a_new_store_at_once_make_its_schema_once(
    database_url: str, tmp_path: Path
) -> None:
    """The first to take the write lock makes the schema in one step; the others wait for it
    and find the store at the head (none of them fails on a table another one made)."""
    go = tmp_path / "go"
    opened = run_at_once(
        "tests.store_worker", ["--open", database_url, str(go)], [[]] * WORKERS, go
    )
    assert [o["revision"] for o in opened] == [head_revision()] * WORKERS
    assert sum(o["made"] for o in opened) == 1
    check_integrity(database_url)
    engine = sa.create_engine(database_url)
    with engine.connect() as connection:
        versions = connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
        assert {t.name for t in TABLES} < set(sa.inspect(connection).get_table_names())
    engine.dispose()
    assert versions == [(head_revision(),)]


def test_eight_processes_record_into_one_batch(database_url: str, tmp_path: Path) -> None:
    agents = 50
    with open_store(database_url) as store:
        shared = store.create_batch(None, None, planned=WORKERS * agents).id
    created = run_workers(database_url, tmp_path / "go", 1, agents, shared)
    check_integrity(database_url)
    with open_store(database_url) as store:
        batch = store.get_batch(shared)
        assert [a.result.ordinal for a in batch.agents] == list(range(WORKERS * agents))
        for recorded in batch.agents:
            worker, n = divmod(recorded.result.ordinal, agents)
            expected = agent(worker, -1, n, recorded.result.ordinal)
            assert recorded.result.session == expected.session
            assert recorded.result.target_session == expected.target_session
        assert len(store.list_batches()) == 1 + WORKERS
        for ids in created:
            (own,) = ids
            assert len(store.get_batch(own).agents) == agents
        # and a record that is there cannot be recorded again
        first = batch.agents[0].result
        try:
            store.add_agent(shared, AgentResult(first.ordinal, Provider.CODEX, "again"))
        except Exception as error:
            assert "already has agent #0" in str(error)
        else:
            raise AssertionError("recorded agent #0 twice")
